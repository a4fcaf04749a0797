import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, hashKey, isWellFormedKey, scopesFor, WRITE_SCOPE, type Scope } from '../domain/keys.js';
import { effectivePlan } from '../domain/plans.js';
import { toIso } from '../domain/time.js';
import { PlanRequired, RateLimited, Unauthorized } from '../errors.js';
import type { LimitClass, Limiter, RateDecision } from '../rate-limit/limiter.js';
import type { Caller, ServiceDeps } from '../services/context.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth: Caller;
    /** The key and user a request came with, once the key is known: for its log line. */
    caller?: { keyId: string; userId: string };
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

/** The caller a key stands for; `plan` is null when no plan grants the user API access (402). */
export type KeyHolder = Omit<Caller, 'plan'> & { plan: string | null };

/**
 * The checks every API request passes before its input is even parsed, in
 * DESIGN §2's order: key and scope (401), plan (402), rate limit (429).
 * The key, its user and the user's teams and plans are read anew for every
 * request, so a revoked key, a removed member or a lost plan is refused on
 * the very next one, whichever process changed it. The REST routes run all
 * three at once (`guard`); the MCP endpoint runs them one by one, because a
 * tool call reports the last two as its result (DESIGN §6).
 */
export function keyChecks(deps: ServiceDeps & { limiter: Limiter }) {
  const { store, config, clock, limiter } = deps;

  /** The holder of the request's key; a missing, malformed, revoked or unknown key is 401. */
  async function identify(request: FastifyRequest): Promise<KeyHolder> {
    const header = request.headers.authorization;
    const token = bearerToken(header);
    if (token === null) {
      throw new Unauthorized(
        header === undefined
          ? 'Missing API key: send it as "Authorization: Bearer <API_KEY>".'
          : 'Malformed Authorization header: send one key, as "Authorization: Bearer <API_KEY>".',
      );
    }
    // A malformed or mistyped key is refused without a database look-up (DESIGN §2).
    const principal = isWellFormedKey(token) ? await store.findPrincipal(hashKey(token)) : null;
    if (principal === null) throw new Unauthorized();
    request.caller = { keyId: principal.keyId, userId: principal.user.id };

    const now = clock();
    if (principal.lastUsedAt === null || now - Date.parse(principal.lastUsedAt) >= TOUCH_INTERVAL_MS) {
      // Not waited for: a request never waits on this bookkeeping (for a
      // write lock held by another process, say), nor fails with it.
      store.touchKey(principal.keyId, toIso(now)).catch((err: unknown) => request.log.warn({ err }, "the key's last use could not be recorded"));
    }
    return {
      keyId: principal.keyId,
      keyName: principal.keyName,
      scopes: scopesFor(principal.canWrite),
      user: { id: principal.user.id, name: principal.user.name, email: principal.user.email },
      organizations: principal.organizations,
      plan: effectivePlan(principal.user.plan, principal.orgPlans, config.apiPlans),
    };
  }

  /** The caller, once a plan grants the key holder API access (402 otherwise). */
  function withPlan(holder: KeyHolder): Caller {
    if (holder.plan === null) throw new PlanRequired();
    return { ...holder, plan: holder.plan };
  }

  /** Counts one request of the key in `cls`; the RateLimit headers it answers with, and a refusal past the limit. */
  async function count(keyId: string, cls: LimitClass): Promise<{ decision: RateDecision; headers: Record<string, string> }> {
    const decision = await limiter.consume(keyId, cls);
    const headers = {
      'ratelimit-limit': String(decision.limit),
      'ratelimit-remaining': String(decision.remaining),
      'ratelimit-reset': String(decision.resetSeconds),
    };
    return { decision, headers };
  }

  /** The guard of a REST route that needs `needed`. */
  function guard(needed: Scope): RouteGuard {
    return async function guard(request, reply) {
      const holder = await identify(request);
      if (needed === WRITE_SCOPE && !holder.scopes.includes(WRITE_SCOPE)) {
        throw new Unauthorized('Invalid API key for this endpoint: the key is read-only and lacks the connector:write scope.');
      }
      request.auth = withPlan(holder);
      const { decision, headers } = await count(holder.keyId, needed === WRITE_SCOPE ? 'write' : 'read');
      if (!decision.allowed) throw new RateLimited(decision.resetSeconds, headers);
      reply.headers(headers);
    };
  }

  return { identify, withPlan, count, guard };
}
