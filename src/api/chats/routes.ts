import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { READ_SCOPE } from '../../domain/keys.js';
import type { Services } from '../services.js';
import { listChatsSchema } from './schemas.js';

export const chatRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get('/chats', { schema: listChatsSchema, config: { scope: READ_SCOPE } }, (req) =>
    services.workspace.chats(req.auth, req.query),
  );
};
