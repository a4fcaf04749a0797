import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, setup, type TestContext } from './helpers.js';

describe('me, organizations, projects, templates and chats', () => {
  let t: TestContext;
  let userId: string;
  let key: string;
  before(async () => {
    t = await setup({ env: { READ_LIMIT_PER_MIN: '100000' } });
    const user = await t.make.user({ email: 'ada@example.com', name: 'Ada', plan: 'pro_monthly' });
    userId = user.id;
    key = (await t.make.key(user.id, { name: 'Claude' })).secret;
  });
  after(() => t.close());

  const get = (url: string) => call(t.app, 'GET', url, { key });

  it('GET /me returns the profile, plan, key and organizations', async () => {
    const zeta = await t.make.org({ name: 'Zeta', members: [userId] });
    const alpha = await t.make.org({ name: 'Alpha', members: [userId] });
    const res = await get('/v1/me');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      id: userId,
      name: 'Ada',
      email: 'ada@example.com',
      plan: 'pro_monthly',
      key: { name: 'Claude', scopes: ['connector:read'] },
      organizations: [
        { id: alpha.id, name: 'Alpha' },
        { id: zeta.id, name: 'Zeta' },
      ],
    });
    assert.match(res.body.id, /^user_/);
    const unnamed = await t.make.user({ name: null });
    const unnamedKey = (await t.make.key(unnamed.id, { name: null })).secret;
    const me = await call(t.app, 'GET', '/v1/me', { key: unnamedKey });
    assert.equal(me.body.name, null);
    assert.equal(me.body.key.name, null);
  });

  it('GET /me answers the same bytes again, and a change to the caller on the next request', async () => {
    const user = await t.make.user({ name: 'Grace', plan: 'pro_monthly' });
    const own = (await t.make.key(user.id)).secret;
    const me = () => call(t.app, 'GET', '/v1/me', { key: own });
    const first = await me();
    assert.equal(first.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal((await me()).raw, first.raw);
    assert.equal(first.body.plan, 'pro_monthly');
    assert.deepEqual(first.body.organizations, []);
    // Another plan, and a team: both show on the next request.
    await t.store.setUserPlan(user.id, 'enterprise');
    assert.equal((await me()).body.plan, 'enterprise');
    const team = await t.make.org({ name: 'Navy', members: [user.id] });
    assert.deepEqual((await me()).body.organizations, [{ id: team.id, name: 'Navy' }]);
    // The first caller's answer is still their own.
    assert.equal((await get('/v1/me')).body.name, 'Ada');
  });

  it('GET /organizations lists the teams the user belongs to, by name', async () => {
    const res = await get('/v1/organizations');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.organizations.map((o: any) => o.name), ['Alpha', 'Zeta']);
    assert.equal(res.body.count, 2);
    for (const o of res.body.organizations) {
      assert.match(o.id, /^org_/);
      assert.deepEqual(Object.keys(o).sort(), ['createdAt', 'id', 'name']);
    }
  });

  it('lists organizations by name as people sort names: case, accents and numbers aside', async () => {
    const user = await t.make.user({ name: 'Lin', plan: 'pro' });
    const own = (await t.make.key(user.id)).secret;
    for (const name of ['Zeta', 'Team 10', 'beta', 'Émile', 'Team 2', 'alpha', 'Alpha']) await t.make.org({ name, members: [user.id] });
    const expected = ['alpha', 'Alpha', 'beta', 'Émile', 'Team 2', 'Team 10', 'Zeta'];
    const listed = await call(t.app, 'GET', '/v1/organizations', { key: own });
    assert.deepEqual(listed.body.organizations.map((o: any) => o.name), expected);
    const me = await call(t.app, 'GET', '/v1/me', { key: own });
    assert.deepEqual(me.body.organizations.map((o: any) => o.name), expected);
  });

  it('GET /projects lists personal or team projects newest first, with limit', async () => {
    const team = await t.make.org({ name: 'Projects team', members: [userId] });
    const first = await t.make.project(userId, { name: 'First', description: 'The first one' });
    t.clock.advance(1000);
    const second = await t.make.project(userId, { name: 'Second' });
    const teamProject = await t.make.project(userId, { orgId: team.id, name: 'Team project' });
    const res = await get('/v1/projects');
    assert.deepEqual(res.body.projects.map((p: any) => p.id), [second.id, first.id]);
    assert.deepEqual(res.body.projects[1], {
      id: first.id,
      name: 'First',
      description: 'The first one',
      createdAt: '2026-03-01T12:00:00.000Z',
      isSharedWithYou: false,
    });
    assert.equal((await get('/v1/projects?limit=1')).body.count, 1);
    assert.deepEqual((await get(`/v1/projects?organizationId=${team.id}`)).body.projects.map((p: any) => p.id), [teamProject.id]);
    for (const bad of ['limit=0', 'limit=101', 'organizationId=nope', 'organizationId=org_unknown', 'organizationId=org_abc-def', 'organizationId=org_']) {
      assert.equal((await get(`/v1/projects?${bad}`)).status, 400, bad);
    }
    // Any text after `org_` names an organization, one the caller cannot see here.
    assert.match((await get('/v1/projects?organizationId=org_abc-def')).body.error.message, /organizationId.*(not|no)/i);
  });

  it('GET /templates puts system templates first, honours includeSystem, and scopes to the workspace', async () => {
    const team = await t.make.org({ name: 'Templates team', members: [userId] });
    const system = await t.make.template({ title: 'Meeting notes', description: 'Built in', isDefault: true });
    const mine = await t.make.template({ title: 'My brief', workspaceId: userId, creatorId: userId });
    t.clock.advance(1000);
    const mineLater = await t.make.template({ title: 'My later', workspaceId: userId, creatorId: userId, isDefault: true });
    const teams = await t.make.template({ title: 'Team RFC', workspaceId: team.id, creatorId: userId });
    const personal = await get('/v1/templates');
    assert.deepEqual(personal.body.templates.map((x: any) => x.id), [system.id, mineLater.id, mine.id]);
    assert.deepEqual(personal.body.templates[0], {
      id: system.id,
      title: 'Meeting notes',
      description: 'Built in',
      isSystem: true,
      isDefault: true,
    });
    assert.equal(personal.body.templates[1].isDefault, true);
    assert.equal(personal.body.templates[1].isSystem, false);
    assert.deepEqual((await get('/v1/templates?includeSystem=false')).body.templates.map((x: any) => x.id), [mineLater.id, mine.id]);
    assert.deepEqual((await get(`/v1/templates?organizationId=${team.id}`)).body.templates.map((x: any) => x.id), [system.id, teams.id]);
    assert.equal((await get('/v1/templates?limit=1')).body.count, 1);
    for (const bad of ['includeSystem=yes', 'includeSystem=TRUE', 'includeSystem=1', 'limit=101']) {
      assert.equal((await get(`/v1/templates?${bad}`)).status, 400, bad);
    }
    for (const bad of ['yes', 'TRUE', '1', '']) {
      assert.deepEqual((await get(`/v1/templates?includeSystem=${bad}`)).body, {
        error: { code: 'invalid_request', message: 'query parameter includeSystem: must be true or false.' },
      });
    }
    // A new default replaces the previous one in the same workspace.
    const newest = await t.make.template({ title: 'Newest', workspaceId: userId, creatorId: userId, isDefault: true });
    const defaults = (await get('/v1/templates?includeSystem=false')).body.templates.filter((x: any) => x.isDefault);
    assert.deepEqual(defaults.map((x: any) => x.id), [newest.id]);
  });

  it('GET /chats lists chats newest first, searches titles case-insensitively, filters by project', async () => {
    const project = await t.make.project(userId, { name: 'Chat project' });
    const a = await t.make.chat(userId, { title: 'Planning the Ünïcode launch', messages: 12 });
    t.clock.advance(1000);
    const b = await t.make.chat(userId, { title: 'Budget review', projectId: project.id, messages: 3 });
    t.clock.advance(1000);
    const c = await t.make.chat(userId, { title: null });
    const all = await get('/v1/chats');
    assert.deepEqual(all.body.chats.map((x: any) => x.id), [c.id, b.id, a.id]);
    assert.deepEqual(all.body.chats[1], {
      id: b.id,
      title: 'Budget review',
      createdAt: new Date(t.clock() - 1000).toISOString(),
      updatedAt: null,
      messageCount: 3,
      project: { id: project.id, name: 'Chat project' },
      url: `https://folio.test/chats/${b.id}`,
    });
    assert.equal(all.body.chats[0].title, null);
    assert.deepEqual((await get('/v1/chats?q=BUDGET')).body.chats.map((x: any) => x.id), [b.id]);
    assert.deepEqual((await get('/v1/chats?q=ünïcode')).body.chats.map((x: any) => x.id), [a.id]);
    assert.deepEqual((await get(`/v1/chats?q=${encodeURIComponent('ÜNÏCODE')}`)).body.chats.map((x: any) => x.id), [a.id]);
    assert.deepEqual((await get('/v1/chats?q=e%20l')).body.chats.map((x: any) => x.id), [a.id], 'substring, spaces included');
    // Case folding, not lower case alone: a final sigma, a sharp s, a long s.
    const greek = await t.make.chat(userId, { title: 'ΠΡΟΣΦΟΡΑ 2026 Straße ſtop' });
    for (const q of ['ΠΡΟΣ', 'προσ', 'Προσφορά'.slice(0, 4), 'STRASSE', 'strasse', 'STOP', 'προσφορα 2026 strasse']) {
      assert.deepEqual((await get(`/v1/chats?q=${encodeURIComponent(q)}`)).body.chats.map((x: any) => x.id), [greek.id], q);
    }
    assert.deepEqual((await get('/v1/chats?q=%25')).body.chats, [], 'LIKE wildcards are text');
    // No title holds U+0000, on either database: a search for it finds nothing, and a project id holding it names none.
    for (const q of ['%00', 'Budget%00']) assert.deepEqual((await get(`/v1/chats?q=${q}`)).body, { chats: [], count: 0 }, q);
    for (const list of ['chats', 'documents']) {
      const res = await get(`/v1/${list}?projectId=${project.id}%00`);
      assert.deepEqual([res.status, res.body.error?.message], [400, 'projectId: no project with this id is accessible in this workspace.'], list);
    }
    assert.deepEqual((await get(`/v1/chats?projectId=${project.id}`)).body.chats.map((x: any) => x.id), [b.id]);
    assert.equal((await get('/v1/chats?limit=2')).body.count, 2);
    for (const bad of ['q=', `q=${'x'.repeat(201)}`, 'projectId=prj_unknown', 'limit=0']) {
      assert.equal((await get(`/v1/chats?${bad}`)).status, 400, bad);
    }
  });

  it('reads limit as decimal digits only, on every list', async () => {
    for (let i = 0; i < 6; i++) await t.make.document(userId, { title: `Counted ${i}` });
    for (const list of ['documents', 'projects', 'templates', 'chats']) {
      // What JavaScript's Number would also read as an integer.
      for (const bad of ['0x2', '1e1', '2.0', '%204%20', '+3', '0b1', '3%00', '']) {
        const res = await get(`/v1/${list}?limit=${bad}`);
        assert.equal(res.status, 400, `${list} limit=${bad}`);
        assert.deepEqual(res.body, { error: { code: 'invalid_request', message: 'query parameter limit: must be integer.' } });
      }
      assert.equal((await get(`/v1/${list}?limit=-1`)).body.error.message, 'query parameter limit: must be >= 1.');
      assert.equal((await get(`/v1/${list}?limit=0101`)).body.error.message, 'query parameter limit: must be <= 100.');
      assert.equal((await get(`/v1/${list}?limit=05`)).status, 200, `${list} limit=05`);
    }
    assert.equal((await get('/v1/documents?limit=05')).body.count, 5);
    assert.equal((await get('/v1/documents?q=counted&limit=002')).body.count, 2);
  });

  it('says so when a parameter is sent more than once', async () => {
    const twice = [
      ['documents', 'limit=5&limit=7', 'limit'],
      ['documents', 'q=counted&q=other', 'q'],
      ['documents', 'organizationId=org_a&organizationId=org_b', 'organizationId'],
      ['projects', 'limit=1&limit=1', 'limit'],
      ['templates', 'includeSystem=true&includeSystem=false', 'includeSystem'],
      ['chats', 'q=a&q=a', 'q'],
    ];
    for (const [list, query, name] of twice) {
      const res = await get(`/v1/${list}?${query}`);
      assert.deepEqual(res.body, { error: { code: 'invalid_request', message: `query parameter ${name}: must be given once.` } }, `${list}?${query}`);
      assert.equal(res.status, 400);
    }
  });
});
