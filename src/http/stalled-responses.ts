import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { SMALL_BODY_BYTES, timeToArrive, type ArrivalRate } from './body-budget.js';

/** The bytes of an answer's payload when it is over SMALL_BODY_BYTES, otherwise 0. */
function largeBytes(payload: unknown): number {
  // UTF-8 takes at most 3 bytes per UTF-16 unit: most answers are measured no further.
  if (typeof payload === 'string') return payload.length * 3 <= SMALL_BODY_BYTES ? 0 : Buffer.byteLength(payload);
  return Buffer.isBuffer(payload) ? payload.length : 0;
}

/**
 * A large answer must be taken by its client at the slowest rate a large
 * body may arrive (body-budget.ts), after the same grace, or its connection
 * is closed. Node sets no time limit on sending: a client that stops
 * reading would otherwise hold its answer in the server's memory for as
 * long as it keeps the connection open, a document's size or more for each
 * request. Answers pipelined on one connection are due one after another.
 * An answer of SMALL_BODY_BYTES or less, which the system's buffers take at
 * once, is not timed.
 */
export function endStalledResponses(app: FastifyInstance, rate: ArrivalRate): void {
  /** By when each connection's answers handed out so far must have gone. */
  const dueBy = new WeakMap<Socket, number>();
  app.addHook('onSend', (request, reply, payload, done) => {
    const bytes = largeBytes(payload);
    if (bytes > 0) {
      const socket = request.raw.socket;
      const now = Date.now();
      const due = Math.max(now, dueBy.get(socket) ?? 0) + timeToArrive(rate, bytes);
      dueBy.set(socket, due);
      const response = reply.raw;
      const timer = setTimeout(() => {
        if (!response.writableFinished) socket.destroy();
      }, due - now);
      timer.unref();
      const stop = () => clearTimeout(timer);
      response.once('finish', stop);
      response.once('close', stop);
    }
    done(null, payload);
  });
}
