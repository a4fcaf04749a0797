import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import scalar from '@scalar/fastify-api-reference';

/**
 * The OpenAPI 3.1 document, generated from the route schemas so that it
 * cannot drift from the behaviour, and an interactive reference page whose
 * assets Folio serves itself (it works offline).
 */

const API_PREFIX = '/v1';

const DESCRIPTION = `Scoped access for agents and automations to a user's document workspace: read, list, search, create and update Markdown documents, and list projects, templates, organizations (teams) and chats.

Every request carries \`Authorization: Bearer <API_KEY>\`. A key acts as the user who created it and sees exactly what that user can see. Requests work in the personal workspace unless \`organizationId\` names a team the user belongs to.

Checks happen in this order: key and scope (401), plan (402), rate limit (429), input (400), resource (404), concurrency (409). Limits: 120 reads and 30 writes per minute per key; a 429 carries \`Retry-After\` in seconds.`;

type Json = Record<string, any>;

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Document Workspace API', version: '1.0.0', description: DESCRIPTION },
      servers: [{ url: API_PREFIX, description: 'This Folio server' }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'A personal API key: `fol_` followed by 38 characters.' },
        },
      },
      security: [{ bearerAuth: [] }],
      tags: [
        { name: 'Me', description: 'The caller' },
        { name: 'Documents', description: 'Markdown documents' },
        { name: 'Workspace', description: 'Projects, templates, organizations and chats' },
      ],
    },
    // Only the API's operations belong in the document, with paths relative to the /v1 server.
    transform: ({ schema, url, route }) => {
      const scope = route.config?.scope;
      if (scope === undefined || !url.startsWith(`${API_PREFIX}/`)) return { schema: { ...schema, hide: true }, url };
      const s = schema as Json;
      const scopeNote = `Requires an API key with the \`${scope}\` scope${scope === 'connector:write' ? ' (a read-only key gets 401)' : ''}.`;
      return {
        schema: { ...s, description: s.description ? `${s.description}\n\n${scopeNote}` : scopeNote } as typeof schema,
        url: url.slice(API_PREFIX.length),
      };
    },
    transformObject: (doc) => ('openapiObject' in doc ? addRateLimitHeaders(doc.openapiObject as Json) : doc.swaggerObject),
  });

  app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());

  await app.register(scalar, {
    routePrefix: `${API_PREFIX}/docs`,
    configuration: {
      pageTitle: 'Folio — Document Workspace API reference',
      withDefaultFonts: false,
      hideClientButton: false,
      telemetry: false,
    } as Record<string, unknown>,
  });
}

const RETRY_AFTER = {
  description: 'Seconds to wait before retrying.',
  schema: { type: 'integer', minimum: 1 },
};
const RATE_HEADERS = {
  'RateLimit-Limit': { description: 'Requests allowed per 60-second window for this key and class (reads or writes).', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window resets.', schema: { type: 'integer' } },
};

/** Every 429 carries Retry-After; every authenticated response carries the RateLimit-* headers. */
function addRateLimitHeaders(doc: Json): Json {
  for (const path of Object.values<Json>(doc.paths ?? {})) {
    for (const operation of Object.values<Json>(path)) {
      for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
        if (status === '429') response.headers = { 'Retry-After': RETRY_AFTER, ...RATE_HEADERS };
        else if (/^[2-5]/.test(status) && status !== '401' && status !== '402') response.headers = { ...RATE_HEADERS };
      }
    }
  }
  return doc;
}
