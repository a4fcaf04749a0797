import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase, SEARCH_UNICODE } from '../src/store/sqlite/database.js';
import { DOCUMENTS_WITH_CONTENT, LAST_FULL_REINDEX, migrations, SEARCH_TOKENIZER } from '../src/store/sqlite/migrations.js';
import { scopeTokens } from '../src/store/sqlite/search.js';
import { openSqliteStore, type SqliteStoreOptions } from '../src/store/sqlite/store.js';
import type { Store } from '../src/store/store.js';
import { FOLDED_BY_FOLIO, foldTitle, SCOPE_MARK, searchTerms, searchText } from '../src/domain/search.js';
import { indexedWords } from './helpers.js';

/**
 * A database written by the first schema, where seq counted down with every
 * write, opened by today's Folio: lists, searches and new writes must come
 * out exactly as if it had been written today.
 */
describe('migrations from the first schema: seq counting up, one-letter prefixes, index page size, stored sort times', () => {
  let dir: string;
  let file: string;
  let store: Store;
  /** What the store said before migrating (the server prints it). */
  const heard: [number, number][] = [];
  const user = 'user_migrationowner0001';
  const project = 'proj-migration-1';
  /** Documents in the order they were written (oldest first), with the seq the first schema gave them. */
  const written = [
    { id: '00000000-0000-4000-8000-000000000001', title: 'Alpha plan', content: 'budget draft', at: '2026-01-01T00:00:00.000Z', project: null },
    { id: '00000000-0000-4000-8000-000000000002', title: 'Beta notes', content: 'budget review', at: '2026-01-02T00:00:00.000Z', project },
    { id: '00000000-0000-4000-8000-000000000003', title: 'Gamma', content: 'unrelated text', at: '2026-01-03T00:00:00.000Z', project: null },
    { id: '00000000-0000-4000-8000-000000000004', title: 'Delta budget', content: 'final', at: '2026-01-04T00:00:00.000Z', project },
  ];

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'folio-migrate-'));
    file = join(dir, 'folio.db');
    const db = openDatabase(file);
    db.exec(migrations[0]!);
    db.pragma('user_version = 1');
    const now = '2025-12-01T00:00:00.000Z';
    db.prepare('INSERT INTO users (id, email, name, plan, created_at) VALUES (?, ?, ?, ?, ?)').run(user, 'old@folio.test', 'Old', 'pro', now);
    db.prepare('INSERT INTO projects (id, workspace_id, is_org, creator_id, name, description, created_at) VALUES (?, ?, 0, ?, ?, NULL, ?)').run(project, user, user, 'Plans', now);
    written.forEach((d, i) => {
      const seq = -(i + 1);
      db.prepare(
        `INSERT INTO documents (seq, id, workspace_id, creator_id, project_id, thread_id, title, created_at, high_water_at)
         VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?)`,
      ).run(seq, d.id, user, user, d.project, d.title, d.at, d.at);
      db.prepare('INSERT INTO document_contents (seq, content) VALUES (?, ?)').run(seq, d.content);
      db.prepare('INSERT INTO documents_fts (rowid, title, content, scope) VALUES (?, ?, ?, ?)').run(seq, d.title, d.content, scopeTokens(user, d.project));
    });
    db.prepare(
      `INSERT INTO chats (id, workspace_id, creator_id, project_id, title, title_folded, message_count, created_at)
       VALUES ('chat-1', ?, ?, ?, 'Plans', 'plans', 2, '2026-01-05T00:00:00.000Z')`,
    ).run(user, user, project);
    // A title folded as the first schema folded it: lower case only, its final sigma kept.
    db.prepare(
      `INSERT INTO chats (id, workspace_id, creator_id, project_id, title, title_folded, message_count, created_at)
       VALUES ('chat-2', ?, ?, NULL, 'ΟΔΟΣ Straße', 'οδος straße', 1, '2026-01-04T00:00:00.000Z')`,
    ).run(user, user);
    db.close();
    store = openSqliteStore(file, { onMigrate: (from, to) => heard.push([from, to]) });
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const viewer = { userId: user, orgId: null };
  const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

  it('keeps every document, newest first, in lists and searches, including by project', async () => {
    const newestFirst = [...written].reverse();
    assert.deepEqual(ids(await store.listDocuments(viewer, { limit: 20 })), ids(newestFirst));
    assert.deepEqual(ids(await store.listDocuments(viewer, { limit: 20, terms: ['budget'] })), [written[3]!.id, written[1]!.id, written[0]!.id]);
    assert.deepEqual(ids(await store.listDocuments(viewer, { limit: 2, terms: ['budg'] })), [written[3]!.id, written[1]!.id]);
    assert.deepEqual(ids(await store.listDocuments(viewer, { limit: 20, terms: ['budget'], projectId: project })), [written[3]!.id, written[1]!.id]);
    assert.equal((await store.getDocument(viewer, written[2]!.id))?.contentMarkdown, 'unrelated text');
    assert.deepEqual((await store.listChats(viewer, { limit: 20 })).map((c) => [c.id, c.project?.name]), [['chat-1', 'Plans'], ['chat-2', undefined]]);
  });

  it('folds stored chat titles again as queries are folded', async () => {
    for (const q of ['ΟΔΟΣ', 'οδοσ', 'STRASSE']) {
      assert.deepEqual((await store.listChats(viewer, { limit: 20, titleContains: foldTitle(q) })).map((c) => c.id), ['chat-2'], q);
    }
  });

  it('numbers documents upwards in the order they were written, the search index under the same numbers (negated)', () => {
    const db = new Database(file, { readonly: true });
    try {
      assert.equal(db.pragma('user_version', { simple: true }), migrations.length);
      const rows = db.prepare('SELECT seq, id FROM documents ORDER BY seq').all() as { seq: number; id: string }[];
      assert.deepEqual(rows.map((r) => r.id), ids(written));
      assert.ok(rows.every((r) => r.seq > 0));
      // Each document kept its Markdown: renumbered with it (migration 2), then its first revision's (migrations 18 and 19).
      const contents = db.prepare(`SELECT c.content ${DOCUMENTS_WITH_CONTENT} ORDER BY d.seq`).pluck().all();
      assert.deepEqual(contents, written.map((d) => d.content));
      // The index's rowid is -seq (migration 12): ascending, newest first.
      const indexed = db.prepare("SELECT -rowid FROM documents_fts WHERE documents_fts MATCH 'budget' ORDER BY rowid").pluck().all();
      assert.deepEqual(indexed, [rows[3]!.seq, rows[1]!.seq, rows[0]!.seq]);
      const inProject = db.prepare(`SELECT -rowid FROM documents_fts WHERE documents_fts MATCH ? ORDER BY rowid`).pluck().all(`"${scopeTokens(user, project).split(' ')[1]}"`);
      assert.deepEqual(inProject, [rows[3]!.seq, rows[1]!.seq]);
    } finally {
      db.close();
    }
  });

  it('says it is migrating, from which version to which, and only when there is something to do', async () => {
    assert.deepEqual(heard, [[1, migrations.length]]);
    const again: [number, number][] = [];
    const reopened = openSqliteStore(file, { onMigrate: (from, to) => again.push([from, to]) });
    await reopened.close();
    assert.deepEqual(again, []);
  });

  it('rebuilds the search index with one- and two-letter prefixes only, finding the same documents', async () => {
    // Without a one-character prefix index a one-letter term merges the lists
    // of every word with that letter (about 120 ms at 100,000 documents).
    const db = new Database(file, { readonly: true });
    try {
      const sql = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'documents_fts'").pluck().get() as string;
      // One- and two-letter prefixes, no three-letter ones (migration 16).
      assert.match(sql, /prefix\s*=\s*'1 2'/);
      // Marks inside words (migration 5); document-level detail, scope tokens marked (migration 14).
      assert.match(sql, /detail\s*=\s*none/);
      assert.ok(sql.includes(SEARCH_TOKENIZER));
      // Index pages of about a database page (migration 4).
      assert.equal(db.prepare("SELECT v FROM documents_fts_config WHERE k = 'pgsz'").pluck().get(), 4050);
      // FTS5's own merging off, the writes pace it (migration 6).
      assert.equal(db.prepare("SELECT v FROM documents_fts_config WHERE k = 'automerge'").pluck().get(), 0);
      // Write-time merge steps merge a level once it holds eight segments (migration 8).
      assert.equal(db.prepare("SELECT v FROM documents_fts_config WHERE k = 'usermerge'").pluck().get(), 8);
    } finally {
      db.close();
    }
    // "b": budget (first, second), Beta (second), budget (fourth); "g": Gamma.
    assert.deepEqual(ids(await store.listDocuments(viewer, { limit: 20, terms: ['b'] })), [written[3]!.id, written[1]!.id, written[0]!.id]);
    assert.deepEqual(ids(await store.listDocuments(viewer, { limit: 20, terms: ['g'] })), [written[2]!.id]);
    assert.deepEqual(ids(await store.listDocuments(viewer, { limit: 20, terms: ['b', 'r'] })), [written[1]!.id]);
    // Three letters, read without a prefix index of their own: "bud" begins budget, "dra" draft, "unr" unrelated.
    assert.deepEqual(ids(await store.listDocuments(viewer, { limit: 20, terms: ['bud'] })), [written[3]!.id, written[1]!.id, written[0]!.id]);
    assert.deepEqual(ids(await store.listDocuments(viewer, { limit: 20, terms: ['dra', 'alp'] })), [written[0]!.id]);
    assert.deepEqual(ids(await store.listDocuments(viewer, { limit: 20, terms: ['unr'] })), [written[2]!.id]);
  });

  it('stores each document\'s sort time, so that a page of a list is chosen from the indexes alone (migrations 7 and 9)', () => {
    const db = new Database(file);
    try {
      // A computed column would make SQLite read the table row of every document a list considers.
      const sortAt = (db.prepare('SELECT * FROM pragma_table_xinfo(?) WHERE name = ?').get('documents', 'sort_at') as { hidden: number });
      assert.equal(sortAt.hidden, 0, 'sort_at is a stored column');
      const sorted = db.prepare('SELECT id, sort_at FROM documents ORDER BY seq').all() as { id: string; sort_at: string }[];
      assert.deepEqual(sorted, written.map((d) => ({ id: d.id, sort_at: d.at })));
      const columns = (index: string) => db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').pluck().all(index);
      assert.deepEqual(columns('documents_by_workspace'), ['workspace_id', 'sort_at', 'id', 'project_id']);
      assert.deepEqual(columns('documents_by_project'), ['project_id', 'sort_at', 'id']);
      const page = db.prepare(
        "EXPLAIN QUERY PLAN SELECT seq, sort_at, id FROM documents WHERE workspace_id = ? AND project_id IS NULL ORDER BY sort_at DESC, id DESC LIMIT 20",
      ).all(user) as { detail: string }[];
      assert.match(page.map((r) => r.detail).join('\n'), /COVERING INDEX documents_by_workspace/);
      // The sort time can only be the update time, or the creation time before any update.
      assert.throws(() => db.prepare('UPDATE documents SET updated_at = ? WHERE id = ?').run('2026-03-01T00:00:00.000Z', written[2]!.id), /CHECK constraint/);
      // Chats the same (migration 9).
      assert.equal((db.prepare('SELECT * FROM pragma_table_xinfo(?) WHERE name = ?').get('chats', 'sort_at') as { hidden: number }).hidden, 0);
      assert.deepEqual(db.prepare('SELECT id, sort_at, message_count FROM chats ORDER BY id').all(), [
        { id: 'chat-1', sort_at: '2026-01-05T00:00:00.000Z', message_count: 2 },
        { id: 'chat-2', sort_at: '2026-01-04T00:00:00.000Z', message_count: 1 },
      ]);
      assert.deepEqual(columns('chats_by_workspace'), ['workspace_id', 'sort_at', 'id', 'project_id']);
      assert.deepEqual(columns('chats_by_project'), ['project_id', 'sort_at', 'id']);
    } finally {
      db.close();
    }
  });

  it('puts documents written afterwards first, and finds edited text only under its new words', async () => {
    const created = await store.createDocument(viewer, { title: 'Epsilon budget', contentMarkdown: 'new', projectId: null, threadId: null }, '2026-02-01T00:00:00.000Z');
    assert.ok(created);
    const edited = await store.updateDocument(viewer, written[0]!.id, { contentMarkdown: 'rewritten entirely', expectedUpdatedAt: null }, () => '2026-02-02T00:00:00.000Z');
    assert.equal(edited.status, 'updated');
    assert.deepEqual(ids(await store.listDocuments(viewer, { limit: 20, terms: ['budget'] })), [created.id, written[3]!.id, written[1]!.id]);
    assert.deepEqual(ids(await store.listDocuments(viewer, { limit: 20, terms: ['rewritten'] })), [written[0]!.id]);
    assert.deepEqual(ids(await store.listDocuments(viewer, { limit: 3 })), [written[0]!.id, created.id, written[3]!.id]);
  });
});

/** Documents as an older schema wrote them: one user's, outside projects. */
interface OldDocument {
  id: string;
  title: string;
  content: string;
}

/**
 * Writes a database at schema `version` into `file`: the migrations before
 * it (with `searchText` as their folio_search_text), `user`, and each
 * document with its search index entry, under `rowid(seq)` and its text as
 * `indexed` makes it, as that schema indexed them.
 */
function databaseAt(
  file: string,
  version: number,
  user: string,
  documents: readonly OldDocument[],
  index: { rowid: (seq: number) => number; indexed: (text: string) => string; searchText?: (text: string) => string },
): void {
  const db = openDatabase(file);
  db.function('folio_fold_title', { deterministic: true }, (title) => foldTitle(String(title)));
  if (index.searchText) db.function('folio_search_text', { deterministic: true }, (text) => index.searchText!(String(text)));
  for (let i = 0; i < version; i++) db.exec(migrations[i]!);
  db.pragma(`user_version = ${version}`);
  const at = '2026-01-01T00:00:00.000Z';
  db.prepare('INSERT INTO users (id, email, name, plan, created_at) VALUES (?, ?, ?, ?, ?)').run(user, `${user}@folio.test`, 'M', 'pro', at);
  documents.forEach((d, i) => {
    const seq = i + 1;
    db.prepare(
      `INSERT INTO documents (seq, id, workspace_id, creator_id, project_id, thread_id, title, created_at, sort_at, high_water_at)
       VALUES (?, ?, ?, ?, NULL, NULL, ?, ?, ?, ?)`,
    ).run(seq, d.id, user, user, d.title, at, at, at);
    db.prepare('INSERT INTO document_contents (seq, content) VALUES (?, ?)').run(seq, d.content);
    db.prepare('INSERT INTO documents_fts (rowid, title, content, scope) VALUES (?, ?, ?, ?)').run(
      index.rowid(seq),
      index.indexed(d.title),
      index.indexed(d.content),
      scopeTokens(user, null),
    );
  });
  db.close();
}

/**
 * For the suite that calls it: a database written at schema `version`
 * (databaseAt), changed by `alter` where that schema's own writes could
 * not make what the suite needs, then opened by today's store with
 * `options`; closed and removed after the suite. `file` and `store` are set
 * before its first test.
 */
function databaseFrom(
  version: number,
  user: string,
  documents: readonly OldDocument[],
  index: Parameters<typeof databaseAt>[4],
  more: { alter?: (db: Database.Database) => void; options?: SqliteStoreOptions } = {},
): { file: string; store: Store } {
  const opened = { file: '', store: undefined as unknown as Store };
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), `folio-migrate-${version + 1}-`));
    opened.file = join(dir, 'folio.db');
    databaseAt(opened.file, version, user, documents, index);
    if (more.alter) {
      const db = new Database(opened.file);
      try {
        more.alter(db);
      } finally {
        db.close();
      }
    }
    opened.store = openSqliteStore(opened.file, more.options);
  });
  after(async () => {
    await opened.store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return opened;
}

/**
 * A database indexed as Folio indexed documents before migration 11 (their
 * text as it is), opened by today's Folio: documents with diacritics outside
 * Latin are indexed again as searchText reads them, the others are left as
 * they were, and edits afterwards remove exactly what the index holds.
 */
describe('migration 11: the search index reads text without the diacritics of every script', () => {
  const user = 'user_migrationowner0011';
  const viewer = { userId: user, orgId: null };
  const written = [
    { id: '00000000-0000-4000-8000-000000000011', title: 'Ελληνικά', content: 'Κείμενο για το Øresund' },
    { id: '00000000-0000-4000-8000-000000000012', title: 'Plain notes', content: 'ascii only' },
    { id: '00000000-0000-4000-8000-000000000013', title: 'Café', content: 'crème, which the tokenizer folded already' },
  ];
  const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

  const opened = databaseFrom(10, user, written, { rowid: (seq) => seq, indexed: (text) => text });

  it('indexes again the documents whose words searchText changes, and finds them without their diacritics', async () => {
    assert.deepEqual(ids(await opened.store.listDocuments(viewer, { limit: 20, terms: ['ελληνικα'] })), [written[0]!.id]);
    assert.deepEqual(ids(await opened.store.listDocuments(viewer, { limit: 20, terms: ['oresund', 'κειμενο'] })), [written[0]!.id]);
    assert.deepEqual(ids(await opened.store.listDocuments(viewer, { limit: 20, terms: ['creme'] })), [written[2]!.id]);
    assert.deepEqual(ids(await opened.store.listDocuments(viewer, { limit: 20, terms: ['ascii'] })), [written[1]!.id]);
    // No word as it was indexed before is left, and none twice.
    assert.equal(indexedWords(opened.file), 'already ascii cafe creme folded notes only oresund plain the tokenizer which για ελληνικα κειμενο το');
  });

  it('edits such a document afterwards so that only its new words are found', async () => {
    const edited = await opened.store.updateDocument(viewer, written[0]!.id, { title: 'Renamed', contentMarkdown: 'nothing else', expectedUpdatedAt: null }, () => '2026-02-02T00:00:00.000Z');
    assert.equal(edited.status, 'updated');
    assert.deepEqual(ids(await opened.store.listDocuments(viewer, { limit: 20, terms: ['ελληνικα'] })), []);
    assert.deepEqual(ids(await opened.store.listDocuments(viewer, { limit: 20, terms: ['renamed', 'nothing'] })), [written[0]!.id]);
  });
});

describe('migration 13: the search index reads the text it folds in lower case', () => {
  const user = 'user_migrationowner0013';
  const viewer = { userId: user, orgId: null };
  const written = [
    { id: '00000000-0000-4000-8000-000000000131', title: 'ᏣᎳᎩ', content: 'ᲡᲐᲥᲐᲠᲗᲕᲔᲚᲝ and Ελληνικά' },
    { id: '00000000-0000-4000-8000-000000000132', title: 'Plain notes', content: 'ascii only' },
  ];
  const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
  // searchText as schema 12 indexed it: folded, but not lowered.
  const before12 = (text: string) => (FOLDED_BY_FOLIO.test(text) ? text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').normalize('NFC') : text);

  const opened = databaseFrom(12, user, written, { rowid: (seq) => -seq, indexed: before12, searchText: before12 });

  it('indexes every document again, so that capitals the tokenizer does not fold are found in either case', async () => {
    for (const q of ['ᏣᎳᎩ', 'ꮳꮃꭹ', 'საქართველო', 'ᲡᲐᲥ', 'ΕΛΛΗΝΙΚΑ']) {
      assert.deepEqual(ids(await opened.store.listDocuments(viewer, { limit: 20, terms: searchTerms(q) })), [written[0]!.id], q);
    }
    assert.deepEqual(ids(await opened.store.listDocuments(viewer, { limit: 20, terms: ['plain', 'ascii'] })), [written[1]!.id]);
    // No word as it was indexed before is left, and none twice.
    assert.equal(indexedWords(opened.file), 'and ascii notes only plain ελληνικα საქართველო ꮳꮃꭹ');
  });
});

describe('migration 14: the search index without columns, its scope tokens marked', () => {
  const user = 'user_migrationowner0014';
  const viewer = { userId: user, orgId: null };
  const written = [
    { id: '00000000-0000-4000-8000-000000000141', title: 'Plain notes', content: 'ascii only' },
    { id: '00000000-0000-4000-8000-000000000142', title: 'Winter', content: 'walks and Ελληνικά' },
  ];
  const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

  const rebuiltForUnicode: unknown[] = [];

  const opened = databaseFrom(13, user, written, { rowid: (seq) => -seq, indexed: searchText, searchText }, {
    options: { onReindex: (from, to) => rebuiltForUnicode.push([from, to]) },
  });

  it('records the Unicode version of the index it has just rebuilt, without rebuilding it again (migration 15)', () => {
    assert.deepEqual(rebuiltForUnicode, []);
    const db = new Database(opened.file, { readonly: true });
    try {
      assert.equal(db.prepare("SELECT value FROM search_index_facts WHERE name = 'unicode'").pluck().get(), SEARCH_UNICODE);
    } finally {
      db.close();
    }
    // What migrate() counts on: migration 14 is the last to rebuild the whole index.
    assert.ok(migrations[LAST_FULL_REINDEX - 1]!.includes("VALUES ('delete-all')"));
    assert.ok(migrations.slice(LAST_FULL_REINDEX).every((m) => !m.includes('delete-all')));
  });

  it('indexes every document again with document-level detail, each scope token after the mark', () => {
    const db = new Database(opened.file);
    try {
      const sql = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'documents_fts'").pluck().get() as string;
      assert.match(sql, /detail\s*=\s*none/);
      assert.ok(sql.includes(SEARCH_TOKENIZER) && SEARCH_TOKENIZER.includes(`tokenchars '${SCOPE_MARK}'`));
      assert.equal(db.prepare("SELECT v FROM documents_fts_config WHERE k = 'pgsz'").pluck().get(), 4050);
      assert.equal(db.prepare("SELECT v FROM documents_fts_config WHERE k = 'automerge'").pluck().get(), 0);
      assert.equal(db.prepare("SELECT v FROM documents_fts_config WHERE k = 'usermerge'").pluck().get(), 8);
      db.exec(`CREATE VIRTUAL TABLE temp.terms USING fts5vocab(main, documents_fts, 'row')`);
      const marked = db.prepare('SELECT term, doc FROM temp.terms WHERE substr(term, 1, 1) = ? ORDER BY term').all(SCOPE_MARK);
      assert.deepEqual(marked, scopeTokens(user, null).split(' ').sort().map((term) => ({ term, doc: 2 })));
      db.prepare("INSERT INTO documents_fts (documents_fts, rank) VALUES ('integrity-check', 0)").run();
    } finally {
      db.close();
    }
    assert.equal(indexedWords(opened.file), 'and ascii notes only plain walks winter ελληνικα');
  });

  it('finds documents by their words only, never by a letter of their scope tokens', async () => {
    // Every document has a scope token of w… and one of n… (outside projects).
    assert.deepEqual(ids(await opened.store.listDocuments(viewer, { limit: 20, terms: ['w'] })), [written[1]!.id]);
    assert.deepEqual(ids(await opened.store.listDocuments(viewer, { limit: 20, terms: ['n'] })), [written[0]!.id]);
    assert.deepEqual(ids(await opened.store.listDocuments(viewer, { limit: 20, terms: searchTerms('ΕΛΛΗΝΙΚΑ walk') })), [written[1]!.id]);
    const edited = await opened.store.updateDocument(viewer, written[1]!.id, { contentMarkdown: 'nothing else', expectedUpdatedAt: null }, () => '2026-02-02T00:00:00.000Z');
    assert.equal(edited.status, 'updated');
    assert.deepEqual(ids(await opened.store.listDocuments(viewer, { limit: 20, terms: ['walks'] })), []);
    assert.deepEqual(ids(await opened.store.listDocuments(viewer, { limit: 20, terms: ['n'] })), [written[1]!.id, written[0]!.id]);
  });
});

describe('the search index rebuilt for the Unicode version of the running Node.js', () => {
  /** A new store on `file`, with one user. */
  const storeWithUser = async (file: string) => {
    const store = openSqliteStore(file);
    const now = '2026-01-01T00:00:00.000Z';
    const user = await store.createUser({ email: 'unicode@example.com', name: null, plan: 'pro', now });
    return { store, user, now };
  };
  const unicodeOf = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return db.prepare("SELECT value FROM search_index_facts WHERE name = 'unicode'").pluck().get();
    } finally {
      db.close();
    }
  };

  it('records the version a new database is indexed with, with nothing to rebuild', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'folio-unicode-'));
    const file = join(dir, 'folio.db');
    try {
      const heard: unknown[] = [];
      const store = openSqliteStore(file, { onReindex: (from, to) => heard.push([from, to]) });
      await store.close();
      assert.equal(unicodeOf(file), SEARCH_UNICODE);
      assert.deepEqual(heard, []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rebuilds an index folded under another version, leaving only the words its documents hold now', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'folio-unicode-'));
    const file = join(dir, 'folio.db');
    try {
      const { store, user, now } = await storeWithUser(file);
      const viewer = { userId: user.id, orgId: null };
      const doc = await store.createDocument(viewer, { title: 'Ελληνικά', contentMarkdown: 'plain words', projectId: null, threadId: null }, now);
      const chat = await store.createChat({ creatorId: user.id, workspaceId: user.id, projectId: null, title: 'ΠΡΟΣΦΟΡΑ Straße', messageCount: 1, now });
      await store.close();

      // As an older Node.js might have folded the title: a spelling today's folding never writes, which no edit would remove.
      const db = new Database(file);
      db.prepare("UPDATE search_index_facts SET value = '1.1' WHERE name = 'unicode'").run();
      // As an older Node.js might have folded the chat's title.
      db.prepare('UPDATE chats SET title_folded = ? WHERE id = ?').run('προσφορα straße', chat.id);
      const seq = db.prepare('SELECT seq FROM documents WHERE id = ?').pluck().get(doc!.id) as number;
      db.prepare('INSERT INTO documents_fts (rowid, title, content, scope) VALUES (?, ?, ?, ?)').run(-seq - 1_000_000, 'ελληνικάold', '', '');
      db.close();
      assert.equal(indexedWords(file), 'plain words ελληνικάold ελληνικα');

      const heard: unknown[] = [];
      const reopened = openSqliteStore(file, { onReindex: (from, to) => heard.push([from, to]) });
      try {
        assert.deepEqual(heard, [['1.1', SEARCH_UNICODE]]);
        assert.equal(indexedWords(file), 'plain words ελληνικα');
        assert.equal(unicodeOf(file), SEARCH_UNICODE);
        const found = await reopened.listDocuments(viewer, { limit: 20, terms: searchTerms('ΕΛΛΗΝΙΚΑ words') });
        assert.deepEqual(found.map((d) => d.id), [doc!.id]);
        // Chat titles are folded again too: the stored fold is today's.
        const db2 = new Database(file, { readonly: true });
        assert.equal(db2.prepare('SELECT title_folded FROM chats WHERE id = ?').pluck().get(chat.id), foldTitle('ΠΡΟΣΦΟΡΑ Straße'));
        db2.close();
      } finally {
        await reopened.close();
      }
      // Once only.
      const again: unknown[] = [];
      await openSqliteStore(file, { onReindex: (from, to) => again.push([from, to]) }).close();
      assert.deepEqual(again, []);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rebuilds once a database from before Folio recorded the version (migration 15)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'folio-unicode-'));
    const file = join(dir, 'folio.db');
    try {
      // A database as schema 14 wrote it, built by its own migrations: not
      // today's schema with the later migrations' tables taken away, which
      // every new migration would have to be added to.
      const kept = { id: '00000000-0000-4000-8000-000000000151', title: 'Kept', content: 'words' };
      databaseAt(file, 14, 'user_migrationowner0015', [kept], { rowid: (seq) => -seq, indexed: searchText, searchText });

      const heard: unknown[] = [];
      const migrated: unknown[] = [];
      const reopened = openSqliteStore(file, { onMigrate: (from, to) => migrated.push([from, to]), onReindex: (from, to) => heard.push([from, to]) });
      await reopened.close();
      assert.deepEqual(migrated, [[14, migrations.length]]);
      // Migration 16 rebuilds the whole index, by this Node.js's folding: no second rebuild.
      assert.deepEqual(heard, []);
      assert.equal(unicodeOf(file), SEARCH_UNICODE);
      assert.equal(indexedWords(file), 'kept words');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Migration 18 (DESIGN §7): a database from before history began gives
 * each document one revision, its current state, of no known author; the
 * revisions written afterwards are numbered after it.
 */
describe('migration 18: every document begins its history with its current state', () => {
  const user = 'user_migrationowner0018';
  const viewer = { userId: user, orgId: null };
  const written = [
    { id: '00000000-0000-4000-8000-000000000181', title: 'Never updated', content: 'as created' },
    { id: '00000000-0000-4000-8000-000000000182', title: 'Updated', content: 'as updated' },
  ];
  const updatedAt = '2026-01-05T00:00:00.000Z';

  const opened = databaseFrom(17, user, written, { rowid: (seq) => -seq, indexed: searchText, searchText }, {
    alter: (db) => db.prepare('UPDATE documents SET updated_at = ?, sort_at = ? WHERE id = ?').run(updatedAt, updatedAt, written[1]!.id),
  });

  it('gives each document revision 1: its title and content, at its updatedAt or else its createdAt, by nobody', async () => {
    const times = ['2026-01-01T00:00:00.000Z', updatedAt];
    for (const [i, d] of written.entries()) {
      const first = { number: 1, createdAt: times[i]!, title: d.title, userId: null, keyName: null };
      assert.deepEqual(await opened.store.listRevisions(viewer, d.id, 20), [first], d.title);
      assert.deepEqual(await opened.store.getRevision(viewer, d.id, 1), { ...first, contentMarkdown: d.content }, d.title);
      assert.equal(await opened.store.getRevision(viewer, d.id, 2), 'no_revision');
    }
    const db = new Database(opened.file, { readonly: true });
    try {
      assert.equal(db.prepare('SELECT count(*) FROM document_revisions').pluck().get(), written.length);
    } finally {
      db.close();
    }
  });

  it('numbers the revisions of later changes after it', async () => {
    const author = { userId: user, keyName: 'agent' };
    const outcome = await opened.store.updateDocument(viewer, written[1]!.id, { contentMarkdown: 'changed', expectedUpdatedAt: updatedAt, author }, () => '2026-02-01T00:00:00.000Z');
    assert.equal(outcome.status, 'updated');
    assert.deepEqual(
      (await opened.store.listRevisions(viewer, written[1]!.id, 20))?.map((r) => [r.number, r.createdAt, r.userId, r.keyName]),
      [
        [2, '2026-02-01T00:00:00.000Z', user, 'agent'],
        [1, updatedAt, null, null],
      ],
    );
  });
});

/**
 * Migration 19: a document's Markdown is stored once, as its newest
 * revision's. A document whose newest revision is not its current state
 * (none should be: every change records one) gets one that is, so that
 * nothing is lost; the table that held the second copy goes.
 */
describe("migration 19: a document's Markdown is its newest revision's", () => {
  const user = 'user_migrationowner0019';
  const viewer = { userId: user, orgId: null };
  const at = '2026-01-01T00:00:00.000Z';
  const written = [
    { id: '00000000-0000-4000-8000-000000000191', title: 'Edited once', content: 'second draft words' },
    { id: '00000000-0000-4000-8000-000000000192', title: 'Without history', content: 'never recorded' },
    { id: '00000000-0000-4000-8000-000000000193', title: 'Stale history', content: 'newer than its revision' },
  ];
  const revision = (id: string, number: number, title: string, content: string) => ({ id, number, title, content });
  const recorded = [
    revision(written[0]!.id, 1, 'Edited once', 'first draft words'),
    revision(written[0]!.id, 2, 'Edited once', 'second draft words'),
    revision(written[2]!.id, 1, 'Stale history', 'older than the document'),
  ];

  const opened = databaseFrom(18, user, written, { rowid: (seq) => -seq, indexed: searchText, searchText }, {
    alter: (db) => {
      const insert = db.prepare('INSERT INTO document_revisions (document_id, number, created_at, title, content) VALUES (?, ?, ?, ?, ?)');
      for (const r of recorded) insert.run(r.id, r.number, at, r.title, r.content);
    },
  });

  it('serves every document as it was, each with a newest revision that is its current state', async () => {
    for (const d of written) {
      assert.equal((await opened.store.getDocument(viewer, d.id))?.contentMarkdown, d.content, d.title);
      const [newest] = (await opened.store.listRevisions(viewer, d.id, 20)) ?? [];
      assert.ok(newest, d.title);
      assert.deepEqual(await opened.store.getRevision(viewer, d.id, newest.number), { ...newest, contentMarkdown: d.content }, d.title);
    }
    const numbers = async (id: string) => (await opened.store.listRevisions(viewer, id, 20))?.map((r) => r.number);
    assert.deepEqual(await numbers(written[0]!.id), [2, 1]);
    assert.deepEqual(await numbers(written[1]!.id), [1]);
    // The stale revision stays, and the current state is recorded after it.
    assert.deepEqual(await numbers(written[2]!.id), [2, 1]);
    assert.equal((await opened.store.getRevision(viewer, written[2]!.id, 1) as { contentMarkdown: string }).contentMarkdown, 'older than the document');
  });

  it('keeps no second copy of the Markdown', () => {
    const db = new Database(opened.file, { readonly: true });
    try {
      assert.equal(db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'document_contents'").pluck().get(), 0);
      assert.deepEqual(db.prepare('SELECT revision FROM documents ORDER BY seq').pluck().all(), [2, 1, 2]);
    } finally {
      db.close();
    }
  });

  it('edits a document afterwards as its next revision, and finds it only by its new words', async () => {
    const d = written[0]!;
    const outcome = await opened.store.updateDocument(viewer, d.id, { contentMarkdown: 'third version', expectedUpdatedAt: null }, () => '2026-02-01T00:00:00.000Z');
    assert.equal(outcome.status, 'updated');
    assert.equal((await opened.store.getDocument(viewer, d.id))?.contentMarkdown, 'third version');
    assert.deepEqual((await opened.store.listRevisions(viewer, d.id, 20))?.map((r) => r.number), [3, 2, 1]);
    const found = async (q: string) => (await opened.store.listDocuments(viewer, { terms: searchTerms(q), limit: 20 })).map((r) => r.id);
    assert.deepEqual(await found('third'), [d.id]);
    assert.deepEqual(await found('second'), []);
    assert.deepEqual(indexedWords(opened.file).split(' ').filter((w) => w === 'second' || w === 'draft'), []);
  });
});

/**
 * Migration 21: searchText keeps the first MARK_RUN marks of a longer run.
 * A document that schema 20 indexed with its whole run is indexed again;
 * removed the usual way, its words would be folded otherwise than they were
 * written, and left in the index.
 */
describe('migration 21: a long run of marks indexed as its first MARK_RUN', () => {
  it('indexes again a document indexed with its whole run, found and edited afterwards by its words as they are now', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'folio-migrate-21-'));
    const file = join(dir, 'folio.db');
    try {
      const store = openSqliteStore(file);
      const now = '2026-01-01T00:00:00.000Z';
      const user = await store.createUser({ email: 'marks@example.com', name: null, plan: 'pro', now });
      const viewer = { userId: user.id, orgId: null };
      // One mark repeated, which normalizing leaves as it is: schema 20 indexed this text as it stands.
      const word = `x${'\u064b'.repeat(100)}yz`;
      const doc = await store.createDocument(viewer, { title: 'Marks', contentMarkdown: `before ${word} after`, projectId: null, threadId: null }, now);
      await store.close();

      const db = new Database(file);
      const seq = db.prepare('SELECT seq FROM documents WHERE id = ?').pluck().get(doc!.id) as number;
      const scope = scopeTokens(user.id, null);
      db.prepare(`INSERT INTO documents_fts (documents_fts, rowid, title, content, scope) VALUES ('delete', ?, ?, ?, ?)`).run(-seq, 'marks', searchText(`before ${word} after`), scope);
      db.prepare('INSERT INTO documents_fts (rowid, title, content, scope) VALUES (?, ?, ?, ?)').run(-seq, 'marks', `before ${word} after`, scope);
      db.pragma('user_version = 20');
      db.close();
      assert.equal(indexedWords(file), `after before marks ${word}`);

      const reopened = openSqliteStore(file);
      try {
        assert.equal(indexedWords(file), `after before marks ${searchText(word)}`);
        const found = async (q: string) => (await reopened.listDocuments(viewer, { terms: searchTerms(q), limit: 20 })).map((r) => r.id);
        assert.deepEqual(await found(word), [doc!.id]);
        const outcome = await reopened.updateDocument(viewer, doc!.id, { contentMarkdown: 'plain', expectedUpdatedAt: null }, () => '2026-02-01T00:00:00.000Z');
        assert.equal(outcome.status, 'updated');
        assert.deepEqual(await found(word), []);
        assert.equal(indexedWords(file), 'marks plain');
      } finally {
        await reopened.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
