import { foldText, SCOPE_MARK, searchTerms } from '../../domain/search.js';

/**
 * DESIGN §3's search on PostgreSQL: a `tsvector` of each document's words,
 * which the store makes itself, and a `tsquery` of the terms as prefixes,
 * all required, within the viewer's scope words.
 *
 * The words are those of the folded text (foldText), split as searchTerms
 * splits queries: letters, digits, marks and private-use characters make
 * words, anything else separates them, as the SQLite store's tokenizer
 * reads text; test/store-contract/ holds both stores to that rule. They
 * reach PostgreSQL as lexemes (array_to_tsvector), and the terms as quoted
 * lexemes (a tsquery's own syntax): no text search parser, dictionary or
 * locale of the server's has a say. Its default parser would read `foo-bar`,
 * e-mail addresses, URLs or `1.5` as words of their own, and `unaccent`
 * folds otherwise than Folio does (æ as ae, ı as i, ĸ as q, þ as th), so
 * the two stores would find different documents.
 */

/** PostgreSQL's limits, in UTF-8 bytes: of one lexeme, and of a tsvector's lexemes together. */
const LEXEME_BYTES = 2047;
const VECTOR_BYTES = 1_048_575;

/**
 * Text is folded and split about this many characters at a time, cut
 * before a space or a line break (which no word holds and folding keeps as
 * they are), so that a 5 MiB document never becomes one array of all its words.
 */
const CHUNK = 65_536;

/**
 * A word cut to PostgreSQL's longest lexeme, at a character's end. Terms
 * are cut alike, so that a term as long still finds the word; a longer one
 * finds the words it begins with to that length.
 */
function clip(word: string): string {
  // UTF-8 takes at most 3 bytes per UTF-16 unit.
  if (word.length * 3 <= LEXEME_BYTES) return word;
  let bytes = 0;
  let end = 0;
  for (const char of word) {
    bytes += Buffer.byteLength(char);
    if (bytes > LEXEME_BYTES) break;
    end += char.length;
  }
  return word.slice(0, end);
}

/**
 * Scope words: where a document is, beside its words, so that a search
 * reads from the index only what lies where the viewer may look. Each
 * begins with SCOPE_MARK, which no word and no term holds
 * (src/domain/search.ts), so that text can neither forge nor find them.
 * A document in no project has `n<workspace>`, one in a project
 * `p<project>`: the two places visibility.ts tells apart. Every document
 * also has `w<workspace>`, which stands for a whole personal workspace in
 * one word where its owner searches (visiblePlaces): GIN reads each word
 * of a query's OR apart, and an owner may have dozens of projects.
 */
const IN_WORKSPACE = `${SCOPE_MARK}w`;
const OUTSIDE_PROJECTS = `${SCOPE_MARK}n`;
const IN_PROJECT = `${SCOPE_MARK}p`;

/** The words in SQL, of a text expression that names a workspace or a project. */
export const workspaceWordSql = (workspaceId: string): string => `'${IN_WORKSPACE}' || ${workspaceId}`;
export const outsideProjectsWordSql = (workspaceId: string): string => `'${OUTSIDE_PROJECTS}' || ${workspaceId}`;
export const projectWordSql = (projectId: string): string => `'${IN_PROJECT}' || ${projectId}`;

/**
 * A document's tsvector in SQL: its title's and its Markdown's words
 * (titleLexemes, contentLexemes: text[] expressions; a word in both is
 * kept once) and its scope words, of the text expressions that name its
 * workspace and its project (null outside projects). They are added here,
 * where every writer knows the document's place: a creation learns its
 * workspace only in SQL (NEW_CONTENT_WORKSPACE).
 */
export const searchVectorSql = (titleLexemes: string, contentLexemes: string, workspaceId: string, projectId: string): string =>
  `array_to_tsvector(${titleLexemes} || ${contentLexemes} || ARRAY[${workspaceWordSql(workspaceId)},
    CASE WHEN ${projectId} IS NULL THEN ${outsideProjectsWordSql(workspaceId)} ELSE ${projectWordSql(projectId)} END])`;

/** Room kept in a tsvector for the two scope words searchVectorSql adds: far more than any ids take. */
const SCOPE_WORDS_BYTES = 512;

/** Room kept for a title's words: a title holds at most 200 characters, whose words and prefix words take at most 3,200 bytes. */
const TITLE_WORDS_BYTES = 4096;

/**
 * Which design of a document's search words (titleLexemes, contentLexemes
 * and searchVectorSql) made them, recorded with the index (reindex.ts), so
 * that words of an earlier design are made again: 1 had no workspace words,
 * 2 did not keep the title's words apart (title_words, migration 3), 3
 * kept a final sigma apart from σ (foldText), 4 kept every mark of a long
 * run of them (MARK_RUN).
 */
export const SEARCH_WORDS = '5';

/**
 * Prefix words: each document also holds the first one and the first two
 * characters of its words, after SCOPE_MARK and `*`, as the SQLite store's
 * index keeps prefixes of one and two characters. A term that short is
 * looked up as that one entry: as a prefix, PostgreSQL would merge the
 * entries of every word it begins, a good part of the whole index for one
 * letter.
 */
const SHORT = 2;
const prefixWord = (prefix: string) => `${SCOPE_MARK}*${prefix}`;

/**
 * `text` in V8's one-byte form when it has no character past U+00FF:
 * normalize() (foldText) hands back text in the two-byte form, whose words
 * are then matched, hashed and sorted several times more slowly.
 */
const LATIN1_ONLY = /^[\u0000-\u00ff]*$/;
const compact = (text: string) => (LATIN1_ONLY.test(text) ? Buffer.from(text, 'latin1').toString('latin1') : text);

/** Adds the distinct words of `text`, folded and cut to length, to `into`. */
function wordsOf(text: string, into: Set<string>): void {
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + CHUNK, text.length);
    if (end < text.length) {
      const cut = Math.max(text.lastIndexOf(' ', end), text.lastIndexOf('\n', end));
      if (cut > start) end = cut;
      else {
        // No break in the window: the piece runs on to the next one.
        const next = text.slice(end).search(/[ \n]/);
        end = next < 0 ? text.length : end + next;
      }
    }
    for (const word of searchTerms(compact(foldText(text.slice(start, end))))) into.add(clip(word));
    start = end;
  }
}

/**
 * The lexemes of `text` in a tsvector: its prefix words and its words. A
 * word that begins another adds nothing, since every term is looked up as
 * a prefix, and is left out. A text whose lexemes still exceed `room`
 * bytes keeps its shortest (a tsvector holds at most VECTOR_BYTES): the
 * first letters of its words, then their first two letters, then its
 * words by length, so that the words of prose come before the long strings
 * of an embedded file. The prefix words count too: a list of names in a
 * large alphabet (Chinese, Korean) begins its words with more distinct
 * pairs of letters than a tsvector holds.
 */
function lexemesOf(text: string, room: number): string[] {
  const words = new Set<string>();
  wordsOf(text, words);
  // UTF-16 order, which sort() without a comparator also gives, more slowly.
  const sorted = [...words].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  // In sorted order, the words a word begins follow it at once.
  const kept = sorted.filter((word, i) => !sorted[i + 1]?.startsWith(word));
  // The first one and two characters (not UTF-16 units) of each word, before they are made words of their own.
  const ones = new Set<string>();
  const twos = new Set<string>();
  for (const word of kept) {
    const first = word.codePointAt(0)! > 0xffff ? 2 : 1;
    ones.add(word.slice(0, first));
    if (word.length > first) twos.add(word.slice(0, first + (word.codePointAt(first)! > 0xffff ? 2 : 1)));
  }
  const internal = [...ones, ...twos].map(prefixWord);
  // UTF-8 takes at most 3 bytes per UTF-16 unit: most documents are measured no further.
  const units = (ws: string[]) => ws.reduce((n, word) => n + word.length, 0);
  const bytes = (ws: string[]) => ws.reduce((n, word) => n + Buffer.byteLength(word), 0);
  if ((units(internal) + units(kept)) * 3 <= room || bytes(internal) + bytes(kept) <= room) return [...internal, ...kept];
  // A word of one or two characters is left out here: a term that short is
  // looked up by its prefix word alone (termsQuery), which the word has.
  const longer = kept.filter((word) => word.length > 2 * SHORT || [...word].length > SHORT).sort((a, b) => a.length - b.length);
  return [...internal, ...longer].filter((word) => (room -= Buffer.byteLength(word)) >= 0);
}

/**
 * A document's words come in two parts, which searchVectorSql joins: its
 * title's, which the row also keeps (title_words) so that an edit that
 * keeps the title makes the document's words without reading it first,
 * and its Markdown's, in what room the title and the scope words leave.
 */
export const titleLexemes = (title: string): string[] => lexemesOf(title, TITLE_WORDS_BYTES);
export const contentLexemes = (content: string): string[] => lexemesOf(content, VECTOR_BYTES - SCOPE_WORDS_BYTES - TITLE_WORDS_BYTES);

/** A lexeme in a tsquery's text: quoted, its quotes doubled and backslashes escaped, so that nothing in it is syntax. */
const quoted = (lexeme: string) => `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;

/** `quoted` in SQL, of a text expression (chr(92) is the backslash, however the server reads string literals). */
const quotedSql = (lexeme: string) => `'''' || replace(replace(${lexeme}, chr(92), chr(92) || chr(92)), '''', '''''') || ''''`;

/**
 * The tsquery of documents holding every term (searchTerms) as a word
 * prefix. A search ANDs it with the scope words of the places the viewer
 * may look (scopeQuerySql), so that only their index entries are read.
 */
export function termsQuery(terms: readonly string[]): string {
  return terms
    .map((term) => {
      const word = clip(foldText(term));
      return [...word].length <= SHORT ? quoted(prefixWord(word)) : `${quoted(word)}:*`;
    })
    .join(' & ');
}

/**
 * In SQL, the tsquery of any of the scope words of `places`, a query of
 * one text column `word` holding each place's scope word; null when there
 * is none, and a null query matches nothing. Scope words only narrow a
 * search; every row is still checked by the visibility rule.
 */
export const scopeQuerySql = (places: string): string => `(SELECT string_agg(${quotedSql('w.word')}, ' | ')::tsquery FROM (${places}) w)`;
