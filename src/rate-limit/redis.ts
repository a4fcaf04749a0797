import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ConfigError } from '../config.js';
import type { LimitClass, Limiter, LimitSettings, RateDecision } from './limiter.js';

const WINDOW_SECONDS = 60;

/** What the limiter says of Redis coming and going: a line for the operator. */
export type RedisReport = (level: 'warn' | 'info', message: string) => void;

export interface RedisLimiterOptions {
  /** Where the limiter's reports go (standard error until the server's logger exists). */
  report?: RedisReport;
  /** The start of every key the limiter writes (`<prefix>:read:<key id>`): instances sharing limits share it. */
  prefix?: string;
}

export interface RedisLimiter extends Limiter {
  /** Closes the connection to Redis. */
  close(): Promise<void>;
}

/** The URL without its user name and password, to name Redis in messages and logs. */
export function redactedRedisUrl(url: string): string {
  const u = new URL(url);
  if (u.username !== '' || u.password !== '') {
    u.username = '';
    u.password = '';
  }
  return u.toString();
}

/**
 * Rate limits shared by every Folio instance that uses the same Redis
 * (`REDIS_URL`, DESIGN §4): the same fixed windows as the limiter kept in
 * memory (limiter.ts), one per key and class, opened by the key's first
 * request and closed 60 seconds later, counted by rate-limiter-flexible's
 * atomic Lua script (`SET … NX EX`, `INCRBY`, `PTTL`), so that concurrent
 * requests on several instances are counted once each.
 *
 * Redis must answer when the server starts (otherwise a ConfigError names
 * REDIS_URL). Afterwards, while it is unreachable or slow (no answer within
 * half a second), each instance counts in its own memory instead
 * (rate-limiter-flexible's insurance limiter), so that requests are still
 * limited, per instance, and never wait for Redis to come back; the
 * connection is retried in the background, and the change both ways is
 * reported.
 */
export async function redisLimiter(settings: LimitSettings, url: string, options: RedisLimiterOptions = {}): Promise<RedisLimiter> {
  const { report = (level, message) => process.stderr.write(`${level === 'warn' ? 'Warning' : 'Note'}: ${message}\n`), prefix = 'folio' } = options;
  const where = redactedRedisUrl(url);
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2000,
    // While the connection is down, a command fails at once (the insurance
    // limiter answers) instead of waiting in a queue for the reconnection.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  // Reported only once the start has succeeded: before, a failure stops the server.
  let started = false;
  let down = false;
  // Without a listener, ioredis would print every failed reconnection itself.
  client.on('error', (error: Error) => {
    if (!started || down) return;
    down = true;
    report('warn', `Redis at ${where} is unreachable (${error.message}); rate limits are counted in this instance's memory until it is back.`);
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    report('info', `Redis at ${where} answers again; rate limits are shared again.`);
  });
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    client.disconnect();
    throw new ConfigError('REDIS_URL', `cannot reach Redis at ${where}: ${(error as Error).message}`);
  }
  started = true;

  const limiter = (cls: LimitClass, points: number) =>
    new RateLimiterRedis({
      storeClient: client,
      keyPrefix: `${prefix}:${cls}`,
      points,
      duration: WINDOW_SECONDS,
      rejectIfRedisNotReady: true,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix: `${prefix}:${cls}`, points, duration: WINDOW_SECONDS }),
    });
  const classes = { read: limiter('read', settings.readPerMin), write: limiter('write', settings.writePerMin) };
  const points = { read: settings.readPerMin, write: settings.writePerMin };

  const decision = (res: RateLimiterRes, limit: number): RateDecision => ({
    allowed: res.consumedPoints <= limit,
    limit,
    remaining: Math.max(0, limit - res.consumedPoints),
    resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  });

  return {
    consume(keyId, cls) {
      return classes[cls].consume(keyId).then(
        (res) => decision(res, points[cls]),
        (refusal: unknown) => {
          // Over the limit: rate-limiter-flexible rejects with the count.
          if (refusal instanceof RateLimiterRes) return decision(refusal, points[cls]);
          throw refusal;
        },
      );
    },
    async close() {
      // `quit` waits for Redis to answer; a connection that is down is simply dropped.
      if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}
