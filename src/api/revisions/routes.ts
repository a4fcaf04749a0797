import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { READ_SCOPE, WRITE_SCOPE } from '../../domain/keys.js';
import type { Services } from '../services.js';
import { getRevisionSchema, listRevisionsSchema, restoreRevisionSchema } from './schemas.js';

export const revisionRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const documents = services.documents;

  app.get('/documents/:id/revisions', { schema: listRevisionsSchema, config: { scope: READ_SCOPE } }, (req) =>
    documents.revisions(req.auth, req.params.id, req.query),
  );

  app.get('/documents/:id/revisions/:number', { schema: getRevisionSchema, config: { scope: READ_SCOPE } }, (req) =>
    documents.revision(req.auth, req.params.id, req.params.number, req.query.organizationId),
  );

  app.post('/documents/:id/revisions/:number/restore', { schema: restoreRevisionSchema, config: { scope: WRITE_SCOPE } }, (req) =>
    documents.restore(req.auth, req.params.id, req.params.number, req.body),
  );

  // `/documents/{id}/revisions/` names no revision: an unknown path like any
  // other with a trailing slash (404 without a key), not a revision with an
  // empty number (docs/api.md, "Errors").
  app.route({
    method: ['GET', 'HEAD'],
    url: '/documents/:id/revisions/',
    schema: { hide: true },
    onRequest: (_req, reply, _done) => {
      reply.callNotFound();
    },
    // Never reached (the hook answers first); Fastify requires a handler.
    handler: (_req, reply) => reply.callNotFound(),
  });
};
