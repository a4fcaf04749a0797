import type { FastifyInstance, FastifyRequest, preParsingHookHandler } from 'fastify';
import { RateLimited } from '../errors.js';

/** Bodies up to this size are read at once; only larger ones share the budget. */
export const SMALL_BODY_BYTES = 64 * 1024;
/** How long a large body may wait for room before its request is refused (429). */
export const BUDGET_WAIT_MS = 30_000;
/** The Retry-After of a request refused after waiting. */
const RETRY_AFTER_SECONDS = 5;

interface Waiter {
  bytes: number;
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

  function admit() {
    while (queue.length > 0) {
      const next = queue[0]!;
      if (used > 0 && used + next.bytes > capacity) return;
      queue.shift();
      used += next.bytes;
      next.grant();
    }
  }

  return {
    /**
     * Calls `grant` once `bytes` are available (perhaps at once). The returned
     * function gives them back, or leaves the queue if they were never granted;
     * calling it again does nothing.
     */
    acquire(bytes: number, grant: () => void): () => void {
      let state: 'waiting' | 'held' | 'done' = 'waiting';
      const waiter: Waiter = {
        bytes,
        grant: () => {
          state = 'held';
          grant();
        },
      };
      queue.push(waiter);
      admit();
      return () => {
        if (state === 'held') {
          used -= bytes;
          admit();
        } else if (state === 'waiting') {
          queue.splice(queue.indexOf(waiter), 1);
          admit();
        }
        state = 'done';
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
 * body, or when it is over the limit (Fastify refuses it without reading it).
 */
function declaredBodyBytes(request: FastifyRequest, maxBodyBytes: number): number {
  const length = request.headers['content-length'];
  if (length !== undefined) {
    const bytes = Number(length);
    return Number.isSafeInteger(bytes) && bytes <= maxBodyBytes ? bytes : 0;
  }
  return request.headers['transfer-encoding'] !== undefined ? maxBodyBytes : 0;
}

/**
 * Bounds the memory that request bodies take at once. A body is held as
 * text, then as the parsed document, then written to the database and the
 * response; fifty bodies of 5 MiB sent at once took the server from 105 to
 * 519 MB, and to 172-190 MB with a budget of 8 MiB, in the same time. Bodies over SMALL_BODY_BYTES are read only
 * while the large ones being handled add up to at most `capacity` bytes
 * (by their declared size); the others wait, unread, in arrival order, and
 * after `waitMs` (default BUDGET_WAIT_MS) are refused with `429 rate_limited`. A request's
 * bytes are given back when its response is finished or its connection
 * closes. Runs after authentication, so only callers with a valid key can
 * occupy it.
 */
export function limitBodiesInFlight(
  app: FastifyInstance,
  options: { capacity: number; maxBodyBytes: number; waitMs?: number },
): ByteBudget {
  const budget = byteBudget(options.capacity);
  const waitMs = options.waitMs ?? BUDGET_WAIT_MS;
  const hold: preParsingHookHandler = (request, reply, payload, done) => {
    const bytes = declaredBodyBytes(request, options.maxBodyBytes);
    if (bytes <= SMALL_BODY_BYTES) {
      done(null, payload);
      return;
    }
    let granted = false;
    let timer: NodeJS.Timeout | undefined;
    const release = budget.acquire(bytes, () => {
      granted = true;
      clearTimeout(timer);
      done(null, payload);
    });
    reply.raw.once('close', () => {
      clearTimeout(timer);
      release();
    });
    if (!granted) {
      timer = setTimeout(() => {
        release();
        done(new RateLimited(RETRY_AFTER_SECONDS, {}));
      }, waitMs);
      timer.unref();
    }
  };
  // Only on routes that take a body: a hook on every route costs every GET a
  // step of Fastify's request cycle (about 1 % of a document read).
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => m === 'POST' || m === 'PATCH' || m === 'PUT' || m === 'DELETE')) return;
    const own = route.preParsing === undefined ? [] : Array.isArray(route.preParsing) ? route.preParsing : [route.preParsing];
    route.preParsing = [hold, ...own];
  });
  return budget;
}
