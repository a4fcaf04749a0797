import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { READ_SCOPE, WRITE_SCOPE } from '../../domain/keys.js';
import type { Services } from '../services.js';
import { createDocumentSchema, getDocumentSchema, listDocumentsSchema, updateDocumentSchema } from './schemas.js';

export const documentRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const documents = services.documents;

  app.get('/documents', { schema: listDocumentsSchema, config: { scope: READ_SCOPE } }, (req) => documents.list(req.auth, req.query));

  app.post('/documents', { schema: createDocumentSchema, config: { scope: WRITE_SCOPE } }, async (req, reply) =>
    reply.code(201).send(await documents.create(req.auth, req.body)),
  );

  app.get('/documents/:id', { schema: getDocumentSchema, config: { scope: READ_SCOPE } }, (req) =>
    documents.get(req.auth, req.params.id, req.query.organizationId),
  );

  app.patch('/documents/:id', { schema: updateDocumentSchema, config: { scope: WRITE_SCOPE } }, (req) =>
    documents.update(req.auth, req.params.id, req.body),
  );

  // `/documents/` names no document: an unknown path like any other with a
  // trailing slash (404 without a key), not `/documents/{id}` with an empty id.
  // Answered before its body is read: a body that is not JSON, or too large,
  // must not make it a 400 (DESIGN §3), as for any other unknown path.
  app.route({
    method: ['GET', 'HEAD', 'PATCH'],
    url: '/documents/',
    schema: { hide: true },
    onRequest: (_req, reply, _done) => {
      reply.callNotFound();
    },
    // Never reached (the hook answers first); Fastify requires a handler.
    handler: (_req, reply) => reply.callNotFound(),
  });
};
