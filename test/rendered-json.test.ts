import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import Database from 'better-sqlite3';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { Document, DocumentList } from '../src/api/documents/schemas.js';
import { call, setup, type TestContext } from './helpers.js';

/**
 * GET /v1/documents and GET /v1/documents/{id} answer in JSON that SQLite
 * writes (src/store/sqlite/documents.ts). These hold it to the bytes that
 * Fastify's serializer of the route's response schema makes of the same
 * data: the same fields in the same order and nothing else, the same
 * escaping of every character.
 */

const CONTROL = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('');
const TRICKY = `quote " backslash \\ slash / ${CONTROL} del \u007f seps \u2028\u2029 é ü 漢字 😀 </script> {"json": [1]}`;

/** Fastify's own serialization of `value` by `schema`, as a route with that response schema sends it. */
async function serializer(schema: TSchema) {
  const app: FastifyInstance = Fastify();
  let value: unknown;
  app.get('/', { schema: { response: { 200: schema } } }, async () => value);
  await app.ready();
  return {
    async of(v: unknown): Promise<string> {
      value = v;
      return (await app.inject('/')).body;
    },
    close: () => app.close(),
  };
}

describe('JSON written by the store', () => {
  let t: TestContext;
  let key: string;
  let userId: string;
  let asDocument: Awaited<ReturnType<typeof serializer>>;
  let asList: Awaited<ReturnType<typeof serializer>>;
  const ids: Record<string, string> = {};

  before(async () => {
    t = await setup({ env: { READ_LIMIT_PER_MIN: '100000' } });
    userId = (await t.make.user()).id;
    key = (await t.make.key(userId)).secret;
    const project = await t.make.project(userId, { name: `Project ${TRICKY}` });
    ids.plain = (await t.make.document(userId, { title: 'Plain', content: '# Plain\n' })).id;
    t.clock.advance(1000);
    ids.tricky = (await t.make.document(userId, { title: TRICKY, content: `# ${TRICKY}\n\n${TRICKY}`, projectId: project.id, threadId: `thread ${TRICKY}` })).id;
    t.clock.advance(1000);
    ids.edited = (await t.make.document(userId, { title: 'Edited', content: 'before' })).id;
    const edited = await t.store.updateDocument({ userId, orgId: null }, ids.edited, { contentMarkdown: `after ${TRICKY}`, expectedUpdatedAt: null }, () => '2026-03-01T12:05:00.000Z');
    assert.equal(edited.status, 'updated');
    asDocument = await serializer(Document);
    asList = await serializer(DocumentList);
  });
  after(async () => {
    await asDocument?.close();
    await asList?.close();
    await t.close();
  });

  it('writes a document exactly as the response schema would, with every field', async () => {
    for (const [name, id] of Object.entries(ids)) {
      const res = await call(t.app, 'GET', `/v1/documents/${id}`, { key });
      assert.equal(res.status, 200, name);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.raw));
      assert.equal(res.raw, await asDocument.of(res.body), name);
    }
    const tricky = (await call(t.app, 'GET', `/v1/documents/${ids.tricky}`, { key })).body;
    assert.deepEqual(Object.keys(tricky), Object.keys(Document.properties));
    assert.equal(tricky.title, TRICKY);
    assert.equal(tricky.contentMarkdown, `# ${TRICKY}\n\n${TRICKY}`);
    assert.equal(tricky.threadId, `thread ${TRICKY}`);
    assert.equal(tricky.url, `https://folio.test/documents/${ids.tricky}`);
    assert.equal(tricky.updatedAt, null);
    assert.deepEqual(tricky.project, { id: tricky.project.id, name: `Project ${TRICKY}` });
    const plain = (await call(t.app, 'GET', `/v1/documents/${ids.plain}`, { key })).body;
    assert.equal(plain.project, null);
    assert.equal(plain.threadId, null);
    assert.equal((await call(t.app, 'GET', `/v1/documents/${ids.edited}`, { key })).body.updatedAt, '2026-03-01T12:05:00.000Z');
  });

  it('writes a page exactly as the response schema would, newest first', async () => {
    for (const query of ['', '?limit=2']) {
      const res = await call(t.app, 'GET', `/v1/documents${query}`, { key });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(res.raw, await asList.of(res.body));
      const expected = [ids.edited, ids.tricky, ids.plain].slice(0, query ? 2 : 3);
      assert.deepEqual(res.body.documents.map((d: { id: string }) => d.id), expected);
      assert.equal(res.body.count, expected.length);
    }
    const page = (await call(t.app, 'GET', '/v1/documents', { key })).body;
    assert.deepEqual(Object.keys(page.documents[1]), ['id', 'title', 'createdAt', 'updatedAt', 'threadId', 'url']);
    assert.equal(page.documents[1].title, TRICKY);
    assert.equal(page.documents[1].threadId, `thread ${TRICKY}`);
  });

  it('writes an empty page for a caller without documents', async () => {
    const other = (await t.make.key((await t.make.user()).id)).secret;
    const res = await call(t.app, 'GET', '/v1/documents', { key: other });
    assert.equal(res.status, 200);
    assert.equal(res.raw, '{"documents":[],"count":0}');
  });

  it('sends text stored as bytes that are not UTF-8 as UTF-8, as a JavaScript string of it reads', async () => {
    const owner = await t.make.user();
    const reader = (await t.make.key(owner.id)).secret;
    const writer = (await t.make.key(owner.id, { write: true })).secret;
    // Folio refuses a lone surrogate in a body (below), but another tool may
    // store one as its three bytes, or bytes no UTF-8 allows.
    const lone = await t.make.document(owner.id, { title: 'replaced below', content: '# Lone surrogate' });
    const raw = Buffer.from([0x41, 0xff, 0x42, 0xc0, 0xaf, 0x43]);
    const odd = await t.make.document(owner.id, { title: 'Odd bytes', content: 'replaced below' });
    const other = new Database(t.config.database.file);
    try {
      other.prepare('UPDATE documents SET title = CAST(? AS TEXT) WHERE id = ?').run(Buffer.from([...Buffer.from('Plan '), 0xed, 0xa0, 0xbd]), lone.id);
      other
        .prepare('UPDATE document_contents SET content = CAST(? AS TEXT) WHERE seq = (SELECT seq FROM documents WHERE id = ?)')
        .run(raw, odd.id);
    } finally {
      other.close();
    }
    const page = (await call(t.app, 'GET', '/v1/documents', { key: reader })).body;
    const pageRes = await t.app.inject({ method: 'GET', url: '/v1/documents', headers: { authorization: `Bearer ${reader}` } });
    assert.equal(isUtf8(pageRes.rawPayload), true, 'the page too is valid UTF-8');
    assert.equal(Number(pageRes.headers['content-length']), pageRes.rawPayload.length);
    for (const id of [lone.id, odd.id]) {
      const res = await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: { authorization: `Bearer ${reader}` } });
      assert.equal(res.statusCode, 200);
      assert.equal(isUtf8(res.rawPayload), true, 'valid UTF-8');
      assert.equal(Number(res.headers['content-length']), res.rawPayload.length);
      const doc = JSON.parse(res.rawPayload.toString('utf8'));
      assert.equal(res.rawPayload.toString('utf8'), await asDocument.of(doc));
      assert.equal(doc.title, page.documents.find((d: { id: string }) => d.id === id).title, 'as the page (read as strings) shows it');
    }
    const loneDoc = JSON.parse((await t.app.inject({ method: 'GET', url: `/v1/documents/${lone.id}`, headers: { authorization: `Bearer ${reader}` } })).body);
    assert.match(loneDoc.title, /^Plan \ufffd+$/);
    const oddDoc = JSON.parse((await t.app.inject({ method: 'GET', url: `/v1/documents/${odd.id}`, headers: { authorization: `Bearer ${reader}` } })).body);
    assert.equal(oddDoc.contentMarkdown, raw.toString('utf8'));
  });

  it('refuses a body holding a lone surrogate, naming the field, in creations and edits alike', async () => {
    const owner = await t.make.user();
    const writer = (await t.make.key(owner.id, { write: true })).secret;
    const created = await call(t.app, 'POST', '/v1/documents', { key: writer, body: { title: 'Plan 😀', contentMarkdown: '# Fine 😀' } });
    assert.equal(created.status, 201, 'a surrogate pair (an emoji) is text');
    const cases = [
      ['POST', '/v1/documents', '{"title":"Plan \\ud83d","contentMarkdown":"# Lone"}', 'title'],
      ['POST', '/v1/documents', '{"title":"Plan","contentMarkdown":"# Lone \\udc00 surrogate"}', 'contentMarkdown'],
      ['PATCH', `/v1/documents/${created.body.id}`, '{"contentMarkdown":"\\ud83d\\ud83d","expectedUpdatedAt":null}', 'contentMarkdown'],
    ] as const;
    for (const [method, url, body, field] of cases) {
      const res = await call(t.app, method, url, { key: writer, body });
      assert.equal(res.status, 400, `${method} ${body}`);
      assert.equal(res.body.error.code, 'invalid_request');
      assert.equal(res.body.error.message, `body field ${field}: must be Unicode text; it holds a lone surrogate.`);
    }
    const doc = (await call(t.app, 'GET', `/v1/documents/${created.body.id}`, { key: writer })).body;
    assert.equal(doc.contentMarkdown, '# Fine 😀', 'the refused edit changed nothing');
    assert.equal(doc.updatedAt, null);
  });

  it('refuses a body that is not UTF-8, in creations and edits alike, and changes nothing', async () => {
    const owner = await t.make.user();
    const writer = (await t.make.key(owner.id, { write: true })).secret;
    const created = await call(t.app, 'POST', '/v1/documents', { key: writer, body: { title: 'Café', contentMarkdown: '# Ünïcode' } });
    assert.equal(created.status, 201);
    const bodies = [
      ['POST', '/v1/documents', Buffer.concat([Buffer.from('{"title":"bad'), Buffer.from([0xff, 0xfe]), Buffer.from('","contentMarkdown":"x"}')])],
      // An overlong encoding of "/", and a lone surrogate as UTF-8's three bytes.
      ['POST', '/v1/documents', Buffer.concat([Buffer.from('{"title":"t","contentMarkdown":"a'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')])],
      ['PATCH', `/v1/documents/${created.body.id}`, Buffer.concat([Buffer.from('{"expectedUpdatedAt":null,"contentMarkdown":"a'), Buffer.from([0xed, 0xa0, 0xbd]), Buffer.from('"}')])],
    ] as const;
    const before = (await call(t.app, 'GET', '/v1/documents', { key: writer })).body;
    for (const [method, url, payload] of bodies) {
      const res = await t.app.inject({ method, url, payload, headers: { authorization: `Bearer ${writer}`, 'content-type': 'application/json' } });
      assert.equal(res.statusCode, 400, `${method} ${payload.toString('hex')}`);
      assert.deepEqual(JSON.parse(res.body), { error: { code: 'invalid_request', message: 'The request body is not UTF-8 text.' } });
    }
    assert.deepEqual((await call(t.app, 'GET', '/v1/documents', { key: writer })).body, before, 'nothing was written');
  });

  it('ignores unknown body fields however deeply they nest, and whatever text they hold', async () => {
    const writer = (await t.make.key((await t.make.user()).id, { write: true })).secret;
    const bodies = [
      `{"title": "Deep", "contentMarkdown": "x", "z": ${'['.repeat(10_000)}${']'.repeat(10_000)}}`,
      `{"title": "Deep", "contentMarkdown": "x", "z": ${'{"a":'.repeat(8_000)}1${'}'.repeat(8_000)}}`,
      '{"title": "Lone", "contentMarkdown": "x", "extra": "\\udc00", "more": {"title": "\\ud83d"}}',
    ];
    for (const body of bodies) {
      const res = await call(t.app, 'POST', '/v1/documents', { key: writer, body });
      assert.equal(res.status, 201, `${body.slice(0, 60)}: ${JSON.stringify(res.body)}`);
      const edit = await call(t.app, 'PATCH', `/v1/documents/${res.body.id}`, {
        key: writer,
        body: body.replace('"title": ', '"expectedUpdatedAt": null, "ignored": '),
      });
      assert.equal(edit.status, 200, JSON.stringify(edit.body));
    }
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    for (const url of ['/v1/documents', `/v1/documents/${ids.tricky}`]) {
      const get = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
      const head = await t.app.inject({ method: 'HEAD', url, headers: { authorization: `Bearer ${key}` } });
      assert.equal(head.statusCode, 200);
      assert.equal(head.body, '');
      assert.equal(head.headers['content-type'], get.headers['content-type']);
      assert.equal(head.headers['content-length'], get.headers['content-length']);
    }
  });
});
