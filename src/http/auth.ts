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

/** An API route's guard: an onRequest hook that refuses the request by throwing. */
export type RouteGuard = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * The checks every API request passes before its input is even parsed, in
 * DESIGN §2's order: key and scope (401), plan (402), rate limit (429).
 * The key, its user and the user's teams and plans are read anew for every
 * request, so a revoked key, a removed member or a lost plan is refused on
 * the very next one, whichever process changed it.
 */
export function apiGuard(deps: ServiceDeps & { limiter: Limiter }) {
  const { store, config, clock, limiter } = deps;

  /** The guard of a route that needs `needed`. */
  return (needed: Scope): RouteGuard =>
    async function guard(request, reply) {
      const token = bearerToken(request.headers.authorization);
      if (token === null) throw new Unauthorized('Missing API key: send it as "Authorization: Bearer <API_KEY>".');
      // A malformed or mistyped key is refused without a database look-up (DESIGN §2).
      const principal = isWellFormedKey(token) ? await store.findPrincipal(hashKey(token)) : null;
      if (principal === null) throw new Unauthorized();
      if (needed === WRITE_SCOPE && !principal.canWrite) {
        throw new Unauthorized('Invalid API key for this endpoint: the key is read-only and lacks the connector:write scope.');
      }
      const plan = effectivePlan(principal.user.plan, principal.orgPlans, config.apiPlans);
      if (plan === null) throw new PlanRequired();
      request.auth = {
        keyId: principal.keyId,
        keyName: principal.keyName,
        scopes: scopesFor(principal.canWrite),
        user: { id: principal.user.id, name: principal.user.name, email: principal.user.email },
        organizations: principal.organizations,
        plan,
      };

      const now = clock();
      if (principal.lastUsedAt === null || now - Date.parse(principal.lastUsedAt) >= TOUCH_INTERVAL_MS) {
        // Not waited for: a request never waits on this bookkeeping (for a
        // write lock held by another process, say), nor fails with it.
        store.touchKey(principal.keyId, toIso(now)).catch((err: unknown) => request.log.warn({ err }, "the key's last use could not be recorded"));
      }

      const decision = await limiter.consume(principal.keyId, needed === WRITE_SCOPE ? 'write' : 'read');
      const headers = {
        'ratelimit-limit': String(decision.limit),
        'ratelimit-remaining': String(decision.remaining),
        'ratelimit-reset': String(decision.resetSeconds),
      };
      if (!decision.allowed) throw new RateLimited(decision.resetSeconds, headers);
      reply.headers(headers);
    };
}
