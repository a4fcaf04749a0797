import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { generateKey, hashKey } from '../src/domain/keys.js';
import { call, setup, type TestContext } from './helpers.js';

/**
 * Folio keeps principals, organizations and memberships in memory while the
 * database is unchanged. Changes made by another connection — the `folio`
 * command, another process — and by this server's own writes must still
 * take effect on the very next request.
 */
describe('access cache', () => {
  let t: TestContext;
  let other: Database.Database;
  before(async () => {
    t = await setup();
    other = new Database(join(t.dir, 'folio.db'));
    other.pragma('busy_timeout = 5000');
  });
  after(async () => {
    other.close();
    await t.close();
  });

  it('refuses a key revoked by another connection on the next request', async () => {
    const user = await t.make.user();
    const { secret, record } = await t.make.key(user.id);
    assert.equal((await call(t.app, 'GET', '/v1/me', { key: secret })).status, 200);
    assert.equal((await call(t.app, 'GET', '/v1/me', { key: secret })).status, 200);
    other.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ?').run(new Date().toISOString(), record.id);
    assert.equal((await call(t.app, 'GET', '/v1/me', { key: secret })).status, 401);
  });

  it('sees plans, memberships and organization names changed by another connection on the next request', async () => {
    const user = await t.make.user({ plan: null });
    const org = await t.make.org({ name: 'Before', plan: 'team_yearly', members: [user.id] });
    const { secret } = await t.make.key(user.id);
    const me = async () => call(t.app, 'GET', '/v1/me', { key: secret });
    const first = await me();
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.organizations.map((o: { name: string }) => o.name), ['Before']);
    assert.equal((await call(t.app, 'GET', `/v1/documents?organizationId=${org.id}`, { key: secret })).status, 200);

    other.prepare('UPDATE organizations SET name = ? WHERE id = ?').run('After', org.id);
    assert.deepEqual((await me()).body.organizations.map((o: { name: string }) => o.name), ['After']);

    other.prepare('DELETE FROM memberships WHERE org_id = ? AND user_id = ?').run(org.id, user.id);
    // Without the team, the user has no plan granting the API at all.
    assert.equal((await me()).status, 402);
    other.prepare('UPDATE users SET plan = ? WHERE id = ?').run('pro', user.id);
    const after = await me();
    assert.equal(after.status, 200);
    assert.deepEqual(after.body.organizations, []);
    assert.equal((await call(t.app, 'GET', `/v1/documents?organizationId=${org.id}`, { key: secret })).status, 400);
  });

  it('searches and lists a project shared or unshared by another connection from the next request', async () => {
    const owner = await t.make.user();
    const reader = await t.make.user();
    const { secret } = await t.make.key(reader.id);
    const project = await t.make.project(owner.id, { name: 'Shared later' });
    const doc = await t.make.document(owner.id, { projectId: project.id, content: 'zephyrine notes' });
    const ids = async (path: string) =>
      (await call(t.app, 'GET', path, { key: secret })).body.documents.map((d: { id: string }) => d.id);
    const seen = async () => ({ search: await ids('/v1/documents?q=zephyrine'), list: await ids('/v1/documents') });
    assert.deepEqual(await seen(), { search: [], list: [] });
    other.prepare('INSERT INTO project_shares (project_id, user_id) VALUES (?, ?)').run(project.id, reader.id);
    assert.deepEqual(await seen(), { search: [doc.id], list: [doc.id] });
    other.prepare('DELETE FROM project_shares WHERE project_id = ? AND user_id = ?').run(project.id, reader.id);
    assert.deepEqual(await seen(), { search: [], list: [] });
    // And through this server's own operator commands.
    await t.store.shareProject(project.id, reader.id);
    assert.deepEqual(await seen(), { search: [doc.id], list: [doc.id] });
  });

  it('lists a team project shared or unshared by another connection from the next request', async () => {
    const owner = await t.make.user();
    const reader = await t.make.user();
    const org = await t.make.org({ members: [owner.id, reader.id] });
    const { secret } = await t.make.key(reader.id);
    const project = await t.make.project(owner.id, { name: 'Team, shared later', orgId: org.id });
    const doc = await t.make.document(owner.id, { projectId: project.id, orgId: org.id });
    const list = async () =>
      (await call(t.app, 'GET', `/v1/documents?organizationId=${org.id}`, { key: secret })).body.documents.map(
        (d: { id: string }) => d.id,
      );
    assert.deepEqual(await list(), []);
    other.prepare('INSERT INTO project_shares (project_id, user_id) VALUES (?, ?)').run(project.id, reader.id);
    assert.deepEqual(await list(), [doc.id]);
    other.prepare('DELETE FROM project_shares WHERE project_id = ? AND user_id = ?').run(project.id, reader.id);
    assert.deepEqual(await list(), []);
  });

  it('keeps the principals it holds when a key\'s last-used time is written (once a minute per active key)', async () => {
    const user = await t.make.user();
    const held = await t.make.key(user.id);
    const used = await t.make.key(user.id);
    // Reading the cache first: writes of the keys' last use above are behind it.
    await t.store.findPrincipal(hashKey(used.secret));
    const before = await t.store.findPrincipal(hashKey(held.secret));
    assert.equal(await t.store.findPrincipal(hashKey(held.secret)), before, 'served from the cache');
    assert.equal((await call(t.app, 'GET', '/v1/me', { key: used.secret })).status, 200);
    // Read by the other connection: the operator's own reads drop the cache too.
    assert.notEqual(other.prepare('SELECT last_used_at FROM api_keys WHERE id = ?').pluck().get(used.record.id), null, 'the use was written');
    assert.equal(await t.store.findPrincipal(hashKey(held.secret)), before, 'still served from the cache');
  });

  it('reads a key only when it is worth looking up, and answers a known one without asking', async () => {
    const user = await t.make.user();
    const { secret, record } = await t.make.key(user.id);
    const hash = hashKey(secret);
    let asked = 0;
    const notWorthIt = () => {
      asked++;
      return false;
    };
    assert.equal(await t.store.findPrincipal(hash, notWorthIt), null, 'not read when not worth it');
    assert.equal(asked, 1);
    assert.equal((await t.store.findPrincipal(hash))?.keyId, record.id, 'nor remembered as missing');
    assert.equal((await t.store.findPrincipal(hash, notWorthIt))?.keyId, record.id, 'a key already found is answered');
    assert.equal(asked, 1, 'without asking');
  });

  it('keeps the principals it holds however many unknown keys are tried', async () => {
    const user = await t.make.user();
    const { secret } = await t.make.key(user.id);
    const held = await t.store.findPrincipal(hashKey(secret));
    assert.ok(held);
    // Anyone can make well-formed keys; each is looked up, and none is kept
    // (the cache holds 10,000 entries, then starts afresh).
    for (let i = 0; i < 10_001; i++) assert.equal(await t.store.findPrincipal(hashKey(generateKey())), null);
    assert.equal(await t.store.findPrincipal(hashKey(secret)), held, 'still served from the cache');
  });

  it('sees this server’s own changes on the next request', async () => {
    const user = await t.make.user();
    const { secret, record } = await t.make.key(user.id);
    const org = await t.make.org();
    const docs = async () => (await call(t.app, 'GET', `/v1/documents?organizationId=${org.id}`, { key: secret })).status;
    assert.equal(await docs(), 400);
    await t.store.addMember(org.id, user.id, new Date().toISOString());
    assert.equal(await docs(), 200);
    await t.store.removeMember(org.id, user.id);
    assert.equal(await docs(), 400);
    await t.store.revokeKey(record.id, new Date().toISOString());
    assert.equal((await call(t.app, 'GET', '/v1/me', { key: secret })).status, 401);
  });
});
