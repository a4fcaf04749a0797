import { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { ConfigError } from '../config.js';
import { decide, memoryLimiter, WINDOW_SECONDS, type LimitClass, type Limiter, type LimitSettings } from './limiter.js';

/** What the limiter says of Redis coming and going: a line for the operator. */
export type RedisReport = (level: 'warn' | 'info', message: string) => void;

export interface RedisLimiterOptions {
  /** Where the limiter's reports go (standard error until the server's logger exists). */
  report?: RedisReport;
  /** The start of every key the limiter writes (`<prefix>:read:<key id>`): instances sharing limits share it. */
  prefix?: string;
}

export interface RedisLimiter extends Limiter {
  /** Rejects while Redis does not answer. */
  ready(): Promise<void>;
  /** Closes the connection to Redis. */
  close(): Promise<void>;
}

/** Redis as messages name it: scheme, host, port and database number, never a password or options (which may hold one). */
export function redactedRedisUrl(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
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
 * REDIS_URL). Afterwards, whenever it cannot count a request (the
 * connection is down, it has not answered for half a second, or it refuses
 * the command: out of memory, a read-only replica), the request is counted
 * in this instance's memory instead, by the limiter kept in memory, so
 * requests are still limited, per instance, and never wait long for Redis.
 * Until the connection is back, requests go to memory at once; a socket
 * that stays silent for half a second is dropped and made again. The
 * first failure is reported, and the first request Redis counts again.
 */
export async function redisLimiter(settings: LimitSettings, url: string, options: RedisLimiterOptions = {}): Promise<RedisLimiter> {
  const { report = (level, message) => process.stderr.write(`${level === 'warn' ? 'Warning' : 'Note'}: ${message}\n`), prefix = 'folio' } = options;
  const where = redactedRedisUrl(url);
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2000,
    // While the connection is down, a command fails at once instead of
    // waiting in a queue for the reconnection.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // A Redis that holds the connection but stops answering: the socket is
    // dropped (its commands fail) and made again.
    socketTimeout: 500,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
  });
  // What went wrong before the start succeeded (a wrong password, say), to be told in its error.
  let startError: Error | null = null;
  let started = false;
  let failing = false;
  const failed = (error: Error) => {
    if (!started) {
      startError ??= error;
      return;
    }
    if (failing) return;
    failing = true;
    report('warn', `Redis at ${where} cannot count requests (${error.message}); rate limits are counted in this instance's memory until it can.`);
  };
  // Without a listener, ioredis would print every failed reconnection itself.
  client.on('error', failed);
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    client.disconnect();
    // Set by the listener meanwhile, which TypeScript does not follow.
    const first = startError as Error | null;
    const last = (error as Error).message;
    const why = first !== null && first.message !== last ? `${first.message}; ${last}` : last;
    throw new ConfigError('REDIS_URL', `cannot reach Redis at ${where}: ${why}`);
  }
  started = true;

  const limiter = (cls: LimitClass, points: number) =>
    new RateLimiterRedis({ storeClient: client, keyPrefix: `${prefix}:${cls}`, points, duration: WINDOW_SECONDS });
  const classes = { read: limiter('read', settings.readPerMin), write: limiter('write', settings.writePerMin) };
  const inMemory = memoryLimiter(settings);

  return {
    async consume(keyId, cls) {
      if (client.status !== 'ready') return inMemory.consume(keyId, cls);
      try {
        const decision = await decide(classes[cls], keyId);
        if (failing) {
          failing = false;
          report('info', `Redis at ${where} counts requests again; rate limits are shared again.`);
        }
        return decision;
      } catch (error) {
        failed(error instanceof Error ? error : new Error(String(error)));
        return inMemory.consume(keyId, cls);
      }
    },
    async ready() {
      if (client.status !== 'ready') throw new Error(`Redis at ${where} is not connected`);
      await client.ping();
    },
    async close() {
      // `quit` waits for Redis to answer; a connection that is down is simply dropped.
      if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}
