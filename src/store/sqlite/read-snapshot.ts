import type { Db } from './database.js';

/**
 * One read transaction for the reads of a turn of the event loop.
 *
 * Each statement that reads a table outside a transaction begins and ends
 * a read transaction of its own, and in WAL mode that takes and drops a
 * lock on the `-shm` file (two `fcntl` calls): on the benchmark's machine
 * a row read by its key took 5.5 µs so and 0.25 µs inside a transaction
 * held open (bench/README.md, "What a statement's own read transaction
 * costs"). So the reads of a turn share one, which this keeps exact:
 *
 * - It is begun only by a freshness check of the access cache
 *   (access-cache.ts) that found the WAL-index header unchanged since it
 *   last asked `data_version`, or had just asked it: no commit of any
 *   connection is missing from it. Requests are checked so (their key)
 *   before they read anything.
 * - It is let go when a check finds the header changed, before asking
 *   `data_version` (which answers for an open transaction's snapshot, so
 *   that a key revoked by another process would otherwise pass); before
 *   every write of this connection; at the end of the turn; and at close.
 * - It is never let go from inside a transaction of the store's own
 *   (`within`), which is then a savepoint of it: that waits for the end.
 */
export interface ReadSnapshot {
  /** Begins the turn's read transaction, unless one (or a write) is under way. */
  hold(): void;
  /** Ends the read transaction, if one is held and no transaction of the store's own runs inside it. */
  release(): void;
  /** Runs `fn`, a transaction of the store's own (a savepoint of a held read transaction). */
  within<T>(fn: () => T): T;
  /** Whether the turn's read transaction is held, with no transaction of the store's own inside it. */
  holding(): boolean;
}

/** No read transaction is held: each statement has its own (the bulk loader, a database in memory). */
export const NO_SNAPSHOT: ReadSnapshot = {
  hold() {},
  release() {},
  within: (fn) => fn(),
  holding: () => false,
};

export function readSnapshot(db: Db): ReadSnapshot {
  const begin = db.prepare('BEGIN');
  const commit = db.prepare('COMMIT');
  let held = false;
  let depth = 0;
  let scheduled = false;

  const release = () => {
    if (!held || depth > 0) return;
    held = false;
    // SQLite may have ended it already (an error that rolls back).
    if (db.inTransaction) commit.run();
  };
  const atTurnEnd = () => {
    scheduled = false;
    release();
  };

  return {
    hold() {
      if (held || db.inTransaction) return;
      begin.run();
      held = true;
      if (!scheduled) {
        scheduled = true;
        setImmediate(atTurnEnd);
      }
    },
    release,
    holding: () => held && depth === 0,
    within<T>(fn: () => T): T {
      depth += 1;
      try {
        return fn();
      } finally {
        depth -= 1;
      }
    },
  };
}
