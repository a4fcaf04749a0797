import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { READ_SCOPE } from '../../domain/keys.js';
import type { Services } from '../services.js';
import { listOrganizationsSchema } from './schemas.js';

export const organizationRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get('/organizations', { schema: listOrganizationsSchema, config: { scope: READ_SCOPE } }, (req) =>
    services.workspace.organizations(req.auth),
  );
};
