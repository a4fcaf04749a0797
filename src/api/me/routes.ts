import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { READ_SCOPE } from '../../domain/keys.js';
import { sendResult } from '../../http/rendered-json.js';
import { RenderedJson } from '../../services/rendered-json.js';
import type { Services } from '../services.js';
import { getMeSchema } from './schemas.js';

export const meRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  /**
   * Each caller's body as the route's schema serializes it, kept for as long
   * as the body: the service makes it once per caller, and anew for a caller
   * read again after any change (services/workspace.ts).
   */
  const serialized = new WeakMap<object, RenderedJson>();
  app.get('/me', { schema: getMeSchema, config: { scope: READ_SCOPE } }, (req, reply) => {
    const me = services.workspace.me(req.auth);
    let json = serialized.get(me);
    if (json === undefined) {
      json = new RenderedJson(reply.serialize(me) as string);
      serialized.set(me, json);
    }
    sendResult(reply, json);
  });
};
