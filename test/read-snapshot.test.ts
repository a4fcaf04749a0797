import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { accessCache } from '../src/store/sqlite/access-cache.js';
import { groupCommit } from '../src/store/sqlite/group-commit.js';
import type { ReadSnapshot } from '../src/store/sqlite/read-snapshot.js';
import type { WalIndexHeader } from '../src/store/sqlite/wal-index-header.js';
import { inAnotherProcess, snapshotFixture, turnEnd, type SnapshotFixture } from './helpers.js';

/**
 * The reads of a turn share one read transaction (src/store/sqlite/read-snapshot.ts),
 * without ever hiding a commit that came before the check that began it or
 * holding back a write of this connection.
 */

describe('the read transaction of a turn', () => {
  let fixture: SnapshotFixture;
  let file: string;
  let db: Database.Database;
  let other: Database.Database;
  let header: WalIndexHeader;
  // One a connection, as the store has.
  let snapshot: ReadSnapshot;
  before(() => {
    fixture = snapshotFixture('folio-snapshot-');
    ({ file, db, other, header, snapshot } = fixture);
  });
  afterEach(turnEnd);
  after(() => fixture.close());

  it('is begun by a lookup that found nothing committed, and ends with the turn', async () => {
    const cache = accessCache(db, { header, snapshot });
    const read = db.prepare('SELECT v FROM t WHERE k = ?').pluck();
    assert.equal(cache.get('v', () => read.get('a')), '0');
    assert.equal(db.inTransaction, true, 'held for the turn');
    assert.equal(read.get('a'), '0');
    await turnEnd();
    assert.equal(db.inTransaction, false, 'let go at its end');
  });

  it('is let go, before data_version is asked, by a lookup that sees another process commit', () => {
    const cache = accessCache(db, { header, snapshot });
    const read = db.prepare('SELECT v FROM t WHERE k = ?').pluck();
    let loads = 0;
    const value = () => cache.get('v', () => (loads++, read.get('a')));
    for (let i = 1; i <= 3; i++) {
      value();
      read.get('a'); // a read of the turn: the snapshot is taken
      inAnotherProcess(file, 'UPDATE t SET v = ? WHERE k = ?', `p${i}`, 'a');
      // Same turn: the held snapshot predates the commit, and data_version
      // asked inside it would say nothing changed.
      assert.equal(value(), `p${i}`, 'the next lookup sees the commit');
      assert.equal(read.get('a'), `p${i}`, 'and so do the reads after it');
    }
    assert.equal(loads, 4);
  });

  it('is not let go from inside a transaction of the store, which it holds as a savepoint', () => {
    const cache = accessCache(db, { header, snapshot });
    const read = db.prepare('SELECT v FROM t WHERE k = ?').pluck();
    cache.get('w', () => read.get('a'));
    const inside = db.transaction(() => {
      read.get('a');
      other.prepare('UPDATE t SET v = ? WHERE k = ?').run('during', 'a');
      // A lookup inside sees the header change but must not end the outer transaction.
      cache.get('w', () => read.get('a'));
      return read.get('a');
    });
    assert.notEqual(snapshot.within(() => inside()), 'during', 'one snapshot inside the transaction');
    assert.equal(db.inTransaction, true, 'still held');
    assert.equal(cache.get('w2', () => read.get('a')), 'during', 'after it, the next lookup ends it and sees the commit');
  });

  it('ends before a group commit begins, so that a write is durable when it is answered', async () => {
    const cache = accessCache(db, { header, snapshot });
    const writes = groupCommit(db, { beforeBegin: () => snapshot.release() });
    const read = db.prepare('SELECT v FROM t WHERE k = ?').pluck();
    // The write's group is queued first; then a lookup holds the turn's
    // read transaction, whose end comes after the group's commit.
    const written = writes.write(() => db.prepare("INSERT OR REPLACE INTO t VALUES ('b', 'durable')").run());
    cache.get('x', () => read.get('a'));
    read.get('a');
    assert.equal(db.inTransaction, true);
    await written;
    assert.equal(other.prepare("SELECT v FROM t WHERE k = 'b'").pluck().get(), 'durable', 'committed, seen by another connection');
  });
});
