import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { migrate, openDatabase, type Db } from '../src/store/sqlite/database.js';
import { groupCommit } from '../src/store/sqlite/group-commit.js';
import { sqliteStoreOn } from '../src/store/sqlite/store.js';
import { factories, indexedWords, testClock } from './helpers.js';

describe('group commit of document writes', () => {
  let dir: string;
  let db: Db;
  let other: Db;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'folio-group-'));
    db = openDatabase(join(dir, 'folio.db'));
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)');
    other = new Database(join(dir, 'folio.db'), { readonly: true });
  });
  after(() => {
    other.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (text: string) => () => db.prepare('INSERT INTO notes (text) VALUES (?)').run(text).lastInsertRowid;
  const seenByOther = (text: string) => other.prepare('SELECT count(*) FROM notes WHERE text = ?').pluck().get(text) === 1;

  it('runs writes queued together in one transaction, answered only once it is committed', async () => {
    const writes = groupCommit(db);
    const observed: { own: boolean; other: boolean }[] = [];
    const first = writes.write(insert('a1'));
    const second = writes.write(() => {
      // The first write is visible to its own transaction, not yet to anyone else.
      observed.push({
        own: db.prepare("SELECT count(*) FROM notes WHERE text = 'a1'").pluck().get() === 1,
        other: seenByOther('a1'),
      });
      return insert('a2')();
    });
    assert.equal(seenByOther('a1'), false, 'nothing runs before the queue is flushed');
    const ids = await Promise.all([first, second]);
    assert.deepEqual(observed, [{ own: true, other: false }]);
    assert.equal(ids.length, 2);
    assert.ok(seenByOther('a1') && seenByOther('a2'), 'both committed by the time they are answered');
    assert.equal(db.inTransaction, false);
  });

  it('undoes a write that throws, alone: the others of its batch commit', async () => {
    const writes = groupCommit(db);
    const results = await Promise.allSettled([
      writes.write(insert('b1')),
      writes.write(() => {
        insert('b2')();
        insert('b1')(); // unique violation after a row was written
      }),
      writes.write(insert('b3')),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.match(String((results[1] as PromiseRejectedResult).reason), /UNIQUE/);
    assert.deepEqual([seenByOther('b1'), seenByOther('b2'), seenByOther('b3')], [true, false, true]);
  });

  it('undoes a large write alone, its undo journal kept in memory', async () => {
    assert.equal(db.pragma('temp_store', { simple: true }), 2, 'savepoint journals in memory (database.ts)');
    assert.equal(db.pragma('synchronous', { simple: true }), 2, 'every commit synced');
    const writes = groupCommit(db);
    const big = (tag: string, n: number) => () => {
      for (let i = 0; i < n; i++) insert(`${tag}-${i}-${'x'.repeat(1000)}`)();
    };
    // About 2 MB of pages changed before the failure: far past the 64 KiB at which SQLite would spill the journal to a file.
    const results = await Promise.allSettled([
      writes.write(big('d1', 500)),
      writes.write(() => {
        big('d2', 2000)();
        insert(`d1-0-${'x'.repeat(1000)}`)();
      }),
      writes.write(big('d3', 500)),
    ]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    const count = (tag: string) => other.prepare('SELECT count(*) FROM notes WHERE text LIKE ?').pluck().get(`${tag}-%`);
    assert.deepEqual([count('d1'), count('d2'), count('d3')], [500, 0, 500]);
  });

  it('waits for another process\'s write lock on a timer, serving the event loop meanwhile, then writes', async () => {
    const writes = groupCommit(db);
    const blocker = new Database(join(dir, 'folio.db'));
    blocker.exec('BEGIN IMMEDIATE');
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    try {
      let settled = false;
      const written = writes.write(insert('w1')).finally(() => (settled = true));
      const alsoQueued = writes.write(insert('w2'));
      await sleep(300);
      assert.equal(settled, false, 'not written while the lock is held');
      assert.ok(ticks > 0, 'the event loop ran timers meanwhile');
      assert.equal(db.prepare("SELECT count(*) FROM notes WHERE text LIKE 'w%'").pluck().get(), 0, 'reads go on');
      blocker.exec('COMMIT');
      await Promise.all([written, alsoQueued]);
      assert.deepEqual([seenByOther('w1'), seenByOther('w2')], [true, true]);
    } finally {
      clearInterval(ticker);
      if (blocker.inTransaction) blocker.exec('ROLLBACK');
      blocker.close();
    }
    // SQLite's own wait is left as it was for everything else.
    assert.equal(db.pragma('busy_timeout', { simple: true }), 5000);
  });

  it('fails each write that has waited waitForLockMs for the lock, keeping the later ones queued in order', async () => {
    const writes = groupCommit(db, { waitForLockMs: 300 });
    const blocker = new Database(join(dir, 'folio.db'));
    blocker.exec('BEGIN IMMEDIATE');
    try {
      const early = writes.write(insert('x1'));
      const earlyOutcome = early.then(
        () => 'written',
        (err: { code?: unknown }) => err.code,
      );
      await sleep(200);
      // Queued while the first waits: its own 300 ms start now.
      const late = writes.write(insert('x2'));
      const later = writes.write(() => db.prepare("SELECT count(*) FROM notes WHERE text = 'x2'").pluck().get());
      assert.equal(await earlyOutcome, 'SQLITE_BUSY');
      blocker.exec('COMMIT');
      await late;
      assert.equal(await later, 1, 'run after the write queued before it');
    } finally {
      if (blocker.inTransaction) blocker.exec('ROLLBACK');
      blocker.close();
    }
    assert.deepEqual([seenByOther('x1'), seenByOther('x2')], [false, true]);
  });

  it('fails the writes still waiting for the lock when closed, and takes no more', async () => {
    const writes = groupCommit(db);
    const blocker = new Database(join(dir, 'folio.db'));
    blocker.exec('BEGIN IMMEDIATE');
    try {
      const waiting = writes.write(insert('y1'));
      await sleep(50);
      writes.close();
      await assert.rejects(waiting, /closed/);
      await assert.rejects(writes.write(insert('y2')), /closed/);
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
    assert.deepEqual([seenByOther('y1'), seenByOther('y2')], [false, false]);
  });

  it('gives up on the lock after waitForLockMs, failing the batch with SQLITE_BUSY', async () => {
    const writes = groupCommit(db, { waitForLockMs: 150 });
    const blocker = new Database(join(dir, 'folio.db'));
    blocker.exec('BEGIN IMMEDIATE');
    const started = Date.now();
    try {
      await assert.rejects(writes.write(insert('w3')), (err: unknown) => (err as { code?: unknown }).code === 'SQLITE_BUSY');
      const waited = Date.now() - started;
      assert.ok(waited >= 150 && waited < 2000, `gave up after ${waited} ms`);
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
    await writes.write(insert('w4'));
    assert.deepEqual([seenByOther('w3'), seenByOther('w4')], [false, true]);
  });

  it('rejects every write of a batch whose transaction cannot be opened, and writes none of them', async () => {
    const writes = groupCommit(db, { waitForLockMs: 0 });
    const blocker = new Database(join(dir, 'folio.db'));
    blocker.pragma('busy_timeout = 0');
    blocker.exec('BEGIN IMMEDIATE');
    db.pragma('busy_timeout = 0');
    try {
      const results = await Promise.allSettled([writes.write(insert('c1')), writes.write(insert('c2'))]);
      assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected']);
      assert.match(String((results[0] as PromiseRejectedResult).reason), /locked|busy/i);
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
      db.pragma('busy_timeout = 5000');
    }
    assert.deepEqual([seenByOther('c1'), seenByOther('c2')], [false, false]);
    // The queue keeps working afterwards.
    await writes.write(insert('c3'));
    assert.equal(seenByOther('c3'), true);
  });

  it('runs again the writes of a batch that a failing write rolled back whole, and tells only that write', async () => {
    // SQLITE_FULL ends the whole transaction, not the failing write's savepoint.
    const undone: number[] = [];
    const writes = groupCommit(db, { afterRollback: () => undone.push(1) });
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages + 20}`);
    try {
      const results = await Promise.allSettled([writes.write(insert('f1')), writes.write(insert(`f2 ${'x'.repeat(1_000_000)}`)), writes.write(insert('f3'))]);
      assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
      assert.match(String((results[1] as PromiseRejectedResult).reason), /full/i);
      assert.equal(undone.length, 1, 'told once that the batch was rolled back');
    } finally {
      db.pragma('max_page_count = 1073741823');
    }
    // Before, f1 was lost while f3 committed alone; both were reported failed.
    assert.deepEqual([seenByOther('f1'), seenByOther(`f2 ${'x'.repeat(1_000_000)}`), seenByOther('f3')], [true, false, true]);
    await writes.write(insert('f4'));
    assert.equal(seenByOther('f4'), true);
  });

  it('splits a long queue into batches of at most maxBatch, run in order', async () => {
    const writes = groupCommit(db, { maxBatch: 4 });
    // Whether the write before each one was already committed when it ran:
    // only across a batch boundary.
    const previousCommitted: boolean[] = [];
    const all = Array.from({ length: 10 }, (_, i) =>
      writes.write(() => {
        if (i > 0) previousCommitted.push(seenByOther(`d${i - 1}`));
        return insert(`d${i}`)();
      }),
    );
    await Promise.all(all);
    assert.deepEqual(previousCommitted, [false, false, false, true, false, false, false, true, false]);
    for (let i = 0; i < 10; i++) assert.equal(seenByOther(`d${i}`), true);
  });

  it('runs beforeCommit once per batch, inside its transaction, after its writes; if it throws, the batch is undone', async () => {
    let fail = false;
    const calls: { rows: unknown; inTransaction: boolean }[] = [];
    const writes = groupCommit(db, {
      beforeCommit: () => {
        calls.push({ rows: db.prepare("SELECT count(*) FROM notes WHERE text LIKE 'e%'").pluck().get(), inTransaction: db.inTransaction });
        if (fail) throw new Error('deferred work failed');
      },
    });
    await Promise.all([writes.write(insert('e1')), writes.write(insert('e2'))]);
    assert.deepEqual(calls, [{ rows: 2, inTransaction: true }]);
    fail = true;
    const results = await Promise.allSettled([writes.write(insert('e3')), writes.write(insert('e4'))]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected']);
    assert.deepEqual([seenByOther('e3'), seenByOther('e4')], [false, false]);
  });
});

describe('document writes undone with their batch', () => {
  it('leave the search index in step with the documents: nothing indexed for a write that is not there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'folio-group-store-'));
    const db = openDatabase(join(dir, 'folio.db'));
    migrate(db);
    const store = sqliteStoreOn(db);
    try {
      const make = factories(store, testClock());
      const user = await make.user();
      const viewer = { userId: user.id, orgId: null };
      const now = '2026-11-26T12:00:00.000Z';
      const create = (title: string, content: string) => store.createDocument(viewer, { title, contentMarkdown: content, projectId: null, threadId: null }, now);
      await create('first', 'settled text');
      db.pragma(`max_page_count = ${(db.pragma('page_count', { simple: true }) as number) + 40}`);
      const results = await Promise.allSettled([create('aardvark', 'small'), create('huge', 'word '.repeat(300_000)), create('capybara', 'small')]);
      db.pragma('max_page_count = 1073741823');
      assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
      const later = await create('dingo', 'written after');
      const found = async (word: string) => (await store.listDocuments(viewer, { terms: [word], limit: 20 })).map((d) => d.title);
      // Before, the index kept aardvark's entry under a seq that dingo then took: a search for aardvark found dingo.
      assert.deepEqual(await found('aardvark'), ['aardvark']);
      assert.deepEqual(await found('capybara'), ['capybara']);
      assert.deepEqual(await found('dingo'), ['dingo']);
      assert.deepEqual(await found('huge'), []);
      assert.ok(later);
      // FTS5's check of the index's structure; it cannot see entries of documents that are not there.
      db.exec(`INSERT INTO documents_fts (documents_fts, rank) VALUES ('integrity-check', 1)`);
      // The vocabulary can: nothing of the write undone is in it.
      assert.deepEqual(indexedWords(join(dir, 'folio.db')).split(' ').filter((w) => w === 'huge' || w === 'word'), []);
      const count = (sql: string) => db.prepare(sql).pluck().get();
      assert.equal(count('SELECT count(*) FROM documents'), 4);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
