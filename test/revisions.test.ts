import { after, afterEach, before, beforeEach, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { call, setup, type TestContext } from './helpers.js';

/**
 * Document history over HTTP (DESIGN §7): GET /documents/{id}/revisions,
 * GET /documents/{id}/revisions/{number} and
 * POST /documents/{id}/revisions/{number}/restore. Who sees a document's
 * history in every scope is in the access matrix and the visibility
 * properties; here are each endpoint's answers, its validation, its errors
 * and its rate-limit class. `call` checks every response against the
 * OpenAPI document.
 */

type Res = Awaited<ReturnType<typeof call>>;

/** An error in the envelope, with its status and code, and a message matching `pattern`. */
function refused(res: Res, status: number, code: string, pattern?: RegExp) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body), ['error']);
  assert.deepEqual(Object.keys(res.body.error).sort(), ['code', 'message']);
  assert.equal(res.body.error.code, code);
  assert.equal(typeof res.body.error.message, 'string');
  if (pattern) assert.match(res.body.error.message, pattern);
}

describe('document history over HTTP', () => {
  let t: TestContext;
  let userId: string;
  let read: string;
  let write: string;
  let restorer: string;
  before(async () => {
    t = await setup({ env: { READ_LIMIT_PER_MIN: '100000', WRITE_LIMIT_PER_MIN: '100000' } });
    userId = (await t.make.user()).id;
    read = (await t.make.key(userId, { name: 'reader' })).secret;
    write = (await t.make.key(userId, { name: 'writer', write: true })).secret;
    restorer = (await t.make.key(userId, { name: 'restorer', write: true })).secret;
  });
  after(() => t.close());

  const now = () => new Date(t.clock()).toISOString();
  const query = (params: Record<string, string | undefined>) => {
    const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString();
    return q === '' ? '' : `?${q}`;
  };
  const list = (id: string, params: Record<string, string | undefined> = {}, key = read) =>
    call(t.app, 'GET', `/v1/documents/${id}/revisions${query(params)}`, { key });
  const revision = (id: string, number: number | string, params: Record<string, string | undefined> = {}, key = read) =>
    call(t.app, 'GET', `/v1/documents/${id}/revisions/${number}${query(params)}`, { key });
  const restore = (id: string, number: number | string, body: unknown, key = write) =>
    call(t.app, 'POST', `/v1/documents/${id}/revisions/${number}/restore`, { key, body });
  const create = (body: Record<string, unknown>, key = write) => call(t.app, 'POST', '/v1/documents', { key, body });
  const patch = (id: string, body: Record<string, unknown>, key = write) => call(t.app, 'PATCH', `/v1/documents/${id}`, { key, body });
  const get = (id: string, params: Record<string, string | undefined> = {}) => call(t.app, 'GET', `/v1/documents/${id}${query(params)}`, { key: read });
  const numbers = (res: Res) => res.body.revisions.map((r: { number: number }) => r.number);
  /** A document created through the API by the write key, at a fresh instant. */
  const document = async (title = 'Plan', contentMarkdown = 'First draft.') => {
    t.clock.advance(1000);
    const res = await create({ title, contentMarkdown });
    assert.equal(res.status, 201);
    return res.body.id as string;
  };

  it('lists the revisions newest first, each with its time, title and author, and reads each with its Markdown', async () => {
    const id = await document('Plan', 'First draft.');
    const createdAt = now();
    t.clock.advance(1000);
    assert.equal((await patch(id, { contentMarkdown: 'Second draft.', expectedUpdatedAt: null, title: 'Plan B' })).status, 200);
    const updatedAt = now();
    // The command line's change: no key, no author.
    t.clock.advance(1000);
    const cli = await t.store.updateDocument({ userId, orgId: null }, id, { contentMarkdown: 'From the shell.', expectedUpdatedAt: updatedAt }, () => now());
    assert.equal(cli.status, 'updated');

    const res = await list(id);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      revisions: [
        { number: 3, createdAt: now(), title: 'Plan B', userId: null, keyName: null },
        { number: 2, createdAt: updatedAt, title: 'Plan B', userId, keyName: 'writer' },
        { number: 1, createdAt, title: 'Plan', userId, keyName: 'writer' },
      ],
      count: 3,
    });
    // Each revision's time is the one its change set on the document.
    assert.equal((await get(id)).body.updatedAt, res.body.revisions[0]!.createdAt);

    const contents = ['First draft.', 'Second draft.', 'From the shell.'];
    for (const listed of res.body.revisions) {
      const one = await revision(id, listed.number);
      assert.equal(one.status, 200);
      assert.deepEqual(one.body, { ...listed, contentMarkdown: contents[listed.number - 1] });
    }
    // The id in upper case names the same document, as for GET /documents/{id}.
    assert.deepEqual((await list(id.toUpperCase())).body, res.body);
    assert.equal((await revision(id.toUpperCase(), 1)).body.contentMarkdown, 'First draft.');
  });

  it('applies limit: default 20, 1 to 100', async () => {
    const id = await document();
    let updatedAt: string | null = null;
    for (let i = 0; i < 104; i++) {
      t.clock.advance(1);
      const outcome = await t.store.updateDocument({ userId, orgId: null }, id, { contentMarkdown: `Version ${i + 2}.`, expectedUpdatedAt: updatedAt }, () => now());
      assert.equal(outcome.status, 'updated');
      updatedAt = outcome.status === 'updated' ? outcome.document.updatedAt : null;
    }
    const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from - i);
    const byDefault = await list(id);
    assert.deepEqual([numbers(byDefault), byDefault.body.count], [range(105, 20), 20]);
    assert.deepEqual(numbers(await list(id, { limit: '1' })), [105]);
    assert.deepEqual(numbers(await list(id, { limit: '100' })), range(105, 100));
    for (const bad of ['0', '101', '-1', '1.5', 'ten', '', '1e1', '0x10']) refused(await list(id, { limit: bad }), 400, 'invalid_request', /limit/);
  });

  it('validates the revision number, the document id and organizationId, naming the parameter', async () => {
    const id = await document();
    const badNumbers = ['0', '-1', '1.5', 'abc', '1e0', '+1', '0x1', '2147483648', '99999999999999999999'];
    for (const bad of badNumbers) {
      refused(await revision(id, bad), 400, 'invalid_request', /number/);
      refused(await restore(id, bad, { expectedUpdatedAt: null }), 400, 'invalid_request', /number/);
    }
    // The largest number is a number: this document has no such revision.
    refused(await revision(id, 2_147_483_647), 404, 'not_found', /revision 2147483647/);
    for (const bad of ['not-a-uuid', '123', `urn:uuid:${id}`]) {
      refused(await list(bad), 400, 'invalid_request', /\bid\b/);
      refused(await revision(bad, 1), 400, 'invalid_request', /\bid\b/);
      refused(await restore(bad, 1, { expectedUpdatedAt: null }), 400, 'invalid_request', /\bid\b/);
    }
    for (const bad of ['team', '']) {
      refused(await list(id, { organizationId: bad }), 400, 'invalid_request', /organizationId/);
      refused(await revision(id, 1, { organizationId: bad }), 400, 'invalid_request', /organizationId/);
      refused(await restore(id, 1, { expectedUpdatedAt: null, organizationId: bad }), 400, 'invalid_request', /organizationId/);
    }
  });

  it('validates the restore body: expectedUpdatedAt required, a date-time or null', async () => {
    const id = await document();
    refused(await restore(id, 1, {}), 400, 'invalid_request', /expectedUpdatedAt/);
    refused(await restore(id, 1, { expectedUpdatedAt: 'yesterday' }), 400, 'invalid_request', /expectedUpdatedAt/);
    refused(await restore(id, 1, { expectedUpdatedAt: 12 }), 400, 'invalid_request', /expectedUpdatedAt/);
    refused(await restore(id, 1, '{"expectedUpdatedAt": '), 400, 'invalid_request', /JSON/);
    refused(await restore(id, 1, '[null]'), 400, 'invalid_request');
    refused(await call(t.app, 'POST', `/v1/documents/${id}/revisions/1/restore`, { key: write }), 400, 'invalid_request');
    assert.deepEqual(numbers(await list(id)), [1], 'nothing was restored');
  });

  it('answers 404 for an unknown document, a missing revision, and a document the caller does not see', async () => {
    const id = await document();
    const unknown = randomUUID();
    const notFound = { list: await list(unknown), revision: await revision(unknown, 1), restore: await restore(unknown, 1, { expectedUpdatedAt: null }) };
    for (const res of Object.values(notFound)) refused(res, 404, 'not_found', /Document not found/);

    for (const number of [2, 3, 1000]) {
      refused(await revision(id, number), 404, 'not_found', new RegExp(`no revision ${number}\\b`));
      refused(await restore(id, number, { expectedUpdatedAt: null }), 404, 'not_found', new RegExp(`no revision ${number}\\b`));
    }
    assert.deepEqual(numbers(await list(id)), [1], 'a refused restore writes nothing');

    // Another user's document: the same answers as an unknown one.
    const other = await t.make.user();
    const otherKey = (await t.make.key(other.id, { write: true })).secret;
    const theirs = await create({ title: 'Theirs', contentMarkdown: 'Private.' }, otherKey);
    /** The answers for `docId` are those for an unknown one: `like` the unknown document, or the document in an unknown team. */
    const hidden = async (docId: string, o: { organizationId?: string }, what: string, like = notFound) => {
      const ls = await list(docId, o);
      assert.deepEqual([ls.status, ls.body], [like.list.status, like.list.body], `${what}: list`);
      const rev = await revision(docId, 1, o);
      assert.deepEqual([rev.status, rev.body], [like.revision.status, like.revision.body], `${what}: revision`);
      const res = await restore(docId, 1, { expectedUpdatedAt: null, ...o });
      assert.deepEqual([res.status, res.body], [like.restore.status, like.restore.body], `${what}: restore`);
    };
    await hidden(theirs.body.id, {}, "another user's document");
    assert.deepEqual(numbers(await list(theirs.body.id, {}, otherKey)), [1], 'its owner sees it unchanged');

    // A team's document: seen in the team's scope by its members only, and no longer once the caller leaves.
    const team = await t.make.org({ plan: 'team_monthly', members: [userId, other.id] });
    const inTeam = await create({ title: 'Team plan', contentMarkdown: 'Shared.', organizationId: team.id }, otherKey);
    assert.equal(inTeam.status, 201);
    assert.deepEqual(numbers(await list(inTeam.body.id, { organizationId: team.id })), [1]);
    assert.equal((await revision(inTeam.body.id, 1, { organizationId: team.id })).status, 200);
    await hidden(inTeam.body.id, {}, 'a team document in the personal scope');
    await hidden(id, { organizationId: team.id }, 'a personal document in a team scope');
    // A team the caller is not in is 404 as an unknown team is, as for GET /documents/{id}.
    await t.store.removeMember(team.id, userId);
    const noTeam = { organizationId: `org_${randomUUID().replaceAll('-', '')}` };
    const unknownTeam = { list: await list(id, noTeam), revision: await revision(id, 1, noTeam), restore: await restore(id, 1, { expectedUpdatedAt: null, ...noTeam }) };
    for (const res of Object.values(unknownTeam)) refused(res, 404, 'not_found');
    await hidden(inTeam.body.id, { organizationId: team.id }, 'a team the caller left', unknownTeam);
    assert.deepEqual((await get(inTeam.body.id, { organizationId: team.id })).body, unknownTeam.list.body, 'as the document itself');
    assert.deepEqual(numbers(await list(inTeam.body.id, { organizationId: team.id }, otherKey)), [1], 'unchanged for the members');
  });

  it('restores a revision as a new one: its title and content current again, by the restoring key', async () => {
    const id = await document('Plan', 'First draft, with apples.');
    t.clock.advance(1000);
    assert.equal((await patch(id, { title: 'Plan B', contentMarkdown: 'Second draft, with pears.', expectedUpdatedAt: null })).status, 200);
    const before = await get(id);
    t.clock.advance(1000);

    const res = await restore(id, 1, { expectedUpdatedAt: before.body.updatedAt }, restorer);
    assert.equal(res.status, 200);
    // PATCH's DocumentMutationResult, with no field added.
    assert.deepEqual(res.body, { id, title: 'Plan', threadId: null, url: before.body.url });

    const after = await get(id);
    assert.deepEqual(
      [after.body.title, after.body.contentMarkdown, after.body.updatedAt, after.body.createdAt],
      ['Plan', 'First draft, with apples.', now(), before.body.createdAt],
    );
    const listed = await list(id);
    assert.deepEqual(listed.body.revisions[0], { number: 3, createdAt: now(), title: 'Plan', userId, keyName: 'restorer' });
    assert.deepEqual(numbers(listed), [3, 2, 1], 'nothing is lost');
    assert.equal((await revision(id, 3)).body.contentMarkdown, 'First draft, with apples.');
    assert.equal((await revision(id, 2)).body.contentMarkdown, 'Second draft, with pears.');
    // Search covers the current version only.
    const search = async (q: string) => (await call(t.app, 'GET', `/v1/documents?q=${q}&limit=100`, { key: read })).body.documents.map((d: { id: string }) => d.id);
    assert.ok((await search('apples')).includes(id));
    assert.ok(!(await search('pears')).includes(id));
  });

  it('restores in a team scope with organizationId in the body', async () => {
    const team = await t.make.org({ plan: 'team_monthly', members: [userId] });
    const created = await create({ title: 'Team doc', contentMarkdown: 'Team v1.', organizationId: team.id });
    const id = created.body.id as string;
    t.clock.advance(1000);
    assert.equal((await patch(id, { contentMarkdown: 'Team v2.', expectedUpdatedAt: null, organizationId: team.id })).status, 200);
    const { updatedAt } = (await get(id, { organizationId: team.id })).body;
    refused(await restore(id, 1, { expectedUpdatedAt: updatedAt }), 404, 'not_found');
    assert.equal((await restore(id, 1, { expectedUpdatedAt: updatedAt, organizationId: team.id })).status, 200);
    assert.equal((await get(id, { organizationId: team.id })).body.contentMarkdown, 'Team v1.');
  });

  it("checks expectedUpdatedAt with PATCH's 409 rule, and a refused restore writes nothing", async () => {
    const id = await document('Plan', 'v1');
    // A never-updated document: null is the right expectation (restoring its only revision is a change too).
    t.clock.set(Date.parse('2026-04-01T10:00:00.000Z'));
    assert.equal((await restore(id, 1, { expectedUpdatedAt: null })).status, 200);
    assert.equal((await get(id)).body.updatedAt, '2026-04-01T10:00:00.000Z');
    t.clock.advance(1000);
    assert.equal((await patch(id, { contentMarkdown: 'v3', expectedUpdatedAt: '2026-04-01T10:00:00.000Z' })).status, 200);
    const current = (await get(id)).body.updatedAt as string;
    const history = (await list(id)).body;
    assert.deepEqual(history.revisions.map((r: { number: number }) => r.number), [3, 2, 1]);

    t.clock.advance(1000);
    const notQuite = current.replace('Z', '001Z');
    for (const stale of [null, '2026-04-01T10:00:00.000Z', '2026-04-01T12:00:00.000Z', notQuite]) {
      const res = await restore(id, 1, { expectedUpdatedAt: stale });
      refused(res, 409, 'conflict', new RegExp(current.replace(/[.]/g, '\\.')));
      // The same answer as PATCH's, for the same stale expectation.
      const patched = await patch(id, { contentMarkdown: 'lost', expectedUpdatedAt: stale });
      assert.deepEqual([res.status, res.body], [patched.status, patched.body], `expecting ${stale}`);
    }
    assert.deepEqual((await list(id)).body, history, 'no revision recorded');
    assert.equal((await get(id)).body.contentMarkdown, 'v3');

    // The same instant in another form the date-time format accepts is the right expectation.
    const withOffset = new Date(Date.parse(current) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    assert.equal((await restore(id, 1, { expectedUpdatedAt: withOffset })).status, 200);
    assert.equal((await get(id)).body.contentMarkdown, 'v1');
  });

  it('lets exactly one of concurrent restores with the same expectedUpdatedAt win, recording one revision', async () => {
    const id = await document('Race', 'v1');
    t.clock.advance(1000);
    assert.equal((await patch(id, { contentMarkdown: 'v2', expectedUpdatedAt: null })).status, 200);
    const { updatedAt } = (await get(id)).body;
    t.clock.advance(1000);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => restore(id, 1 + (i % 2), { expectedUpdatedAt: updatedAt })));
    assert.deepEqual(results.map((r) => r.status).sort(), [200, ...Array(9).fill(409)]);
    const winner = results.findIndex((r) => r.status === 200);
    assert.deepEqual(numbers(await list(id)), [3, 2, 1]);
    assert.equal((await revision(id, 3)).body.contentMarkdown, `v${1 + (winner % 2)}`);
  });

  it('needs a write key to restore: a read key gets 401, before the document is looked up, and nothing is restored', async () => {
    const id = await document('Plan', 'v1');
    t.clock.advance(1000);
    assert.equal((await patch(id, { contentMarkdown: 'v2', expectedUpdatedAt: null })).status, 200);
    const { updatedAt } = (await get(id)).body;
    refused(await restore(id, 1, { expectedUpdatedAt: updatedAt }, read), 401, 'unauthorized', /connector:write/);
    refused(await restore(randomUUID(), 1, { expectedUpdatedAt: null }, read), 401, 'unauthorized', /connector:write/);
    refused(await restore(id, 1, { expectedUpdatedAt: updatedAt }, 'fol_not-a-key'), 401, 'unauthorized');
    assert.deepEqual(numbers(await list(id)), [2, 1]);
    assert.equal((await get(id)).body.contentMarkdown, 'v2');
    // Reading history needs no more than a read key.
    assert.equal((await list(id, {}, read)).status, 200);
  });

  it('answers 402 without a plan that grants API access, on all three', async () => {
    const lapsed = await t.make.user({ plan: null });
    const key = (await t.make.key(lapsed.id, { write: true })).secret;
    const id = await document();
    refused(await list(id, {}, key), 402, 'plan_required');
    refused(await revision(id, 1, {}, key), 402, 'plan_required');
    refused(await restore(id, 1, { expectedUpdatedAt: null }, key), 402, 'plan_required');
  });
});

/** The limiter keeps its windows by the wall clock, which node's mock timers control here (as in rate-limit.test.ts). */
describe('document history: rate-limit classes', () => {
  let t: TestContext;
  let userId: string;
  let docId: string;
  beforeEach(async () => {
    mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-06-01T00:00:00.000Z') });
    t = await setup({ env: { READ_LIMIT_PER_MIN: '4', WRITE_LIMIT_PER_MIN: '2' } });
    userId = (await t.make.user()).id;
    docId = (await t.make.document(userId, { content: 'v1' })).id;
  });
  afterEach(async () => {
    await t.close();
    mock.timers.reset();
  });

  it('counts the history reads as reads', async () => {
    const { secret } = await t.make.key(userId, { write: true });
    const reads = [`/v1/documents/${docId}/revisions`, `/v1/documents/${docId}/revisions/1`];
    for (let i = 0; i < 4; i++) {
      const res = await call(t.app, 'GET', reads[i % 2]!, { key: secret });
      assert.equal(res.status, 200);
      assert.equal(res.headers['ratelimit-limit'], '4');
      assert.equal(res.headers['ratelimit-remaining'], String(3 - i));
    }
    for (const url of [...reads, '/v1/me']) {
      const res = await call(t.app, 'GET', url, { key: secret });
      refused(res, 429, 'rate_limited');
      assert.ok(Number(res.headers['retry-after']) >= 1);
    }
    // Writes have their own budget.
    assert.equal((await call(t.app, 'POST', `/v1/documents/${docId}/revisions/1/restore`, { key: secret, body: { expectedUpdatedAt: null } })).status, 200);
  });

  it('counts a restore as a write', async () => {
    const { secret } = await t.make.key(userId, { write: true });
    let expectedUpdatedAt: string | null = null;
    for (let i = 0; i < 2; i++) {
      const res = await call(t.app, 'POST', `/v1/documents/${docId}/revisions/1/restore`, { key: secret, body: { expectedUpdatedAt } });
      assert.equal(res.status, 200);
      assert.equal(res.headers['ratelimit-limit'], '2');
      assert.equal(res.headers['ratelimit-remaining'], String(1 - i));
      expectedUpdatedAt = (await t.store.getDocument({ userId, orgId: null }, docId))!.updatedAt;
    }
    const restore = await call(t.app, 'POST', `/v1/documents/${docId}/revisions/1/restore`, { key: secret, body: { expectedUpdatedAt } });
    refused(restore, 429, 'rate_limited');
    assert.ok(Number(restore.headers['retry-after']) >= 1);
    const patch = await call(t.app, 'PATCH', `/v1/documents/${docId}`, { key: secret, body: { contentMarkdown: 'x', expectedUpdatedAt } });
    refused(patch, 429, 'rate_limited');
    // Reads have their own budget, the history's too.
    assert.equal((await call(t.app, 'GET', `/v1/documents/${docId}/revisions`, { key: secret })).status, 200);
    // The limit is applied before validation, as for the other endpoints.
    refused(await call(t.app, 'POST', `/v1/documents/${docId}/revisions/0/restore`, { key: secret, body: {} }), 429, 'rate_limited');
  });
});
