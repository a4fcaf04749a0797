import { writeSync } from 'node:fs';

/** Most bytes of log lines kept while standard output takes nothing; past it, lines are dropped and counted. */
export const MOST_PENDING_BYTES = 8 * 1024 * 1024;
/** How soon a write that standard output refused (full pipe) is tried again. */
export const RETRY_MS = 10;
/** At exit, how long to keep trying to write what is left before giving up. */
const EXIT_TRIES = 100;

/** Where the logger writes its lines (a pino destination). */
export interface LogDestination {
  write(line: string): void;
}

export interface TurnDestination extends LogDestination {
  /** Writes at once what is held and what is waiting, retrying for up to a second, and every later line as it comes (for the process's `exit`). */
  flush(): void;
}

/** Writes some of `bytes` and says how many; throws as `fs.writeSync` does (`EAGAIN` when a pipe is full). */
export type WriteBytes = (bytes: Buffer) => number;

const errorCode = (err: unknown) => (err as { code?: unknown } | null)?.code;

/**
 * The server's log destination: each line is held back until the current
 * turn of the event loop has done its work (`setImmediate`), and then the
 * turn's lines go out together in one synchronous write to standard output.
 * A lone line waits for nothing but the end of its turn.
 *
 * When standard output is a pipe that is full (its reader is slow) the
 * write is refused (`EAGAIN`): what was not written waits, later lines
 * queue behind it, and the write is tried again every 10 ms, while the
 * server goes on serving. Past 8 MiB waiting, new lines are dropped, and
 * a line saying how many follows once the pipe takes writes again. The
 * retries never keep the process alive: a server that has closed exits,
 * after `flush` has tried for a second more, and says on standard error
 * how many lines it could not write. A closed standard output
 * (`EPIPE`) drops lines silently, as pino does.
 *
 * Why: pino's default destination writes from Node's thread pool, whose
 * threads take turns with the request thread on a server held to one core,
 * and while a write is under way it adds each new line to the waiting text,
 * measuring that text's length again each time. Under `GET /v1/me` load
 * the server's core switched threads half as often with one write a turn,
 * and `me` ran 6 % faster (bench/README.md, "Log lines"). pino's own
 * synchronous destination would do the same, but it answers a full pipe by
 * stopping the whole thread for 100 ms at a time.
 */
export function turnDestination(
  options: { write?: WriteBytes; mostPending?: number; now?: () => number; report?: (text: string) => void } = {},
): TurnDestination {
  const write = options.write ?? ((bytes: Buffer) => writeSync(1, bytes));
  const report = options.report ?? reportOnStandardError;
  const mostPending = options.mostPending ?? MOST_PENDING_BYTES;
  const now = options.now ?? Date.now;

  let lines: string[] = [];
  /** Text refused by standard output so far, oldest first. */
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let dropped = 0;
  let retrying = false;
  /** Set by `flush` at exit: no turn is coming, so lines go out as they come. */
  let exiting = false;

  /** Writes what is waiting, as far as standard output takes it; false if some is still waiting. */
  const drain = (): boolean => {
    while (pending.length > 0) {
      const head = pending[0]!;
      let written: number;
      try {
        written = write(head);
      } catch (err) {
        if (errorCode(err) === 'EAGAIN') return false;
        if (errorCode(err) !== 'EPIPE') throw err;
        written = head.length; // nobody reads standard output any more
      }
      pendingBytes -= written;
      if (written < head.length) pending[0] = head.subarray(written);
      else pending.shift();
      if (pending.length === 0 && dropped > 0) {
        const note = Buffer.from(`{"level":40,"time":${now()},"msg":"${dropped} log lines dropped: standard output took nothing for too long"}\n`);
        dropped = 0;
        pending.push(note);
        pendingBytes += note.length;
      }
    }
    return true;
  };

  const retryLater = () => {
    if (retrying) return;
    retrying = true;
    // Unreferenced: a pipe that never takes the log again must not keep a
    // server that has closed from exiting (`flush` at exit tries once more).
    setTimeout(() => {
      retrying = false;
      if (!drain()) retryLater();
    }, RETRY_MS).unref();
  };

  /** Queues the held lines behind what is waiting. */
  const takeLines = () => {
    if (lines.length === 0) return;
    const bytes = Buffer.from(lines.length === 1 ? lines[0]! : lines.join(''));
    if (pendingBytes > 0 && pendingBytes + bytes.length > mostPending) dropped += lines.length;
    else {
      pending.push(bytes);
      pendingBytes += bytes.length;
    }
    lines = [];
  };

  const atTurnEnd = () => {
    takeLines();
    if (!retrying && !drain()) retryLater();
  };

  return {
    write(line: string) {
      if (exiting) {
        lines.push(line);
        takeLines();
        drain();
        return;
      }
      if (lines.length === 0) setImmediate(atTurnEnd);
      lines.push(line);
    },
    flush() {
      exiting = true;
      takeLines();
      const pause = new Int32Array(new SharedArrayBuffer(4));
      for (let i = 0; i < EXIT_TRIES && !drain(); i++) Atomics.wait(pause, 0, 0, RETRY_MS);
      // What is still waiting now is lost: say so where an operator will see it.
      let lost = dropped;
      for (const bytes of pending) for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) lost++;
      if (lost > 0) report(`Folio: ${lost} log lines were lost at exit: standard output took nothing for a second.\n`);
    },
  };
}

/** Standard error, for the one line saying what the log lost at exit; if it fails too, there is nowhere left to say it. */
function reportOnStandardError(text: string): void {
  try {
    writeSync(2, text);
  } catch {
    // Nothing to do.
  }
}
