/**
 * FTS5 query text from search terms. Each term is quoted (a quote inside is
 * doubled), so nothing a user types is read as FTS5 syntax; `*` after the
 * closing quote makes it a prefix match, and terms side by side are ANDed.
 */
export function ftsMatch(terms: readonly string[]): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"*`).join(' ');
}
