/**
 * FTS5 query text from search terms. Each term is quoted (a quote inside is
 * doubled), so nothing a user types is read as FTS5 syntax; `*` after the
 * closing quote makes it a prefix match, and terms side by side are ANDed.
 * Terms match titles and content only, never the scope column. Each term
 * must be a single word to the index's tokenizer: the index keeps no word
 * positions (migrations.ts), and FTS5 refuses a term of two words as a
 * phrase. searchTerms (src/domain/search.ts) splits queries by the same
 * character classes, and test/search.test.ts checks every character.
 */
export function ftsMatch(terms: readonly string[]): string {
  return `{title content} : (${terms.map((t) => `"${t.replaceAll('"', '""')}"*`).join(' ')})`;
}

/**
 * Scope tokens: where a document is, as words of the index's `scope` column.
 * Ids are written in hexadecimal so that the tokenizer keeps each one whole
 * and case-exact. Every document has `w<workspace>`, and `p<project>` if it is
 * in a project, otherwise `n<workspace>` (not in a project).
 */
const hex = (id: string) => Buffer.from(id, 'utf8').toString('hex');
export const workspaceToken = (workspaceId: string) => `w${hex(workspaceId)}`;
export const projectToken = (projectId: string) => `p${hex(projectId)}`;
export const outsideProjectsToken = (workspaceId: string) => `n${hex(workspaceId)}`;

export function scopeTokens(workspaceId: string, projectId: string | null): string {
  return `${workspaceToken(workspaceId)} ${projectId === null ? outsideProjectsToken(workspaceId) : projectToken(projectId)}`;
}

/** Restricts a match to documents carrying any of the tokens. */
export function withinScope(match: string, tokens: readonly string[]): string {
  return `${match} AND scope : (${tokens.join(' OR ')})`;
}
