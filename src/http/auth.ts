import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, hashKey, isWellFormedKey, scopesFor, WRITE_SCOPE, type Scope } from '../domain/keys.js';
import { effectivePlan } from '../domain/plans.js';
import { toIso } from '../domain/time.js';
import { PlanRequired, RateLimited, Unauthorized } from '../errors.js';
import type { Limiter } from '../rate-limit/limiter.js';
import type { Caller, ServiceDeps } from '../services/context.js';

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
/** Keys whose last write is remembered; past this, forgetting them costs one more write each. */
const MAX_TOUCHED = 100_000;

/**
 * The checks every API request passes before its input is even parsed, in
 * DESIGN §2's order: key and scope (401), plan (402), rate limit (429).
 * A revoked key or a lost plan is refused on the very next request: the
 * store's access cache is dropped whenever the database changes
 * (src/store/sqlite/access-cache.ts).
 */
export function apiGuard(deps: ServiceDeps & { limiter: Limiter }) {
  const { store, config, clock, limiter } = deps;
  /**
   * When this process last wrote each key's last-used time. The principal's
   * own `lastUsedAt` is as the key was read, which the access cache may keep
   * for long: writing it there would drop every cached principal, once a
   * minute per active key.
   */
  const touched = new Map<string, number>();

  /** The guard of a route that needs `needed` (given once per route, not looked up per request). */
  return (needed: Scope) => async function guard(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const token = bearerToken(request.headers.authorization);
    if (token === null) throw new Unauthorized('Missing API key: send it as "Authorization: Bearer <API_KEY>".');
    // A malformed or mistyped key is refused without a database look-up
    // (DESIGN §2). Its format is checked only when its hash is not already
    // known: a key found before was well formed then and is the same text now.
    const principal = await store.findPrincipal(hashKey(token), () => isWellFormedKey(token));
    if (!principal) throw new Unauthorized();
    if (needed === WRITE_SCOPE && !principal.canWrite) {
      throw new Unauthorized('Invalid API key for this endpoint: the key is read-only and lacks the connector:write scope.');
    }

    const plan = effectivePlan(principal.user.plan, principal.orgPlans, config.apiPlans);
    if (plan === null) throw new PlanRequired();

    const now = clock();
    const lastUsed = touched.get(principal.keyId) ?? (principal.lastUsedAt === null ? null : Date.parse(principal.lastUsedAt));
    if (lastUsed === null || now - lastUsed >= TOUCH_INTERVAL_MS) {
      await store.touchKey(principal.keyId, toIso(now));
      if (touched.size >= MAX_TOUCHED) touched.clear();
      touched.set(principal.keyId, now);
    }

    const decision = await limiter.consume(principal.keyId, needed === WRITE_SCOPE ? 'write' : 'read');
    const headers = {
      'ratelimit-limit': String(decision.limit),
      'ratelimit-remaining': String(decision.remaining),
      'ratelimit-reset': String(decision.resetSeconds),
    };
    if (!decision.allowed) throw new RateLimited(decision.resetSeconds, headers);
    reply.headers(headers);

    request.auth = {
      keyId: principal.keyId,
      keyName: principal.keyName,
      scopes: scopesFor(principal.canWrite),
      user: { id: principal.user.id, name: principal.user.name, email: principal.user.email },
      organizations: principal.organizations,
      plan,
    };
  };
}
