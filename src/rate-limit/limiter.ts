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
  consume(keyId: string, cls: LimitClass): Promise<RateDecision>;
}

export interface LimitSettings {
  readPerMin: number;
  writePerMin: number;
}

const WINDOW_SECONDS = 60;

/** Wraps any rate-limiter-flexible store: memory here, Redis when several instances share limits. */
export function flexibleLimiter(limiters: Record<LimitClass, RateLimiterAbstract>): Limiter {
  return {
    async consume(keyId, cls) {
      const limiter = limiters[cls];
      const limit = limiter.points;
      try {
        const res = await limiter.consume(keyId, 1);
        return { allowed: true, limit, remaining: res.remainingPoints, resetSeconds: toSeconds(res.msBeforeNext) };
      } catch (err) {
        if (err instanceof RateLimiterRes) {
          return { allowed: false, limit, remaining: 0, resetSeconds: toSeconds(err.msBeforeNext) };
        }
        throw err;
      }
    },
  };
}

export function memoryLimiter(settings: LimitSettings): Limiter {
  return flexibleLimiter({
    read: new RateLimiterMemory({ keyPrefix: 'read', points: settings.readPerMin, duration: WINDOW_SECONDS }),
    write: new RateLimiterMemory({ keyPrefix: 'write', points: settings.writePerMin, duration: WINDOW_SECONDS }),
  });
}

function toSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
