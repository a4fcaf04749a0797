import { LOCK_WAIT_MS } from '../lock-wait.js';
import { onlyBusy, withoutWaiting, type Db } from './database.js';

/**
 * Group commit: document writes that arrive together share one durable
 * transaction. Each write is queued; once the requests already read from
 * the network have had their turn (`setImmediate`), the queue runs in one
 * `BEGIN IMMEDIATE … COMMIT`, each write inside its own savepoint, so a
 * write that throws is undone alone and the others still commit. No write
 * is answered before the COMMIT that makes it durable has returned.
 *
 * Why: SQLite's cost of a commit (the WAL sync, and FTS5 flushing its
 * pending terms into a new index segment) is paid once per transaction, not
 * per row; under load it was most of a write's time. The writes still run
 * one after another, each seeing the ones before it, so a compare-and-write
 * stays atomic: of N updates carrying the same `expectedUpdatedAt`, the first
 * wins and the rest see its result.
 *
 * Another process's write (the `folio` command, another server on the same
 * file) may hold the database's write lock. The transaction is then not
 * waited for inside SQLite, which would stop the event loop and every
 * request with it, but tried again on a timer, every few milliseconds, for
 * up to `waitForLockMs` (the connection's own busy timeout) from each
 * write's arrival; a write that has waited that long fails with SQLite's
 * SQLITE_BUSY, as it would have, and those that came after it wait on.
 */
export function groupCommit(
  db: Db,
  options: { maxBatch?: number; waitForLockMs?: number; beforeCommit?: () => void; afterRollback?: () => void } = {},
) {
  const { maxBatch = 256, waitForLockMs = LOCK_WAIT_MS, beforeCommit, afterRollback } = options;
  interface Pending {
    run: () => unknown;
    /** When it was queued (performance.now()): it waits for another process's lock until waitForLockMs after. */
    queuedAt: number;
    resolve: (value: unknown) => void;
    reject: (reason: unknown) => void;
  }
  let queue: Pending[] = [];

  // better-sqlite3 turns a transaction function called inside a transaction
  // into a savepoint, rolled back if the function throws.
  const one = db.transaction((p: Pending) => p.run());
  // Whether the batch's transaction was opened: only a BEGIN that found the lock taken is tried again.
  let began = false;
  const all = db.transaction((batch: Pending[]) => {
    began = true;
    const outcomes = batch.map((p, at) => {
      try {
        return { ok: true as const, value: one(p) };
      } catch (error) {
        // Some failures (SQLITE_FULL, an I/O error) make SQLite roll back the
        // whole transaction, not the write's savepoint: the writes before it
        // are undone too, and any after it would run in transactions of their own.
        if (!db.inTransaction) throw new BatchUndone(at, error);
        return { ok: false as const, error };
      }
    });
    // Work the writes deferred to the end of the transaction; if it fails, the whole batch is undone.
    beforeCommit?.();
    return outcomes;
  });

  // The busy timeout is set aside for the transaction only: reads still wait as SQLite makes them.
  const noWait = withoutWaiting(db);
  /** Set while the batch waits for another process's write lock: the timer's flush takes what comes meanwhile too. */
  let retry: NodeJS.Timeout | null = null;
  let lockedTries = 0;
  let closed: Error | null = null;

  function flush() {
    if (queue.length === 0 || retry !== null) return;
    const batch = queue.slice(0, maxBatch);
    queue = queue.slice(batch.length);
    const more = queue.length > 0;
    if (more) setImmediate(flush);
    let outcomes: ReturnType<typeof all>;
    try {
      began = false;
      outcomes = noWait(() => all.immediate(batch));
    } catch (error) {
      // Nothing of the batch is written; what the writes left for the commit goes with it.
      afterRollback?.();
      if (!began && onlyBusy((error as { code?: unknown } | null)?.code)) {
        // The oldest writes come first: those that have waited long enough are told, the rest wait on.
        const now = performance.now();
        const expired = batch.filter((p) => now - p.queuedAt >= waitForLockMs);
        for (const p of expired) p.reject(error);
        queue = [...batch.slice(expired.length), ...queue];
        if (queue.length > 0) {
          // First in the queue again, tried after 1, 2, 4, then every 8 ms.
          retry = setTimeout(() => {
            retry = null;
            flush();
          }, Math.min(8, 2 ** lockedTries++));
        } else lockedTries = 0;
        return;
      }
      lockedTries = 0;
      if (error instanceof BatchUndone) {
        // The write that failed is told why; the others, undone with it, run again in the next batch.
        batch[error.at]!.reject(error.cause);
        queue = [...batch.slice(0, error.at), ...batch.slice(error.at + 1), ...queue];
        if (!more && queue.length > 0) setImmediate(flush);
        return;
      }
      // The commit itself failed (disk full, I/O error).
      for (const p of batch) p.reject(error);
      return;
    }
    lockedTries = 0;
    outcomes.forEach((o, i) => (o.ok ? batch[i]!.resolve(o.value) : batch[i]!.reject(o.error)));
  }

  return {
    /** Runs `write` in the next group transaction; resolves once that transaction is committed. */
    write<T>(write: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        if (closed) return reject(closed);
        queue.push({ run: write, queuedAt: performance.now(), resolve: resolve as (v: unknown) => void, reject });
        if (queue.length === 1) setImmediate(flush);
      });
    },
    /**
     * Stops taking writes: those still waiting for another process's lock
     * fail at once, and no timer is left to keep the process running.
     */
    close() {
      closed = new Error('the store is closed');
      if (retry !== null) clearTimeout(retry);
      retry = null;
      const waiting = queue;
      queue = [];
      for (const p of waiting) p.reject(closed);
    },
  };
}

/** A write of the batch failed in a way that made SQLite end the whole transaction. */
class BatchUndone extends Error {
  constructor(
    readonly at: number,
    override readonly cause: unknown,
  ) {
    super('the group transaction was rolled back by a write that failed');
  }
}
