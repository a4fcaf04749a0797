import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { onlyBusy, type Db } from './database.js';
import { TIDYING, TIDYING_SQL } from './index-tidying.js';

const stopped = (why: string) =>
  `Folio: background checkpoints and index merging stopped (${why}); the server checkpoints the log itself and merges the index only as it writes.`;

/**
 * How many pages the write-ahead log may hold before the serving
 * connection checkpoints it itself, while the background checkpointer runs
 * (SQLite's default is 1000). By then the background thread has copied
 * nearly all of them, so the serving thread's checkpoint is short; and it
 * is the one that completes, letting the next write start the log afresh.
 */
export const SERVING_AUTOCHECKPOINT_PAGES = 4000;

/**
 * The thread's code: on a connection of its own, a PASSIVE checkpoint every
 * `intervalMs`, never waiting for a lock, until told to stop; and, once no
 * other connection has committed for `tidying.idleMs`, a step of merging the
 * search index at most every `tidying.everyMs` too, until there is nothing
 * left to merge (index-tidying.ts). `PRAGMA data_version` changes when
 * another connection commits (never for this one's own commits): that is how
 * the thread tells that writes have come. It is plain JavaScript given as text so that it
 * runs the same compiled and under tsx; the driver is loaded from where this
 * module found it, the statements come from index-tidying.ts.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const onlyBusy = ${onlyBusy.toString()};
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const dataVersion = db.prepare('PRAGMA data_version').pluck();
const { tidying, sql } = workerData;
let tidy = null;
if (tidying) {
  const usermerge = db.prepare(sql.usermerge).pluck();
  const setUsermerge = db.prepare(sql.setUsermerge);
  const merge = db.prepare(sql.merge);
  const totalChanges = db.prepare(sql.totalChanges).pluck();
  // The same step as tidySearchIndex in index-tidying.ts.
  tidy = db.transaction(() => {
    const previous = BigInt(usermerge.get());
    setUsermerge.run(2n);
    const before = totalChanges.get();
    merge.run(BigInt(tidying.pages));
    const worked = totalChanges.get() - before >= 2;
    setUsermerge.run(previous);
    return worked;
  });
}
let seen = dataVersion.get();
let quietSince = Date.now();
let untidy = true;
let lastStep = 0;
const timer = setInterval(() => {
  try {
    checkpoint.get();
    if (!tidy) return;
    const version = dataVersion.get();
    const now = Date.now();
    if (version !== seen) {
      seen = version;
      quietSince = now;
      untidy = true;
    } else if (untidy && now - quietSince >= tidying.idleMs && now - lastStep >= tidying.everyMs) {
      lastStep = now;
      untidy = tidy.immediate();
    }
  } catch (error) {
    // Another checkpoint is running (the serving connection's own), or a write: next time.
    if (onlyBusy(error.code)) return;
    clearInterval(timer);
    parentPort.postMessage({ failed: String(error.message) });
  }
}, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface BackgroundOptions {
  /** Time between checkpoints. */
  intervalMs?: number;
  /** When, how much and how often to merge the search index (index-tidying.ts), or false not to. */
  tidying?: { idleMs: number; pages: number; everyMs: number } | false;
}

/**
 * Checkpoints every 20 ms. Under the benchmark's load of edits at 100,000
 * documents the serving connection's commits took p50 2.5 ms either way, but
 * p99 30-37 ms with checkpoints every 100 ms against 13-17 ms every 20 ms
 * (four runs each; bench/README.md). With nothing to copy, a checkpoint took
 * 4.8 µs (two fcntl calls), about 0.02 % of a core at this pace.
 */
export const CHECKPOINT_INTERVAL_MS = 20;

/**
 * Checkpoints from a thread of its own. A SQLite checkpoint copies the pages
 * written to the write-ahead log into the database file and syncs it; run by
 * the connection that commits (SQLite's default, every 1000 pages), it held
 * up the request thread with writes and an fsync every second or so under
 * load. A PASSIVE checkpoint on another connection runs beside readers and
 * writers without blocking them (bench/README.md has the figures). The same
 * thread merges the search index while the database is quiet.
 */
export function startCheckpointer(db: Db, file: string, options: BackgroundOptions = {}) {
  const { intervalMs = CHECKPOINT_INTERVAL_MS, tidying = TIDYING } = options;
  db.pragma(`wal_autocheckpoint = ${SERVING_AUTOCHECKPOINT_PAGES}`);
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const workerData = { file, intervalMs, driver, tidying, sql: TIDYING_SQL };
  const worker = new Worker(THREAD, { eval: true, workerData });
  worker.unref();
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  worker.on('message', (m: { failed?: string }) => {
    if (m.failed) process.emitWarning(stopped(m.failed));
  });
  worker.on('error', (error) => {
    process.emitWarning(stopped(error.message));
  });
  return {
    /** Stops the thread and waits for it to close its connection. */
    stop(): Promise<void> {
      if (!exited) {
        // Held unreferenced so it never keeps a process alive; waited for, it must.
        worker.ref();
        worker.postMessage('stop');
      }
      return exit;
    },
  };
}
