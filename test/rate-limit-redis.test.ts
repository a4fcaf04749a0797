import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { redisMissing, TEST_REDIS } from './helpers.js';
import { describeOrSkip } from './postgres.js';
import { ConfigError } from '../src/config.js';
import { generateKey, hashKey, lastFour } from '../src/domain/keys.js';
import { redisLimiter, type RedisLimiter } from '../src/rate-limit/redis.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';

/**
 * Rate limits shared through Redis (REDIS_URL), against the real server
 * this machine runs; REDIS_TEST_URL names another. Without one, these
 * tests are skipped, saying why.
 */
const REDIS = TEST_REDIS;
const { hostname: REDIS_HOST, port: REDIS_PORT } = new URL(REDIS);

const missing = await redisMissing();
if (missing) process.stderr.write(`rate-limit-redis.test.ts: skipped: ${missing}\n`);

/** REDIS with another database number. */
function testDatabase(n: number): string {
  const url = new URL(REDIS);
  url.pathname = `/${n}`;
  return url.toString();
}

/** Each test's keys start with a prefix of their own, so runs never count each other's requests. */
const freshPrefix = () => `folio-test-${process.pid}-${Math.random().toString(36).slice(2)}`;

/**
 * A TCP relay to Redis that can be cut and restored on the same port (Redis
 * going away, as a network would take it), or hung: connections stay open
 * but nothing goes through, as with a Redis that stopped answering.
 */
async function relay() {
  const sockets = new Set<Socket>();
  let hung = false;
  let server: Server;
  let port = 0;
  const listen = async () => {
    server = createServer((client) => {
      const upstream = connect(Number(REDIS_PORT || 6379), REDIS_HOST);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.on('data', (d: Buffer) => hung || upstream.write(d));
      upstream.on('data', (d: Buffer) => hung || client.write(d));
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as { port: number }).port;
  };
  const cut = async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  };
  await listen();
  return {
    port,
    cut,
    restore: listen,
    hang: () => (hung = true),
    unhang: () => (hung = false),
    close: cut,
  };
}

async function until(what: string, check: () => boolean, ms = 5000): Promise<void> {
  for (const start = Date.now(); !check(); await sleep(20)) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
  }
}

/** A limiter reaching Redis through a relay, with the reports it makes. */
async function throughRelay(readPerMin: number, prefix: string) {
  const link = await relay();
  const reports: [string, string][] = [];
  const limiter = await redisLimiter({ readPerMin, writePerMin: 1 }, `redis://127.0.0.1:${link.port}`, {
    prefix,
    report: (level, message) => reports.push([level, message]),
  });
  return { link, limiter, reports };
}

/** Sends requests of another key until Redis counts one (the limiter reports it). */
async function waitForRedis(limiter: RedisLimiter, reports: unknown[]): Promise<void> {
  const before = reports.length;
  for (const start = Date.now(); reports.length === before; await sleep(50)) {
    if (Date.now() - start > 10_000) throw new Error('Redis never counted a request again');
    await limiter.consume('probe', 'read');
  }
}

describeOrSkip('rate limits shared through Redis', missing, () => {
  it('count the requests of every instance together, per key and class', async () => {
    const settings = { readPerMin: 3, writePerMin: 1 };
    const prefix = freshPrefix();
    const one = await redisLimiter(settings, REDIS, { prefix });
    const two = await redisLimiter(settings, REDIS, { prefix });
    try {
      const seen = [];
      for (const limiter of [one, two, one, two]) seen.push(await limiter.consume('key_a', 'read'));
      assert.deepEqual(
        seen.map((d) => [d.allowed, d.limit, d.remaining]),
        [
          [true, 3, 2],
          [true, 3, 1],
          [true, 3, 0],
          [false, 3, 0],
        ],
      );
      // The window opened with the first request and closes 60 s later.
      assert.ok(seen.every((d) => d.resetSeconds >= 59 && d.resetSeconds <= 60), JSON.stringify(seen));
      assert.equal((await two.consume('key_a', 'write')).allowed, true, 'writes have their own budget');
      assert.equal((await one.consume('key_a', 'write')).allowed, false);
      assert.equal((await one.consume('key_b', 'read')).remaining, 2, 'another key has its own');
      // Concurrent requests on both instances are each counted once.
      const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? one : two).consume('key_c', 'read')));
      assert.equal(burst.filter((d) => d.allowed).length, 3);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('keep limiting, in each instance\'s memory, while Redis is unreachable, and share again once it is back', async () => {
    const { link, limiter, reports } = await throughRelay(3, freshPrefix());
    try {
      assert.equal((await limiter.consume('key', 'read')).remaining, 2);
      assert.equal((await limiter.consume('key', 'read')).remaining, 1);
      await limiter.ready();

      await link.cut();
      await until('the outage report', () => reports.length > 0);
      // Not ready (/readyz answers 503) while Redis cannot be reached.
      await assert.rejects(limiter.ready());
      assert.equal(reports[0]![0], 'warn');
      assert.match(reports[0]![1], /cannot count requests.*memory/);
      // Answered at once from memory, which counts from its own start.
      const started = Date.now();
      const during = [];
      for (let i = 0; i < 4; i++) during.push(await limiter.consume('key', 'read'));
      assert.ok(Date.now() - started < 1000, `answered in ${Date.now() - started} ms`);
      assert.deepEqual(
        during.map((d) => d.allowed),
        [true, true, true, false],
      );
      assert.equal(reports.length, 1, 'one report for the outage, not one per retry');

      await link.restore();
      // Redis is found back by the first request it counts (another key's, here).
      await waitForRedis(limiter, reports);
      assert.equal(reports[1]![0], 'info');
      await limiter.ready();
      // Redis's window is the one from before the outage: one request left in it.
      assert.deepEqual(
        [await limiter.consume('key', 'read'), await limiter.consume('key', 'read')].map((d) => [d.allowed, d.remaining]),
        [
          [true, 0],
          [false, 0],
        ],
      );
    } finally {
      await limiter.close();
      await link.close();
    }
  });

  it('count in memory, after half a second at most, while Redis holds its connection without answering', async () => {
    const prefix = freshPrefix();
    const { link, limiter, reports } = await throughRelay(100, prefix);
    const direct = new Redis(REDIS);
    try {
      assert.equal((await limiter.consume('key', 'read')).remaining, 99);
      assert.equal((await limiter.consume('key', 'read')).remaining, 98);

      link.hang();
      let started = Date.now();
      assert.equal((await limiter.consume('key', 'read')).remaining, 99, 'counted in memory, from its own start');
      assert.ok(Date.now() - started < 1500, `the first request waited ${Date.now() - started} ms`);
      await until('the report', () => reports.length > 0);
      assert.equal(reports[0]![0], 'warn');
      started = Date.now();
      for (let i = 0; i < 5; i++) assert.equal((await limiter.consume('key', 'read')).allowed, true);
      // Less than one wait of half a second for all five: none of them waited for Redis.
      assert.ok(Date.now() - started < 450, `then at once: five requests in ${Date.now() - started} ms`);

      link.unhang();
      await waitForRedis(limiter, reports);
      assert.equal(reports[1]![0], 'info');
      await limiter.ready();
      assert.equal(reports.length, 2, 'one report each way, not one per retry or request');
      assert.equal(await direct.get(`${prefix}:read:key`), '2', 'what Redis counted before it hung');
      assert.equal((await limiter.consume('key', 'read')).remaining, 97, 'counted by Redis again');
    } finally {
      direct.disconnect();
      await limiter.close();
      await link.close();
    }
  });

  it('refuse to start when Redis does not answer, naming REDIS_URL without its password', async () => {
    const unused = createServer();
    unused.listen(0, '127.0.0.1');
    await once(unused, 'listening');
    const port = (unused.address() as { port: number }).port;
    await new Promise((resolve) => unused.close(resolve));
    await assert.rejects(
      redisLimiter({ readPerMin: 1, writePerMin: 1 }, `redis://:hunter2@127.0.0.1:${port}/0`),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.variable === 'REDIS_URL' &&
        err.message.includes(`redis://127.0.0.1:${port}/0`) &&
        !err.message.includes('hunter2'),
    );
  });
});

describeOrSkip('two servers sharing a database and Redis', missing, () => {
  let dir: string;
  let file: string;
  let secret: string;
  const servers: ChildProcess[] = [];
  const ports: number[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'folio-redis-'));
    file = join(dir, 'folio.db');
    const store = openSqliteStore(file);
    const now = new Date().toISOString();
    const user = await store.createUser({ email: 'shared@example.com', name: null, plan: 'pro', now });
    secret = generateKey();
    await store.createKey({ userId: user.id, name: 'k', canWrite: true, hash: hashKey(secret), last4: lastFour(secret), now });
    await store.close();
    for (let i = 0; i < 2; i++) {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/serve.ts'], {
        // A database of Redis's own for this test: the servers write keys as in production (folio:…).
        env: { ...process.env, DATABASE_URL: `sqlite:${file}`, PORT: '0', LOG_LEVEL: 'info', REDIS_URL: testDatabase(15), READ_LIMIT_PER_MIN: '3' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      servers.push(child);
      let output = '';
      ports.push(
        await new Promise<number>((resolve, reject) => {
          child.stdout!.on('data', (chunk: Buffer) => {
            output += chunk.toString();
            const m = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
            if (m) resolve(Number(m[1]));
          });
          child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
          child.on('exit', (code) => reject(new Error(`server exited early (${code}): ${output}`)));
        }),
      );
    }
  });
  after(async () => {
    for (const child of servers) if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuse a key\'s fourth read of the minute on either server, and stop cleanly', async () => {
    const statuses = [];
    for (const port of [ports[0], ports[1], ports[0], ports[1]]) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
      statuses.push([res.status, res.headers.get('ratelimit-remaining')]);
      await res.arrayBuffer();
    }
    assert.deepEqual(statuses, [
      [200, '2'],
      [200, '1'],
      [200, '0'],
      [429, '0'],
    ]);
    // Each closes its connection to Redis as it stops: nothing keeps it running.
    for (const child of servers) {
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      assert.equal(code, 0);
    }
  });

  it('refuses to start when Redis does not answer, saying so', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve'], {
      env: { ...process.env, DATABASE_URL: `sqlite:${file}`, PORT: '0', REDIS_URL: 'redis://:hunter2@127.0.0.1:1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    const [code] = await once(child, 'exit');
    assert.notEqual(code, 0);
    assert.match(output, /REDIS_URL: cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
    assert.ok(!output.includes('hunter2'), output);
  });
});
