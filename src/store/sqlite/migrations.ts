import { SCOPE_MARK } from '../../domain/search.js';

/** The search index's tokenizer from migration 5 to migration 13. */
const TOKENIZER_BEFORE_14 = "unicode61 remove_diacritics 2 categories 'L* N* Co M*'";

/**
 * The search index's tokenizer: letters, digits, private-use characters and
 * marks make words (the same classes as src/domain/search.ts splits queries
 * by), folded to lower case without diacritics; and SCOPE_MARK, which begins
 * every scope token and which indexed text never holds (searchText).
 */
export const SEARCH_TOKENIZER = `${TOKENIZER_BEFORE_14} tokenchars '${SCOPE_MARK}'`;

/**
 * A document's scope tokens (search.ts), of `d`. Before migration 14 the
 * tokenizer read SCOPE_MARK as a space, so earlier migrations wrote and
 * removed the same words with it as without it.
 */
const SCOPE_TOKENS = `'${SCOPE_MARK}w' || lower(hex(d.workspace_id)) || ' ' ||
      CASE WHEN d.project_id IS NULL THEN '${SCOPE_MARK}n' || lower(hex(d.workspace_id)) ELSE '${SCOPE_MARK}p' || lower(hex(d.project_id)) END`;

/**
 * The documents `d` with their Markdown `c.content`: the newest revision's
 * (migration 19), which `d.revision` names.
 */
export const DOCUMENTS_WITH_CONTENT = 'FROM documents d JOIN document_revisions c ON c.document_id = d.id AND c.number = d.revision';
/** The same before migration 19: the Markdown in a table of its own. */
const WITH_CONTENT_BEFORE_19 = 'FROM documents d JOIN document_contents c ON c.seq = d.seq';

/** Fills an empty search index from the documents, as Folio indexed them before migration 11 (its text as it is). */
const INDEX_EVERY_DOCUMENT = `INSERT INTO documents_fts (rowid, title, content, scope)
    SELECT d.seq, d.title, c.content, ${SCOPE_TOKENS}
    ${WITH_CONTENT_BEFORE_19}
    ORDER BY d.seq;`;

/**
 * Empties the search index and indexes every document again (`documents`:
 * DOCUMENTS_WITH_CONTENT as the schema of the time had it), as searchText
 * makes its text, under its rowid -seq (migration 12), merged into one
 * segment.
 */
const reindexEveryDocument = (documents: string) => `INSERT INTO documents_fts (documents_fts) VALUES ('delete-all');
  INSERT INTO documents_fts (rowid, title, content, scope)
    SELECT -d.seq, folio_search_text(d.title), folio_search_text(c.content), ${SCOPE_TOKENS}
    ${documents}
    ORDER BY d.seq DESC;
  INSERT INTO documents_fts (documents_fts) VALUES ('optimize');`;
const REINDEX_BEFORE_19 = reindexEveryDocument(WITH_CONTENT_BEFORE_19);

/** The search index rebuilt from the documents as they are stored today (database.ts). */
export const REINDEX_EVERY_DOCUMENT = reindexEveryDocument(DOCUMENTS_WITH_CONTENT);

/**
 * The search index made anew with document-level detail (migration 14) and
 * the given prefix lengths (migration 16), set up as migrations 4, 6 and 8
 * set it, and rebuilt from the documents. The text is migration 14's, with
 * its prefixes as a parameter.
 */
function documentLevelIndex(prefixes: string): string {
  return `
  DROP TABLE documents_fts;
  CREATE VIRTUAL TABLE documents_fts USING fts5 (
    title, content, scope,
    content = '',
    tokenize = "${SEARCH_TOKENIZER}",
    prefix = '${prefixes}',
    detail = none
  );
  INSERT INTO documents_fts (documents_fts, rank) VALUES ('pgsz', 4050);
  INSERT INTO documents_fts (documents_fts, rank) VALUES ('automerge', 0);
  INSERT INTO documents_fts (documents_fts, rank) VALUES ('usermerge', 8);
  ${REINDEX_BEFORE_19}
  `;
}

/** The documents whose text the index reads otherwise since migration 11 (searchText, which migrate() lends to SQL). */
const FOLDED_OTHERWISE = `${WITH_CONTENT_BEFORE_19}
    WHERE folio_search_text(d.title) <> d.title OR folio_search_text(c.content) <> c.content
    ORDER BY d.seq`;

/**
 * SQLite schema, as an ordered list of migrations. `PRAGMA user_version`
 * records how many have run, so running them again changes nothing.
 *
 * Workspaces: `workspace_id` is a user id (personal workspace) or an
 * organization id (team workspace). Timestamps are ISO 8601 text in one fixed
 * form, so text order is time order.
 */
export const migrations: readonly string[] = [
  `
  CREATE TABLE users (
    id          TEXT PRIMARY KEY,
    email       TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name        TEXT,
    plan        TEXT,
    created_at  TEXT NOT NULL
  );

  CREATE TABLE organizations (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    plan        TEXT,
    created_at  TEXT NOT NULL
  );

  CREATE TABLE memberships (
    org_id      TEXT NOT NULL REFERENCES organizations(id),
    user_id     TEXT NOT NULL REFERENCES users(id),
    joined_at   TEXT NOT NULL,
    joined_seq  INTEGER NOT NULL,
    PRIMARY KEY (org_id, user_id)
  ) WITHOUT ROWID;
  CREATE INDEX memberships_by_user ON memberships (user_id, joined_at, joined_seq);

  CREATE TABLE api_keys (
    id            TEXT PRIMARY KEY,
    user_id       TEXT NOT NULL REFERENCES users(id),
    name          TEXT,
    hash          BLOB NOT NULL UNIQUE,
    last4         TEXT NOT NULL,
    can_write     INTEGER NOT NULL,
    created_at    TEXT NOT NULL,
    last_used_at  TEXT,
    revoked_at    TEXT
  );
  CREATE INDEX api_keys_by_user ON api_keys (user_id, created_at);

  CREATE TABLE projects (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL,
    is_org        INTEGER NOT NULL,
    creator_id    TEXT NOT NULL REFERENCES users(id),
    name          TEXT NOT NULL,
    description   TEXT,
    created_at    TEXT NOT NULL
  );
  CREATE INDEX projects_by_workspace ON projects (workspace_id, created_at DESC, id DESC);

  CREATE TABLE project_shares (
    project_id  TEXT NOT NULL REFERENCES projects(id),
    user_id     TEXT NOT NULL REFERENCES users(id),
    PRIMARY KEY (project_id, user_id)
  ) WITHOUT ROWID;
  CREATE INDEX project_shares_by_user ON project_shares (user_id, project_id);

  CREATE TABLE templates (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id  TEXT,
    creator_id    TEXT REFERENCES users(id),
    title         TEXT NOT NULL,
    description   TEXT,
    is_default    INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL
  );
  CREATE INDEX templates_by_workspace ON templates (workspace_id, created_at DESC);

  CREATE TABLE chats (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL,
    creator_id     TEXT NOT NULL REFERENCES users(id),
    project_id     TEXT REFERENCES projects(id),
    title          TEXT,
    title_folded   TEXT,
    message_count  INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT NOT NULL,
    updated_at     TEXT,
    sort_at        TEXT GENERATED ALWAYS AS (coalesce(updated_at, created_at)) VIRTUAL
  );
  CREATE INDEX chats_by_workspace ON chats (workspace_id, sort_at DESC, id DESC);
  CREATE INDEX chats_by_project ON chats (project_id, sort_at DESC, id DESC);

  -- Documents, narrow: what lists, searches and access checks read, so that
  -- these pages stay in cache; the Markdown is in document_contents.
  --
  -- seq is given anew on every write, counting up (see migration 2), so the
  -- search index, read by seq descending (its rowid is seq, -seq since
  -- migration 12, which ascending rowid order reads so), visits
  -- documents in the reverse order they were last written: newest first
  -- while the clock moves forward. high_water_at bounds what that order
  -- may get wrong: it is the newest sort time any document had when this one
  -- was written (its own included), so no document written before it sorts
  -- after high_water_at. A search stops walking once that bound falls below
  -- its page (documents.ts).
  CREATE TABLE documents (
    seq            INTEGER PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    workspace_id   TEXT NOT NULL,
    creator_id     TEXT NOT NULL REFERENCES users(id),
    project_id     TEXT REFERENCES projects(id),
    thread_id      TEXT,
    title          TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT,
    sort_at        TEXT GENERATED ALWAYS AS (coalesce(updated_at, created_at)) VIRTUAL,
    high_water_at  TEXT NOT NULL
  );
  CREATE INDEX documents_by_workspace ON documents (workspace_id, sort_at DESC, id DESC);
  CREATE INDEX documents_by_project ON documents (project_id, sort_at DESC, id DESC);

  -- The Markdown of each document, under the document's current seq.
  CREATE TABLE document_contents (
    seq      INTEGER PRIMARY KEY,
    content  TEXT NOT NULL
  );

  -- The search index, rowid = documents.seq (-seq since migration 12), written by the store in the same
  -- transaction as the document; replacing a document's entry takes its old
  -- text (FTS5 'delete'), which keeps searches free of tombstone checks. scope holds tokens naming where the document
  -- is (see search.ts), so that a search reads only matches the caller may
  -- see; the store still checks each row against the visibility rules.
  CREATE VIRTUAL TABLE documents_fts USING fts5 (
    title, content, scope,
    content = '',
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '2 3'
  );
  `,
  // seq counted down in the first schema, so every write gave the search
  // index a rowid below the ones before it, and FTS5, which writes rowids in
  // ascending order only, flushed a new index segment for each document.
  // seq now counts up: turn the old numbers over (same order, newest last)
  // and rebuild the index under them.
  `
  UPDATE documents SET seq = -seq WHERE seq < 0;
  UPDATE document_contents SET seq = -seq WHERE seq < 0;
  INSERT INTO documents_fts (documents_fts) VALUES ('delete-all');
  ${INDEX_EVERY_DOCUMENT}
  `,
  // A one-letter search term had no prefix index: FTS5 merged the document
  // lists of every word starting with that letter, for any caller with a
  // read key. One-character prefixes cost writes next to nothing. FTS5
  // options cannot be altered, so the index is made anew and rebuilt from
  // the documents.
  `
  DROP TABLE documents_fts;
  CREATE VIRTUAL TABLE documents_fts USING fts5 (
    title, content, scope,
    content = '',
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '1 2 3'
  );
  ${INDEX_EVERY_DOCUMENT}
  `,
  // Index pages of about one database page (4096 bytes) instead of FTS5's
  // default 1000 bytes: fewer, fuller pages to write at each commit.
  // Existing pages keep their size until FTS5 merges them.
  `
  INSERT INTO documents_fts (documents_fts, rank) VALUES ('pgsz', 4050);
  `,
  // Column-level detail instead of word positions: searches match words and
  // word prefixes, never phrases (search.ts), so positions were written for
  // nothing, and the index is much smaller. Without positions FTS5 refuses a
  // quoted term the tokenizer splits in two (a phrase), so marks of every
  // kind now stay inside words, as the search's own word splitting
  // (src/domain/search.ts) keeps them: Devanagari vowel signs (Mc) split
  // words before, and enclosing marks (Me) did too.
  `
  DROP TABLE documents_fts;
  CREATE VIRTUAL TABLE documents_fts USING fts5 (
    title, content, scope,
    content = '',
    tokenize = "${TOKENIZER_BEFORE_14}",
    prefix = '1 2 3',
    detail = column
  );
  INSERT INTO documents_fts (documents_fts, rank) VALUES ('pgsz', 4050);
  ${INDEX_EVERY_DOCUMENT}
  `,
  // FTS5's own merging off: every transaction that changes the index merges
  // a share of it proportional to its changes instead (search-index.ts).
  // FTS5 merged in large quanta every so many pages written, and the commit
  // that did it took many times longer than the others: the tail of every
  // write's latency.
  `
  INSERT INTO documents_fts (documents_fts, rank) VALUES ('automerge', 0);
  `,
  // A page of a list is chosen from the indexes alone, and only its rows
  // are read from the table (documents.ts): sort_at is stored instead of
  // computed, since SQLite reads a computed column from the table row even
  // when an index holds it, and the workspace index holds project_id, which
  // a team's list checks for every row it passes. Before, a list read the
  // table row of every document it considered: all those of the projects
  // shared with the caller, sorted, for a caller with shared projects.
  // SQLite cannot change a column's kind in place: the table is made anew
  // (its rows keep their seq, so the search index still points at them).
  `
  CREATE TABLE documents_new (
    seq            INTEGER PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    workspace_id   TEXT NOT NULL,
    creator_id     TEXT NOT NULL REFERENCES users(id),
    project_id     TEXT REFERENCES projects(id),
    thread_id      TEXT,
    title          TEXT NOT NULL,
    created_at     TEXT NOT NULL,
    updated_at     TEXT,
    sort_at        TEXT NOT NULL CHECK (sort_at = coalesce(updated_at, created_at)),
    high_water_at  TEXT NOT NULL
  );
  INSERT INTO documents_new (seq, id, workspace_id, creator_id, project_id, thread_id, title, created_at, updated_at, sort_at, high_water_at)
    SELECT seq, id, workspace_id, creator_id, project_id, thread_id, title, created_at, updated_at, sort_at, high_water_at
    FROM documents ORDER BY seq;
  DROP TABLE documents;
  ALTER TABLE documents_new RENAME TO documents;
  CREATE INDEX documents_by_workspace ON documents (workspace_id, sort_at DESC, id DESC, project_id);
  CREATE INDEX documents_by_project ON documents (project_id, sort_at DESC, id DESC);
  `,
  // The writes' merge steps (search-index.ts) merge a level of the index
  // once it holds eight segments instead of FTS5's four: each entry is then
  // rewritten on fewer levels. Up to seven segments a level are left while
  // writes keep coming, and the background thread merges them once writes
  // stop (index-tidying.ts).
  `
  INSERT INTO documents_fts (documents_fts, rank) VALUES ('usermerge', 8);
  `,
  // Chats get what documents got in migration 7: a stored sort time, so that
  // a page of a list is chosen from the indexes alone and only its rows are
  // read from the table (workspace.ts).
  `
  CREATE TABLE chats_new (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL,
    creator_id     TEXT NOT NULL REFERENCES users(id),
    project_id     TEXT REFERENCES projects(id),
    title          TEXT,
    title_folded   TEXT,
    message_count  INTEGER NOT NULL DEFAULT 0,
    created_at     TEXT NOT NULL,
    updated_at     TEXT,
    sort_at        TEXT NOT NULL CHECK (sort_at = coalesce(updated_at, created_at))
  );
  INSERT INTO chats_new (id, workspace_id, creator_id, project_id, title, title_folded, message_count, created_at, updated_at, sort_at)
    SELECT id, workspace_id, creator_id, project_id, title, title_folded, message_count, created_at, updated_at, sort_at
    FROM chats;
  DROP TABLE chats;
  ALTER TABLE chats_new RENAME TO chats;
  CREATE INDEX chats_by_workspace ON chats (workspace_id, sort_at DESC, id DESC, project_id);
  CREATE INDEX chats_by_project ON chats (project_id, sort_at DESC, id DESC);
  `,
  // Chat titles folded again, as queries now are: to full case folding, a
  // final sigma as any other (foldTitle in src/domain/search.ts, which
  // migrate() lends to SQL as folio_fold_title).
  `
  UPDATE chats SET title_folded = folio_fold_title(title) WHERE title IS NOT NULL;
  `,
  // The index reads documents as searchText (src/domain/search.ts) makes
  // them: without the diacritics of Greek and Cyrillic letters too (the
  // tokenizer removes those of Latin letters only), letters with a stroke
  // as the letter they are drawn on (ø as o), ß as ss, compatibility
  // forms as plain letters. Each document that text changes is removed as
  // it was indexed and indexed again; text of ASCII and accented Latin
  // letters (FOLDED_BY_FOLIO) is left as it is.
  `
  INSERT INTO documents_fts (documents_fts, rowid, title, content, scope)
    SELECT 'delete', d.seq, d.title, c.content, ${SCOPE_TOKENS} ${FOLDED_OTHERWISE};
  INSERT INTO documents_fts (rowid, title, content, scope)
    SELECT d.seq, folio_search_text(d.title), folio_search_text(c.content), ${SCOPE_TOKENS} ${FOLDED_OTHERWISE};
  `,
  // The index's rowid is -seq instead of seq, so that the newest writes come
  // first in ascending rowid order. A search walks newest first, and FTS5
  // reads a term's entries lazily only in ascending order: in descending
  // order it first loads each segment's whole list of every term, the scope
  // tokens' (thousands of documents) too. The index is
  // rebuilt under the new rowids, each document's text as searchText makes
  // it, and merged into one segment.
  `
  ${REINDEX_BEFORE_19}
  `,
  // searchText lowers the text it folds (src/domain/search.ts), as queries
  // are lowered: capitals the tokenizer does not fold (Cherokee, Georgian's
  // Mtavruli, Adlam, Osage, …) were never found. The index is rebuilt as
  // migration 12 built it.
  `
  ${REINDEX_BEFORE_19}
  `,
  // Document-level detail instead of column-level: the index records which
  // documents hold a word, not in which of their columns. Searches never
  // asked for columns but to keep terms off the scope tokens, which now
  // begin with SCOPE_MARK instead (search.ts). The index is three times
  // smaller, and writes and searches do less. FTS5 options cannot be altered:
  // the index is made anew, set up as migrations 4, 6 and 8 set it, and
  // rebuilt from the documents.
  documentLevelIndex('1 2 3'),
  // What the search index was built with, where it is not the schema:
  // the Unicode version of the folding that made its text (searchText, by
  // Node.js's own Unicode data). migrate() (database.ts) rebuilds the index
  // when the running Node.js's differs, and so once after this migration:
  // the index does not say which Unicode made it.
  `
  CREATE TABLE search_index_facts (
    name   TEXT PRIMARY KEY,
    value  TEXT NOT NULL
  ) WITHOUT ROWID;
  `,
  // No three-letter prefix index: an edit writes every word of its new
  // text under a new rowid and removes the old text's (migration 12), each
  // word with one entry per prefix length, and a document's three-letter
  // prefixes were a third of its entries. A three-letter term is now read
  // as longer prefixes are, by merging the lists of the words it begins (or
  // as the word alone when none extends it: wholeWords, search.ts). The
  // index is made anew, set up as migration 14 set it but for the
  // prefixes, and rebuilt from the documents.
  documentLevelIndex('1 2'),
  // Who sees a project is its creator and its sharees (visibility.ts):
  // found by index on both sides, not by reading every project.
  `
  CREATE INDEX projects_by_creator ON projects (creator_id);
  `,
  // Document history (DESIGN §7): every change of a document's title or
  // content is a revision, numbered per document from 1. A rowid table
  // with a unique index rather than WITHOUT ROWID, whose rows should stay
  // small: a revision holds a whole document. Each document gets its
  // current state as its first revision, of no known author.
  `
  CREATE TABLE document_revisions (
    document_id  TEXT NOT NULL,
    number       INTEGER NOT NULL,
    created_at   TEXT NOT NULL,
    title        TEXT NOT NULL,
    content      TEXT NOT NULL,
    user_id      TEXT,
    key_name     TEXT,
    UNIQUE (document_id, number)
  );
  INSERT INTO document_revisions (document_id, number, created_at, title, content)
    SELECT d.id, 1, coalesce(d.updated_at, d.created_at), d.title, c.content
    FROM documents d JOIN document_contents c ON c.seq = d.seq;
  `,
  // A document's Markdown is stored once, as its newest revision's: every
  // change records a revision (DESIGN §7) and pruning keeps the newest, so
  // document_contents held a second copy of it, written by every write.
  // documents.revision names the newest revision. A document whose newest
  // revision is not its current state (none should be) first gets one that
  // is, of no known author, so that nothing is lost.
  `
  INSERT INTO document_revisions (document_id, number, created_at, title, content)
    SELECT d.id, coalesce(r.number, 0) + 1, coalesce(d.updated_at, d.created_at), d.title, c.content
    ${WITH_CONTENT_BEFORE_19}
    LEFT JOIN document_revisions r ON r.document_id = d.id
      AND r.number = (SELECT max(number) FROM document_revisions WHERE document_id = d.id)
    WHERE r.number IS NULL OR r.title IS NOT d.title OR r.content IS NOT c.content;
  ALTER TABLE documents ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;
  UPDATE documents SET revision = (SELECT max(number) FROM document_revisions WHERE document_id = documents.id);
  DROP TABLE document_contents;
  `,
  // searchText makes a space of every character that makes no word to the
  // search's own word splitting (src/domain/search.ts): the tokenizer read
  // those its Unicode data does not know (bidi isolates, U+061C, newer
  // currency signs, symbols and emoji) as letters, so that the words beside
  // them were not found. The index is rebuilt from the documents.
  REINDEX_EVERY_DOCUMENT,
  // searchText keeps the first MARK_RUN marks of a longer run
  // (src/domain/search.ts): normalizing a long run took time in the square
  // of its length. The index is rebuilt from the documents, emptied first:
  // removing a document that holds such a run as it was indexed would fold
  // it the slow way.
  REINDEX_EVERY_DOCUMENT,
];

/** The schema version whose migration last rebuilt the whole search index (REINDEX_EVERY_DOCUMENT). */
export const LAST_FULL_REINDEX = 21;

/** The row of search_index_facts that holds the Unicode version of the index's folding. */
export const INDEX_UNICODE_FACT = 'unicode';
