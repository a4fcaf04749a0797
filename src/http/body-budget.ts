import type { FastifyInstance, FastifyRequest, preParsingHookHandler } from 'fastify';
import { RateLimited } from '../errors.js';
import { hookList } from './route-hooks.js';

/** Bodies up to this size are read at once; only larger ones share the budget. */
export const SMALL_BODY_BYTES = 64 * 1024;
/** How long a large body may wait for room before its request is refused (429). */
export const BUDGET_WAIT_MS = 30_000;
/** How long a large body that has its turn may take to arrive. */
export const BODY_RECEIVE_MS = 60_000;
/** The Retry-After of a request refused after waiting. */
const RETRY_AFTER_SECONDS = 5;

interface Waiter {
  bytes: number;
  state: 'waiting' | 'held' | 'done';
  grant: () => void;
}

/**
 * A number of bytes shared first come, first served: `acquire` grants at
 * once while there is room and nobody waits, otherwise queues. Whatever
 * asks for more than the whole capacity is granted once it is alone.
 */
export function byteBudget(capacity: number) {
  let used = 0;
  const queue: Waiter[] = [];

  /** Moves the waiters that now fit, in order, from the queue to the holders; the caller grants them. */
  function admit(): Waiter[] {
    const admitted: Waiter[] = [];
    while (queue.length > 0) {
      const next = queue[0]!;
      if (used > 0 && used + next.bytes > capacity) break;
      queue.shift();
      used += next.bytes;
      next.state = 'held';
      admitted.push(next);
    }
    return admitted;
  }

  return {
    /**
     * Calls `grant` once `bytes` are available: at once if they are, otherwise
     * in a tick of its own once others give theirs back. The returned function
     * gives them back, or leaves the queue; calling it again does nothing, and
     * after it `grant` is never called.
     */
    acquire(bytes: number, grant: () => void): () => void {
      const waiter: Waiter = { bytes, state: 'waiting', grant };
      queue.push(waiter);
      if (admit().includes(waiter)) grant();
      return () => {
        if (waiter.state === 'done') return;
        if (waiter.state === 'held') used -= bytes;
        else queue.splice(queue.indexOf(waiter), 1);
        waiter.state = 'done';
        for (const next of admit()) {
          process.nextTick(() => {
            if (next.state === 'held') next.grant();
          });
        }
      };
    },
    get used() {
      return used;
    },
    get waiting() {
      return queue.length;
    },
  };
}

export type ByteBudget = ReturnType<typeof byteBudget>;

/**
 * The bytes a request's body will take: its Content-Length, or the largest
 * body allowed when it is sent in chunks without one. 0 when there is no
 * body, or when it is over the route's limit (Fastify refuses it without
 * reading it).
 */
function declaredBodyBytes(request: FastifyRequest): number {
  const limit = request.routeOptions.bodyLimit ?? 0;
  const length = request.headers['content-length'];
  if (length !== undefined) {
    const bytes = Number(length);
    return Number.isSafeInteger(bytes) && bytes <= limit ? bytes : 0;
  }
  return request.headers['transfer-encoding'] !== undefined ? limit : 0;
}

/** Methods whose requests Fastify never reads a body for. */
const BODILESS = new Set(['GET', 'HEAD', 'TRACE']);

/**
 * Bounds the memory that request bodies take at once. A body is held as
 * text, then as the parsed document, then written to the database and the
 * response, so that a few large bodies at once take several times their
 * size.
 *
 * Bodies over SMALL_BODY_BYTES are read only while the large ones being
 * handled add up to at most `capacity` bytes (by their declared size; one
 * body larger than that is read when it is alone); the others wait, unread,
 * in arrival order, and after `waitMs` are refused with `429 rate_limited`.
 * A body that has its turn must then arrive within `receiveMs`, or its
 * connection is closed: a client that stalls cannot hold the budget. A
 * request's bytes are given back when its response is finished or its
 * connection closes. The hook runs where Fastify reads bodies, after the
 * onRequest hooks, so on Folio's API routes only callers with a valid key
 * within their rate limit take a turn.
 */
export function limitBodiesInFlight(
  app: FastifyInstance,
  options: { capacity: number; waitMs?: number; receiveMs?: number },
): ByteBudget {
  const budget = byteBudget(options.capacity);
  const waitMs = options.waitMs ?? BUDGET_WAIT_MS;
  const receiveMs = options.receiveMs ?? BODY_RECEIVE_MS;
  const hold: preParsingHookHandler = (request, reply, payload, done) => {
    const bytes = declaredBodyBytes(request);
    const socket = request.raw.socket;
    if (bytes <= SMALL_BODY_BYTES || reply.raw.destroyed || socket.destroyed) {
      done(null, payload);
      return;
    }
    let granted = false;
    let timer: NodeJS.Timeout | undefined;
    const release = budget.acquire(bytes, () => {
      granted = true;
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (!request.raw.complete) socket.destroy();
      }, receiveMs);
      timer.unref();
      done(null, payload);
    });
    // The response's own 'close' does not come for a pipelined request whose
    // response was still queued behind another when the connection closed.
    const finished = () => {
      clearTimeout(timer);
      release();
      reply.raw.off('close', finished);
      socket.off('close', finished);
    };
    reply.raw.on('close', finished);
    socket.on('close', finished);
    if (!granted) {
      timer = setTimeout(() => {
        release();
        done(new RateLimited(RETRY_AFTER_SECONDS, {}, 'The server is busy reading other large request bodies.'));
      }, waitMs);
      timer.unref();
    }
  };
  // Only on routes that take a body: the others have nothing to wait for.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.every((m) => BODILESS.has(m))) return;
    route.preParsing = [hold, ...hookList(route.preParsing)];
  });
  return budget;
}
