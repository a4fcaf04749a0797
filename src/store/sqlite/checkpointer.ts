import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Db } from './database.js';

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
 * `intervalMs`, never waiting for a lock, until told to stop. It is plain
 * JavaScript given as text so that it runs the same compiled and under tsx;
 * the driver is loaded from where this module found it.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  try {
    checkpoint.get();
  } catch (error) {
    // Another checkpoint is running (the serving connection's own): next time.
    if (error.code === 'SQLITE_BUSY') return;
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

/**
 * Checkpoints from a thread of its own. A SQLite checkpoint copies the pages
 * written to the write-ahead log into the database file and syncs it; run by
 * the connection that commits (SQLite's default, every 1000 pages), it held
 * up the request thread with writes and an fsync every second or so under
 * load. A PASSIVE checkpoint on another connection runs beside readers and
 * writers without blocking them (bench/README.md has the figures).
 */
export function startCheckpointer(db: Db, file: string, intervalMs = 100) {
  db.pragma(`wal_autocheckpoint = ${SERVING_AUTOCHECKPOINT_PAGES}`);
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD, { eval: true, workerData: { file, intervalMs, driver } });
  worker.unref();
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  worker.on('message', (m: { failed?: string }) => {
    if (m.failed) process.emitWarning(`Folio: background checkpoints stopped (${m.failed}); the server checkpoints the log itself.`);
  });
  worker.on('error', (error) => {
    process.emitWarning(`Folio: background checkpoints stopped (${error.message}); the server checkpoints the log itself.`);
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
