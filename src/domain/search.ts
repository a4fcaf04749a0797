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

/**
 * Chat search is a case-insensitive substring match on titles: titles and
 * queries are compared compatibility-normalized and case-folded. JavaScript
 * has no case folding; lowering, raising and lowering again reaches Unicode's
 * full folding where lower case alone falls short (ß and ẞ to ss, ſ to s),
 * and a final sigma is folded as any other (ς to σ), so that "ΠΡΟΣ" finds
 * "ΠΡΟΣΦΟΡΑ". Titles are stored folded: a change here needs a migration
 * that folds them again, as migration 10 did for this one.
 */
export function foldTitle(text: string): string {
  return text.normalize('NFKC').toLowerCase().toUpperCase().toLowerCase().replaceAll('ς', 'σ');
}
