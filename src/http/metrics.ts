import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { bearerToken } from '../domain/keys.js';
import { Unauthorized } from '../errors.js';
import type { Limiter } from '../rate-limit/limiter.js';
import type { Store } from '../store/store.js';

/** What the app records for /metrics; without METRICS_TOKEN nothing is served, and so nothing is recorded. */
export interface FolioMetrics {
  /** The limiter, counting its refusals. */
  counting(limiter: Limiter): Limiter;
  toolCall(tool: string, outcome: string): void;
  /** Counts every answered request (those outside the routes through app.countUnrouted), and serves `GET /metrics` to `Authorization: Bearer <METRICS_TOKEN>`. */
  serve(app: FastifyInstance): void;
}

const NOT_RECORDED: FolioMetrics = {
  counting: (limiter) => limiter,
  toolCall() {},
  serve() {},
};

/**
 * Folio's Prometheus metrics (DESIGN §9), served to `token` (METRICS_TOKEN),
 * in a registry of each app's own: requests by route pattern, method and
 * status, their duration, refusals by rate limit, MCP tool calls by tool
 * and outcome, the use of the database's pool of connections
 * (PostgreSQL's), and the process's own metrics (CPU, memory, event loop,
 * handles).
 */
export function folioMetrics(store: Store, token: string | null): FolioMetrics {
  if (token === null) return NOT_RECORDED;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const pool = store.connectionPool?.bind(store);
  if (pool !== undefined) {
    new Gauge({
      name: 'folio_db_pool_connections',
      help: "The database pool's open connections, by state (in_use or idle).",
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const use = pool();
        this.set({ state: 'in_use' }, use.open - use.idle);
        this.set({ state: 'idle' }, use.idle);
      },
    });
    new Gauge({
      name: 'folio_db_pool_waiting',
      help: 'Statements and transactions waiting for a connection of the database pool.',
      registers: [registry],
      collect() {
        this.set(pool().waiting);
      },
    });
    new Gauge({
      name: 'folio_db_pool_max_connections',
      help: 'The most connections the database pool opens (DATABASE_POOL_MAX).',
      registers: [registry],
      collect() {
        this.set(pool().max);
      },
    });
  }
  const requests = new Counter({
    name: 'folio_http_requests_total',
    help: 'Requests answered, by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'folio_http_request_duration_seconds',
    help: 'Time from a request\'s arrival to its answer, by route pattern and method.',
    labelNames: ['route', 'method'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'folio_rate_limit_refusals_total',
    help: 'Requests refused for a key past its rate limit, by class (read or write).',
    labelNames: ['class'] as const,
    registers: [registry],
  });
  const toolCalls = new Counter({
    name: 'folio_mcp_tool_calls_total',
    help: 'MCP tool calls, by tool and outcome (ok or the error code).',
    labelNames: ['tool', 'outcome'] as const,
    registers: [registry],
  });

  return {
    counting(limiter: Limiter): Limiter {
      return {
        ...limiter,
        async consume(keyId, cls) {
          const decision = await limiter.consume(keyId, cls);
          if (!decision.allowed) refusals.inc({ class: cls });
          return decision;
        },
      };
    },
    toolCall(tool: string, outcome: string): void {
      toolCalls.inc({ tool, outcome });
    },
    serve(app: FastifyInstance): void {
      // Requests answered outside the routes (refused before routing, or by the HTTP parser: errors.ts), under `unrouted`.
      app.decorate('countUnrouted', (method: string, status: number) => requests.inc({ route: 'unrouted', method, status: String(status) }));
      // Every answered request, under its route pattern (`unmatched` for paths no route answers).
      app.addHook('onResponse', (request, reply, done) => {
        const route = request.routeOptions.url ?? 'unmatched';
        requests.inc({ route, method: request.method, status: String(reply.statusCode) });
        duration.observe({ route, method: request.method }, reply.elapsedTime / 1000);
        done();
      });
      const expected = Buffer.from(token);
      app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
        const given = Buffer.from(bearerToken(request.headers.authorization) ?? '');
        if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
          throw new Unauthorized('Send the metrics token as "Authorization: Bearer <METRICS_TOKEN>".', { 'www-authenticate': 'Bearer' });
        }
        return reply.type(registry.contentType).send(await registry.metrics());
      });
    },
  };
}
