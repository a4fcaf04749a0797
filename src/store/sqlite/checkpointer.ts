import { Worker } from 'node:worker_threads';
import type { CheckpointWorkerData, CheckpointWorkerMessage } from './checkpoint-worker.js';
import type { Db } from './database.js';
import { TIDYING } from './index-tidying.js';

/** Where the thread's news goes: a line for the operator (the server's log). */
export type BackgroundReport = (level: 'warn' | 'info', message: string) => void;

/** Without a log to write to: a process warning, as Node.js prints them, or a line on standard error. */
const toStderr: BackgroundReport = (level, message) =>
  level === 'warn' ? process.emitWarning(`Folio: ${message}`) : process.stderr.write(`Folio: ${message}\n`);

const stopped = (why: string) =>
  `background checkpoints and index merging stopped (${why}) until the server restarts; meanwhile it checkpoints the log itself and merges the index only as it writes.`;

/** The thread's message, as a line for the operator. */
function news(m: CheckpointWorkerMessage): [level: 'warn' | 'info', message: string] {
  if ('resumed' in m) return ['info', 'background checkpoints and index merging resumed'];
  if ('stopped' in m) return ['warn', stopped(m.stopped)];
  return [
    'warn',
    `background checkpoints and index merging paused (${m.paused}); the -wal file is not copied into the database file meanwhile. Tried again every few seconds, they resume by themselves once the cause is gone (a full disk: once space is freed).`,
  ];
}

/**
 * How many pages the write-ahead log may hold before the serving
 * connection checkpoints it itself, while the background checkpointer runs
 * (SQLite's default is 1000). By then the background thread has copied
 * nearly all of them, so the serving thread's checkpoint is short; and it
 * is the one that completes, letting the next write start the log afresh.
 */
export const SERVING_AUTOCHECKPOINT_PAGES = 4000;

/** Often enough that the log stays short under a steady stream of commits, so that none of them waits on a long copy. */
export const CHECKPOINT_INTERVAL_MS = 20;

export interface BackgroundOptions {
  /** Time between checkpoints. */
  intervalMs?: number;
  /** When, how much and how often to merge the search index (index-tidying.ts), or false not to. */
  tidying?: CheckpointWorkerData['tidying'];
  /** Told when the thread pauses on a failure (a full disk), resumes, or stops for good. */
  report?: BackgroundReport;
}

/**
 * Checkpoints from a thread of its own (checkpoint-worker.ts). A SQLite
 * checkpoint copies the pages written to the write-ahead log into the
 * database file and syncs it; run by the connection that commits (SQLite's
 * default), it would hold up the request thread with that copy and its
 * fsync. A PASSIVE checkpoint on another connection runs beside readers and
 * writers without blocking them. The same thread merges the search index
 * while the database is quiet.
 */
export function startCheckpointer(db: Db, file: string, options: BackgroundOptions = {}) {
  const { intervalMs = CHECKPOINT_INTERVAL_MS, tidying = TIDYING, report = toStderr } = options;
  db.pragma(`wal_autocheckpoint = ${SERVING_AUTOCHECKPOINT_PAGES}`);
  const workerData: CheckpointWorkerData = { file, intervalMs, tidying };
  const worker = checkpointWorker(workerData);
  worker.unref();
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      exited = true;
      resolve();
    });
  });
  worker.on('message', (m: CheckpointWorkerMessage) => report(...news(m)));
  worker.on('error', (error) => report('warn', stopped(error.message)));
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

/**
 * The thread, running checkpoint-worker.js beside this module; or, when
 * Folio runs from its TypeScript source (tests, `npm run dev`),
 * checkpoint-worker.ts, after registering tsx's loader in the thread, which
 * Node.js 20 does not pass on to threads.
 */
function checkpointWorker(workerData: CheckpointWorkerData): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./checkpoint-worker.js', import.meta.url), { workerData });
  const source = new URL('./checkpoint-worker.ts', import.meta.url).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); })`;
  return new Worker(boot, { eval: true, workerData });
}
