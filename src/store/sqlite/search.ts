import { SCOPE_MARK } from '../../domain/search.js';
import type { Db } from './database.js';

/**
 * FTS5 query text from search terms. Each term is quoted (a quote inside is
 * doubled), so nothing a user types is read as FTS5 syntax; `*` after the
 * closing quote makes it a prefix match (all but the `whole` terms, which no
 * indexed word extends: wholeWords), and terms side by side are ANDed.
 * Terms match titles and content only, never a scope token: the index
 * records no columns (migration 14), but every scope token begins with
 * SCOPE_MARK, which no term holds and no prefix term starts with. Each term
 * must be a single word to the index's tokenizer: the index keeps no word
 * positions (migrations.ts), and FTS5 refuses a term of two words as a
 * phrase. searchTerms (src/domain/search.ts) splits queries by the same
 * character classes, and test/search.test.ts checks every character. No
 * term is made only of marks the tokenizer folds away (which it would read
 * as the empty word, and as a prefix would match every document): such
 * marks are diacritics, which searchText removes from queries and indexed
 * text alike, and test/search.test.ts checks every mark.
 */
export function ftsMatch(terms: readonly string[], whole: ReadonlySet<string>): string {
  return `(${terms.map((t) => `"${t.replaceAll('"', '""')}"${whole.has(t) ? '' : '*'}`).join(' ')})`;
}

/**
 * Terms the tokenizer keeps as they are: ASCII letters and digits, already
 * lowercase (searchTerms lowers every term). Only for these is the index's
 * word the term itself, so that its vocabulary can tell whether any indexed
 * word extends it. Terms of one or two characters are left alone: the
 * index keeps their prefixes (migrations.ts), which FTS5 reads as lazily as a
 * word.
 */
const PLAIN = /^[a-z0-9]{3,}$/;

/**
 * Which terms no indexed word extends, so that matching the word alone finds
 * exactly what matching it as a prefix would. FTS5 reads a prefix term's
 * merged list whole before its first row, but a word's list lazily, as the
 * walk newest first needs it. The index's vocabulary answers with its first
 * word at or after `term` followed by char(1), the least byte a longer word
 * can continue with. Scope tokens begin with SCOPE_MARK and so never extend
 * a term. The caller asks in the same read transaction as the search, so
 * that both see the same index.
 */
export function wholeWords(db: Db) {
  db.exec('CREATE VIRTUAL TABLE IF NOT EXISTS temp.documents_fts_words USING fts5vocab(main, documents_fts, instance)');
  const next = db.prepare('SELECT term FROM temp.documents_fts_words WHERE term >= ? LIMIT 1').pluck();
  const isWhole = (term: string) => {
    if (!PLAIN.test(term)) return false;
    const word = next.get(`${term}\u0001`) as string | undefined;
    return word === undefined || !word.startsWith(term);
  };
  return (terms: readonly string[]): Set<string> => new Set(terms.filter(isWhole));
}

/**
 * Scope tokens: where a document is, as words of the index's `scope` column.
 * Each begins with SCOPE_MARK, which no word of a document or a query holds
 * (src/domain/search.ts): the index records no columns (migration 14), so
 * that alone keeps a search's terms from matching them and a document's
 * text from forging them. Ids are written in hexadecimal so that the
 * tokenizer keeps each one whole and case-exact. Every document has
 * `w<workspace>`, and `p<project>` if it is in a project, otherwise
 * `n<workspace>` (not in a project), each after the mark.
 */
const hex = (id: string) => Buffer.from(id, 'utf8').toString('hex');
export const workspaceToken = (workspaceId: string) => `${SCOPE_MARK}w${hex(workspaceId)}`;
export const projectToken = (projectId: string) => `${SCOPE_MARK}p${hex(projectId)}`;
export const outsideProjectsToken = (workspaceId: string) => `${SCOPE_MARK}n${hex(workspaceId)}`;

export function scopeTokens(workspaceId: string, projectId: string | null): string {
  return `${workspaceToken(workspaceId)} ${projectId === null ? outsideProjectsToken(workspaceId) : projectToken(projectId)}`;
}

/**
 * The most documents a search's whole words may match for the walk to read
 * them all, checking each against the visibility rule, rather than the
 * intersection of the terms with the viewer's scope tokens. FTS5 intersects
 * by stepping through both lists, and a scope token of a large workspace
 * lists thousands of documents, so that a word in a few documents is found
 * several times faster alone. Past this many, the scope tokens are cheaper.
 */
const FEW_MATCHES = 32;

/**
 * Whether the whole words among `terms` (wholeWords) match at most
 * FEW_MATCHES documents. FTS5 reads a word's list lazily, so this reads
 * at most FEW_MATCHES + 1 of its rows; prefix terms are left out, since FTS5 would read their
 * merged lists whole, once here and once again in the walk.
 */
export function fewMatches(db: Db) {
  const count = db.prepare(`SELECT count(*) FROM (SELECT 1 FROM documents_fts WHERE documents_fts MATCH ? LIMIT ${FEW_MATCHES + 1})`).pluck();
  return (terms: readonly string[], whole: ReadonlySet<string>): boolean => {
    const words = terms.filter((t) => whole.has(t));
    return words.length > 0 && (count.get(ftsMatch(words, whole)) as number) <= FEW_MATCHES;
  };
}

/** A match of documents carrying any of the tokens, and of `terms` if there are any (ftsMatch). */
export function withinScope(terms: string | null, tokens: readonly string[]): string {
  const scope = `(${tokens.map((t) => `"${t}"`).join(' OR ')})`;
  return terms === null ? scope : `${terms} AND ${scope}`;
}
