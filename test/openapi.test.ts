import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ERROR_CODES } from '../src/errors.js';
import { buildContract, contractOf } from './contract.js';
import { call, setup, type TestContext } from './helpers.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Json = Record<string, any>;

/** The spec's summary table: method, path, scope, success status and schema, error statuses. */
const OPERATIONS = {
  getMe: ['get', '/me', 'connector:read', 200, 'Me', [400, 401, 402, 404, 429, 500]],
  listDocuments: ['get', '/documents', 'connector:read', 200, 'DocumentList', [400, 401, 402, 429, 500]],
  createDocument: ['post', '/documents', 'connector:write', 201, 'DocumentMutationResult', [400, 401, 402, 404, 429, 500]],
  getDocument: ['get', '/documents/{id}', 'connector:read', 200, 'Document', [400, 401, 402, 404, 429, 500]],
  updateDocument: ['patch', '/documents/{id}', 'connector:write', 200, 'DocumentMutationResult', [400, 401, 402, 404, 409, 429, 500]],
  listProjects: ['get', '/projects', 'connector:read', 200, 'ProjectList', [400, 401, 402, 429, 500]],
  listTemplates: ['get', '/templates', 'connector:read', 200, 'TemplateList', [400, 401, 402, 429, 500]],
  listOrganizations: ['get', '/organizations', 'connector:read', 200, 'OrganizationList', [400, 401, 402, 429, 500]],
  listChats: ['get', '/chats', 'connector:read', 200, 'ChatList', [400, 401, 402, 429, 500]],
} as const;

/** Document history (DESIGN §7): Folio's three operations beside the spec's nine. */
const HISTORY_OPERATIONS = {
  listRevisions: ['get', '/documents/{id}/revisions', 'connector:read', 200, 'RevisionList', [400, 401, 402, 404, 429, 500]],
  getRevision: ['get', '/documents/{id}/revisions/{number}', 'connector:read', 200, 'Revision', [400, 401, 402, 404, 429, 500]],
  restoreRevision: ['post', '/documents/{id}/revisions/{number}/restore', 'connector:write', 200, 'DocumentMutationResult', [400, 401, 402, 404, 409, 429, 500]],
} as const;

const ALL_OPERATIONS = { ...OPERATIONS, ...HISTORY_OPERATIONS };

type OperationId = keyof typeof ALL_OPERATIONS;

/**
 * The fields of the spec's resources, as its tables list them: Folio's
 * additions (history) must not add a field to any response of the spec's
 * nine operations.
 */
const SPEC_SHAPES: Record<string, string[]> = {
  Me: ['id', 'name', 'email', 'plan', 'key', 'organizations'],
  OrganizationRef: ['id', 'name'],
  Organization: ['id', 'name', 'createdAt'],
  DocumentSummary: ['id', 'title', 'createdAt', 'updatedAt', 'threadId', 'url'],
  Document: ['id', 'title', 'createdAt', 'updatedAt', 'threadId', 'url', 'contentMarkdown', 'project'],
  ProjectRef: ['id', 'name'],
  DocumentMutationResult: ['id', 'title', 'threadId', 'url'],
  Project: ['id', 'name', 'description', 'createdAt', 'isSharedWithYou'],
  Template: ['id', 'title', 'description', 'isSystem', 'isDefault'],
  Chat: ['id', 'title', 'createdAt', 'updatedAt', 'messageCount', 'project', 'url'],
  DocumentList: ['documents', 'count'],
  ProjectList: ['projects', 'count'],
  TemplateList: ['templates', 'count'],
  OrganizationList: ['organizations', 'count'],
  ChatList: ['chats', 'count'],
  Error: ['error'],
};

const ORG = { in: 'query', name: 'organizationId', required: false, type: 'string' };
const LIMIT = (d: number) => ({ in: 'query', name: 'limit', required: false, type: 'integer', minimum: 1, maximum: 100, default: d });
const Q = { in: 'query', name: 'q', required: false, type: 'string', minLength: 1, maxLength: 200 };
const PROJECT = { in: 'query', name: 'projectId', required: false, type: 'string' };
const DOCUMENT_ID = { in: 'path', name: 'id', required: true, type: 'string', format: 'uuid' };
const REVISION_NUMBER = { in: 'path', name: 'number', required: true, type: 'integer', minimum: 1, maximum: 2_147_483_647 };

/** Every parameter the spec lists, with its type, bounds and default. */
const PARAMETERS: Record<OperationId, Json[]> = {
  getMe: [],
  listDocuments: [Q, ORG, PROJECT, LIMIT(20)],
  createDocument: [],
  getDocument: [DOCUMENT_ID, ORG],
  updateDocument: [DOCUMENT_ID],
  listProjects: [ORG, LIMIT(50)],
  listTemplates: [ORG, { in: 'query', name: 'includeSystem', required: false, type: 'string', enum: ['true', 'false'], default: 'true' }, LIMIT(50)],
  listOrganizations: [],
  listChats: [Q, ORG, PROJECT, LIMIT(20)],
  listRevisions: [DOCUMENT_ID, ORG, LIMIT(20)],
  getRevision: [DOCUMENT_ID, REVISION_NUMBER, ORG],
  // organizationId of a restore is in its body, as for PATCH.
  restoreRevision: [DOCUMENT_ID, REVISION_NUMBER],
};

const escapePointer = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1');
const JSON_MEDIA = escapePointer('application/json');

describe('OpenAPI document', () => {
  let t: TestContext;
  let doc: Json;
  const op = (id: OperationId): Json => {
    const [method, path] = ALL_OPERATIONS[id];
    return doc.paths[path][method];
  };
  const component = (ref: string) => doc.components.schemas[ref.replace('#/components/schemas/', '')];

  before(async () => {
    t = await setup();
    const res = await call(t.app, 'GET', '/v1/openapi.json');
    assert.equal(res.status, 200);
    doc = res.body;
  });
  after(() => t.close());

  it('is served at /v1/openapi.json without a key, as JSON, even with a bad key', async () => {
    const res = await call(t.app, 'GET', '/v1/openapi.json', { key: 'fol_not-a-key' });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.equal(res.body.openapi, '3.1.0');
    assert.equal(res.body.info.version, '1.0.0');
    assert.deepEqual(res.body.servers.map((s: Json) => s.url), ['/v1']);
  });

  it("states this server's rate limits, as configured", async () => {
    assert.match(doc.info.description, /120 reads and 30 writes per minute per key/);
    const other = await setup({ env: { READ_LIMIT_PER_MIN: '600', WRITE_LIMIT_PER_MIN: '45' } });
    try {
      const res = await call(other.app, 'GET', '/v1/openapi.json');
      assert.match(res.body.info.description, /600 reads and 45 writes per minute per key/);
    } finally {
      await other.close();
    }
  });

  it('validates against the OpenAPI 3.1 meta-schema', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    assert.equal(validator.version, '3.1');
  });

  it('has schemas that are valid JSON Schema 2020-12 under Ajv strict mode', () => {
    const ajv = addFormats(new Ajv2020({ strict: true, allErrors: true }));
    // The components as `$defs` of one schema, so that strict mode sees only JSON Schema keywords.
    const $defs = JSON.parse(JSON.stringify(doc.components.schemas).replaceAll('"#/components/schemas/', '"#/$defs/'));
    ajv.addSchema({ $id: 'https://folio.invalid/components', $defs });
    for (const name of Object.keys(doc.components.schemas)) {
      assert.doesNotThrow(() => ajv.compile({ $ref: `https://folio.invalid/components#/$defs/${name}` }), name);
    }
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const [method, operation] of Object.entries<Json>(item)) {
        for (const p of operation.parameters ?? []) {
          assert.equal(ajv.validateSchema(p.schema), true, `${method} ${path} ${p.name}: ${ajv.errorsText()}`);
          assert.doesNotThrow(() => ajv.compile(p.schema), `${method} ${path} ${p.name}`);
        }
      }
    }
  });

  it('has exactly the nine operations of the spec and the three of history, with their operationIds, methods and paths', () => {
    const found: string[] = [];
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const [method, operation] of Object.entries<Json>(item)) found.push(`${operation.operationId} ${method} ${path}`);
    }
    const line = ([id, [method, path]]: [string, readonly [string, string, ...unknown[]]]) => `${id} ${method} ${path}`;
    for (const spec of Object.entries(OPERATIONS).map(line)) assert.ok(found.includes(spec), `the spec's ${spec}`);
    assert.deepEqual(found.sort(), Object.entries(ALL_OPERATIONS).map(line).sort());
    assert.deepEqual(Object.keys(HISTORY_OPERATIONS).map((id) => op(id as OperationId).tags), [['History'], ['History'], ['History']]);
  });

  it("keeps the shapes of the spec's resources: history adds no field to a response of the spec's nine operations", () => {
    for (const [name, fields] of Object.entries(SPEC_SHAPES)) {
      const schema = doc.components.schemas[name];
      assert.deepEqual(Object.keys(schema.properties), fields, name);
      assert.deepEqual(schema.required, fields, `${name}: every field required`);
    }
    assert.deepEqual(Object.keys(doc.components.schemas.Me.properties.key.properties), ['name', 'scopes']);
    // Every schema a response of the nine names, directly or through a reference, is one of the spec's.
    const named = new Set<string>();
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node !== null && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (k === '$ref' && typeof v === 'string') {
            const name = v.replace('#/components/schemas/', '');
            if (!named.has(name)) {
              named.add(name);
              walk(doc.components.schemas[name]);
            }
          } else walk(v);
        }
      }
    };
    for (const id of Object.keys(OPERATIONS)) walk(op(id as OperationId).responses);
    assert.deepEqual([...named].sort(), Object.keys(SPEC_SHAPES).sort());
  });

  it('hides the routes that are not API operations', () => {
    for (const path of Object.keys(doc.paths)) assert.doesNotMatch(path, /healthz|openapi|docs|^\/v1/);
  });

  it('declares the bearer scheme and the scope each operation needs, in its security and its description', () => {
    assert.deepEqual(doc.components.securitySchemes.bearerAuth, { ...doc.components.securitySchemes.bearerAuth, type: 'http', scheme: 'bearer' });
    assert.deepEqual(doc.security, [{ bearerAuth: [] }]);
    for (const [id, [, , scope]] of Object.entries(ALL_OPERATIONS)) {
      const operation = op(id as OperationId);
      assert.deepEqual(operation.security, [{ bearerAuth: [scope] }], id);
      assert.ok(operation.description.includes(`\`${scope}\``), `${id}: description names ${scope}`);
      assert.ok(operation.summary, `${id} has a summary`);
      assert.ok(operation.tags?.length, `${id} has a tag`);
    }
  });

  it('states every parameter with its type, bounds and default', () => {
    for (const [id, expected] of Object.entries(PARAMETERS)) {
      const actual = (op(id as OperationId).parameters ?? []).map((p: Json) => ({ in: p.in, name: p.name, required: p.required, ...p.schema }));
      assert.equal(actual.length, expected.length, `${id}: ${actual.map((p: Json) => p.name).join(', ')}`);
      for (const want of expected) {
        const got = actual.find((p: Json) => p.name === want.name && p.in === want.in);
        assert.ok(got, `${id}: parameter ${want.name}`);
        for (const [k, v] of Object.entries(want)) assert.deepEqual(got[k], v, `${id} ${want.name}.${k}`);
      }
      for (const p of op(id as OperationId).parameters ?? []) assert.ok(p.description, `${id} ${p.name} has a description`);
    }
    const org = op('listDocuments').parameters.find((p: Json) => p.name === 'organizationId');
    assert.equal(org.schema.pattern, '^org_');
  });

  it('describes the request bodies with their bounds', () => {
    const create = component(op('createDocument').requestBody.content['application/json'].schema.$ref);
    assert.equal(op('createDocument').requestBody.required, true);
    assert.deepEqual(create.required, ['title', 'contentMarkdown']);
    assert.deepEqual([create.properties.title.minLength, create.properties.title.maxLength], [1, 200]);
    assert.equal(create.properties.contentMarkdown.minLength, 1);
    // Unicode's whitespace, as a Unicode (`u`) expression reads it: JavaScript's `\S` takes U+0085 for text.
    assert.equal(create.properties.contentMarkdown.pattern, '\\P{White_Space}');
    assert.ok(create.properties.projectId && create.properties.organizationId);

    const update = component(op('updateDocument').requestBody.content['application/json'].schema.$ref);
    assert.deepEqual(update.required, ['contentMarkdown', 'expectedUpdatedAt']);
    assert.deepEqual(update.properties.expectedUpdatedAt.type, ['string', 'null']);
    assert.equal(update.properties.expectedUpdatedAt.format, 'date-time');
    assert.deepEqual([update.properties.title.minLength, update.properties.title.maxLength], [1, 200]);

    const restore = component(op('restoreRevision').requestBody.content['application/json'].schema.$ref);
    assert.equal(op('restoreRevision').requestBody.required, true);
    assert.deepEqual(restore.required, ['expectedUpdatedAt']);
    assert.deepEqual(Object.keys(restore.properties).sort(), ['expectedUpdatedAt', 'organizationId']);
    assert.deepEqual(restore.properties.expectedUpdatedAt.type, ['string', 'null']);
    assert.equal(restore.properties.expectedUpdatedAt.format, 'date-time');
    assert.equal(restore.properties.organizationId.pattern, '^org_');
  });

  it('lists each success and each error status of the spec, errors with the Error schema and its code enum', () => {
    const error = doc.components.schemas.Error;
    assert.deepEqual(error.properties.error.properties.code, { type: 'string', enum: [...ERROR_CODES] });
    assert.deepEqual(error.properties.error.required, ['code', 'message']);
    for (const [id, [, , , success, schema, errors]] of Object.entries<readonly [string, string, string, number, string, readonly number[]]>(ALL_OPERATIONS)) {
      const responses = op(id as OperationId).responses;
      assert.deepEqual(Object.keys(responses).map(Number).sort(), [success, ...errors].sort(), id);
      assert.equal(responses[success].content['application/json'].schema.$ref, `#/components/schemas/${schema}`, id);
      for (const status of errors) {
        const response = responses[status];
        assert.equal(response.content['application/json'].schema.$ref, '#/components/schemas/Error', `${id} ${status}`);
        assert.ok(response.description.length > 10, `${id} ${status} has a description`);
      }
      const retryAfter = responses[429].headers['Retry-After'];
      assert.equal(retryAfter.required, true, `${id}: 429 requires Retry-After`);
      assert.equal(retryAfter.schema.type, 'integer');
    }
  });

  it('names its schemas as components', () => {
    for (const name of ['Me', 'OrganizationRef', 'Organization', 'DocumentSummary', 'Document', 'ProjectRef', 'DocumentMutationResult', 'Project', 'Template', 'Chat', 'Error', 'RevisionSummary', 'Revision', 'RevisionList']) {
      assert.equal(doc.components.schemas[name]?.type, 'object', name);
    }
    const summary = doc.components.schemas.DocumentList.properties.documents.items;
    assert.deepEqual(summary, { $ref: '#/components/schemas/DocumentSummary' });
    assert.deepEqual(doc.components.schemas.RevisionList.properties.revisions.items, { $ref: '#/components/schemas/RevisionSummary' });
    assert.deepEqual(Object.keys(doc.components.schemas.RevisionSummary.properties), ['number', 'createdAt', 'title', 'userId', 'keyName']);
    assert.deepEqual(Object.keys(doc.components.schemas.Revision.properties), ['number', 'createdAt', 'title', 'userId', 'keyName', 'contentMarkdown']);
    // Nullable fields are typed `[type, 'null']`; a nullable reference stays a union.
    const document = doc.components.schemas.Document.properties;
    assert.deepEqual(document.updatedAt, { format: 'date-time', examples: ['2026-05-04T09:30:00.000Z'], type: ['string', 'null'] });
    assert.deepEqual(document.project, { anyOf: [{ $ref: '#/components/schemas/ProjectRef' }, { type: 'null' }] });
  });

  it('has an example for each request body and each response, and every example matches its schema', () => {
    const contract = contractOf(t.app);
    let checked = 0;
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const [method, operation] of Object.entries<Json>(item)) {
        const at = `/paths/${escapePointer(path)}/${method}`;
        if (operation.requestBody) {
          const media = operation.requestBody.content['application/json'];
          assert.notEqual(media.example, undefined, `${operation.operationId} request body example`);
          assert.deepEqual(contract.validateAt(`${at}/requestBody/content/${JSON_MEDIA}/schema`, media.example), [], `${operation.operationId} body example`);
          checked++;
        }
        for (const [status, response] of Object.entries<Json>(operation.responses)) {
          const media = response.content['application/json'];
          assert.notEqual(media.example, undefined, `${operation.operationId} ${status} example`);
          assert.deepEqual(contract.validateAt(`${at}/responses/${status}/content/${JSON_MEDIA}/schema`, media.example), [], `${operation.operationId} ${status} example`);
          if (status.startsWith('4') || status.startsWith('5')) assert.equal(media.example.error.code.length > 0, true);
          checked++;
        }
        for (const [i, p] of (operation.parameters ?? []).entries()) {
          if (p.example !== undefined) {
            assert.deepEqual(contract.validateAt(`${at}/parameters/${i}/schema`, p.example), [], `${operation.operationId} ${p.name} example`);
          }
        }
      }
    }
    // Three request bodies (create, update, restore), twelve successes, and each operation's errors.
    assert.equal(checked, 3 + 12 + Object.values(ALL_OPERATIONS).reduce((n, o) => n + o[5].length, 0));
  });

  it('is the very document the reference page loads', async () => {
    const page = await call(t.app, 'GET', '/v1/docs/openapi.json');
    assert.equal(page.status, 200);
    assert.deepEqual(page.body, doc);
  });
});

describe('Contract checks of the test helper', () => {
  let t: TestContext;
  before(async () => {
    t = await setup();
  });
  after(() => t.close());

  it('fail a call() whose response drifts from the document', async () => {
    // The store takes any text as an e-mail; the API promises the email format.
    const user = await t.make.user({ email: 'not an e-mail address' });
    const { secret } = await t.make.key(user.id);
    await assert.rejects(call(t.app, 'GET', '/v1/me', { key: secret }), /breaks the OpenAPI contract of getMe[\s\S]*\/email must match format "email"/);
  });

  it('let responses that keep the contract through, including errors', async () => {
    const user = await t.make.user();
    const { secret } = await t.make.key(user.id);
    assert.equal((await call(t.app, 'GET', '/v1/me', { key: secret })).status, 200);
    assert.equal((await call(t.app, 'GET', '/v1/documents?limit=0', { key: secret })).status, 400);
    assert.equal((await call(t.app, 'POST', '/v1/documents', { key: secret, body: { title: 'x', contentMarkdown: 'y' } })).status, 401);
    assert.equal((await call(t.app, 'GET', '/v1/documents/6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11', { key: secret })).status, 404);
  });

  it('skip requests that match no operation (the not-found handler, /healthz, the docs)', async () => {
    const contract = contractOf(t.app);
    for (const [method, url] of [
      ['GET', '/v1/nowhere'],
      ['DELETE', '/v1/documents/6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11'],
      ['GET', '/v1/documents/'],
      ['GET', '/healthz'],
      ['GET', '/v1/openapi.json'],
      ['HEAD', '/v1/me'],
    ] as const) {
      assert.equal(contract.operationFor(method, url), null, `${method} ${url}`);
      const res = await call(t.app, method, url);
      assert.ok(res.status === 200 || res.status === 404 || res.status === 401, `${method} ${url}: ${res.status}`);
    }
    assert.equal(contract.operationFor('GET', '/v1/documents/abc?organizationId=org_1')?.operationId, 'getDocument');
    assert.equal(contract.operationFor('patch', '/v1/documents/abc')?.operationId, 'updateDocument');
  });

  it('report undocumented statuses, missing Retry-After, wrong media types and bad bodies', () => {
    const contract = buildContract(contractOf(t.app).document);
    const json = { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'r1' };
    const error = (code: string) => JSON.stringify({ error: { code, message: 'm' } });
    const check = (status: number, headers: Json, body: string, method = 'GET', url = '/v1/chats') =>
      contract.check({ method, url, status, headers, body });

    assert.deepEqual(check(400, json, error('invalid_request')), []);
    assert.match(check(418, json, error('invalid_request'))!.join(), /status 418 is not documented/);
    assert.match(check(409, json, error('conflict'))!.join(), /status 409 is not documented/);
    assert.deepEqual(check(409, json, error('conflict'), 'PATCH', '/v1/documents/x'), []);
    assert.match(check(429, json, error('rate_limited'))!.join(), /required header Retry-After is missing/);
    assert.deepEqual(check(429, { ...json, 'retry-after': '17' }, error('rate_limited')), []);
    assert.match(check(429, { ...json, 'retry-after': 'soon' }, error('rate_limited'))!.join(), /header Retry-After/);
    assert.match(check(400, { ...json, 'content-type': 'text/plain' }, error('invalid_request'))!.join(), /content-type/);
    assert.match(check(400, json, 'oops')!.join(), /not JSON/);
    assert.match(check(400, json, error('teapot'))!.join(), /code must be equal to one of the allowed values/);
    assert.match(check(200, json, JSON.stringify({ chats: [] }))!.join(), /must have required property 'count'/);
    assert.match(check(200, { 'content-type': 'application/json' }, JSON.stringify({ chats: [], count: 0 }))!.join(), /X-Request-Id is missing/);
    assert.equal(check(404, json, error('not_found'), 'GET', '/v1/nowhere'), null);
  });
});
