import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { AppDeps } from '../src/app.js';
import { EDIT_ATTEMPTS, REPLACEMENT_FIELDS_BYTES } from '../src/services/documents.js';
import { generateKey } from '../src/domain/keys.js';
import { call, logCollector, setup, type TestContext } from './helpers.js';

/**
 * The MCP endpoint (DESIGN §6), driven over real HTTP by the SDK's own
 * client, in both protocol eras it serves: the 2025 revisions (the client's
 * default) and 2026-07-28.
 */

const ERAS = ['2025', '2026-07-28'] as const;
type Era = (typeof ERAS)[number];

const READ_TOOLS = [
  'get_me',
  'search_documents',
  'get_document',
  'list_projects',
  'list_templates',
  'list_organizations',
  'list_chats',
  'list_revisions',
  'get_revision',
];
const WRITE_TOOLS = ['create_document', 'update_document', 'edit_document', 'restore_revision'];

interface Served extends TestContext {
  base: string;
  logs: ReturnType<typeof logCollector>;
}

async function serve(env: Record<string, string> = {}, deps: Partial<AppDeps> = {}): Promise<Served> {
  const logs = logCollector();
  const t = await setup({ env: { LOG_LEVEL: 'info', ...env }, deps: { logStream: logs.stream, ...deps } });
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  return Object.assign(t, { base, logs });
}

async function connect(base: string, key: string, era: Era = '2025'): Promise<Client> {
  const client = new Client(
    { name: 'folio-test', version: '1.0.0' },
    era === '2025' ? {} : { versionNegotiation: { mode: { pin: era } } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  await client.connect(transport);
  return client;
}

type ToolResult = Awaited<ReturnType<Client['callTool']>>;

/** The structured result of a call that succeeded. */
function ok(result: ToolResult): any {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  const text = (result.content as { type: string; text: string }[])[0]!;
  assert.equal(text.type, 'text');
  return result.structuredContent;
}

/** The error of a call that failed, checked to be in DESIGN §6's shape. */
function failed(result: ToolResult, code: string): { code: string; message: string; retryAfterSeconds?: number } {
  assert.equal(result.isError, true, `expected ${code}, got ${JSON.stringify(result.structuredContent)}`);
  const { error } = result.structuredContent as { error: { code: string; message: string } };
  assert.equal(error.code, code, error.message);
  assert.ok(error.message.length > 0);
  assert.deepEqual(JSON.parse((result.content as { text: string }[])[0]!.text), result.structuredContent);
  return error;
}

/** A raw JSON-RPC POST, as a client of any SDK would send it. */
function post(base: string, body: unknown, key?: string, headers: Record<string, string> = {}) {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

const initialize = (protocolVersion: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

for (const era of ERAS) {
  describe(`MCP tools (${era})`, () => {
    let t: Served;
    let writer: Client;
    let reader: Client;
    let writeKey: string;
    let readKey: string;
    let ada: { id: string };
    let team: { id: string };
    let project: { id: string };
    let mine: { id: string };
    let teamDoc: { id: string };
    let othersDoc: { id: string };

    before(async () => {
      t = await serve({ READ_LIMIT_PER_MIN: '100000', WRITE_LIMIT_PER_MIN: '100000' });
      ada = await t.make.user({ name: 'Ada' });
      const bob = await t.make.user({ name: 'Bob' });
      team = await t.make.org({ name: 'Analytical Engines', members: [ada.id, bob.id] });
      project = await t.make.project(ada.id, { name: 'Launch' });
      mine = await t.make.document(ada.id, {
        title: 'Launch plan',
        projectId: project.id,
        content: '# Launch plan\n\nFreeze the API.\n\n## Docs\n\nWrite them.\n\n```\n# not a heading\n```\n',
      });
      teamDoc = await t.make.document(bob.id, { orgId: team.id, title: 'Team notes', content: '# Team notes\n\nShared.\n' });
      othersDoc = await t.make.document(bob.id, { title: 'Bob private', content: 'Private to Bob.' });
      await t.make.chat(ada.id, { title: 'Launch chat', messages: 3 });
      await t.make.template({ title: 'Meeting', workspaceId: ada.id, creatorId: ada.id });
      await t.make.template({ title: 'System one', isDefault: true });
      writeKey = (await t.make.key(ada.id, { write: true, name: 'agent' })).secret;
      readKey = (await t.make.key(ada.id, { write: false })).secret;
      writer = await connect(t.base, writeKey, era);
      reader = await connect(t.base, readKey, era);
    });
    after(async () => {
      await writer.close();
      await reader.close();
      await t.close();
    });

    it('lists the read tools to a read key and every tool to a write key, each with schemas, annotations and a description', async () => {
      const read = (await reader.listTools()).tools;
      const all = (await writer.listTools()).tools;
      assert.deepEqual(read.map((x) => x.name), READ_TOOLS);
      assert.deepEqual(all.map((x) => x.name), [...READ_TOOLS, ...WRITE_TOOLS]);
      for (const tool of all) {
        assert.equal(tool.inputSchema.type, 'object', tool.name);
        assert.equal(tool.outputSchema?.type, 'object', tool.name);
        assert.ok((tool.description ?? '').length > 60, tool.name);
        assert.equal(tool.annotations?.readOnlyHint, READ_TOOLS.includes(tool.name), tool.name);
      }
      const search = all.find((x) => x.name === 'search_documents')!;
      // The REST bounds travel with the arguments.
      assert.deepEqual((search.inputSchema.properties as any).limit, { type: 'integer', minimum: 1, maximum: 100, default: 20, description: '1 to 100; default 20.' });
      assert.equal((search.inputSchema.properties as any).query.maxLength, 200);
      assert.equal(search.inputSchema.required, undefined);
      const edit = all.find((x) => x.name === 'edit_document')!;
      assert.deepEqual(edit.inputSchema.required, ['id', 'edits']);
      assert.match(edit.description!, /prefer/i);
      assert.match(all.find((x) => x.name === 'update_document')!.description!, /edit_document/);
    });

    it('a read key cannot call a write tool', async () => {
      await assert.rejects(reader.callTool({ name: 'create_document', arguments: { title: 'x', contentMarkdown: 'y' } }), /create_document/);
      assert.equal((await call(t.app, 'GET', '/v1/documents?q=x', { key: writeKey })).body.count, 0);
    });

    it('get_me, list_organizations, list_projects, list_templates and list_chats answer as the REST API does', async () => {
      const rest = async (url: string) => (await call(t.app, 'GET', url, { key: writeKey })).body;
      assert.deepEqual(ok(await writer.callTool({ name: 'get_me', arguments: {} })), await rest('/v1/me'));
      assert.equal(ok(await writer.callTool({ name: 'get_me', arguments: {} })).key.name, 'agent');
      assert.deepEqual(ok(await reader.callTool({ name: 'list_organizations', arguments: {} })), await rest('/v1/organizations'));
      assert.deepEqual(ok(await reader.callTool({ name: 'list_projects', arguments: {} })), await rest('/v1/projects'));
      assert.deepEqual(ok(await reader.callTool({ name: 'list_projects', arguments: { organizationId: team.id, limit: 5 } })), await rest(`/v1/projects?organizationId=${team.id}&limit=5`));
      assert.deepEqual(ok(await reader.callTool({ name: 'list_templates', arguments: {} })), await rest('/v1/templates'));
      const own = ok(await reader.callTool({ name: 'list_templates', arguments: { includeSystem: false } }));
      assert.deepEqual(own, await rest('/v1/templates?includeSystem=false'));
      assert.deepEqual(own.templates.map((x: any) => x.title), ['Meeting']);
      assert.deepEqual(ok(await reader.callTool({ name: 'list_chats', arguments: { query: 'launch' } })), await rest('/v1/chats?q=launch'));
      assert.equal(ok(await reader.callTool({ name: 'list_chats', arguments: {} })).count, 1);
    });

    it('search_documents searches, or lists the newest without a query, as GET /documents does', async () => {
      const found = ok(await reader.callTool({ name: 'search_documents', arguments: { query: 'FREEZ' } }));
      assert.deepEqual(found.documents.map((d: any) => d.id), [mine.id]);
      assert.deepEqual(found, (await call(t.app, 'GET', '/v1/documents?q=FREEZ', { key: readKey })).body);
      const newest = ok(await reader.callTool({ name: 'search_documents', arguments: { limit: 1 } }));
      assert.deepEqual(newest, (await call(t.app, 'GET', '/v1/documents?limit=1', { key: readKey })).body);
      const inTeam = ok(await reader.callTool({ name: 'search_documents', arguments: { organizationId: team.id } }));
      assert.deepEqual(inTeam.documents.map((d: any) => d.id), [teamDoc.id]);
      const inProject = ok(await reader.callTool({ name: 'search_documents', arguments: { projectId: project.id } }));
      assert.deepEqual(inProject.documents.map((d: any) => d.id), [mine.id]);
      // A query that holds no word matches nothing, as on REST.
      assert.equal(ok(await reader.callTool({ name: 'search_documents', arguments: { query: '!!!' } })).count, 0);
    });

    it('get_document returns the whole document with its line count and headings, or a line range of it', async () => {
      const whole = await reader.callTool({ name: 'get_document', arguments: { id: mine.id } });
      const document = ok(whole);
      const rest = (await call(t.app, 'GET', `/v1/documents/${mine.id}`, { key: readKey })).body;
      const { lineCount, headings, headingCount, startLine, endLine, ...asRest } = document;
      assert.deepEqual(asRest, rest);
      assert.equal(lineCount, 11);
      assert.equal(headingCount, 2);
      assert.deepEqual(headings, [
        { line: 1, level: 1, text: 'Launch plan' },
        { line: 5, level: 2, text: 'Docs' },
      ]);
      assert.deepEqual([startLine, endLine], [1, 11]);
      // The Markdown goes as a text block of its own, not twice.
      const blocks = whole.content as { text: string }[];
      assert.equal(blocks[1]!.text, rest.contentMarkdown);
      assert.equal(JSON.parse(blocks[0]!.text).contentMarkdown, undefined);

      const part = ok(await reader.callTool({ name: 'get_document', arguments: { id: mine.id, startLine: 5, endLine: 7 } }));
      assert.equal(part.contentMarkdown, '## Docs\n\nWrite them.');
      assert.equal(part.lineCount, 11);
      assert.equal(part.headings.length, 2);
      assert.equal(part.headingCount, 2);
      const tail = ok(await reader.callTool({ name: 'get_document', arguments: { id: mine.id, startLine: 10, endLine: 500 } }));
      assert.deepEqual([tail.contentMarkdown, tail.startLine, tail.endLine], ['# not a heading\n```', 10, 11]);
      const shared = ok(await reader.callTool({ name: 'get_document', arguments: { id: teamDoc.id.toUpperCase(), organizationId: team.id } }));
      assert.equal(shared.title, 'Team notes');
    });

    it('get_document answers a document of many headings with a bounded outline and their whole count', async () => {
      const lines = 200_000;
      const doc = await t.make.document(ada.id, { title: 'Hashes', content: '## x\n'.repeat(lines) + '# last\n' });
      const answer = await reader.callTool({ name: 'get_document', arguments: { id: doc.id, startLine: 1, endLine: 1 } });
      const read = ok(answer);
      assert.equal(read.headingCount, lines + 1);
      assert.deepEqual(read.headings, [{ line: lines + 1, level: 1, text: 'last' }], 'the top level, which fits; the next would not');
      assert.ok(JSON.stringify(answer).length < 2000, 'an answer of the outline and one line, not of 200,000 headings');
    });

    it('create_document and update_document write as POST and PATCH do, answering with updatedAt', async () => {
      const created = ok(await writer.callTool({ name: 'create_document', arguments: { title: 'From an agent', contentMarkdown: '# Hi\n', projectId: project.id } }));
      assert.deepEqual(Object.keys(created).sort(), ['id', 'threadId', 'title', 'updatedAt', 'url']);
      assert.equal(created.updatedAt, null);
      const read = (await call(t.app, 'GET', `/v1/documents/${created.id}`, { key: readKey })).body;
      assert.equal(read.project.id, project.id);
      assert.equal(read.contentMarkdown, '# Hi\n');
      const updated = ok(
        await writer.callTool({ name: 'update_document', arguments: { id: created.id, contentMarkdown: '# Hi again\n', expectedUpdatedAt: null, title: 'Renamed' } }),
      );
      assert.equal(updated.title, 'Renamed');
      const after = (await call(t.app, 'GET', `/v1/documents/${created.id}`, { key: readKey })).body;
      assert.equal(after.updatedAt, updated.updatedAt);
      assert.equal(after.contentMarkdown, '# Hi again\n');
      // The returned updatedAt is the one the next update must send.
      ok(await writer.callTool({ name: 'update_document', arguments: { id: created.id, contentMarkdown: 'Third.', expectedUpdatedAt: updated.updatedAt } }));
      const inTeam = ok(await writer.callTool({ name: 'create_document', arguments: { title: 'Team doc', contentMarkdown: 'x', organizationId: team.id } }));
      assert.equal((await call(t.app, 'GET', `/v1/documents/${inTeam.id}?organizationId=${team.id}`, { key: readKey })).status, 200);
    });

    it('edit_document applies its edits in order and writes them at once', async () => {
      const doc = await t.make.document(ada.id, { title: 'Edits', content: '# Edits\n\nAlpha one.\n\nBeta two.\n\nPrice: 5 $1\n' });
      const result = ok(
        await writer.callTool({
          name: 'edit_document',
          arguments: {
            id: doc.id,
            title: 'Edited',
            edits: [
              { oldText: 'Alpha one.', newText: 'Alpha one, changed.' },
              // Applies to the text the first edit left.
              { oldText: 'one, changed', newText: 'uno' },
              // `$` in either text is plain text.
              { oldText: '5 $1', newText: "$& $' $$" },
              { oldText: '\n\nBeta two.', newText: '' },
            ],
          },
        }),
      );
      assert.equal(result.title, 'Edited');
      const read = (await call(t.app, 'GET', `/v1/documents/${doc.id}`, { key: readKey })).body;
      assert.equal(read.contentMarkdown, "# Edits\n\nAlpha uno.\n\nPrice: $& $' $$\n");
      assert.equal(read.updatedAt, result.updatedAt);
      assert.equal(read.title, 'Edited');
      // With expectedUpdatedAt of the latest read, it applies.
      ok(await writer.callTool({ name: 'edit_document', arguments: { id: doc.id, expectedUpdatedAt: read.updatedAt, edits: [{ oldText: 'uno', newText: 'dos' }] } }));
    });

    it('edit_document does not grow a document past what a whole replacement could send back, counting its Markdown as a JSON string', async () => {
      const room = t.config.maxBodyBytes - REPLACEMENT_FIELDS_BYTES;
      const asJson = (markdown: string) => Buffer.byteLength(JSON.stringify(markdown));
      // Each `"` takes two bytes in a JSON body: a document of them fills a request at half its size.
      const content = `start ${'"'.repeat(Math.floor((room - 100) / 2))} end`;
      const doc = await t.make.document(ada.id, { title: 'Quoted', content });
      const grow = (by: number) => ({ id: doc.id, edits: [{ oldText: 'end', newText: `end${'"'.repeat(by)}` }] });
      const fits = Math.floor((room - asJson(content)) / 2);
      const refused = failed(await writer.callTool({ name: 'edit_document', arguments: grow(fits + 1) }), 'invalid_request');
      assert.equal(
        refused.message,
        `edits: they would make the document too large to replace whole: its Markdown would take ${asJson(content) + 2 * (fits + 1)} bytes as a JSON string, more than the ${room} a request of at most ${t.config.maxBodyBytes} bytes has for it.`,
      );
      ok(await writer.callTool({ name: 'edit_document', arguments: grow(fits) }));
      // What the edits made, a PATCH and update_document send back whole.
      const read = (await call(t.app, 'GET', `/v1/documents/${doc.id}`, { key: readKey })).body;
      assert.ok(asJson(read.contentMarkdown) > room - 2 && asJson(read.contentMarkdown) <= room);
      const patched = await fetch(`${t.base}/v1/documents/${doc.id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${writeKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ contentMarkdown: read.contentMarkdown.replace('start', 'begin'), expectedUpdatedAt: read.updatedAt }),
      });
      assert.equal(patched.status, 200, await patched.text());
      const replaced = ok(
        await writer.callTool({
          name: 'update_document',
          arguments: { id: doc.id, contentMarkdown: read.contentMarkdown, expectedUpdatedAt: (await call(t.app, 'GET', `/v1/documents/${doc.id}`, { key: readKey })).body.updatedAt },
        }),
      );
      assert.equal(replaced.id, doc.id);
      // A document already larger (MAX_BODY_BYTES since lowered) takes edits that do not grow it.
      const large = await t.make.document(ada.id, { title: 'Over', content: `start ${'x'.repeat(t.config.maxBodyBytes)} end` });
      ok(await writer.callTool({ name: 'edit_document', arguments: { id: large.id, edits: [{ oldText: 'start', newText: 'begin' }] } }));
      ok(await writer.callTool({ name: 'edit_document', arguments: { id: large.id, edits: [{ oldText: 'begin', newText: 'go' }] } }));
      failed(await writer.callTool({ name: 'edit_document', arguments: { id: large.id, edits: [{ oldText: 'go', newText: 'gone' }] } }), 'invalid_request');
    });

    it('list_revisions, get_revision and restore_revision show and bring back what each change recorded', async () => {
      const doc = ok(await writer.callTool({ name: 'create_document', arguments: { title: 'History', contentMarkdown: 'First words.' } }));
      const edited = ok(await writer.callTool({ name: 'edit_document', arguments: { id: doc.id, edits: [{ oldText: 'First', newText: 'Second' }] } }));
      const listed = ok(await reader.callTool({ name: 'list_revisions', arguments: { id: doc.id } }));
      assert.deepEqual(listed, (await call(t.app, 'GET', `/v1/documents/${doc.id}/revisions`, { key: readKey })).body);
      assert.deepEqual(
        listed.revisions.map((r: any) => [r.number, r.title, r.userId, r.keyName]),
        [
          [2, 'History', ada.id, 'agent'],
          [1, 'History', ada.id, 'agent'],
        ],
      );
      assert.equal(listed.revisions[0].createdAt, edited.updatedAt);
      assert.equal(ok(await reader.callTool({ name: 'list_revisions', arguments: { id: doc.id, limit: 1 } })).count, 1);
      const first = ok(await reader.callTool({ name: 'get_revision', arguments: { id: doc.id, number: 1 } }));
      assert.deepEqual(first, (await call(t.app, 'GET', `/v1/documents/${doc.id}/revisions/1`, { key: readKey })).body);
      assert.equal(first.contentMarkdown, 'First words.');
      failed(await reader.callTool({ name: 'get_revision', arguments: { id: doc.id, number: 3 } }), 'not_found');
      failed(await reader.callTool({ name: 'list_revisions', arguments: { id: othersDoc.id } }), 'not_found');
      failed(await reader.callTool({ name: 'get_revision', arguments: { id: othersDoc.id, number: 1 } }), 'not_found');
      failed(await reader.callTool({ name: 'get_revision', arguments: { id: doc.id, number: 0 } }), 'invalid_request');

      failed(await writer.callTool({ name: 'restore_revision', arguments: { id: doc.id, number: 1, expectedUpdatedAt: null } }), 'conflict');
      const restored = ok(await writer.callTool({ name: 'restore_revision', arguments: { id: doc.id, number: 1, expectedUpdatedAt: edited.updatedAt } }));
      assert.equal((await call(t.app, 'GET', `/v1/documents/${doc.id}`, { key: readKey })).body.contentMarkdown, 'First words.');
      const after = ok(await reader.callTool({ name: 'list_revisions', arguments: { id: doc.id } }));
      assert.deepEqual([after.count, after.revisions[0].number, after.revisions[0].createdAt], [3, 3, restored.updatedAt]);
      await assert.rejects(reader.callTool({ name: 'restore_revision', arguments: { id: doc.id, number: 1, expectedUpdatedAt: restored.updatedAt } }), /restore_revision/);
    });

    it('reads documents as resources, under both URI forms', async () => {
      const personal = await reader.readResource({ uri: `folio://documents/${mine.id}` });
      assert.deepEqual(personal.contents, [
        { uri: `folio://documents/${mine.id}`, mimeType: 'text/markdown', text: (await call(t.app, 'GET', `/v1/documents/${mine.id}`, { key: readKey })).body.contentMarkdown },
      ]);
      const shared = await reader.readResource({ uri: `folio://organizations/${team.id}/documents/${teamDoc.id}` });
      assert.equal((shared.contents[0] as { text: string }).text, '# Team notes\n\nShared.\n');
      await assert.rejects(reader.readResource({ uri: `folio://documents/${othersDoc.id}` }), /No document with this id is accessible/);
      await assert.rejects(reader.readResource({ uri: `folio://documents/${teamDoc.id}` }), /No document with this id is accessible/);
    });

    it('answers not_found for a document the key cannot see, whoever owns it', async () => {
      for (const [name, args] of [
        ['get_document', { id: othersDoc.id }],
        ['get_document', { id: teamDoc.id }],
        ['get_document', { id: mine.id, organizationId: 'org_nobodysorganization0' }],
        ['update_document', { id: othersDoc.id, contentMarkdown: 'mine now', expectedUpdatedAt: null }],
        ['edit_document', { id: othersDoc.id, edits: [{ oldText: 'Private', newText: 'Public' }] }],
        ['get_document', { id: '00000000-0000-4000-8000-000000000000' }],
        ['create_document', { title: 'x', contentMarkdown: 'y', projectId: 'prj_nosuchproject' }],
      ] as const) {
        failed(await writer.callTool({ name, arguments: args }), 'not_found');
      }
      assert.equal((await call(t.app, 'GET', `/v1/documents/${othersDoc.id}`, { key: writeKey })).status, 404);
    });

    it('answers invalid_request for arguments the REST API would refuse, and for edits that cannot apply', async () => {
      const cases: [string, Record<string, unknown>, RegExp][] = [
        ['search_documents', { limit: 101 }, /limit: must be <= 100/],
        ['search_documents', { query: '' }, /query/],
        ['search_documents', { organizationId: 'org_nobodysorganization0' }, /organizationId/],
        ['search_documents', { projectId: 'prj_nosuchproject' }, /projectId/],
        ['get_document', {}, /id: is required/],
        ['get_document', { id: 'not-a-uuid' }, /id: must match format "uuid"/],
        ['get_document', { id: mine.id, startLine: 0 }, /startLine/],
        ['get_document', { id: mine.id, startLine: 12 }, /startLine: the document has 11 lines/],
        ['get_document', { id: mine.id, startLine: 5, endLine: 4 }, /endLine/],
        ['list_templates', { includeSystem: 'false' }, /includeSystem/],
        ['create_document', { title: 'x'.repeat(201), contentMarkdown: 'y' }, /title/],
        ['create_document', { title: 'x', contentMarkdown: ' \n ' }, /contentMarkdown: must contain at least one non-whitespace character/],
        ['create_document', { title: 5, contentMarkdown: 'y' }, /title: must be string/],
        ['update_document', { id: mine.id, contentMarkdown: 'y' }, /expectedUpdatedAt: is required/],
        ['edit_document', { id: mine.id, edits: [] }, /edits/],
        ['edit_document', { id: mine.id, edits: [{ oldText: '', newText: 'x' }] }, /oldText/],
        ['edit_document', { id: mine.id, edits: [{ oldText: 'Nowhere to be found', newText: 'x' }] }, /edits\[0\]\.oldText: does not occur/],
        ['edit_document', { id: mine.id, edits: [{ oldText: 'Freeze', newText: 'Thaw' }, { oldText: '#', newText: '' }] }, /edits\[1\]\.oldText: occurs 4 times/],
        ['edit_document', { id: mine.id, edits: [{ oldText: 'aa', newText: 'b' }] }, /does not occur/],
      ];
      const before = (await call(t.app, 'GET', `/v1/documents/${mine.id}`, { key: readKey })).body;
      for (const [name, args, message] of cases) {
        assert.match(failed(await writer.callTool({ name, arguments: args }), 'invalid_request').message, message, `${name} ${JSON.stringify(args)}`);
      }
      // Nothing of a refused edit was written, not even the edits before the one that failed.
      assert.deepEqual((await call(t.app, 'GET', `/v1/documents/${mine.id}`, { key: readKey })).body, before);
      const emptied = await t.make.document(ada.id, { content: 'only this' });
      assert.match(
        failed(await writer.callTool({ name: 'edit_document', arguments: { id: emptied.id, edits: [{ oldText: 'only this', newText: '  ' }] } }), 'invalid_request').message,
        /non-whitespace/,
      );
    });

    it('answers conflict when the document changed since the given expectedUpdatedAt', async () => {
      const doc = await t.make.document(ada.id, { content: 'First version.' });
      ok(await writer.callTool({ name: 'update_document', arguments: { id: doc.id, contentMarkdown: 'Second version.', expectedUpdatedAt: null } }));
      const stale = failed(await writer.callTool({ name: 'update_document', arguments: { id: doc.id, contentMarkdown: 'Lost?', expectedUpdatedAt: null } }), 'conflict');
      assert.match(stale.message, /changed after it was read/);
      failed(await writer.callTool({ name: 'edit_document', arguments: { id: doc.id, expectedUpdatedAt: null, edits: [{ oldText: 'Second', newText: 'Third' }] } }), 'conflict');
      failed(
        await writer.callTool({ name: 'edit_document', arguments: { id: doc.id, expectedUpdatedAt: '2020-01-01T00:00:00.000Z', edits: [{ oldText: 'Second', newText: 'Third' }] } }),
        'conflict',
      );
      assert.equal((await call(t.app, 'GET', `/v1/documents/${doc.id}`, { key: readKey })).body.contentMarkdown, 'Second version.');
    });

    it('logs each tool call with its tool name, key id and outcome, and never its arguments', async () => {
      const secretWords = 'zebracornucopia';
      ok(await writer.callTool({ name: 'search_documents', arguments: { query: secretWords } }));
      failed(await writer.callTool({ name: 'get_document', arguments: { id: othersDoc.id, organizationId: undefined } }), 'not_found');
      const lines = t.logs.text().split('\n').filter(Boolean).map((l) => JSON.parse(l));
      const calls = lines.filter((l) => l.msg === 'tool call');
      const key = (await call(t.app, 'GET', '/v1/me', { key: writeKey })).body;
      assert.ok(key);
      assert.ok(calls.some((l) => l.tool === 'search_documents' && l.outcome === 'ok' && /^key_/.test(l.keyId)));
      assert.ok(calls.some((l) => l.tool === 'get_document' && l.outcome === 'not_found'));
      assert.ok(!t.logs.text().includes(secretWords), 'a tool argument reached the log');
      assert.ok(!t.logs.text().includes(writeKey), 'a key reached the log');
    });
  });
}

describe('MCP endpoint: HTTP', () => {
  let t: Served;
  let key: string;
  before(async () => {
    t = await serve();
    key = (await t.make.key((await t.make.user()).id)).secret;
  });
  after(() => t.close());

  it('refuses a missing, malformed, unknown or revoked key with 401, WWW-Authenticate: Bearer and the envelope', async () => {
    const user = await t.make.user();
    const revoked = await t.make.key(user.id);
    await t.store.revokeKey(revoked.record.id, new Date().toISOString());
    // Well formed, with a right checksum, but never stored: refused by the database look-up.
    const unknown = generateKey();
    const misspelt = `${revoked.secret.slice(0, -1)}${revoked.secret.endsWith('a') ? 'b' : 'a'}`;
    for (const bad of [undefined, 'not-a-key', misspelt, unknown, revoked.secret]) {
      const res = await post(t.base, initialize('2025-06-18'), bad);
      assert.equal(res.status, 401, String(bad));
      assert.equal(res.headers.get('www-authenticate'), 'Bearer');
      assert.equal((await res.json()).error.code, 'unauthorized');
    }
  });

  it('ignores an unknown argument however deeply it nests, as REST ignores an unknown body field', async () => {
    const writeKey = (await t.make.key((await t.make.user()).id, { write: true })).secret;
    const depth = 10_000;
    const args = `{"title":"Deep","contentMarkdown":"Kept.","extra":${'{"x":'.repeat(depth)}1${'}'.repeat(depth)}}`;
    const rest = await fetch(`${t.base}/v1/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${writeKey}`, 'content-type': 'application/json' },
      body: args,
    });
    assert.equal(rest.status, 201);
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    for (const era of ['2025-06-18', '2026-07-28']) {
      const modern = era === '2026-07-28';
      // Written out: JSON.stringify of a value nested this deep may run out of stack itself.
      const params = `{${modern ? `"_meta":${JSON.stringify(meta)},` : ''}"name":"create_document","arguments":${args}}`;
      const res = await fetch(`${t.base}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${writeKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': era,
          ...(modern ? { 'mcp-method': 'tools/call', 'mcp-name': 'create_document' } : {}),
        },
        body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":${params}}`,
      });
      assert.equal(res.status, 200, era);
      const { result } = (await res.json()) as { result: ToolResult };
      assert.notEqual(result.isError, true, `${era}: ${JSON.stringify(result.structuredContent)}`);
      assert.equal((result.structuredContent as { title: string }).title, 'Deep');
    }
  });

  it('answers GET and DELETE with 405 and Allow: POST, in the envelope', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${t.base}/mcp`, { method, headers: { authorization: `Bearer ${key}` } });
      assert.equal(res.status, 405);
      assert.equal(res.headers.get('allow'), 'POST');
      assert.equal((await res.json()).error.code, 'invalid_request');
    }
  });

  it('connects clients of the 2025-06-18, 2025-11-25 and 2026-07-28 revisions, statelessly, answering with JSON', async () => {
    for (const version of ['2025-06-18', '2025-11-25']) {
      const res = await post(t.base, initialize(version), key);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('mcp-session-id'), null);
      const body = await res.json();
      assert.equal(body.result.protocolVersion, version);
      assert.equal(body.result.serverInfo.name, 'folio');
      assert.deepEqual(body.result.capabilities, { tools: { listChanged: false }, resources: { listChanged: false } });
      // Stateless: a request needs no session, only the negotiated version.
      const list = await post(t.base, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, key, { 'mcp-protocol-version': version });
      assert.equal(list.status, 200);
      assert.deepEqual((await list.json()).result.tools.map((x: any) => x.name), READ_TOOLS);
    }
    const modern = await connect(t.base, key, '2026-07-28');
    assert.deepEqual((await modern.listTools()).tools.map((x) => x.name), READ_TOOLS);
    await modern.close();
  });

  it('answers an initialize for a revision it does not negotiate so, 2026-07-28 included, with 2025-11-25', async () => {
    for (const asked of ['2026-07-28', '1999-01-01']) {
      const res = await post(t.base, initialize(asked), key);
      assert.equal(res.status, 200);
      assert.equal((await res.json()).result.protocolVersion, '2025-11-25');
    }
  });

  it('answers a 2026-07-28 subscriptions/listen with a stream that acknowledges no notifications and ends at once', async () => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
    const res = await post(
      t.base,
      { jsonrpc: '2.0', id: 9, method: 'subscriptions/listen', params: { _meta: meta, notifications: { toolsListChanged: true } } },
      key,
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
    );
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    // The whole stream arrives and closes: Folio announces no changes, so nothing is left to wait for.
    const messages = (await res.text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)));
    assert.equal(messages.length, 2);
    assert.equal(messages[0].method, 'notifications/subscriptions/acknowledged');
    assert.deepEqual(messages[0].params.notifications, {});
    assert.equal(messages[1].id, 9);
    assert.equal(messages[1].result.resultType, 'complete');
  });

  it('logs a request the protocol layer refuses by the kind of refusal, at debug level, never with what the request held', async () => {
    const d = await serve({ LOG_LEVEL: 'debug' });
    try {
      const k = (await d.make.key((await d.make.user()).id)).secret;
      const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
      // A tool name and a header the SDK's refusal would quote: what the body and the headers held.
      const res = await post(
        d.base,
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { _meta: meta, name: 'zebracornucopia', arguments: {} } },
        k,
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'quagmirefennel' },
      );
      assert.equal(res.status, 400);
      const refused = d.logs
        .text()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((l) => l.msg === 'MCP request refused');
      assert.equal(refused.length, 1);
      assert.equal(refused[0].level, 20);
      assert.equal(refused[0].reason, 'name-header-mismatch');
      assert.doesNotMatch(d.logs.text(), /zebracornucopia|quagmirefennel/);
    } finally {
      await d.close();
    }
  });

  it('refuses a resource URI too long to be one of Folio\'s in the envelope, as the SDK would not (it answered 500)', async () => {
    const read = (uri: string) => post(t.base, { jsonrpc: '2.0', id: 4, method: 'resources/read', params: { uri } }, key, { 'mcp-protocol-version': '2025-06-18' });
    const longest = `folio://documents/${'a'.repeat(2048 - 'folio://documents/'.length)}`;
    const answered = await read(longest);
    assert.equal(answered.status, 200);
    assert.match((await answered.json()).error.message, /No document with this id is accessible/);
    for (const length of [2049, 1_100_000]) {
      const refused = await read(`folio://documents/${'a'.repeat(length - 'folio://documents/'.length)}`);
      assert.equal(refused.status, 400);
      assert.deepEqual((await refused.json()).error, {
        code: 'invalid_request',
        message: `params.uri: a resource URI is at most 2048 characters; this one has ${length}.`,
      });
    }
  });

  it('refuses a body that is not JSON, and a JSON-RPC batch, in the envelope', async () => {
    const res = await fetch(`${t.base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{not json',
    });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error.code, 'invalid_request');
    const batch = await post(t.base, [initialize('2025-03-26'), { jsonrpc: '2.0', id: 2, method: 'tools/list' }], key);
    assert.equal(batch.status, 400);
    assert.match((await batch.json()).error.message, /batches are not accepted/);
  });
});

describe('MCP requests that cannot be read are checked and counted first', () => {
  it('counts a batch or an unreadable body as one read, and refuses it 429 past the limit, or 402 without a plan, before saying it is malformed', async () => {
    const t = await serve({ READ_LIMIT_PER_MIN: '2', WRITE_LIMIT_PER_MIN: '1' });
    try {
      const user = await t.make.user();
      const key = (await t.make.key(user.id, { write: true })).secret;
      const create = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'create_document', arguments: { title: 'x', contentMarkdown: 'y' } } });
      // A batch of writes writes nothing, and costs a read, not the one write.
      assert.equal((await post(t.base, [create(1), create(2), create(3)], key, { 'mcp-protocol-version': '2025-03-26' })).status, 400);
      assert.equal((await call(t.app, 'GET', '/v1/documents', { key })).body.count, 0);
      const notJson = () =>
        fetch(`${t.base}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{' });
      const refused = await notJson();
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      assert.equal((await call(t.app, 'POST', '/v1/documents', { key, body: { title: 'x', contentMarkdown: 'y' } })).status, 201);
      await t.store.setUserPlan(user.id, null);
      const unpaid = await notJson();
      assert.equal(unpaid.status, 402);
      assert.equal((await unpaid.json()).error.code, 'plan_required');
    } finally {
      await t.close();
    }
  });
});

describe('MCP access follows the store, request by request', () => {
  it('refuses a key revoked after the client connected on its next call', async () => {
    const t = await serve();
    try {
      const user = await t.make.user();
      const { secret, record } = await t.make.key(user.id);
      const client = await connect(t.base, secret);
      ok(await client.callTool({ name: 'get_me', arguments: {} }));
      await t.store.revokeKey(record.id, new Date().toISOString());
      await assert.rejects(client.callTool({ name: 'get_me', arguments: {} }), /401|unauthorized|Unauthorized/);
      await client.close().catch(() => undefined);
    } finally {
      await t.close();
    }
  });

  it('a member removed from a team loses access to its documents on the next call', async () => {
    const t = await serve();
    try {
      const owner = await t.make.user();
      const member = await t.make.user();
      const team = await t.make.org({ members: [owner.id, member.id] });
      const doc = await t.make.document(owner.id, { orgId: team.id, content: 'Team only.' });
      const client = await connect(t.base, (await t.make.key(member.id)).secret);
      ok(await client.callTool({ name: 'get_document', arguments: { id: doc.id, organizationId: team.id } }));
      assert.equal(ok(await client.callTool({ name: 'search_documents', arguments: { organizationId: team.id } })).count, 1);
      await t.store.removeMember(team.id, member.id);
      failed(await client.callTool({ name: 'get_document', arguments: { id: doc.id, organizationId: team.id } }), 'not_found');
      failed(await client.callTool({ name: 'search_documents', arguments: { organizationId: team.id } }), 'invalid_request');
      assert.deepEqual(ok(await client.callTool({ name: 'get_me', arguments: {} })).organizations, []);
      await assert.rejects(client.readResource({ uri: `folio://organizations/${team.id}/documents/${doc.id}` }));
      await client.close();
    } finally {
      await t.close();
    }
  });

  it('a key whose user has no plan: a tool call is plan_required, any other request 402', async () => {
    const t = await serve();
    try {
      const user = await t.make.user();
      const key = (await t.make.key(user.id)).secret;
      const client = await connect(t.base, key);
      await t.store.setUserPlan(user.id, null);
      failed(await client.callTool({ name: 'get_me', arguments: {} }), 'plan_required');
      const res = await post(t.base, initialize('2025-06-18'), key);
      assert.equal(res.status, 402);
      assert.equal((await res.json()).error.code, 'plan_required');
      await client.close();
    } finally {
      await t.close();
    }
  });

  /**
   * An MCP client of a server whose store fails `method` with `message`,
   * and the server's log; the client is closed and the server stopped after `check`.
   */
  async function withFailingStore(method: string, message: string, era: Era, check: (client: Client, log: () => string) => Promise<void>) {
    const logs = logCollector();
    const t = await setup({ env: { LOG_LEVEL: 'info' }, deps: { logStream: logs.stream } });
    const failing = new Proxy(t.store, {
      get: (store, name, receiver) => (name === method ? () => Promise.reject(new Error(message)) : Reflect.get(store, name, receiver)),
    });
    const { buildApp } = await import('../src/app.js');
    const app = await buildApp({ config: t.config, store: failing, clock: t.clock, logStream: logs.stream });
    try {
      const base = await app.listen({ port: 0, host: '127.0.0.1' });
      const client = await connect(base, (await t.make.key((await t.make.user()).id)).secret, era);
      await check(client, () => logs.text());
      await client.close();
    } finally {
      await app.close();
      await t.close();
    }
  }

  it('answers internal_error, saying nothing of the failure, when the store fails', async () => {
    await withFailingStore('listTemplates', 'SQLITE_CORRUPT: database disk image is malformed', '2025', async (client, log) => {
      const error = failed(await client.callTool({ name: 'list_templates', arguments: {} }), 'internal_error');
      assert.doesNotMatch(error.message, /SQLITE/);
      assert.match(log(), /SQLITE_CORRUPT/);
    });
  });

  for (const era of ERAS) {
    it(`answers a resource read that fails as an internal error, saying nothing of the failure, and logs it (${era})`, async () => {
      await withFailingStore('getDocument', 'relation "document_revisions" does not exist', era, async (client, log) => {
        const uri = 'folio://documents/6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11';
        const refused = await client.readResource({ uri }).then(
          () => assert.fail('the read succeeded'),
          (err: Error & { code?: number }) => err,
        );
        assert.doesNotMatch(refused.message, /relation|document_revisions/);
        assert.match(refused.message, /unexpected error/);
        assert.equal(refused.code, -32603);
        assert.match(log(), /"level":50.*document_revisions/);
      });
    });
  }
});

describe('MCP rate limits are the REST API\'s', () => {
  it('counts tool calls and REST requests against one limit per key and class', async () => {
    const t = await serve({ READ_LIMIT_PER_MIN: '6', WRITE_LIMIT_PER_MIN: '2' });
    try {
      const user = await t.make.user();
      const key = (await t.make.key(user.id, { write: true })).secret;
      // Connecting takes two requests (initialize, then its notification): two reads.
      const client = await connect(t.base, key);
      ok(await client.callTool({ name: 'get_me', arguments: {} }));
      assert.equal((await call(t.app, 'GET', '/v1/me', { key })).status, 200);
      ok(await client.callTool({ name: 'list_organizations', arguments: {} }));
      assert.equal((await call(t.app, 'GET', '/v1/me', { key })).status, 200);
      // Six reads: the next tool call is refused as a tool result, with when to retry.
      const refused = failed(await client.callTool({ name: 'get_me', arguments: {} }), 'rate_limited');
      assert.ok(refused.retryAfterSeconds! >= 1 && refused.retryAfterSeconds! <= 60, String(refused.retryAfterSeconds));
      assert.equal((await call(t.app, 'GET', '/v1/me', { key })).status, 429);
      // Any other request is refused over HTTP.
      const res = await post(t.base, { jsonrpc: '2.0', id: 9, method: 'tools/list' }, key, { 'mcp-protocol-version': '2025-06-18' });
      assert.equal(res.status, 429);
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
      assert.equal((await res.json()).error.code, 'rate_limited');

      // Write tools count as writes, against the same counter as POST and PATCH.
      ok(await client.callTool({ name: 'create_document', arguments: { title: 'One', contentMarkdown: 'x' } }));
      assert.equal((await call(t.app, 'POST', '/v1/documents', { key, body: { title: 'Two', contentMarkdown: 'x' } })).status, 201);
      failed(await client.callTool({ name: 'edit_document', arguments: { id: '00000000-0000-4000-8000-000000000000', edits: [{ oldText: 'a', newText: 'b' }] } }), 'rate_limited');
      assert.equal((await call(t.app, 'POST', '/v1/documents', { key, body: { title: 'Three', contentMarkdown: 'x' } })).status, 429);
      await client.close();
    } finally {
      await t.close();
    }
  });

  it('counts a read key\'s call of a write tool as a read: its scope refuses it before any limit of writes', async () => {
    const t = await serve({ READ_LIMIT_PER_MIN: '5', WRITE_LIMIT_PER_MIN: '1' });
    try {
      const user = await t.make.user();
      const key = (await t.make.key(user.id)).secret;
      const client = await connect(t.base, key);
      const create = { name: 'create_document', arguments: { title: 'One', contentMarkdown: 'x' } };
      for (let i = 0; i < 2; i++) {
        const refused = await client.callTool(create).then((r) => JSON.stringify(r), (err: Error) => err.message);
        assert.match(refused, /create_document/);
        assert.doesNotMatch(refused, /rate_limited|rate limit/i);
      }
      // Two reads to connect, two refused calls: one read is left.
      const res = await call(t.app, 'GET', '/v1/me', { key });
      assert.equal(res.status, 200);
      assert.equal(res.headers['ratelimit-remaining'], '0');
      await client.close();
    } finally {
      await t.close();
    }
  });
});

describe('edit_document under concurrent writers', () => {
  it('keeps every change when many edit_document calls and REST read-modify-write clients change one long document at once', async () => {
    const t = await serve({ READ_LIMIT_PER_MIN: '1000000', WRITE_LIMIT_PER_MIN: '1000000', LOG_LEVEL: 'warn' });
    // The store lets other requests run between a read and the write that follows it, as a
    // database server does; and it counts the writes of edit_document that found the document changed.
    let editConflicts = 0;
    const yielding = new Proxy(t.store, {
      get(store, name, receiver) {
        if (name === 'getDocument') {
          return async (...args: Parameters<typeof store.getDocument>) => {
            const read = await store.getDocument(...args);
            await new Promise(setImmediate);
            return read;
          };
        }
        if (name === 'updateDocument') {
          return async (...args: Parameters<typeof store.updateDocument>) => {
            const outcome = await store.updateDocument(...args);
            if (outcome.status === 'conflict' && args[2].author?.keyName === 'agent') editConflicts++;
            return outcome;
          };
        }
        return Reflect.get(store, name, receiver);
      },
    });
    const { buildApp } = await import('../src/app.js');
    const app = await buildApp({ config: t.config, store: yielding, clock: t.clock, logStream: t.logs.stream });
    try {
      const base = await app.listen({ port: 0, host: '127.0.0.1' });
      const user = await t.make.user();
      const agentKey = (await t.make.key(user.id, { write: true, name: 'agent' })).secret;
      const restKey = (await t.make.key(user.id, { write: true, name: 'rest' })).secret;
      const PARAGRAPHS = 40;
      const filler = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(22);
      const paragraph = (k: number, state: string) => `## Section ${k}\n\nParagraph ${k} is ${state}. ${filler}`;
      const content = (states: (k: number) => string) => Array.from({ length: PARAGRAPHS }, (_, k) => paragraph(k, states(k))).join('\n\n') + '\n';
      const doc = await t.make.document(user.id, { title: 'Long', content: content(() => 'original') });
      assert.ok(content(() => 'original').length > 50_000);

      const agents = PARAGRAPHS / 2;
      const clients = await Promise.all(Array.from({ length: agents }, () => connect(base, agentKey)));
      let restConflicts = 0;
      const ATTEMPTS = 200;

      const agentEdit = async (k: number) => {
        for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
          const result = await clients[k]!.callTool({
            name: 'edit_document',
            arguments: { id: doc.id, edits: [{ oldText: `Paragraph ${k} is original.`, newText: `Paragraph ${k} is edited by agent ${k}.` }] },
          });
          if (!result.isError) return;
          // Re-applied EDIT_ATTEMPTS times already (DESIGN §6); the agent may call again.
          failed(result, 'conflict');
        }
        assert.fail(`agent ${k} never got its edit in`);
      };
      const restEdit = async (k: number) => {
        for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
          const read = await call(app, 'GET', `/v1/documents/${doc.id}`, { key: restKey });
          const changed = read.body.contentMarkdown.replace(`Paragraph ${k} is original.`, `Paragraph ${k} is rewritten by client ${k}.`);
          const res = await call(app, 'PATCH', `/v1/documents/${doc.id}`, { key: restKey, body: { contentMarkdown: changed, expectedUpdatedAt: read.body.updatedAt } });
          if (res.status === 200) return;
          assert.equal(res.status, 409);
          restConflicts++;
        }
        assert.fail(`client ${k} never got its write in`);
      };
      await Promise.all(Array.from({ length: PARAGRAPHS }, (_, k) => (k < agents ? agentEdit(k) : restEdit(k))));

      const final = (await call(app, 'GET', `/v1/documents/${doc.id}`, { key: restKey })).body.contentMarkdown;
      assert.equal(final, content((k) => (k < agents ? `edited by agent ${k}` : `rewritten by client ${k}`)));
      // The writers did meet: edit_document found the document changed under it and applied its edit again,
      // and REST clients were refused and read again.
      assert.ok(editConflicts > 0, 'edit_document never found the document changed between its read and its write');
      assert.ok(restConflicts > 0, 'no REST write ever conflicted');
      await Promise.all(clients.map((c) => c.close()));
    } finally {
      await app.close();
      await t.close();
    }
  });
});

describe('edit_document when a write lands between its read and its write', () => {
  /** A server whose store lets `interfere` write each time edit_document has read the document. */
  async function racing(interfere: (store: TestContext['store'], attempt: number) => Promise<void>) {
    const t = await serve();
    let reads = 0;
    const racingStore = new Proxy(t.store, {
      get: (store, name, receiver) =>
        name === 'getDocument'
          ? async (...args: Parameters<typeof store.getDocument>) => {
              const read = await store.getDocument(...args);
              await interfere(store, ++reads);
              return read;
            }
          : Reflect.get(store, name, receiver),
    });
    const { buildApp } = await import('../src/app.js');
    const app = await buildApp({ config: t.config, store: racingStore, clock: t.clock, logStream: t.logs.stream });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const user = await t.make.user();
    const doc = await t.make.document(user.id, { content: 'One.\n\nTwo.\n' });
    const client = await connect(base, (await t.make.key(user.id, { write: true })).secret);
    const other = (n: number) =>
      t.store.updateDocument({ userId: user.id, orgId: null }, doc.id, { contentMarkdown: `One.\n\nTwo.\n\nOther ${n}.\n`, expectedUpdatedAt: null }, () => new Date(t.clock() + n).toISOString());
    return {
      t,
      client,
      doc,
      user,
      other,
      content: async () => (await t.store.getDocument({ userId: user.id, orgId: null }, doc.id))!.contentMarkdown,
      async close() {
        await client.close();
        await app.close();
        await t.close();
      },
    };
  }

  it('reads again and re-applies its edits, so that both changes survive', async () => {
    let race!: Awaited<ReturnType<typeof racing>>;
    race = await racing(async (store, attempt) => {
      if (attempt !== 1) return;
      const current = (await store.getDocument({ userId: race.user.id, orgId: null }, race.doc.id))!;
      await store.updateDocument({ userId: race.user.id, orgId: null }, race.doc.id, { contentMarkdown: current.contentMarkdown.replace('Two.', 'Two, by someone else.'), expectedUpdatedAt: current.updatedAt }, () => '2026-03-01T12:00:01.000Z');
    });
    try {
      ok(await race.client.callTool({ name: 'edit_document', arguments: { id: race.doc.id, edits: [{ oldText: 'One.', newText: 'One, by the agent.' }] } }));
      assert.equal(await race.content(), 'One, by the agent.\n\nTwo, by someone else.\n');
    } finally {
      await race.close();
    }
  });

  it('with expectedUpdatedAt, answers conflict at once instead', async () => {
    let race!: Awaited<ReturnType<typeof racing>>;
    race = await racing(async (_store, attempt) => {
      if (attempt === 1) await race.other(1);
    });
    try {
      failed(await race.client.callTool({ name: 'edit_document', arguments: { id: race.doc.id, expectedUpdatedAt: null, edits: [{ oldText: 'One.', newText: 'Uno.' }] } }), 'conflict');
      assert.equal(await race.content(), 'One.\n\nTwo.\n\nOther 1.\n');
    } finally {
      await race.close();
    }
  });

  it('answers conflict after a few attempts when the document changes every time, writing nothing', async () => {
    let race!: Awaited<ReturnType<typeof racing>>;
    let attempts = 0;
    race = await racing(async (store, attempt) => {
      attempts = attempt;
      const current = (await store.getDocument({ userId: race.user.id, orgId: null }, race.doc.id))!;
      await store.updateDocument({ userId: race.user.id, orgId: null }, race.doc.id, { contentMarkdown: `${current.contentMarkdown}x`, expectedUpdatedAt: current.updatedAt }, (previous) => new Date(Date.parse(previous ?? '2026-03-01T12:00:00.000Z') + 1).toISOString());
    });
    try {
      failed(await race.client.callTool({ name: 'edit_document', arguments: { id: race.doc.id, edits: [{ oldText: 'One.', newText: 'Uno.' }] } }), 'conflict');
      assert.equal(attempts, EDIT_ATTEMPTS);
      assert.equal(await race.content(), 'One.\n\nTwo.\n' + 'x'.repeat(EDIT_ATTEMPTS));
    } finally {
      await race.close();
    }
  });
});

describe("README's \"Connect an agent\"", () => {
  it('runs as written against a started server', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Connect an agent'));
    const block = /```js\n([\s\S]*?)```/.exec(section)?.[1];
    assert.ok(block?.includes("'http://127.0.0.1:8787/mcp'"), 'the README\'s example names the default URL');
    const t = await serve();
    try {
      const user = await t.make.user();
      await t.make.document(user.id, { title: 'Roadmap for spring', content: 'The roadmap.' });
      const key = (await t.make.key(user.id)).secret;
      const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '--eval', block!.replace('http://127.0.0.1:8787/mcp', `${t.base}/mcp`)], {
        cwd: new URL('..', import.meta.url),
        env: { ...process.env, FOLIO_API_KEY: key },
      });
      const found = JSON.parse(stdout);
      assert.deepEqual(found.documents.map((d: { title: string }) => d.title), ['Roadmap for spring']);
    } finally {
      await t.close();
    }
  });
});
