import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, hashKey, isWellFormedKey, scopesFor, WRITE_SCOPE, type Scope } from '../domain/keys.js';
import { effectivePlan } from '../domain/plans.js';
import { toIso } from '../domain/time.js';
import { PlanRequired, RateLimited, Unauthorized } from '../errors.js';
import type { LimitClass, Limiter, RateDecision } from '../rate-limit/limiter.js';
import type { Caller, ServiceDeps } from '../services/context.js';
import type { Principal } from '../store/store.js';
import type { RouteGuard } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth: Caller;
  }
  interface FastifyContextConfig {
    /** The scope an API route needs; routes without it are public. */
    scope?: Scope;
  }
}

/** The last-used time of a key is written at most about once a minute (DESIGN §2). */
const TOUCH_INTERVAL_MS = 60_000;
/** A last-used time not written because another process held the write lock is tried again this much later. */
const LOCKED_TOUCH_RETRY_MS = 1_000;
/** Keys whose last write is remembered; past this, forgetting them costs one more write each. */
const MAX_TOUCHED = 100_000;

/** Answers a hook: with nothing to go on, or with the error that refuses the request. */
type Done = (err?: Error) => void;

/**
 * The checks every API request passes before its input is even parsed, in
 * DESIGN §2's order: key and scope (401), plan (402), rate limit (429).
 * A revoked key or a lost plan is refused on the very next request: the
 * store's access cache is dropped whenever the database changes
 * (src/store/sqlite/access-cache.ts).
 *
 * A request whose key the store already holds, whose key needs no new
 * last-used time and whose limiter answers at once (the one in memory
 * does) passes without waiting for anything: a guard that awaited its
 * steps made eight promises a request (bench/README.md, "A guard that does
 * not wait"). The other steps continue when their answer comes.
 */
export function apiGuard(deps: ServiceDeps & { limiter: Limiter }) {
  const { store, config, clock, limiter } = deps;
  /**
   * Each key's last-used time as this process last wrote it, or as it first
   * read it from the principal. The principal's own `lastUsedAt` is as the
   * key was read, which the access cache may keep for long: writing it there
   * would drop every cached principal, once a minute per active key.
   */
  const lastTouched = new Map<string, number>();

  /**
   * The caller a principal makes, or null without a plan that grants API
   * access: made once for each principal the store hands out (a principal is
   * read again, as a new object, whenever the access cache is dropped), so
   * that a request of a known key makes no objects of its own here. Services
   * only read it (it is frozen).
   */
  const callers = new WeakMap<Principal, Caller | null>();
  function callerOf(principal: Principal): Caller | null {
    let caller = callers.get(principal);
    if (caller !== undefined) return caller;
    const plan = effectivePlan(principal.user.plan, principal.orgPlans, config.apiPlans);
    caller =
      plan === null
        ? null
        : Object.freeze({
            keyId: principal.keyId,
            keyName: principal.keyName,
            scopes: scopesFor(principal.canWrite),
            user: { id: principal.user.id, name: principal.user.name, email: principal.user.email },
            organizations: principal.organizations,
            plan,
            personal: Object.freeze({ userId: principal.user.id, orgId: null }),
          });
    callers.set(principal, caller);
    return caller;
  }

  /** Whether the key's last-used time was written less than a minute before `now`. */
  function touchedLately(principal: Principal, now: number): boolean {
    let lastUsed = lastTouched.get(principal.keyId);
    if (lastUsed === undefined) {
      if (principal.lastUsedAt === null) return false;
      // Written by another process (or this one before a restart): remembered
      // as if written here, so that it is parsed once, not on every request
      // of the minute it still covers.
      lastUsed = Date.parse(principal.lastUsedAt);
      touched(principal.keyId, lastUsed);
    }
    return now - lastUsed < TOUCH_INTERVAL_MS;
  }

  function touched(keyId: string, at: number): void {
    if (lastTouched.size >= MAX_TOUCHED) lastTouched.clear();
    lastTouched.set(keyId, at);
  }

  /** Scope and plan of a known key; then its last-used time, if due, and the rate limit. */
  function admit(needed: Scope, principal: Principal | null, request: FastifyRequest, reply: FastifyReply, done: Done): void {
    if (!principal) return done(new Unauthorized());
    if (needed === WRITE_SCOPE && !principal.canWrite) {
      return done(new Unauthorized('Invalid API key for this endpoint: the key is read-only and lacks the connector:write scope.'));
    }
    const caller = callerOf(principal);
    if (caller === null) return done(new PlanRequired());

    request.auth = caller;
    const cls = needed === WRITE_SCOPE ? 'write' : 'read';
    const now = clock();
    if (touchedLately(principal, now)) return limit(principal.keyId, cls, reply, done);
    store.touchKey(principal.keyId, toIso(now)).then(
      (written) =>
        continued(done, () => {
          // Not written (another process held the write lock): tried again by
          // the key's first request a second from now, not by every one.
          touched(principal.keyId, written ? now : now - TOUCH_INTERVAL_MS + LOCKED_TOUCH_RETRY_MS);
          limit(principal.keyId, cls, reply, done);
        }),
      done,
    );
  }

  function limit(keyId: string, cls: LimitClass, reply: FastifyReply, done: Done): void {
    const decision = limiter.consume(keyId, cls);
    if (decision instanceof Promise) decision.then((d) => continued(done, () => answer(d, reply, done)), done);
    else answer(decision, reply, done);
  }

  /** The request goes on (with the limit's headers) or is refused with 429. */
  function answer(decision: RateDecision, reply: FastifyReply, done: Done): void {
    if (!decision.allowed) {
      const headers = {
        'ratelimit-limit': String(decision.limit),
        'ratelimit-remaining': String(decision.remaining),
        'ratelimit-reset': String(decision.resetSeconds),
      };
      return done(new RateLimited(decision.resetSeconds, headers));
    }
    reply
      .header('ratelimit-limit', String(decision.limit))
      .header('ratelimit-remaining', String(decision.remaining))
      .header('ratelimit-reset', String(decision.resetSeconds));
    done();
  }

  /** The guard of a route that needs `needed` (given once per route, not looked up per request). */
  return (needed: Scope): RouteGuard =>
    function guard(request, reply, done) {
      const token = bearerToken(request.headers.authorization);
      if (token === null) return done(new Unauthorized('Missing API key: send it as "Authorization: Bearer <API_KEY>".'));
      const hash = hashKey(token);
      const known = store.knownPrincipal(hash);
      if (known !== undefined) return admit(needed, known, request, reply, done);
      // A malformed or mistyped key is refused without a database look-up
      // (DESIGN §2). Its format is checked only when its hash is not already
      // known: a key found before was well formed then and is the same text now.
      store
        .findPrincipal(hash, () => isWellFormedKey(token))
        .then((found) => continued(done, () => admit(needed, found, request, reply, done)), done);
    };
}

/**
 * A step of the guard after an await: what it throws goes to `done`, as a
 * hook's own throw goes to Fastify, instead of into a rejected promise
 * nobody awaits, which would end the process.
 */
function continued(done: Done, step: () => void): void {
  try {
    step();
  } catch (error) {
    done(error as Error);
  }
}
