import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import scalar from '@scalar/fastify-api-reference';
import { WRITE_SCOPE } from '../domain/keys.js';

/**
 * The OpenAPI 3.1 document, generated from the route schemas so that it
 * cannot drift from the behaviour, and an interactive reference page whose
 * assets Folio serves itself (it works offline: no CDN, no web fonts).
 */

const API_PREFIX = '/v1';
export const OPENAPI_PATH = `${API_PREFIX}/openapi.json`;
export const DOCS_PATH = `${API_PREFIX}/docs`;

const description = (limits: { reads: number; writes: number }) => `Scoped access for agents and automations to a user's document workspace: read, list, search, create and update Markdown documents, and list projects, templates, organizations (teams) and chats.

Every request carries \`Authorization: Bearer <API_KEY>\`. A key acts as the user who created it and sees exactly what that user can see. Requests work in the personal workspace unless \`organizationId\` names a team the user belongs to. Call \`GET /me\` first to discover the organizations, then use ids from list calls as parameters of other calls.

Checks happen in this order: key and scope (401), plan (402), rate limit (429), input (400), resource (404), concurrency (409). Limits on this server: ${limits.reads} reads and ${limits.writes} writes per minute per key; a 429 carries \`Retry-After\` in seconds.

Every error is \`{"error": {"code", "message"}}\`; the message is safe to show to a user.`;

type Json = Record<string, any>;

export async function registerOpenApi(app: FastifyInstance, limits: { reads: number; writes: number }): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Document Workspace API', version: '1.0.0', description: description(limits) },
      servers: [{ url: API_PREFIX, description: 'This Folio server' }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description:
              'A personal API key: `fol_` followed by 38 characters. Every key has `connector:read`; keys created with write access also have `connector:write`.',
          },
        },
      },
      security: [{ bearerAuth: [] }],
      tags: [
        { name: 'Me', description: 'The user the key acts as' },
        { name: 'Documents', description: 'Markdown documents: list, search, read, create, replace' },
        { name: 'History', description: 'A document\'s revisions: list, read, restore' },
        { name: 'Workspace', description: 'Projects, templates, organizations and chats' },
      ],
    },
    // Only the API's operations belong in the document (the auth hook acts on
    // exactly the routes that name a scope), with paths relative to the /v1 server.
    transform: ({ schema, url, route }) => {
      const scope = route.config?.scope;
      if (scope === undefined || !url.startsWith(`${API_PREFIX}/`)) return { schema: { ...schema, hide: true }, url };
      const s = schema as Json;
      const scopeNote =
        scope === WRITE_SCOPE
          ? `Requires an API key with the \`${scope}\` scope (a read-only key gets 401 \`unauthorized\`).`
          : `Requires an API key with the \`${scope}\` scope (every key has it).`;
      return {
        schema: {
          ...s,
          description: s.description ? `${s.description}\n\n${scopeNote}` : scopeNote,
          // OpenAPI 3.1 lets a non-OAuth scheme list the roles an operation needs.
          security: [{ bearerAuth: [scope] }],
        } as typeof schema,
        url: url.slice(API_PREFIX.length),
      };
    },
    transformObject: (doc) => ('openapiObject' in doc ? finishDocument(doc.openapiObject as Json) : doc.swaggerObject),
  });

  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger());

  // The page loads the document from `./openapi.json` under its own prefix,
  // which the plugin serves from the same @fastify/swagger object.
  await app.register(scalar, {
    routePrefix: DOCS_PATH,
    logLevel: 'warn',
    configuration: {
      pageTitle: 'Folio — Document Workspace API reference',
      // Offline: no fonts from fonts.scalar.com, no telemetry, no developer
      // toolbar or AI agent (they call scalar.com services); the bundle is
      // served locally.
      withDefaultFonts: false,
      telemetry: false,
      // The "Ask AI" agent (enabled by default on localhost) calls scalar.com.
      agent: { disabled: true },
      showDeveloperTools: 'never',
      hideClientButton: false,
      defaultOpenAllTags: true,
      showOperationId: true,
    } as Record<string, unknown>,
  });
}

// ---------------------------------------------------------------------------
// Post-processing of the generated document

const ERROR_DESCRIPTIONS: Record<string, [code: string, description: string, example: string]> = {
  '400': ['invalid_request', 'The query string, path or body failed validation.', 'The request is not valid.'],
  '401': [
    'unauthorized',
    'The API key is missing, malformed, revoked or unknown, or a read-only key was used on a write endpoint.',
    'The API key is missing, malformed, revoked or unknown.',
  ],
  '402': ['plan_required', "The user's plan does not include API access.", 'Your plan does not include API access. A Pro, Team or Enterprise plan is required.'],
  '404': ['not_found', 'The resource does not exist or the user cannot access it.', 'Not found.'],
  '409': [
    'conflict',
    'The document changed after it was read: read it again, reapply the edit and retry.',
    'The document changed after it was read (its updatedAt is now 2026-05-06T14:12:45.120Z). Read it again, reapply the edit and retry.',
  ],
  '429': ['rate_limited', 'Too many requests: wait `Retry-After` seconds, then retry.', 'Too many requests. Retry after 17 seconds.'],
  '500': ['internal_error', 'Unexpected server error: retry once, then contact support.', 'An unexpected error occurred. Retry once, then contact support.'],
};

const SUCCESS_DESCRIPTIONS: Record<string, string> = { '200': 'OK', '201': 'Created' };

const RETRY_AFTER = {
  description: 'Seconds to wait before retrying.',
  required: true,
  schema: { type: 'integer', minimum: 0 },
};
const RATE_HEADERS = {
  'RateLimit-Limit': { description: 'Requests allowed per 60-second window for this key and class (reads or writes).', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window resets.', schema: { type: 'integer' } },
};
const REQUEST_ID = {
  'X-Request-Id': {
    description: 'The request id: the caller\'s `X-Request-Id` when it is 1 to 128 characters of `A-Z a-z 0-9 . _ : -` and holds nothing shaped like a key (`fol_…`), otherwise a new UUID. Logged with the request.',
    required: true,
    schema: { type: 'string' },
  },
};

/**
 * Turns @fastify/swagger's output into the document clients read: a
 * description, example and headers on each response, string unions as enums,
 * and every titled object schema as a named component referenced by `$ref`.
 */
export function finishDocument(doc: Json): Json {
  for (const pathItem of Object.values<Json>(doc.paths ?? {})) {
    for (const operation of Object.values<Json>(pathItem)) {
      for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
        describeResponse(status, response, operation);
      }
      // A parameter with a default may be left out: validation fills it in.
      for (const parameter of operation.parameters ?? []) {
        if (parameter.schema?.default !== undefined) parameter.required = false;
      }
    }
  }
  doc.paths = nullableTypes(literalUnionsToEnums(doc.paths));
  const named: Record<string, Json> = { ...doc.components?.schemas };
  doc.paths = hoistNamedSchemas(doc.paths, named);
  doc.components = { ...doc.components, schemas: Object.fromEntries(Object.entries(named).sort(([a], [b]) => a.localeCompare(b))) };
  return doc;
}

function describeResponse(status: string, response: Json, operation: Json): void {
  const media = response.content?.['application/json'];
  const error = ERROR_DESCRIPTIONS[status];
  if (error) {
    const [code, description, example] = error;
    const message = status === '400' ? invalidRequestExample(operation) : example;
    response.description = `\`${code}\`: ${description}`;
    if (media && media.example === undefined) media.example = { error: { code, message } };
  } else if (SUCCESS_DESCRIPTIONS[status] && response.description === 'Default Response') {
    response.description = SUCCESS_DESCRIPTIONS[status];
  }
  // The guard sets the RateLimit-* headers once the key and plan are accepted,
  // so 401 and 402 answers do not carry them.
  const rate = status === '401' || status === '402' ? {} : RATE_HEADERS;
  response.headers = status === '429' ? { 'Retry-After': RETRY_AFTER, ...rate, ...REQUEST_ID } : { ...rate, ...REQUEST_ID };
}

/** A message like the ones Folio gives for this operation's most likely mistake. */
function invalidRequestExample(operation: Json): string {
  const body = operation.requestBody?.content?.['application/json']?.schema as Json | undefined;
  if (body?.properties?.title) return 'body field title: must NOT have more than 200 characters.';
  if (body?.properties?.expectedUpdatedAt) return 'body field expectedUpdatedAt: is required.';
  const names = new Set((operation.parameters ?? []).map((p: Json) => p.name));
  if (names.has('id')) return 'path parameter id: must match format "uuid".';
  if (names.has('limit')) return 'query parameter limit: must be <= 100.';
  return 'The request is not valid.';
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `anyOf: [{const: 'a', type: 'string'}, …]` (TypeBox's union of literals) becomes `enum: ['a', …]`, which generators name. */
function literalUnionsToEnums(node: unknown): any {
  if (Array.isArray(node)) return node.map(literalUnionsToEnums);
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = literalUnionsToEnums(v);
  const members = out.anyOf;
  const values = Array.isArray(members) ? members.map(stringLiteral) : [];
  if (values.length > 0 && values.every((v) => v !== undefined)) {
    delete out.anyOf;
    return { type: 'string', enum: values, ...out };
  }
  return out;
}

/**
 * `anyOf: [{type: 'string', …}, {type: 'null'}]` (TypeBox's nullable) becomes
 * `type: ['string', 'null']`, the form OpenAPI 3.1 tools render and name best.
 * Only keywords that ignore `null` (format, bounds, annotations) may come along.
 */
function nullableTypes(node: unknown): any {
  if (Array.isArray(node)) return node.map(nullableTypes);
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = nullableTypes(v);
  const members = out.anyOf;
  if (!Array.isArray(members) || members.length !== 2) return out;
  const nullIndex = members.findIndex((m) => isObject(m) && m.type === 'null' && Object.keys(m).length === 1);
  const other = members[1 - nullIndex];
  if (nullIndex < 0 || !isObject(other) || typeof other.type !== 'string' || !Object.keys(other).every((k) => NULL_SAFE.has(k))) return out;
  const { anyOf: _anyOf, ...rest } = out;
  if (Object.keys(other).some((k) => k !== 'type' && k in rest)) return out;
  return { ...other, ...rest, type: [other.type, 'null'] };
}

const NULL_SAFE = new Set(['type', 'format', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'examples', 'description', 'title']);

/** The value of `{const: 'a'}` or `{enum: ['a']}` (with `type: 'string'` at most), else undefined. */
function stringLiteral(schema: unknown): string | undefined {
  if (!isObject(schema) || !Object.keys(schema).every((k) => k === 'const' || k === 'enum' || k === 'type')) return undefined;
  if (schema.type !== undefined && schema.type !== 'string') return undefined;
  if (typeof schema.const === 'string') return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length === 1 && typeof schema.enum[0] === 'string') return schema.enum[0];
  return undefined;
}

/**
 * Moves each object schema that has a `title` to `components.schemas[title]`
 * and refers to it there. Two different schemas with one title are a mistake
 * in the route schemas, reported at once.
 */
function hoistNamedSchemas(node: unknown, named: Record<string, Json>): any {
  if (Array.isArray(node)) return node.map((n) => hoistNamedSchemas(n, named));
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) out[k] = hoistNamedSchemas(v, named);
  if (typeof out.title !== 'string' || out.type !== 'object') return out;
  const name = out.title.replace(/[^A-Za-z0-9._-]/g, '');
  const existing = named[name];
  if (existing === undefined) {
    named[name] = out;
  } else if (JSON.stringify(withoutExamples(existing)) !== JSON.stringify(withoutExamples(out))) {
    throw new Error(`OpenAPI: two different schemas are both titled "${out.title}"`);
  } else if (out.examples !== undefined && existing.examples === undefined) {
    named[name] = out;
  }
  return { $ref: `#/components/schemas/${name}` };
}

function withoutExamples(schema: Json): Json {
  const { examples: _examples, ...rest } = schema;
  return rest;
}
