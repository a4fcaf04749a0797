import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, setup, type TestContext } from './helpers.js';

describe('documents', () => {
  let t: TestContext;
  let userId: string;
  let read: string;
  let write: string;
  before(async () => {
    t = await setup({ env: { READ_LIMIT_PER_MIN: '100000', WRITE_LIMIT_PER_MIN: '100000', MAX_BODY_BYTES: '4096' } });
    const user = await t.make.user();
    userId = user.id;
    read = (await t.make.key(user.id)).secret;
    write = (await t.make.key(user.id, { write: true })).secret;
  });
  after(() => t.close());

  const create = (body: unknown, key = write) => call(t.app, 'POST', '/v1/documents', { key, body });
  const patch = (id: string, body: unknown, key = write) => call(t.app, 'PATCH', `/v1/documents/${id}`, { key, body });
  const get = (id: string, query = '') => call(t.app, 'GET', `/v1/documents/${id}${query}`, { key: read });
  const invalid = (res: { status: number; body: any }, pattern?: RegExp) => {
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'invalid_request');
    if (pattern) assert.match(res.body.error.message, pattern);
  };

  it('creates a document and reads it back with its full content', async () => {
    const content = '# Plan\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```ts\nconst x = 1;\n```\n';
    const res = await create({ title: 'Quarterly plan', contentMarkdown: content });
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.body).sort(), ['id', 'threadId', 'title', 'url']);
    assert.match(res.body.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(res.body.title, 'Quarterly plan');
    assert.equal(res.body.threadId, null);
    assert.equal(res.body.url, `https://folio.test/documents/${res.body.id}`);

    const doc = await get(res.body.id);
    assert.equal(doc.status, 200);
    assert.deepEqual(doc.body, {
      id: res.body.id,
      title: 'Quarterly plan',
      createdAt: new Date(t.clock()).toISOString(),
      updatedAt: null,
      threadId: null,
      url: res.body.url,
      contentMarkdown: content,
      project: null,
    });
    assert.match(doc.body.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('creates a document in a project, which its read then names', async () => {
    const project = await t.make.project(userId, { name: 'Research' });
    const res = await create({ title: 'In project', contentMarkdown: 'x', projectId: project.id });
    assert.equal(res.status, 201);
    assert.deepEqual((await get(res.body.id)).body.project, { id: project.id, name: 'Research' });
    const list = await call(t.app, 'GET', `/v1/documents?projectId=${project.id}`, { key: read });
    assert.deepEqual(list.body.documents.map((d: any) => d.id), [res.body.id]);
  });

  it('answers 404 for a project that does not exist or is not visible, on create', async () => {
    const other = await t.make.user();
    const foreign = await t.make.project(other.id);
    // Any text names a project (DESIGN §3): a long one the caller cannot see is 404 too, not a malformed field.
    for (const projectId of ['prj_nope', foreign.id, `prj_${'a'.repeat(300)}`]) {
      const res = await create({ title: 'x', contentMarkdown: 'y', projectId });
      assert.equal(res.status, 404, projectId);
      assert.equal(res.body.error.code, 'not_found');
    }
  });

  it('validates titles: 1 to 200 characters, counted as characters', async () => {
    assert.equal((await create({ title: 'a'.repeat(200), contentMarkdown: 'x' })).status, 201);
    assert.equal((await create({ title: '😀'.repeat(200), contentMarkdown: 'x' })).status, 201);
    invalid(await create({ title: 'a'.repeat(201), contentMarkdown: 'x' }), /title/);
    invalid(await create({ title: '', contentMarkdown: 'x' }), /title/);
    invalid(await create({ contentMarkdown: 'x' }), /title/);
    invalid(await create({ title: 5, contentMarkdown: 'x' }), /title/);
    invalid(await create({ title: null, contentMarkdown: 'x' }), /title/);
  });

  it('validates content: at least one non-whitespace character', async () => {
    assert.equal((await create({ title: 't', contentMarkdown: 'x' })).status, 201);
    assert.equal((await create({ title: 't', contentMarkdown: '  \n x \n' })).status, 201);
    invalid(await create({ title: 't', contentMarkdown: '' }), /contentMarkdown/);
    invalid(await create({ title: 't', contentMarkdown: ' \n\t ' }), /contentMarkdown.*non-whitespace/);
    // Whitespace as Unicode defines it: NEXT LINE, no-break and ideographic spaces are; a byte order mark is not.
    invalid(await create({ title: 't', contentMarkdown: '\u0085 \u00a0\u3000\u2029' }), /contentMarkdown.*non-whitespace/);
    assert.equal((await create({ title: 't', contentMarkdown: '\ufeff' })).status, 201);
    invalid(await create({ title: 't' }), /contentMarkdown/);
    invalid(await create({ title: 't', contentMarkdown: ['x'] }), /contentMarkdown/);
  });

  it('refuses text no store can keep as it was sent: a lone surrogate, or U+0000, in any text field', async () => {
    invalid(await create({ title: 'a\ud83d', contentMarkdown: 'x' }), /body field title: must be Unicode text; it holds a lone surrogate/);
    invalid(await create({ title: 't', contentMarkdown: 'before\u0000after' }), /body field contentMarkdown: must not hold the character U\+0000/);
    invalid(await create({ title: '\u0000', contentMarkdown: 'x' }), /title: must not hold the character U\+0000/);
    // Sent as JSON's escape, as a client would.
    const raw = await call(t.app, 'POST', '/v1/documents', { key: write, body: '{"title":"t","contentMarkdown":"a\\u0000b"}' });
    invalid(raw, /U\+0000/);
    // Unknown fields are not looked into.
    assert.equal((await create({ title: 't', contentMarkdown: 'x', extra: '\u0000' })).status, 201);
  });

  it('ignores unknown body fields and never echoes them', async () => {
    const res = await create({ title: 't', contentMarkdown: 'x', color: 'red', id: 'mine' });
    assert.equal(res.status, 201);
    assert.notEqual(res.body.id, 'mine');
    assert.equal(res.body.color, undefined);
    // Keys that would reach an object's prototype are unknown fields too: dropped, never applied.
    for (const extra of ['"__proto__": {"polluted": "yes"}', '"constructor": {"prototype": {"polluted": "yes"}}']) {
      const sneaky = await call(t.app, 'POST', '/v1/documents', {
        key: write,
        body: `{"title": "Sneaky", "contentMarkdown": "x", ${extra}}`,
      });
      assert.equal(sneaky.status, 201, JSON.stringify(sneaky.body));
      assert.equal((await get(sneaky.body.id)).body.title, 'Sneaky');
      assert.equal(({} as { polluted?: string }).polluted, undefined);
    }
  });

  it('refuses bodies that are not a JSON object sent as application/json', async () => {
    invalid(await call(t.app, 'POST', '/v1/documents', { key: write, body: '{"title": "t",' }), /JSON/);
    invalid(await call(t.app, 'POST', '/v1/documents', { key: write, body: '[1,2]' }));
    invalid(await call(t.app, 'POST', '/v1/documents', { key: write, body: '"text"' }));
    invalid(await call(t.app, 'POST', '/v1/documents', { key: write, body: 'null' }));
    invalid(await call(t.app, 'POST', '/v1/documents', { key: write }));
    invalid(
      await call(t.app, 'POST', '/v1/documents', {
        key: write,
        body: JSON.stringify({ title: 't', contentMarkdown: 'x' }),
        headers: { 'content-type': 'text/plain' },
      }),
      /application\/json/,
    );
    invalid(
      await call(t.app, 'POST', '/v1/documents', {
        key: write,
        body: 'title=t',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      /application\/json/,
    );
    assert.equal(
      (
        await call(t.app, 'POST', '/v1/documents', {
          key: write,
          body: JSON.stringify({ title: 't', contentMarkdown: 'x' }),
          headers: { 'content-type': 'application/json; charset=utf-8' },
        })
      ).status,
      201,
    );
  });

  it('refuses a body over the configured maximum with 400, and accepts one just under it', async () => {
    const envelope = JSON.stringify({ title: 't', contentMarkdown: '' }).length;
    const fits = await create({ title: 't', contentMarkdown: 'x'.repeat(4096 - envelope) });
    assert.equal(fits.status, 201);
    invalid(await create({ title: 't', contentMarkdown: 'x'.repeat(4097 - envelope) }), /larger than the limit of 4096 bytes/);
  });

  it('answers 400 for a malformed document id and 404 for an unknown one', async () => {
    invalid(await get('not-a-uuid'), /id/);
    invalid(await get('urn:uuid:6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11'), /id/);
    invalid(await patch('123', { contentMarkdown: 'x', expectedUpdatedAt: null }), /id/);
    const missing = await get('6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'not_found');
    invalid(await get('6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11', '?organizationId=team'), /organizationId.*"org_"/);
    // Any text after `org_` is an organization id: one the caller cannot see is 404 here.
    const { body: mine } = await create({ title: 'Mine', contentMarkdown: 'x' });
    for (const org of ['org_abc-def', 'org_', `org_${'x'.repeat(300)}`, 'org_%C3%A9t%C3%A9']) {
      assert.equal((await get(mine.id, `?organizationId=${org}`)).status, 404, org);
      assert.equal((await patch(mine.id, { contentMarkdown: 'y', expectedUpdatedAt: null, organizationId: decodeURIComponent(org) })).status, 404, org);
    }
  });

  it('reads and updates a document by its id in upper case too', async () => {
    const { body: created } = await create({ title: 'Cased', contentMarkdown: 'v1' });
    const upper = created.id.toUpperCase();
    const read = await get(upper);
    assert.equal(read.status, 200);
    assert.equal(read.body.id, created.id);
    const updated = await patch(upper, { contentMarkdown: 'v2', expectedUpdatedAt: null });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.equal(updated.body.id, created.id);
    assert.equal((await get(created.id)).body.contentMarkdown, 'v2');
  });

  it('replaces content with the right expectedUpdatedAt, and answers 409 with a stale one', async () => {
    const { body: created } = await create({ title: 'Draft', contentMarkdown: 'v1' });
    t.clock.advance(1000);
    const first = await patch(created.id, { contentMarkdown: 'v2', expectedUpdatedAt: null });
    assert.equal(first.status, 200);
    assert.deepEqual(first.body, { id: created.id, title: 'Draft', threadId: null, url: created.url });
    const read1 = await get(created.id);
    assert.equal(read1.body.contentMarkdown, 'v2');
    assert.equal(read1.body.updatedAt, new Date(t.clock()).toISOString());

    const stale = await patch(created.id, { contentMarkdown: 'v3', expectedUpdatedAt: null });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.error.code, 'conflict');
    assert.equal((await get(created.id)).body.contentMarkdown, 'v2', 'a refused update writes nothing');

    t.clock.advance(1000);
    const renamed = await patch(created.id, { contentMarkdown: 'v3', expectedUpdatedAt: read1.body.updatedAt, title: 'Final' });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.title, 'Final');
    const read2 = await get(created.id);
    assert.equal(read2.body.title, 'Final');
    assert.equal(read2.body.contentMarkdown, 'v3');
  });

  it('compares expectedUpdatedAt as an instant', async () => {
    const { body: created } = await create({ title: 'Instant', contentMarkdown: 'v1' });
    const updatedAt = async () => (await get(created.id)).body.updatedAt as string;
    /** The same instant as `iso` with a +02:00 offset. */
    const withOffset = (iso: string) => new Date(Date.parse(iso) + 2 * 3600_000).toISOString().replace('Z', '+02:00');

    t.clock.set(Date.parse('2026-04-01T10:00:00.000Z'));
    await patch(created.id, { contentMarkdown: 'v2', expectedUpdatedAt: null });
    assert.equal(await updatedAt(), '2026-04-01T10:00:00.000Z');
    t.clock.set(Date.parse('2026-04-01T11:00:00.000Z'));
    assert.equal((await patch(created.id, { contentMarkdown: 'v3', expectedUpdatedAt: '2026-04-01T10:00:00Z' })).status, 200);
    t.clock.advance(7);
    assert.equal((await patch(created.id, { contentMarkdown: 'v4', expectedUpdatedAt: withOffset(await updatedAt()) })).status, 200);
    t.clock.advance(7);
    const micro = (await updatedAt()).replace('Z', '000Z');
    assert.equal((await patch(created.id, { contentMarkdown: 'v5', expectedUpdatedAt: micro })).status, 200);

    // Every other form the date-time format accepts names the same instant too.
    for (const form of [
      (iso: string) => iso.replace('T', ' '),
      (iso: string) => withOffset(iso).replace('+02:00', '+0200'),
      (iso: string) => withOffset(iso).replace('+02:00', '+02'),
      (iso: string) => iso.replace('Z', '-00:00').toLowerCase(),
    ]) {
      t.clock.advance(7);
      const expected = form(await updatedAt());
      assert.equal((await patch(created.id, { contentMarkdown: expected, expectedUpdatedAt: expected })).status, 200, expected);
    }

    const notQuite = (await updatedAt()).replace('Z', '001Z');
    assert.equal((await patch(created.id, { contentMarkdown: 'x', expectedUpdatedAt: notQuite })).status, 409);
    // Instants no document's updatedAt can be, at the ends of the years Folio stores, match none, on every database.
    for (const never of ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59-01:00']) {
      const res = await patch(created.id, { contentMarkdown: 'x', expectedUpdatedAt: never });
      assert.equal(res.status, 409, `${never}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, 'conflict');
    }
    // The first and the last but one are instants like any other.
    for (const edge of ['0001-01-01T00:00:00.000Z', '9999-12-31T23:59:59.998Z']) {
      assert.equal((await patch(created.id, { contentMarkdown: 'x', expectedUpdatedAt: edge })).status, 409, edge);
    }
    invalid(await patch(created.id, { contentMarkdown: 'x', expectedUpdatedAt: 'yesterday' }), /expectedUpdatedAt/);
    invalid(await patch(created.id, { contentMarkdown: 'x' }), /expectedUpdatedAt/);
  });

  it('makes updatedAt strictly increase, even for updates within one millisecond', async () => {
    const { body: created } = await create({ title: 'Fast', contentMarkdown: 'v0' });
    let expected: string | null = null;
    const seen: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const res = await patch(created.id, { contentMarkdown: `v${i}`, expectedUpdatedAt: expected });
      assert.equal(res.status, 200);
      expected = (await get(created.id)).body.updatedAt;
      seen.push(expected!);
    }
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! > seen[i - 1]!, `${seen[i]} > ${seen[i - 1]}`);
    assert.equal(new Set(seen).size, 5);
  });

  it('lets exactly one of 20 concurrent updates with the same expectedUpdatedAt win', async () => {
    const { body: created } = await create({ title: 'Race', contentMarkdown: 'v0' });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => patch(created.id, { contentMarkdown: `writer ${i}`, expectedUpdatedAt: null })),
    );
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, ...Array(19).fill(409)]);
    const winner = results.findIndex((r) => r.status === 200);
    assert.equal((await get(created.id)).body.contentMarkdown, `writer ${winner}`);
  });

  it('validates PATCH bodies', async () => {
    const { body: created } = await create({ title: 'P', contentMarkdown: 'v0' });
    invalid(await patch(created.id, { contentMarkdown: ' ', expectedUpdatedAt: null }), /contentMarkdown/);
    invalid(await patch(created.id, { contentMarkdown: 'x', expectedUpdatedAt: null, title: '' }), /title/);
    invalid(await patch(created.id, { contentMarkdown: 'x', expectedUpdatedAt: null, title: 'a'.repeat(201) }), /title/);
    invalid(await patch(created.id, { contentMarkdown: 'x', expectedUpdatedAt: 12 }), /expectedUpdatedAt/);
    const missing = await patch('6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11', { contentMarkdown: 'x', expectedUpdatedAt: null });
    assert.equal(missing.status, 404);
  });

  it('answers 404 when a document is updated under a team it does not belong to', async () => {
    const { body: created } = await create({ title: 'Mine', contentMarkdown: 'v0' });
    const team = await t.make.org({ members: [userId], plan: 'team' });
    const res = await patch(created.id, { contentMarkdown: 'x', expectedUpdatedAt: null, organizationId: team.id });
    assert.equal(res.status, 404);
    assert.equal((await get(created.id, `?organizationId=${team.id}`)).status, 404);
  });
});

describe('document lists', () => {
  let t: TestContext;
  let key: string;
  let userId: string;
  before(async () => {
    t = await setup({ env: { READ_LIMIT_PER_MIN: '100000' } });
    const user = await t.make.user();
    userId = user.id;
    key = (await t.make.key(user.id)).secret;
  });
  after(() => t.close());

  const list = (query = '') => call(t.app, 'GET', `/v1/documents${query}`, { key });

  it('lists newest first by coalesce(updatedAt, createdAt), ties by id, with count = items returned', async () => {
    const a = await t.make.document(userId, { title: 'A' });
    t.clock.advance(10);
    const b = await t.make.document(userId, { title: 'B' });
    t.clock.advance(10);
    const c = await t.make.document(userId, { title: 'C' });
    const tie = await t.make.document(userId, { title: 'C2' });
    t.clock.advance(10);
    // Updating A moves it to the front.
    const updated = await t.store.updateDocument(
      { userId, orgId: null },
      a.id,
      { contentMarkdown: 'new', expectedUpdatedAt: null },
      () => new Date(t.clock()).toISOString(),
    );
    assert.equal(updated.status, 'updated');
    const res = await list();
    assert.equal(res.status, 200);
    const ties = [c.id, tie.id].sort().reverse();
    assert.deepEqual(res.body.documents.map((d: any) => d.id), [a.id, ...ties, b.id]);
    assert.equal(res.body.count, 4);
    const first = res.body.documents[0];
    assert.deepEqual(Object.keys(first).sort(), ['createdAt', 'id', 'threadId', 'title', 'updatedAt', 'url']);
    assert.equal(first.contentMarkdown, undefined, 'summaries carry no body');
  });

  it('applies limit: default 20, 1 to 100', async () => {
    for (let i = 0; i < 105; i++) await t.make.document(userId);
    assert.equal((await list()).body.count, 20);
    assert.equal((await list('?limit=1')).body.count, 1);
    assert.equal((await list('?limit=100')).body.count, 100);
    for (const bad of ['0', '101', '-1', '1.5', 'ten', '']) {
      const res = await list(`?limit=${bad}`);
      assert.equal(res.status, 400, `limit=${bad}`);
      assert.match(res.body.error.message, /limit/);
    }
  });

  it('validates q, organizationId and projectId', async () => {
    assert.equal((await list(`?q=${'a'.repeat(200)}`)).status, 200);
    for (const bad of [`q=${'a'.repeat(201)}`, 'q=', 'organizationId=team', 'organizationId=', 'projectId=prj_unknown', `projectId=prj_${'a'.repeat(300)}`]) {
      const res = await list(`?${bad}`);
      assert.equal(res.status, 400, bad);
      assert.equal(res.body.error.code, 'invalid_request');
    }
    const other = await t.make.org({ plan: 'team' });
    const res = await list(`?organizationId=${other.id}`);
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /organizationId/);
  });

  it('ignores unknown query parameters', async () => {
    const res = await list('?limit=2&sort=asc&foo=bar');
    assert.equal(res.status, 200);
    assert.equal(res.body.count, 2);
  });
});
