import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { READ_SCOPE } from '../../domain/keys.js';
import type { Services } from '../services.js';
import { getMeSchema } from './schemas.js';

export const meRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get('/me', { schema: getMeSchema, config: { scope: READ_SCOPE } }, async (req) => services.workspace.me(req.auth));
};
