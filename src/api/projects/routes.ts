import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { READ_SCOPE } from '../../domain/keys.js';
import type { Services } from '../services.js';
import { listProjectsSchema } from './schemas.js';

export const projectRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get('/projects', { schema: listProjectsSchema, config: { scope: READ_SCOPE } }, (req) =>
    services.workspace.projects(req.auth, req.query),
  );
};
