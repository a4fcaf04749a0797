import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { accessCache } from '../src/store/sqlite/access-cache.js';
import { openDatabase } from '../src/store/sqlite/database.js';
import { WAL_INDEX_HEADER_BYTES, walIndexHeader, type WalIndexHeader } from '../src/store/sqlite/wal-index-header.js';
import { call, inAnotherProcess, setup, type TestContext } from './helpers.js';

/**
 * The access cache asks `PRAGMA data_version` only when SQLite's WAL-index
 * header has changed (src/store/sqlite/wal-index-header.ts). A commit by any
 * other connection or process must still drop the cache before the next
 * lookup, and a header that cannot be read must mean asking every time.
 */

describe('the WAL-index header', () => {
  let dir: string;
  let file: string;
  let db: Database.Database;
  let other: Database.Database;
  // Closed only after every connection (see wal-index-header.ts: closing drops the process's locks on the file).
  const opened: WalIndexHeader[] = [];
  const headerOf = (d: Database.Database, options: { map?: boolean } = {}) => {
    const h = walIndexHeader(d, options);
    if (h) opened.push(h);
    return h;
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'folio-wal-header-'));
    file = join(dir, 'h.db');
    db = openDatabase(file);
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT); INSERT INTO t VALUES (\'a\', \'1\')');
    other = new Database(file);
    other.pragma('busy_timeout = 5000');
  });
  after(() => {
    other.close();
    db.close();
    for (const h of opened) h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const snapshot = (h: WalIndexHeader) => {
    const b = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
    assert.equal(h.read(b), true);
    return b;
  };

  it('is read from a database file in WAL mode, and not from one in memory', () => {
    assert.notEqual(headerOf(db), null);
    const memory = openDatabase(':memory:');
    assert.equal(walIndexHeader(memory), null);
    memory.close();
  });

  it('is mapped from the file where Folio\'s native addon is built (npm ci builds it), else read from the file', () => {
    assert.equal(headerOf(db)!.mapped, true, 'build/Release/folio_shared_map.node is missing: run npm ci (or npm run install)');
    assert.equal(headerOf(db, { map: false })!.mapped, false);
  });

  for (const map of [true, false]) {
    it(`changes with every commit, of this connection, another or another process, and not with reads (${map ? 'mapped' : 'read from the file'})`, () => {
      changesWithEveryCommit(headerOf(db, { map })!);
    });
  }

  function changesWithEveryCommit(h: WalIndexHeader) {
    const start = snapshot(h);
    {
      db.prepare('SELECT * FROM t').all();
      other.prepare('SELECT * FROM t').all();
      assert.deepEqual(snapshot(h), start, 'reads leave it');
      db.prepare('UPDATE t SET v = ? WHERE k = ?').run('2', 'a');
      const own = snapshot(h);
      assert.notDeepEqual(own, start);
      other.prepare('UPDATE t SET v = ? WHERE k = ?').run('3', 'a');
      const another = snapshot(h);
      assert.notDeepEqual(another, own);
      inAnotherProcess(file, 'UPDATE t SET v = ? WHERE k = ?', '4', 'a');
      assert.notDeepEqual(snapshot(h), another);
    }
  }

  it('lets the cache see every commit of another process on the next lookup', () => {
    const cache = accessCache(db, { header: headerOf(db) });
    let loads = 0;
    const value = () => cache.get('v', () => (loads++, db.prepare('SELECT v FROM t WHERE k = ?').pluck().get('a')));
    {
      for (let i = 0; i < 5; i++) {
        const v = `p${i}`;
        inAnotherProcess(file, 'UPDATE t SET v = ? WHERE k = ?', v, 'a');
        assert.equal(value(), v);
        assert.equal(value(), v);
        assert.equal(loads, i + 1, 'read again once after each commit of the other process');
        // This connection's own commit, which the header shows too, keeps what is cached.
        db.prepare('INSERT OR REPLACE INTO t VALUES (?, ?)').run('own', String(i));
        assert.equal(value(), v);
        assert.equal(loads, i + 1);
      }
    }
  });

  it('asks again after a transaction whose snapshot was older than a commit the header showed', () => {
    const cache = accessCache(db, { header: headerOf(db) });
    const read = db.prepare('SELECT v FROM t WHERE k = ?').pluck();
    const value = () => cache.get('v', () => read.get('a'));
    other.prepare('UPDATE t SET v = ? WHERE k = ?').run('s1', 'a');
    assert.equal(value(), 's1');
    // As a search does: a read transaction, another process commits, then a lookup inside it.
    db.exec('BEGIN');
    try {
      read.get('a');
      inAnotherProcess(file, 'UPDATE t SET v = ? WHERE k = ?', 's2', 'a');
      assert.equal(value(), 's1', 'the snapshot does not show it yet');
    } finally {
      db.exec('COMMIT');
    }
    assert.equal(value(), 's2', 'the next lookup does');
  });

  it('gates the check: with a header that does not change, the cache does not ask data_version', () => {
    const still = Buffer.alloc(WAL_INDEX_HEADER_BYTES, 7);
    const frozen: WalIndexHeader = { read: (into) => (still.copy(into), true), mapped: false, close() {} };
    const cache = accessCache(db, { header: frozen });
    let loads = 0;
    const value = () => cache.get('v', () => (loads++, db.prepare('SELECT v FROM t WHERE k = ?').pluck().get('a')));
    other.prepare('UPDATE t SET v = ? WHERE k = ?').run('g1', 'a');
    assert.equal(value(), 'g1');
    other.prepare('UPDATE t SET v = ? WHERE k = ?').run('g2', 'a');
    assert.equal(value(), 'g1', 'held: the header said nothing was committed');
    assert.equal(loads, 1);
  });

  it('asks data_version every time when the header cannot be read', () => {
    const unreadable: WalIndexHeader = { read: () => false, mapped: false, close() {} };
    const cache = accessCache(db, { header: unreadable });
    const value = () => cache.get('v', () => db.prepare('SELECT v FROM t WHERE k = ?').pluck().get('a'));
    other.prepare('UPDATE t SET v = ? WHERE k = ?').run('u1', 'a');
    assert.equal(value(), 'u1');
    other.prepare('UPDATE t SET v = ? WHERE k = ?').run('u2', 'a');
    assert.equal(value(), 'u2');
  });

  it('is read next to the real file when the database is opened through a symbolic link', () => {
    const link = join(dir, 'link.db');
    symlinkSync(file, link);
    // A stale copy where the link's name would put it, header and all, must not be what is read.
    copyFileSync(`${file}-shm`, `${link}-shm`);
    const linked = new Database(link);
    try {
      const h = headerOf(linked)!;
      const start = snapshot(h);
      other.prepare('UPDATE t SET v = ? WHERE k = ?').run('via link', 'a');
      assert.notDeepEqual(snapshot(h), start);
    } finally {
      linked.close();
    }
  });

  it('is not read once closed', () => {
    const alone = openDatabase(join(dir, 'alone.db'));
    alone.exec('CREATE TABLE x (a)');
    const h = walIndexHeader(alone)!;
    assert.equal(h.read(Buffer.alloc(WAL_INDEX_HEADER_BYTES)), true);
    alone.close();
    h.close();
    assert.equal(h.read(Buffer.alloc(WAL_INDEX_HEADER_BYTES)), false);
  });

  it('reads as unreadable, and stays open, when the header is not in the known format', () => {
    const odd = openDatabase(join(dir, 'odd.db'));
    odd.exec('CREATE TABLE x (a)');
    writeFileSync(join(dir, 'odd.db-shm'), Buffer.alloc(WAL_INDEX_HEADER_BYTES, 0xff), { flag: 'r+' });
    try {
      const h = headerOf(odd)!;
      assert.notEqual(h, null);
      assert.equal(h.read(Buffer.alloc(WAL_INDEX_HEADER_BYTES)), false);
    } finally {
      odd.close();
    }
  });
});

describe('a key revoked by another process', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('is refused on the very next request, each time', async () => {
    for (let i = 0; i < 3; i++) {
      const user = await t.make.user();
      const { secret, record } = await t.make.key(user.id);
      assert.equal((await call(t.app, 'GET', '/v1/me', { key: secret })).status, 200);
      assert.equal((await call(t.app, 'GET', '/v1/me', { key: secret })).status, 200);
      inAnotherProcess(t.config.database.file, 'UPDATE api_keys SET revoked_at = ? WHERE id = ?', new Date().toISOString(), record.id);
      assert.equal((await call(t.app, 'GET', '/v1/me', { key: secret })).status, 401);
    }
  });
});
