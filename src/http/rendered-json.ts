import type { FastifyReply } from 'fastify';
import type { MaybePromise } from '../maybe-promise.js';
import { RenderedJson } from '../services/rendered-json.js';

/** What Fastify sends JSON as. */
const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Sends a service's answer: an object through the route's response schema,
 * as usual, or JSON the store wrote (RenderedJson) as it is, with the same
 * Content-Type (Fastify sends a string or bytes of a JSON type unchanged).
 * An answer that is there already is sent at once, from a handler that
 * returns nothing; one still to come, when it comes, the handler returning
 * its promise so that Fastify answers a failure.
 */
export function sendResult(reply: FastifyReply, result: MaybePromise<object>): void | Promise<void> {
  if (result instanceof Promise) return result.then((r) => send(reply, r));
  send(reply, result);
}

function send(reply: FastifyReply, result: object): void {
  if (result instanceof RenderedJson) reply.type(JSON_TYPE).send(result.body);
  else reply.send(result);
}
