/**
 * Search input is text, never query syntax (DESIGN §3): a query is split into
 * words the way the index splits documents (letters, digits, marks and
 * private-use characters: SEARCH_TOKENIZER in the store's migrations), and
 * every word must appear, as a word or a word prefix. Anything else a user
 * types (quotes, `*`, `-`, `AND`, `NEAR(`, emoji) only separates words.
 */
const WORD = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;

export function searchTerms(q: string): string[] {
  const terms = q.normalize('NFC').match(WORD) ?? [];
  return [...new Set(terms.map((t) => t.toLowerCase()))];
}

/** Chat search is a case-insensitive substring match on titles. */
export function foldTitle(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}
