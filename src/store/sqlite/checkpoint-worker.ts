/**
 * The background checkpointer's thread (checkpointer.ts): on a connection
 * of its own, a PASSIVE checkpoint every `intervalMs`, never waiting for a
 * lock, until told to stop; and, once no other connection has committed
 * for `tidying.idleMs`, a step of merging the search index at most every
 * `tidying.everyMs`, until there is nothing left to merge
 * (index-tidying.ts). `PRAGMA data_version` changes when another
 * connection commits (never for this one's own commits): that is how the
 * thread tells that writes have come.
 *
 * A failure pauses the thread rather than ending it: a full disk or an I/O
 * error clears once the operator frees space or the device recovers, and
 * the server should not need a restart to checkpoint again. While paused it
 * tries again less and less often, up to every RETRY_MAX_MS, and says once
 * that it paused and once that it resumed.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { onlyBusy } from './database.js';
import { tidyingStep } from './index-tidying.js';

export interface CheckpointWorkerData {
  file: string;
  intervalMs: number;
  tidying: { idleMs: number; pages: number; everyMs: number } | false;
}

/** What the thread tells the server: that it paused (and why) or resumed, or that it stopped for good (and why). */
export type CheckpointWorkerMessage = { paused: string } | { resumed: true } | { stopped: string };

/** The longest wait between tries while the thread is paused: how long a freed disk may go unnoticed. */
const RETRY_MAX_MS = 5000;

/**
 * Failures that no waiting clears, which stop the thread for good: the
 * file is damaged (SQLITE_CORRUPT…) or not a database (SQLITE_NOTADB), or
 * SQLite found it moved or deleted from under the connection
 * (SQLITE_READONLY_DBMOVED). Each needs the operator, then a restart, which
 * the serving connection needs as much; retrying would only merge the index
 * further over damaged pages. An error without a SQLite code is a fault of
 * this thread's own code, which would fail the same way every time.
 */
function lasting(code: unknown): boolean {
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return true;
  return code === 'SQLITE_NOTADB' || code === 'SQLITE_READONLY_DBMOVED' || code.startsWith('SQLITE_CORRUPT');
}

const { file, intervalMs, tidying } = workerData as CheckpointWorkerData;
const db = new Database(file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const dataVersion = db.prepare('PRAGMA data_version').pluck();
const tidy = tidying === false ? null : tidyingStep(db, tidying.pages);
const tell = (message: CheckpointWorkerMessage) => parentPort!.postMessage(message);

let seen = dataVersion.get();
let quietSince = Date.now();
let untidy = true;
let lastStep = 0;
/** Time to the next turn: intervalMs, or longer while paused. */
let wait = intervalMs;
let paused = false;
let timer = setTimeout(turn, wait);

/** A checkpoint, and a step of merging if the database has been quiet long enough. */
function work() {
  checkpoint.get();
  if (tidy === null || tidying === false) return;
  const version = dataVersion.get();
  const now = Date.now();
  if (version !== seen) {
    seen = version;
    quietSince = now;
    untidy = true;
  } else if (untidy && now - quietSince >= tidying.idleMs && now - lastStep >= tidying.everyMs) {
    // Counted once the step succeeds: a step that failed (a full disk) is
    // tried again on the next turn, not skipped as if it had run, which would
    // let a turn that did nothing report the thread resumed.
    untidy = tidy();
    lastStep = now;
  }
}

function turn() {
  try {
    work();
    if (paused) {
      paused = false;
      wait = intervalMs;
      tell({ resumed: true });
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // Another checkpoint is running (the serving connection's own), or a write: next time, as usual.
    if (!onlyBusy(code)) {
      const why = typeof code === 'string' ? `${(error as Error).message} (${code})` : String(error);
      if (lasting(code)) {
        tell({ stopped: why });
        return;
      }
      if (!paused) tell({ paused: why });
      paused = true;
      wait = Math.min(wait * 2, RETRY_MAX_MS);
    }
  }
  timer = setTimeout(turn, wait);
}

parentPort!.once('message', () => {
  clearTimeout(timer);
  db.close();
  parentPort!.close();
});
