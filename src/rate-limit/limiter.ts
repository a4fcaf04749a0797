/** Requests are counted per key and per class (DESIGN §3). */
export type LimitClass = 'read' | 'write';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number;
}

export interface Limiter {
  /**
   * Counts one request of `keyId` in class `cls`. The limiter kept in this
   * process answers at once, so that the guard of every request runs without
   * waiting (src/http/auth.ts); the one shared by several instances through
   * Redis (redis.ts) answers with a promise.
   */
  consume(keyId: string, cls: LimitClass): RateDecision | Promise<RateDecision>;
}

export interface LimitSettings {
  readPerMin: number;
  writePerMin: number;
}

const WINDOW_MS = 60_000;

/**
 * Fixed windows, one per key: a window opens with the key's first request,
 * lets `points` requests through and closes 60 seconds later; the next
 * request opens a new one. Requests past the limit still count, and are
 * told how long the window has left. Closed windows are dropped once a
 * window's length.
 *
 * Written here rather than taken from rate-limiter-flexible, whose limiters
 * answer only through a promise: with it, the guard of every request was
 * asynchronous (bench/README.md, "A guard that does not wait").
 */
function fixedWindows(points: number) {
  const windows = new Map<string, { count: number; closesAt: number }>();
  let sweepAt = 0;
  return (key: string, now: number): RateDecision => {
    if (now >= sweepAt) {
      for (const [k, w] of windows) if (w.closesAt <= now) windows.delete(k);
      sweepAt = now + WINDOW_MS;
    }
    let window = windows.get(key);
    if (window === undefined || window.closesAt <= now) {
      window = { count: 0, closesAt: now + WINDOW_MS };
      windows.set(key, window);
    }
    window.count += 1;
    const resetSeconds = toSeconds(window.closesAt - now);
    return window.count <= points
      ? { allowed: true, limit: points, remaining: points - window.count, resetSeconds }
      : { allowed: false, limit: points, remaining: 0, resetSeconds };
  };
}

/** Limits kept in this process's memory, by the wall clock. */
export function memoryLimiter(settings: LimitSettings): Limiter {
  const classes = { read: fixedWindows(settings.readPerMin), write: fixedWindows(settings.writePerMin) };
  return {
    consume: (keyId, cls) => classes[cls](keyId, Date.now()),
  };
}

function toSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
