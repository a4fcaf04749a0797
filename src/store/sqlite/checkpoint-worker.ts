/**
 * The background checkpointer's thread (checkpointer.ts): on a connection
 * of its own, a PASSIVE checkpoint every `intervalMs`, never waiting for a
 * lock, until told to stop; and, once no other connection has committed
 * for `tidying.idleMs`, a step of merging the search index at most every
 * `tidying.everyMs`, until there is nothing left to merge
 * (index-tidying.ts). `PRAGMA data_version` changes when another
 * connection commits (never for this one's own commits): that is how the
 * thread tells that writes have come.
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

/** What the thread tells the server: that it stopped, and why. */
export interface CheckpointWorkerMessage {
  failed: string;
}

const { file, intervalMs, tidying } = workerData as CheckpointWorkerData;
const db = new Database(file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const dataVersion = db.prepare('PRAGMA data_version').pluck();
const tidy = tidying === false ? null : tidyingStep(db, tidying.pages);

let seen = dataVersion.get();
let quietSince = Date.now();
let untidy = true;
let lastStep = 0;
const timer = setInterval(() => {
  try {
    checkpoint.get();
    if (tidy === null || tidying === false) return;
    const version = dataVersion.get();
    const now = Date.now();
    if (version !== seen) {
      seen = version;
      quietSince = now;
      untidy = true;
    } else if (untidy && now - quietSince >= tidying.idleMs && now - lastStep >= tidying.everyMs) {
      lastStep = now;
      untidy = tidy();
    }
  } catch (error) {
    // Another checkpoint is running (the serving connection's own), or a write: next time.
    if (onlyBusy((error as { code?: unknown }).code)) return;
    clearInterval(timer);
    parentPort!.postMessage({ failed: String((error as Error).message) } satisfies CheckpointWorkerMessage);
  }
}, intervalMs);

parentPort!.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
