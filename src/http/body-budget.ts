import { Transform, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler, preParsingHookHandler } from 'fastify';
import { RateLimited } from '../errors.js';
import { hookList } from './route-hooks.js';

/** Bodies up to this size are read at once; only larger ones share the budget. */
export const SMALL_BODY_BYTES = 64 * 1024;
/** How long a large body may wait for room before its request is refused (429). */
export const BUDGET_WAIT_MS = 30_000;
/** How often a body being read is checked against that rate. */
const ARRIVAL_CHECK_MS = 250;
/** The code of the error that answers a body arriving too slowly (src/http/errors.ts, answerClientError). */
export const BODY_TOO_SLOW = 'FOLIO_BODY_TOO_SLOW';

/** A body's time to arrive at the slowest allowed rate. */
export interface ArrivalRate {
  bytesPerSecond: number;
  graceMs: number;
}

/**
 * The slowest a large body that has its turn may arrive, on average, once
 * its grace has passed, and a large answer be taken (stalled-responses.ts):
 * 64 KiB/s, half a megabit; an idle upload is cut after 5 s. The whole
 * request must still arrive within REQUEST_TIMEOUT_S (request-timeout.ts).
 */
export const SLOWEST_ARRIVAL: ArrivalRate = { bytesPerSecond: 64 * 1024, graceMs: 5_000 };

/** The time `bytes` may take at `rate`, its grace included. */
export const timeToArrive = (rate: ArrivalRate, bytes: number) => rate.graceMs + (bytes / rate.bytesPerSecond) * 1000;

interface Waiter {
  bytes: number;
  owner: string;
  /** How many of its owner's bodies were held or waiting when it came: the queue's order. */
  turn: number;
  state: 'waiting' | 'held' | 'done';
  /** While held: the time by which the body must have arrived, at the slowest allowed rate. */
  dueBy: number;
  grant: () => void;
}

/**
 * A number of bytes shared among owners (API keys), in turns, with a fair
 * share each: `acquire` grants at once while there is room and nobody
 * waits, otherwise queues. The queue serves each owner's first body before
 * any owner's second, and so on, first come, first served within a turn: an
 * owner that sends many bodies at once lets the others' go past its next
 * ones, even where a body fills more than half the capacity and the two
 * could never be read together. An owner that holds nothing may take any
 * room there is (whatever asks for more than the whole capacity is granted
 * once it is alone); an owner already holding bytes may hold at most half
 * the capacity in all, so one owner's bodies never take all of it. A waiter
 * over its owner's share lets the ones behind it go first; a waiter within
 * its share that does not fit holds the others back, so that a large body
 * is not passed forever by smaller ones.
 */
export function byteBudget(capacity: number, rate: ArrivalRate = SLOWEST_ARRIVAL) {
  let used = 0;
  const queue: Waiter[] = [];
  const holders = new Set<Waiter>();
  const share = capacity / 2;

  const heldBy = (owner: string) => {
    let bytes = 0;
    for (const h of holders) if (h.owner === owner) bytes += h.bytes;
    return bytes;
  };

  /** Moves the waiters that now may go, in order, from the queue to the holders; the caller grants them. */
  function admit(): Waiter[] {
    const admitted: Waiter[] = [];
    for (let i = 0; i < queue.length; ) {
      const next = queue[i]!;
      const own = heldBy(next.owner);
      if (own > 0 && own + next.bytes > share) {
        i++;
        continue;
      }
      if (used > 0 && used + next.bytes > capacity) break;
      queue.splice(i, 1);
      used += next.bytes;
      next.state = 'held';
      next.dueBy = Date.now() + timeToArrive(rate, next.bytes);
      holders.add(next);
      admitted.push(next);
    }
    return admitted;
  }

  return {
    /**
     * Calls `grant` once `bytes` are available to `owner`: at once if they
     * are, otherwise in a tick of its own once others give theirs back. The
     * returned function gives them back, or leaves the queue; calling it
     * again does nothing, and after it `grant` is never called.
     */
    acquire(bytes: number, owner: string, grant: () => void): () => void {
      let turn = 0;
      for (const w of holders) if (w.owner === owner) turn++;
      for (const w of queue) if (w.owner === owner) turn++;
      const waiter: Waiter = { bytes, owner, turn, state: 'waiting', dueBy: 0, grant };
      // Behind every waiter of its turn or an earlier one, before those of later turns.
      let at = queue.length;
      while (at > 0 && queue[at - 1]!.turn > turn) at--;
      queue.splice(at, 0, waiter);
      if (admit().includes(waiter)) grant();
      return () => {
        if (waiter.state === 'done') return;
        if (waiter.state === 'held') {
          used -= bytes;
          holders.delete(waiter);
        } else queue.splice(queue.indexOf(waiter), 1);
        waiter.state = 'done';
        for (const next of admit()) {
          process.nextTick(() => {
            if (next.state === 'held') next.grant();
          });
        }
      };
    },
    /**
     * The milliseconds until `bytes` of `owner` would fit, if every body
     * being read now arrived at the slowest allowed rate (one that arrives
     * slower is cut off then) and was answered at once: what a refused
     * request's Retry-After says. An estimate: the waiters ahead, and bodies
     * whose handlers run long, may take the room first.
     */
    freeWithinMs(bytes: number, owner: string): number {
      const now = Date.now();
      let held = used;
      let own = heldBy(owner);
      let at = now;
      const fits = () => (held === 0 || held + bytes <= capacity) && (own === 0 || own + bytes <= share);
      for (const h of [...holders].sort((x, y) => x.dueBy - y.dueBy)) {
        if (fits()) break;
        held -= h.bytes;
        if (h.owner === owner) own -= h.bytes;
        at = h.dueBy;
      }
      return Math.max(0, at - now);
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
 * The bytes a request's body will take, by its Content-Length: 0 when there
 * is none, or when it is over the route's limit (Fastify refuses it without
 * reading it). A body sent in chunks, without one, is sized as it arrives
 * (turnOnceLarge).
 */
function declaredBodyBytes(request: FastifyRequest): number {
  const limit = request.routeOptions.bodyLimit ?? 0;
  const length = request.headers['content-length'];
  if (length === undefined) return 0;
  const bytes = Number(length);
  return Number.isSafeInteger(bytes) && bytes <= limit ? bytes : 0;
}

/** Whether a request's body comes in chunks, its size unknown until its end. */
const chunked = (request: FastifyRequest) => request.headers['content-length'] === undefined && request.headers['transfer-encoding'] !== undefined;

/**
 * A body sent in chunks, passed on as it arrives: once more than
 * SMALL_BODY_BYTES of it are in, it stops there (the client is held back
 * by TCP) until `takeTurn` grants it a turn, or fails as the turn does. A
 * small body sent in chunks never waits, however many large ones do.
 */
function turnOnceLarge(payload: Readable, takeTurn: () => Promise<void>): Readable {
  let arrived = 0;
  let turn: Promise<void> | null = null;
  const passed = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      arrived += chunk.length;
      if (turn === null && arrived > SMALL_BODY_BYTES) turn = takeTurn();
      if (turn === null) callback(null, chunk);
      else turn.then(() => callback(null, chunk), callback);
    },
  });
  // A client that leaves ends the body with an error, as it would unwrapped.
  payload.on('error', (err) => passed.destroy(err));
  payload.pipe(passed);
  return passed;
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
 * body larger than that is read when it is alone), and while their key's
 * share allows (byteBudget); the others wait, unread, in turns, and
 * after `waitMs` are refused with `429 rate_limited`, whose Retry-After is
 * the time by which the bodies being read now must have arrived (an
 * estimate: waiters ahead, and handlers still running, are not counted). A
 * body sent in chunks, whose size nobody declared, is read up to
 * SMALL_BODY_BYTES first; past that it waits likewise, counted as the
 * largest body allowed. A body that has its turn must arrive at `rate` or
 * faster, or its request is answered `400` and its connection closed: a
 * client that stalls or trickles cannot hold the budget. A request's bytes
 * are given back when its answer is ready or its connection closes.
 * The hook runs where Fastify reads bodies, after the onRequest hooks: on
 * Folio's REST routes only callers with a valid key within their plan and
 * rate limit take a turn (on MCP's, with a valid key: whether a message is a
 * read or a write is in its body), and their share is their key's.
 */
export function limitBodiesInFlight(
  app: FastifyInstance,
  options: { capacity: number; waitMs?: number; rate?: ArrivalRate },
): ByteBudget {
  const rate = options.rate ?? SLOWEST_ARRIVAL;
  const budget = byteBudget(options.capacity, rate);
  const waitMs = options.waitMs ?? BUDGET_WAIT_MS;
  /** How each request that holds bytes gives them back. */
  const holding = new WeakMap<FastifyRequest, () => void>();

  /**
   * Resolves once the request's `bytes` have their turn, or fails with
   * `429` after `waitMs`. From its turn on, the body must keep arriving at
   * `rate`.
   */
  function takeTurn(request: FastifyRequest, reply: FastifyReply, bytes: number): Promise<void> {
    const socket = request.raw.socket;
    // Keys take turns by key; a request without one (no API route) by its address.
    const owner = request.caller?.keyId ?? `address ${request.ip}`;
    return new Promise((resolve, reject) => {
      let granted = false;
      let timer: NodeJS.Timeout | undefined;
      const release = budget.acquire(bytes, owner, () => {
        granted = true;
        clearTimeout(timer);
        // The bytes read on this connection from now on; those of the body
        // already buffered before its turn are not counted, which errs on the
        // strict side by at most one read.
        const start = Date.now();
        const readBefore = socket.bytesRead;
        timer = setInterval(() => {
          if (request.raw.complete) return clearInterval(timer);
          const due = ((Date.now() - start - rate.graceMs) / 1000) * rate.bytesPerSecond;
          if (socket.bytesRead - readBefore >= due) return;
          clearInterval(timer);
          const slow = `The request body arrived too slowly: a large body must keep arriving at ${Math.round(rate.bytesPerSecond / 1024)} KiB/s or faster.`;
          app.server.emit('clientError', Object.assign(new Error(slow), { code: BODY_TOO_SLOW }), socket);
        }, Math.min(ARRIVAL_CHECK_MS, rate.graceMs));
        timer.unref();
        resolve();
      });
      // Given back once the answer is ready (answered below), or when the
      // connection closes before. Not when the answer has gone out: a client
      // that pipelines a request behind one whose answer it never reads would
      // hold its bytes for as long as it keeps the connection open. The
      // response's own 'close' does not come for a pipelined request whose
      // response was still queued behind another when the connection closed.
      const finished = () => {
        clearTimeout(timer);
        release();
        reply.raw.off('close', finished);
        socket.off('close', finished);
        holding.delete(request);
      };
      holding.set(request, finished);
      reply.raw.on('close', finished);
      socket.on('close', finished);
      if (!granted) {
        timer = setTimeout(() => {
          const seconds = Math.max(1, Math.ceil(budget.freeWithinMs(bytes, owner) / 1000));
          release();
          reject(new RateLimited(seconds, {}, 'The server is busy reading other large request bodies.'));
        }, waitMs);
        timer.unref();
      }
    });
  }

  const hold: preParsingHookHandler = (request, reply, payload, done) => {
    if (reply.raw.destroyed || request.raw.socket.destroyed) {
      done(null, payload);
      return;
    }
    if (chunked(request)) {
      const largest = request.routeOptions.bodyLimit ?? 0;
      done(null, turnOnceLarge(payload, () => takeTurn(request, reply, largest)));
      return;
    }
    const bytes = declaredBodyBytes(request);
    if (bytes <= SMALL_BODY_BYTES) {
      done(null, payload);
      return;
    }
    takeTurn(request, reply, bytes).then(
      () => done(null, payload),
      (err: Error) => done(err),
    );
  };
  const answered: onSendHookHandler = (request, _reply, payload, done) => {
    holding.get(request)?.();
    done(null, payload);
  };
  // Only on routes that take a body: the others have nothing to wait for.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.every((m) => BODILESS.has(m))) return;
    route.preParsing = [hold, ...hookList(route.preParsing)];
    route.onSend = [answered, ...hookList(route.onSend)];
  });
  return budget;
}
