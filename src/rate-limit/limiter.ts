import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

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
  /** Counts one request of `keyId` in class `cls`. */
  consume(keyId: string, cls: LimitClass): Promise<RateDecision>;
  /** Rejects when the limits' shared store (Redis) does not answer; limits kept in memory are always ready. */
  ready?(): Promise<void>;
}

export interface LimitSettings {
  readPerMin: number;
  writePerMin: number;
}

export const WINDOW_SECONDS = 60;

/**
 * What rate-limiter-flexible answered, as a decision: it resolves within
 * the limit and rejects with the same kind of answer past it (any other
 * rejection is a failure of its store, passed on).
 */
export async function decide(limiter: RateLimiterAbstract, keyId: string): Promise<RateDecision> {
  const limit = limiter.points;
  const answer = await limiter.consume(keyId).catch((refusal: unknown) => {
    if (refusal instanceof RateLimiterRes) return refusal;
    throw refusal;
  });
  return {
    allowed: answer.consumedPoints <= limit,
    limit,
    remaining: Math.max(0, limit - answer.consumedPoints),
    resetSeconds: Math.max(1, Math.ceil(answer.msBeforeNext / 1000)),
  };
}

/**
 * Limits kept in this process's memory: fixed windows, one per key and
 * class, opened by the key's first request and closed 60 seconds later.
 * Requests past the limit still count, and are told how long the window
 * has left.
 */
export function memoryLimiter(settings: LimitSettings): Limiter {
  const classes = {
    read: new RateLimiterMemory({ points: settings.readPerMin, duration: WINDOW_SECONDS }),
    write: new RateLimiterMemory({ points: settings.writePerMin, duration: WINDOW_SECONDS }),
  };
  return { consume: (keyId, cls) => decide(classes[cls], keyId) };
}
