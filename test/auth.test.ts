import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import pg from 'pg';
import { readFileSync } from 'node:fs';
import { call, queryRows, setup, SQLITE_ONLY, sqliteFile, TEST_DATABASE, writeElsewhere, type TestContext } from './helpers.js';
import { generateKey, hashKey, isWellFormedKey } from '../src/domain/keys.js';
import { buildApp } from '../src/app.js';

describe('API keys', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  const unauthorized = (res: { status: number; body: any }) => {
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 'unauthorized');
    assert.match(res.body.error.message, /key/i);
  };

  it('generates keys in the fol_ format with a valid checksum, and rejects a mistyped one', () => {
    const key = generateKey();
    assert.match(key, /^fol_[0-9A-Za-z]{38}$/);
    assert.ok(isWellFormedKey(key));
    const last = key.at(-1)!;
    const typo = key.slice(0, -1) + (last === 'a' ? 'b' : 'a');
    assert.equal(isWellFormedKey(typo), false);
    const bodyTypo = key.slice(0, 10) + (key[10] === 'x' ? 'y' : 'x') + key.slice(11);
    assert.equal(isWellFormedKey(bodyTypo), false);
  });

  it('guards every operation of the OpenAPI document, and its HEAD, with the key check', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const seen: string[] = [];
    for (const [path, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
      const url = `/v1${path.replace('{id}', '6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11').replace('{number}', '1')}`;
      for (const method of Object.keys(item).map((m) => m.toUpperCase())) {
        for (const m of method === 'GET' ? ['GET', 'HEAD'] : [method]) {
          const res = await t.app.inject({ method: m as 'GET', url });
          assert.equal(res.statusCode, 401, `${m} ${url}`);
          seen.push(`${m} ${path}`);
        }
      }
    }
    // The spec's nine operations and the three of history (DESIGN §7): twelve, nine of them GETs.
    assert.equal(seen.length, 21, seen.join(', '));
  });

  it('refuses a missing, malformed, unknown or mistyped key with 401', async () => {
    const user = await t.make.user();
    const { secret } = await t.make.key(user.id);
    const message = async (headers: Record<string, string>) => {
      const r = await call(t.app, 'GET', '/v1/me', { headers });
      unauthorized(r);
      return r.body.error.message;
    };
    assert.equal(await message({}), 'Missing API key: send it as "Authorization: Bearer <API_KEY>".');
    // A header that holds no single bearer key is told apart from none.
    for (const authorization of [secret, `Basic ${secret}`, `Bearer ${secret} ${secret}`, 'Bearer', '']) {
      assert.equal(await message({ authorization }), 'Malformed Authorization header: send one key, as "Authorization: Bearer <API_KEY>".', authorization);
    }
    unauthorized(await call(t.app, 'GET', '/v1/me', { key: 'not-a-key' }));
    unauthorized(await call(t.app, 'GET', '/v1/me', { key: generateKey() }));
    unauthorized(await call(t.app, 'GET', '/v1/me', { key: secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A') }));
    unauthorized(await call(t.app, 'GET', '/v1/me', { key: `${secret}x` }));
    assert.equal((await call(t.app, 'GET', '/v1/me', { key: secret })).status, 200);
    assert.equal((await call(t.app, 'GET', '/v1/me', { headers: { authorization: `bearer ${secret}` } })).status, 200);
  });

  it('looks a key up in the database only once it has passed the format check', async () => {
    const user = await t.make.user();
    const { secret } = await t.make.key(user.id);
    const lookedUp: string[] = [];
    const store = {
      ...t.store,
      findPrincipal: (hash: string) => {
        lookedUp.push(hash);
        return t.store.findPrincipal(hash);
      },
    };
    const app = await buildApp({ config: t.config, store, clock: t.clock });
    try {
      const mistyped = secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A');
      unauthorized(await call(app, 'GET', '/v1/me', { key: mistyped }));
      unauthorized(await call(app, 'GET', '/v1/me', { key: 'not-a-key' }));
      assert.deepEqual(lookedUp, []);
      assert.equal((await call(app, 'GET', '/v1/me', { key: secret })).status, 200);
      assert.deepEqual(lookedUp, [hashKey(secret)]);
    } finally {
      await app.close();
    }
  });

  it('answers 500 in the envelope when a step after a database read fails, and keeps serving', async () => {
    const user = await t.make.user();
    const { secret } = await t.make.key(user.id);
    let failing = true;
    const app = await buildApp({
      config: t.config,
      store: t.store,
      clock: t.clock,
      limiter: {
        consume: async () => {
          if (failing) throw new Error('the limiter failed');
          return { allowed: true, limit: 10, remaining: 9, resetSeconds: 60 };
        },
      },
    });
    const rejections: unknown[] = [];
    const noteRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', noteRejection);
    try {
      const res = await call(app, 'GET', '/v1/me', { key: secret });
      assert.equal(res.status, 500, res.raw);
      assert.equal(res.body.error.code, 'internal_error');
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(rejections, []);
      failing = false;
      assert.equal((await call(app, 'GET', '/v1/me', { key: secret })).status, 200);
    } finally {
      process.off('unhandledRejection', noteRejection);
      await app.close();
    }
  });

  it('refuses every endpoint without a key', async () => {
    const id = '6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11';
    for (const [method, url] of [
      ['GET', '/v1/me'],
      ['GET', '/v1/documents'],
      ['POST', '/v1/documents'],
      ['GET', `/v1/documents/${id}`],
      ['PATCH', `/v1/documents/${id}`],
      ['GET', '/v1/projects'],
      ['GET', '/v1/templates'],
      ['GET', '/v1/organizations'],
      ['GET', '/v1/chats'],
      ['GET', `/v1/documents/${id}/revisions`],
      ['GET', `/v1/documents/${id}/revisions/1`],
      ['POST', `/v1/documents/${id}/revisions/1/restore`],
    ] as const) {
      unauthorized(await call(t.app, method, url, { body: method === 'GET' ? undefined : { title: 'x' } }));
    }
  });

  it('refuses a read-only key on write endpoints with 401, and lets a write key through', async () => {
    const user = await t.make.user();
    const read = await t.make.key(user.id, { write: false });
    const write = await t.make.key(user.id, { write: true });
    const doc = await t.make.document(user.id);
    const body = { title: 'T', contentMarkdown: 'text' };
    unauthorized(await call(t.app, 'POST', '/v1/documents', { key: read.secret, body }));
    unauthorized(
      await call(t.app, 'PATCH', `/v1/documents/${doc.id}`, {
        key: read.secret,
        body: { contentMarkdown: 'x', expectedUpdatedAt: null },
      }),
    );
    const restore = `/v1/documents/${doc.id}/revisions/1/restore`;
    unauthorized(await call(t.app, 'POST', restore, { key: read.secret, body: { expectedUpdatedAt: null } }));
    assert.equal((await call(t.app, 'POST', '/v1/documents', { key: write.secret, body })).status, 201);
    assert.equal((await call(t.app, 'POST', restore, { key: write.secret, body: { expectedUpdatedAt: null } })).status, 200);
    const me = await call(t.app, 'GET', '/v1/me', { key: read.secret });
    assert.deepEqual(me.body.key, { name: 'test key', scopes: ['connector:read'] });
    const meWrite = await call(t.app, 'GET', '/v1/me', { key: write.secret });
    assert.deepEqual(meWrite.body.key.scopes, ['connector:read', 'connector:write']);
  });

  it('refuses a revoked key on the very next request', async () => {
    const user = await t.make.user();
    const { secret, record } = await t.make.key(user.id);
    assert.equal((await call(t.app, 'GET', '/v1/me', { key: secret })).status, 200);
    await t.store.revokeKey(record.id, new Date().toISOString());
    unauthorized(await call(t.app, 'GET', '/v1/me', { key: secret }));
  });

  it('refuses on the very next request a key revoked, a member removed or a plan lost by another process', async () => {
    const elsewhere = (sql: string, ...params: unknown[]) => writeElsewhere(t.config, sql, ...params);
    const owner = await t.make.user({ plan: null });
    const team = await t.make.org({ plan: 'team_yearly', members: [owner.id] });
    const { secret, record } = await t.make.key(owner.id);
    const me = () => call(t.app, 'GET', '/v1/me', { key: secret });
    const docs = () => call(t.app, 'GET', `/v1/documents?organizationId=${team.id}`, { key: secret });
    assert.equal((await me()).body.plan, 'team_yearly', 'the plan comes from the team');
    assert.equal((await docs()).status, 200);
    await elsewhere('UPDATE organizations SET plan = NULL WHERE id = ?', team.id);
    assert.equal((await me()).status, 402, 'the plan lost elsewhere');
    await elsewhere("UPDATE organizations SET plan = 'team_yearly' WHERE id = ?", team.id);
    assert.equal((await docs()).status, 200);
    await elsewhere('UPDATE users SET plan = ? WHERE id = ?', 'pro_monthly', owner.id);
    await elsewhere('DELETE FROM memberships WHERE org_id = ? AND user_id = ?', team.id, owner.id);
    assert.equal((await docs()).status, 400, 'no longer a member');
    assert.equal((await me()).status, 200);
    await elsewhere('UPDATE api_keys SET revoked_at = ? WHERE id = ?', new Date().toISOString(), record.id);
    assert.equal((await me()).status, 401, 'revoked elsewhere');
  });

  it('stores only a SHA-256 hash of the key, never the secret', async () => {
    const user = await t.make.user();
    const { secret } = await t.make.key(user.id);
    await call(t.app, 'GET', '/v1/me', { key: secret });
    const secretPart = secret.slice(4, 36);
    if (TEST_DATABASE === 'sqlite') {
      const files = ['folio.db', 'folio.db-wal'].map((f) => readFileSync(`${t.dir}/${f}`));
      assert.ok(files[0]!.length > 0);
      for (const bytes of files) assert.equal(bytes.includes(Buffer.from(secretPart)), false);
    } else {
      const rows = await queryRows<{ row: string }>(t.config, 'SELECT k::text AS row FROM api_keys k WHERE user_id = ?', user.id);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.row.includes(secretPart), false);
      assert.equal(rows[0]!.row.includes(Buffer.from(hashKey(secret), 'base64').toString('hex')), true, 'the hash is stored, as bytes');
    }
    const keys = await t.store.listKeys(user.id);
    assert.equal(keys[0]!.last4, secret.slice(-4));
  });

  /**
   * The key's last-used time once it is `expected`, or once `patienceMs`
   * have passed: the guard writes it without waiting for the write.
   */
  async function lastUsedOf(userId: string, keyId: string, expected: string | null, patienceMs = 2000): Promise<string | null> {
    const read = async () => (await t.store.listKeys(userId)).find((k) => k.id === keyId)!.lastUsedAt;
    for (let waited = 0; waited < patienceMs && (await read()) !== expected; waited += 10) await new Promise((r) => setTimeout(r, 10));
    return read();
  }

  it('writes the last-used time at most about once a minute per key', async () => {
    const user = await t.make.user();
    const { secret, record } = await t.make.key(user.id);
    const lastUsed = (expected: string | null) => lastUsedOf(user.id, record.id, expected);
    assert.equal(await lastUsed(null), null);
    await call(t.app, 'GET', '/v1/me', { key: secret });
    const first = new Date(t.clock()).toISOString();
    assert.equal(await lastUsed(first), first);
    t.clock.advance(30_000);
    await call(t.app, 'GET', '/v1/me', { key: secret });
    // Given time to reach a value it must not reach.
    assert.equal(await lastUsedOf(user.id, record.id, new Date(t.clock()).toISOString(), 200), first, 'not rewritten within the minute');
    t.clock.advance(31_000);
    await call(t.app, 'GET', '/v1/me', { key: secret });
    assert.equal(await lastUsed(new Date(t.clock()).toISOString()), new Date(t.clock()).toISOString());
  });

  it('answers without waiting while another process holds the write lock, and writes the last-used time once it is let go', SQLITE_ONLY, async () => {
    const user = await t.make.user();
    const { secret, record } = await t.make.key(user.id);
    const holder = new Database(sqliteFile(t.config));
    holder.exec('BEGIN IMMEDIATE');
    const used = new Date(t.clock()).toISOString();
    try {
      const started = Date.now();
      assert.equal((await call(t.app, 'GET', '/v1/me', { key: secret })).status, 200);
      assert.ok(Date.now() - started < 1000, `answered in ${Date.now() - started} ms, not after SQLite's busy timeout`);
      assert.equal(await lastUsedOf(user.id, record.id, used, 200), null, 'not written while the lock is held');
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    assert.equal(await lastUsedOf(user.id, record.id, used), used, 'written once the lock is let go');
  });

  it('answers without waiting while another session holds the key\'s row, and writes the last-used time once it is let go', { skip: TEST_DATABASE === 'postgres' ? false : 'about PostgreSQL\'s row locks: the SQLite run holds the write lock instead (above)' }, async () => {
    const user = await t.make.user();
    const { secret, record } = await t.make.key(user.id);
    if (t.config.database.kind !== 'postgres') throw new Error('this test needs PostgreSQL');
    const holder = new pg.Client({ connectionString: t.config.database.url });
    await holder.connect();
    const used = new Date(t.clock()).toISOString();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM api_keys WHERE id = $1 FOR UPDATE', [record.id]);
      const started = Date.now();
      assert.equal((await call(t.app, 'GET', '/v1/me', { key: secret })).status, 200);
      assert.ok(Date.now() - started < 1000, `answered in ${Date.now() - started} ms, not after the lock wait`);
      assert.equal(await lastUsedOf(user.id, record.id, used, 200), null, 'not written while the row is held');
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    assert.equal(await lastUsedOf(user.id, record.id, used), used, 'written once the row is let go');
  });

  it('counts a last-used time written by another process: not rewritten until its minute has passed', async () => {
    const user = await t.make.user();
    const { secret, record } = await t.make.key(user.id);
    const elsewhere = new Date(t.clock() - 20_000).toISOString();
    await t.store.touchKey(record.id, elsewhere);
    for (let i = 0; i < 3; i++) {
      await call(t.app, 'GET', '/v1/me', { key: secret });
      assert.equal(await lastUsedOf(user.id, record.id, new Date(t.clock()).toISOString(), 200), elsewhere, `request ${i + 1}`);
    }
    t.clock.advance(41_000);
    await call(t.app, 'GET', '/v1/me', { key: secret });
    assert.equal(await lastUsedOf(user.id, record.id, new Date(t.clock()).toISOString()), new Date(t.clock()).toISOString());
  });
});

describe('plans', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  const status = async (key: string) => (await call(t.app, 'GET', '/v1/me', { key })).status;

  it('answers 402 plan_required on every endpoint for a user without an API plan', async () => {
    const user = await t.make.user({ plan: null });
    const { secret } = await t.make.key(user.id, { write: true });
    const id = '6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11';
    for (const [method, url, body] of [
      ['GET', '/v1/me'],
      ['GET', '/v1/documents'],
      ['POST', '/v1/documents', { title: 'a', contentMarkdown: 'b' }],
      ['GET', `/v1/documents/${id}`],
      ['PATCH', `/v1/documents/${id}`, { contentMarkdown: 'b', expectedUpdatedAt: null }],
      ['GET', '/v1/projects'],
      ['GET', '/v1/templates'],
      ['GET', '/v1/organizations'],
      ['GET', '/v1/chats'],
    ] as const) {
      const res = await call(t.app, method, url, { key: secret, body });
      assert.equal(res.status, 402, `${method} ${url}`);
      assert.equal(res.body.error.code, 'plan_required');
    }
  });

  it('grants API access by tier names and their _ or - variants only', async () => {
    for (const [plan, granted] of [
      ['pro', true],
      ['pro_monthly', true],
      ['team-yearly', true],
      ['enterprise', true],
      ['plus_monthly', false],
      ['free', false],
      ['professional', false],
      ['propro', false],
    ] as const) {
      const user = await t.make.user({ plan });
      const { secret } = await t.make.key(user.id);
      assert.equal(await status(secret), granted ? 200 : 402, plan);
    }
  });

  it("grants access through a team's plan, and reports the user's own granting plan first", async () => {
    const user = await t.make.user({ plan: 'free' });
    const { secret } = await t.make.key(user.id);
    assert.equal(await status(secret), 402);
    const first = await t.make.org({ plan: 'team_monthly', members: [user.id] });
    t.clock.advance(1000);
    await t.make.org({ plan: 'enterprise', members: [user.id] });
    const me = await call(t.app, 'GET', '/v1/me', { key: secret });
    assert.equal(me.status, 200);
    assert.equal(me.body.plan, 'team_monthly', 'the earliest-joined granting organization');
    await t.store.setUserPlan(user.id, 'pro_yearly');
    assert.equal((await call(t.app, 'GET', '/v1/me', { key: secret })).body.plan, 'pro_yearly');
    await t.store.setUserPlan(user.id, null);
    await t.store.removeMember(first.id, user.id);
    assert.equal((await call(t.app, 'GET', '/v1/me', { key: secret })).body.plan, 'enterprise');
  });

  it('refuses a user who loses the plan at once, and serves them again when it is back', async () => {
    const user = await t.make.user({ plan: 'pro' });
    const { secret } = await t.make.key(user.id);
    assert.equal(await status(secret), 200);
    await t.store.setUserPlan(user.id, 'free');
    assert.equal(await status(secret), 402);
    await t.store.setUserPlan(user.id, 'pro');
    assert.equal(await status(secret), 200);
  });

  it('takes its tiers from API_PLANS', async () => {
    const custom = await setup({ env: { API_PLANS: 'gold, silver' } });
    try {
      const gold = await custom.make.user({ plan: 'gold_monthly' });
      const pro = await custom.make.user({ plan: 'pro' });
      const goldKey = (await custom.make.key(gold.id)).secret;
      const proKey = (await custom.make.key(pro.id)).secret;
      assert.equal((await call(custom.app, 'GET', '/v1/me', { key: goldKey })).status, 200);
      assert.equal((await call(custom.app, 'GET', '/v1/me', { key: proKey })).status, 402);
    } finally {
      await custom.close();
    }
  });
});
