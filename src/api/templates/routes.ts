import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { READ_SCOPE } from '../../domain/keys.js';
import type { Services } from '../services.js';
import { listTemplatesSchema } from './schemas.js';

export const templateRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get('/templates', { schema: listTemplatesSchema, config: { scope: READ_SCOPE } }, (req) =>
    services.workspace.templates(req.auth, req.query),
  );
};
