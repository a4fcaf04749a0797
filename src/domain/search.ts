/**
 * Search input is text, never query syntax (DESIGN §3): a query is split into
 * words the way the index splits documents (letters, digits, marks and
 * private-use characters: SEARCH_TOKENIZER in the store's migrations), and
 * every word must appear, as a word or a word prefix. Anything else a user
 * types (quotes, `*`, `-`, `AND`, `NEAR(`, emoji) only separates words.
 */
const WORD = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;

export function searchTerms(q: string): string[] {
  const terms = searchText(q).match(WORD) ?? [];
  return [...new Set(terms.map((t) => t.toLowerCase()))];
}

/** The Combining Diacritical Marks block: the accents of Latin, Greek and Cyrillic letters, and IPA's. */
const DIACRITICS = /[\u0300-\u036f]/g;
/**
 * Letters that no decomposition takes apart: those with a stroke as the
 * letter they are drawn on, and the sharp s as ss, as case folding writes
 * it (and chat search folds it), so that "strasse" finds "Straße".
 */
const SPELLED: Record<string, string> = { ø: 'o', Ø: 'O', đ: 'd', Đ: 'D', ł: 'l', Ł: 'L', ħ: 'h', Ħ: 'H', ŧ: 't', Ŧ: 'T', ß: 'ss', ẞ: 'SS' };
const SPELLED_OUT = /[øØđĐłŁħĦŧŦßẞ]/g;

/**
 * A character other than ASCII and those the index's tokenizer already
 * reads as foldText makes them (Latin letters with accents, most of
 * Latin-1's symbols): text without one is indexed as it is, which spares
 * most writes the work of normalizing their text twice. test/search.test.ts
 * checks every character of the class against the tokenizer.
 */
export const FOLDED_BY_FOLIO =
  /[^\u0000-\u00a9\u00ab-\u00b1\u00b4-\u00b8\u00bb\u00bf-\u00d7\u00d9-\u00de\u00e0-\u00f7\u00f9-\u010f\u0112-\u0125\u0128-\u0131\u0134-\u013e\u0143-\u0148\u014a-\u0165\u0168-\u01c3\u01cd-\u01df\u01e4-\u01ed\u01f0\u01f4-\u01fb\u0200-\u024f]/;

/**
 * U+FDD0, one of the characters Unicode reserves for a program's internal
 * use, never for text interchange: the search index's tokenizer reads it as
 * part of a word (SEARCH_TOKENIZER), and the index's scope tokens begin with
 * it (src/store/sqlite/search.ts), so that no word of a document or a query
 * is one of them. Query word splitting (searchTerms) reads it as a
 * separator, and searchText turns it into a space in indexed text.
 */
export const SCOPE_MARK = '\uFDD0';

/**
 * Text as the search index reads it, and queries are read: compatibility
 * forms as their plain letters (ﬁ as fi, ǅ as Dž, full-width letters as
 * letters), then without diacritics (DESIGN §3). The index's tokenizer
 * (SEARCH_TOKENIZER) removes the accents of Latin letters only, so that
 * "ελληνικα" would not find "Ελληνικά", nor "ore" "Øre". Scripts whose
 * marks are part of their letters (Devanagari's vowel signs, Hebrew's and
 * Arabic's points) keep them, and the text is composed again (NFC), so that
 * a Korean syllable stays one letter; and lower case (foldText). The store
 * indexes documents through this (documents.ts); a change here needs a
 * migration that indexes again every document it changes, as migrations 11
 * and 13 did.
 */
export function searchText(text: string): string {
  return FOLDED_BY_FOLIO.test(text) ? foldText(text) : text;
}

/**
 * searchText's folding, of any text. It ends in lower case, as searchTerms
 * lowers queries: the tokenizer's own case folding stops at the letters of
 * Unicode 6 or so, and leaves Cherokee, Georgian's capitals (Mtavruli),
 * Adlam, Osage and later Latin and Cyrillic capitals as they are, which a
 * query lowered in JavaScript then never matched, even one typed exactly as
 * the document wrote it (test/search.test.ts checks every cased letter).
 * A final sigma is folded as any other (ς to σ), as the tokenizer folds it
 * and foldTitle does: JavaScript lowers a capital Σ at a word's end to ς,
 * so that "ΠΡΟΣ" would not begin "ΠΡΟΣΦΟΡΑ" (PostgreSQL's words are made
 * by this alone). Every character that makes no word to searchTerms
 * becomes a space, as searchTerms reads it: the tokenizer's Unicode data is
 * older than Node.js's, and it reads characters it does not know (the bidi
 * isolates U+2066 to U+2069 of right-to-left text, U+061C, ₺ and ₽, newer
 * symbols and emoji) as part of a word, so that "שלום" between isolates or
 * "50" after "₺" was never found. SCOPE_MARK, a word character to the
 * tokenizer only for scope tokens' sake, is one of them. A run of more
 * than MARK_RUN marks keeps its first MARK_RUN (shortMarkRuns), cut before
 * normalizing and again at the end: decomposing a letter adds its marks to
 * the run after it (क़ is क and a nukta), and folded text must fold as
 * itself, since PostgreSQL's words and terms are folded twice
 * (src/store/postgres/search.ts) where SQLite's are folded once. A change
 * here needs a migration that indexes again every document it changes, as
 * migrations 11, 13, 20 and 21 did.
 */
export function foldText(text: string): string {
  return shortMarkRuns(
    shortMarkRuns(text)
      .normalize('NFKD')
      .replace(DIACRITICS, '')
      .replace(SPELLED_OUT, (c) => SPELLED[c]!)
      .normalize('NFC')
      .toLowerCase()
      .replaceAll('ς', 'σ')
      .replace(NOT_IN_WORDS, ' '),
  );
}

/**
 * The most marks in a row that foldText normalizes: Unicode's own bound for
 * such runs (UAX #15, the Stream-Safe Text Format), which no language's
 * writing comes near. normalize() puts a run's marks in canonical order
 * one at a time, each moved past those before it, in time of the square of
 * the run's length (alternating marks of two classes, as Arabic's
 * fathatan and dammatan): a body of them would keep the server busy for
 * minutes to hours.
 */
export const MARK_RUN = 30;

/** Marks, and the half-width voiced sound marks (ﾞ, ﾟ), which NFKD makes marks. */
const MARK = '[\\p{M}\\uff9e\\uff9f]';
/** A run longer than MARK_RUN, found by its first MARK_RUN + 1 marks so that the search never backtracks further (a pattern for the whole run overflows the stack on a long one). */
const LONG_RUN = new RegExp(`${MARK}{${MARK_RUN + 1}}`, 'gu');
const NOT_A_MARK = new RegExp(`[^${MARK.slice(1)}`, 'gu');

/** `text` with each run of more than MARK_RUN marks cut to its first MARK_RUN. */
export function shortMarkRuns(text: string): string {
  const long = new RegExp(LONG_RUN);
  const after = new RegExp(NOT_A_MARK);
  let kept = '';
  let from = 0;
  for (let run = long.exec(text); run !== null; run = long.exec(text)) {
    // All it matched but the last mark, one UTF-16 unit or two.
    const lastUnit = text.charCodeAt(long.lastIndex - 1);
    kept += text.slice(from, long.lastIndex - (lastUnit >= 0xdc00 && lastUnit <= 0xdfff ? 2 : 1));
    after.lastIndex = long.lastIndex;
    from = after.exec(text)?.index ?? text.length;
    long.lastIndex = from;
  }
  return from === 0 ? text : kept + text.slice(from);
}

/** What searchTerms's WORD leaves out, but for the spaces and line breaks that already separate words. */
const NOT_IN_WORDS = /[^\p{L}\p{N}\p{M}\p{Co} \n]/gu;

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
