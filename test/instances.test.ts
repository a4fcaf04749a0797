import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { redisLimiter, type RedisLimiter } from '../src/rate-limit/redis.js';
import { openStore } from '../src/store/open.js';
import type { Store } from '../src/store/store.js';
import { factories, redisMissing, TEST_REDIS, testConfig, type Factories } from './helpers.js';
import { createTestDatabase, describeOrSkip, postgresUrl, POSTGRES_SKIPPED, type TestDatabase } from './postgres.js';

/**
 * Several Folio instances on one PostgreSQL database (DESIGN §8), each a
 * server of its own over real HTTP: what one instance or the command line
 * changes, every instance enforces on the next request.
 */

const server = await postgresUrl();
const REDIS = TEST_REDIS;
const redisProblem = server === null ? false : await redisMissing();

interface Instance {
  app: FastifyInstance;
  store: Store;
  base: string;
}

/** One instance: its own store (pool), limiter and port, on the shared database. */
async function instance(url: string, limiter?: RedisLimiter, env: Record<string, string> = {}): Promise<Instance> {
  const config = testConfig({ DATABASE_URL: url, DATABASE_POOL_MAX: '4', ...env });
  const store = await openStore(config);
  const app = await buildApp({ config, store, ...(limiter ? { limiter } : {}) });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, store, base };
}

async function request(base: string, method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** The `folio` command on the shared database, as an operator runs it. */
async function folio(url: string, ...argv: string[]) {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...argv, '--json'], {
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'silent' },
  });
  return JSON.parse(stdout);
}

describeOrSkip('two instances on one PostgreSQL database', server === null ? POSTGRES_SKIPPED : false, () => {
  let database: TestDatabase;
  let a: Instance;
  let b: Instance;
  let make: Factories;
  before(async () => {
    database = await createTestDatabase(server!);
    // Started together, as a deployment starts them: the schema is migrated once, and both open.
    [a, b] = await Promise.all([instance(database.url), instance(database.url)]);
    make = factories(a.store, () => Date.now());
  });
  after(async () => {
    await Promise.all([a?.app.close(), b?.app.close()]);
    await Promise.all([a?.store.close(), b?.store.close()]);
    await database?.drop();
  });

  it('refuses at both instances, on the next request, a key the command line revoked', async () => {
    const user = await make.user();
    const { secret, record } = await make.key(user.id);
    for (const i of [a, b]) assert.equal((await request(i.base, 'GET', '/v1/me', secret)).status, 200);
    const revoked = await folio(database.url, 'key', 'revoke', record.id);
    assert.equal(revoked.id, record.id);
    for (const i of [a, b]) {
      const res = await request(i.base, 'GET', '/v1/me', secret);
      assert.equal(res.status, 401);
      assert.equal(res.body.error.code, 'unauthorized');
    }
  });

  it('refuses at both instances a member the command line removed', async () => {
    const owner = await make.user();
    const member = await make.user();
    const team = await make.org({ members: [owner.id, member.id] });
    const doc = await make.document(owner.id, { orgId: team.id, content: 'For the team.' });
    const key = (await make.key(member.id)).secret;
    for (const i of [a, b]) assert.equal((await request(i.base, 'GET', `/v1/documents/${doc.id}?organizationId=${team.id}`, key)).status, 200);
    await folio(database.url, 'org', 'remove-member', team.id, member.id);
    for (const i of [a, b]) {
      assert.equal((await request(i.base, 'GET', `/v1/documents/${doc.id}?organizationId=${team.id}`, key)).status, 404);
      assert.equal((await request(i.base, 'GET', `/v1/documents?organizationId=${team.id}`, key)).status, 400);
      assert.deepEqual((await request(i.base, 'GET', '/v1/me', key)).body.organizations, []);
    }
  });

  it('lets exactly one of 20 concurrent PATCHes with one expectedUpdatedAt win, spread over both instances', async () => {
    const user = await make.user();
    const key = (await make.key(user.id, { write: true })).secret;
    const doc = await make.document(user.id, { content: 'The first version.' });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, n) =>
        request(n % 2 === 0 ? a.base : b.base, 'PATCH', `/v1/documents/${doc.id}`, key, { contentMarkdown: `Version ${n}.`, expectedUpdatedAt: null }),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, ...Array(19).fill(409)]);
    const winner = answers.findIndex((r) => r.status === 200);
    const read = await request(b.base, 'GET', `/v1/documents/${doc.id}`, key);
    assert.equal(read.body.contentMarkdown, `Version ${winner}.`);
    const history = await request(a.base, 'GET', `/v1/documents/${doc.id}/revisions`, key);
    assert.deepEqual(history.body.revisions.map((r: { number: number }) => r.number), [2, 1], 'one revision for the one winner');
  });
});

describeOrSkip('two instances sharing Redis rate limits', server === null ? POSTGRES_SKIPPED : redisProblem, () => {
  it('holds one key to one limit across both instances', async () => {
    const database = await createTestDatabase(server!);
    // A prefix of this run's own, so that no other run's counts mix with it.
    const prefix = `folio-test-${randomBytes(6).toString('hex')}`;
    const settings = { readPerMin: 5, writePerMin: 2 };
    const limiters = await Promise.all([redisLimiter(settings, REDIS, { prefix }), redisLimiter(settings, REDIS, { prefix })]);
    const env = { READ_LIMIT_PER_MIN: '5', WRITE_LIMIT_PER_MIN: '2' };
    const [a, b] = await Promise.all([instance(database.url, limiters[0], env), instance(database.url, limiters[1], env)]);
    try {
      const user = await factories(a.store, () => Date.now()).user();
      const key = (await factories(a.store, () => Date.now()).key(user.id, { write: true })).secret;
      const statuses: number[] = [];
      for (const i of [a, b, a, b, a, b, a]) statuses.push((await request(i.base, 'GET', '/v1/me', key)).status);
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
      const writes: number[] = [];
      for (const i of [b, a, b]) writes.push((await request(i.base, 'POST', '/v1/documents', key, { title: 't', contentMarkdown: 'x' })).status);
      assert.deepEqual(writes, [201, 201, 429]);
    } finally {
      await Promise.all([a.app.close(), b.app.close()]);
      await Promise.all([a.store.close(), b.store.close(), ...limiters.map((l) => l.close())]);
      await database.drop();
    }
  });
});
