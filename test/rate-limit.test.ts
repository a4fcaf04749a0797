import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { call, setup, type TestContext } from './helpers.js';
import type { Limiter } from '../src/rate-limit/limiter.js';

/**
 * The limiter keeps its windows by the wall clock; node's mock timers make
 * that clock controllable here.
 */
describe('rate limits', () => {
  let t: TestContext;
  let userId: string;
  beforeEach(async () => {
    mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-06-01T00:00:00.000Z') });
    t = await setup({ env: { READ_LIMIT_PER_MIN: '5', WRITE_LIMIT_PER_MIN: '2' } });
    userId = (await t.make.user()).id;
  });
  afterEach(async () => {
    await t.close();
    mock.timers.reset();
  });

  it('allows the configured reads per minute per key, then answers 429 with Retry-After', async () => {
    const { secret } = await t.make.key(userId);
    for (let i = 0; i < 5; i++) {
      const res = await call(t.app, 'GET', '/v1/me', { key: secret });
      assert.equal(res.status, 200);
      assert.equal(res.headers['ratelimit-limit'], '5');
      assert.equal(res.headers['ratelimit-remaining'], String(4 - i));
      assert.equal(res.headers['ratelimit-reset'], '60');
    }
    mock.timers.tick(20_000);
    const refused = await call(t.app, 'GET', '/v1/documents', { key: secret });
    assert.equal(refused.status, 429);
    assert.deepEqual(refused.body.error.code, 'rate_limited');
    assert.equal(refused.headers['retry-after'], '40');
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    assert.equal(refused.headers['ratelimit-reset'], '40');

    mock.timers.tick(39_500);
    const still = await call(t.app, 'GET', '/v1/me', { key: secret });
    assert.equal(still.status, 429);
    assert.equal(still.headers['retry-after'], '1', 'rounded up, never 0');
    mock.timers.tick(Number(still.headers['retry-after']) * 1000);
    assert.equal((await call(t.app, 'GET', '/v1/me', { key: secret })).status, 200, 'waiting Retry-After is enough');
  });

  it('counts reads and writes separately, per key', async () => {
    const a = await t.make.key(userId, { write: true });
    const b = await t.make.key(userId, { write: true });
    const body = { title: 't', contentMarkdown: 'x' };
    assert.equal((await call(t.app, 'POST', '/v1/documents', { key: a.secret, body })).status, 201);
    assert.equal((await call(t.app, 'POST', '/v1/documents', { key: a.secret, body })).status, 201);
    const refused = await call(t.app, 'POST', '/v1/documents', { key: a.secret, body });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['ratelimit-limit'], '2');
    assert.equal((await call(t.app, 'GET', '/v1/me', { key: a.secret })).status, 200, 'reads have their own budget');
    assert.equal((await call(t.app, 'POST', '/v1/documents', { key: b.secret, body })).status, 201, 'another key has its own');
  });

  it('applies the limit before validating input', async () => {
    const { secret } = await t.make.key(userId);
    for (let i = 0; i < 5; i++) await call(t.app, 'GET', '/v1/me', { key: secret });
    const res = await call(t.app, 'GET', '/v1/documents?limit=1000', { key: secret });
    assert.equal(res.status, 429);
  });
});

/** Any limiter (the one in memory, Redis's): its answer decides, with its figures in the headers. */
describe('a limiter that answers later', () => {
  it('is waited for: its refusal is a 429 with its headers, its consent lets the request through', async () => {
    let allowed = true;
    const seen: string[] = [];
    const limiter: Limiter = {
      consume: async (keyId, cls) => {
        seen.push(cls);
        await new Promise((r) => setImmediate(r));
        return { allowed, limit: 7, remaining: allowed ? 6 : 0, resetSeconds: 12 };
      },
    };
    const t = await setup({ deps: { limiter } });
    try {
      const { secret } = await t.make.key((await t.make.user()).id, { write: true });
      const ok = await call(t.app, 'GET', '/v1/me', { key: secret });
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['ratelimit-remaining'], '6');
      allowed = false;
      const refused = await call(t.app, 'POST', '/v1/documents', { key: secret, body: { title: 't', contentMarkdown: 'x' } });
      assert.equal(refused.status, 429);
      assert.equal(refused.body.error.code, 'rate_limited');
      assert.equal(refused.headers['retry-after'], '12');
      assert.equal(refused.headers['ratelimit-limit'], '7');
      assert.deepEqual(seen, ['read', 'write']);
    } finally {
      await t.close();
    }
  });
});
