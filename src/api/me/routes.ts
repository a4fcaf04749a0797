import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { READ_SCOPE } from '../../domain/keys.js';
import { sendResult } from '../../http/rendered-json.js';
import { RenderedJson } from '../../services/rendered-json.js';
import type { Services } from '../services.js';
import { getMeSchema } from './schemas.js';

export const meRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  /**
   * Each caller's answer as the route's schema serializes it, kept as long
   * as the caller: the guard makes a caller once for each principal the
   * store reads, and anew once any change has dropped the access cache, so
   * a new plan or team shows on the next request.
   */
  const serialized = new WeakMap<object, RenderedJson>();
  app.get('/me', { schema: getMeSchema, config: { scope: READ_SCOPE } }, (req, reply) => {
    let json = serialized.get(req.auth);
    if (json === undefined) {
      json = new RenderedJson(reply.serialize(services.workspace.me(req.auth)) as string);
      serialized.set(req.auth, json);
    }
    sendResult(reply, json);
  });
};
