import type { FastifyReply } from 'fastify';
import { RenderedJson } from '../services/rendered-json.js';

/** What Fastify sends JSON as. */
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sends a service's answer: an object through the route's response schema,
 * as usual, or JSON the store wrote (RenderedJson) as it is, with the same
 * Content-Type (Fastify sends a string or bytes of a JSON type unchanged).
 */
export function sendResult(reply: FastifyReply, result: object): FastifyReply {
  return result instanceof RenderedJson ? reply.type(JSON_TYPE).send(result.body) : reply.send(result);
}
