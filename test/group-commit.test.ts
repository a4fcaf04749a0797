import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase, type Db } from '../src/store/sqlite/database.js';
import { groupCommit } from '../src/store/sqlite/group-commit.js';

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

  it('rejects every write of a batch whose transaction cannot be opened, and writes none of them', async () => {
    const writes = groupCommit(db);
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
