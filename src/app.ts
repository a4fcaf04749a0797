import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import { ApiError, InvalidRequest } from './errors.js';
import { systemClock, type Clock } from './domain/time.js';
import { keyChecks } from './http/auth.js';
import { limitBodiesInFlight, SLOWEST_ARRIVAL, type ArrivalRate, type ByteBudget } from './http/body-budget.js';
import { answerBeforeFastify, answerClientError, answerFrameworkError, installErrorHandling, routeGuards } from './http/errors.js';
import { registerOpenApi } from './http/openapi.js';
import { folioMetrics } from './http/metrics.js';
import { endStalledRequests } from './http/request-timeout.js';
import { endStalledResponses } from './http/stalled-responses.js';
import { hookList } from './http/route-hooks.js';
import { validatorCompiler } from './http/validation.js';
import { holdsKeyShape, loggerOptions, RequestLog } from './logging/request-log.js';
import type { DestinationStream } from 'pino';
import { memoryLimiter, type Limiter } from './rate-limit/limiter.js';
import type { Store } from './store/store.js';
import { makeServices } from './api/services.js';
import { meRoutes } from './api/me/routes.js';
import { documentRoutes } from './api/documents/routes.js';
import { projectRoutes } from './api/projects/routes.js';
import { templateRoutes } from './api/templates/routes.js';
import { organizationRoutes } from './api/organizations/routes.js';
import { chatRoutes } from './api/chats/routes.js';
import { revisionRoutes } from './api/revisions/routes.js';
import { mcpEndpoint } from './mcp/endpoint.js';
import { mcpServers } from './mcp/server.js';
import { FOLIO_VERSION } from './version.js';

export interface AppDeps {
  config: Config;
  store: Store;
  limiter?: Limiter;
  clock?: Clock;
  /** Where logs go (default: standard output); tests pass a stream to read them. */
  logStream?: DestinationStream;
  /** The slowest a large body may arrive, and a large answer be taken (default: body-budget.ts's); tests give slow machines more time. */
  bodyArrival?: ArrivalRate;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Large request bodies being read and handled (src/http/body-budget.ts). */
    bodyBudget: ByteBudget;
    /** Counts a request answered outside the routes (http/errors.ts), when metrics are recorded (http/metrics.ts). */
    countUnrouted?: (method: string, status: number) => void;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A body's `__proto__` or `constructor.prototype` keys are dropped like any
 * other unknown field (DESIGN §3), never applied to the parsed object: by
 * Fastify's options and by the JSON parser that checks bodies are UTF-8.
 */
const POISONED_KEYS = 'remove';

/** Believe the nearest `hops` proxies' word for the client's address. */
const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops;

/** Builds the Folio HTTP application. It never listens: main.ts does, tests inject. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, store } = deps;
  const clock = deps.clock ?? systemClock;
  const metrics = folioMetrics(store, config.metricsToken);
  const limiter = metrics.counting(
    deps.limiter ?? memoryLimiter({ readPerMin: config.readLimitPerMin, writePerMin: config.writeLimitPerMin }),
  );

  // The guard of each API route, for the requests the router cannot route.
  const guards = routeGuards();
  const app = Fastify({
    logger: loggerOptions(config.logLevel, deps.logStream),
    logController: new RequestLog(),
    bodyLimit: config.maxBodyBytes,
    onProtoPoisoning: POISONED_KEYS,
    onConstructorPoisoning: POISONED_KEYS,
    requestIdHeader: false,
    // A number of hops, as a function: Fastify's types take no number.
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    // While shutting down, requests already on open connections are served
    // (with Connection: close) rather than refused outside the error envelope.
    return503OnClosing: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      // Every log line of the request carries its id: one shaped like a key
      // (a client's mistake) is not taken, so that no key reaches the log.
      return typeof given === 'string' && REQUEST_ID.test(given) && !holdsKeyShape(given) ? given : randomUUID();
    },
    // Past any request line Node.js reads by default (16 KiB of headers), so
    // that an id of any length is routed, guarded and then refused by its
    // route's validation (DESIGN §2's order).
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 65_536 },
    frameworkErrors: answerFrameworkError(guards),
    clientErrorHandler: answerClientError,
    // Node answers an HTTP/1.1 request without a Host header with a bare 400
    // of its own; the hook below answers it in the envelope instead.
    // A request must arrive whole within REQUEST_TIMEOUT_S: Node answers one
    // whose headers do not (answerClientError), checking every connection
    // this often; endStalledRequests one whose body stops arriving.
    requestTimeout: config.requestTimeoutS * 1000,
    http: { requireHostHeader: false, connectionsCheckingInterval: Math.min(1000, config.requestTimeoutS * 250) },
  }).withTypeProvider<TypeBoxTypeProvider>();
  answerBeforeFastify(app);
  endStalledRequests(app, config.requestTimeoutS * 1000);
  const arrival = deps.bodyArrival ?? SLOWEST_ARRIVAL;
  endStalledResponses(app, arrival);

  app.setValidatorCompiler(validatorCompiler());
  app.removeContentTypeParser(['text/plain']);
  // A JSON body is UTF-8 (RFC 8259): one that is not is refused, rather than
  // read with U+FFFD in place of its bytes and stored so.
  const parseJson = app.getDefaultJsonParser(POISONED_KEYS, POISONED_KEYS);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if (!isUtf8(body as Buffer)) done(new InvalidRequest('The request body is not UTF-8 text.'), undefined);
    else parseJson(request, (body as Buffer).toString('utf8'), done);
  });
  installErrorHandling(app, config.maxBodyBytes);
  app.decorate('bodyBudget', limitBodiesInFlight(app, { capacity: config.bodyBytesInFlight, rate: arrival }));

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // RFC 9112 §3.2: a server answers 400 to an HTTP/1.1 request without
    // one, and to any request with more than one, which Node reads as its
    // first alone while a proxy in front may have read another. (Requests
    // refused before routing, answerFrameworkError, and CONNECT, answered
    // outside Fastify, get their own refusal instead.)
    if (request.raw.headers.host === undefined && request.raw.httpVersionMinor === 1 && request.raw.httpVersionMajor === 1) {
      reply.code(400).send(new InvalidRequest('The request has no Host header, which HTTP/1.1 requires.').toBody());
      return;
    }
    if (hostLines(request.raw.rawHeaders) > 1) {
      reply.code(400).send(new InvalidRequest('The request has more than one Host header; HTTP allows one.').toBody());
      return;
    }
    done();
  });

  metrics.serve(app);

  app.get('/healthz', async () => {
    await store.ping();
    return { status: 'ok' };
  });

  // Ready to serve: the database answers, and so does Redis when limits are shared through it.
  app.get('/readyz', async (request, reply) => {
    try {
      await store.ping();
      await limiter.ready?.();
      return { status: 'ready' };
    } catch (err) {
      request.log.warn({ err }, 'not ready');
      const notReady = new ApiError(503, 'internal_error', 'Not ready: the database or Redis does not answer.');
      return reply.code(notReady.status).send(notReady.toBody());
    }
  });

  await registerOpenApi(app, { reads: config.readLimitPerMin, writes: config.writeLimitPerMin });

  const services = makeServices({ config, store, clock });
  const checks = keyChecks({ config, store, clock, limiter });
  await app.register(mcpEndpoint, { servers: mcpServers(services, FOLIO_VERSION, metrics.toolCall), checks });
  await app.register(
    async (v1) => {
      // Each route with a scope gets the guard as its first onRequest hook.
      const { guard } = checks;
      v1.addHook('onRoute', (route) => {
        const scope = route.config?.scope;
        if (scope === undefined) return;
        const guarded = guard(scope);
        route.onRequest = [guarded, ...hookList(route.onRequest)];
        for (const method of hookList(route.method)) guards.add(method, route.url, guarded);
      });
      await v1.register(meRoutes, { services });
      await v1.register(documentRoutes, { services });
      await v1.register(revisionRoutes, { services });
      await v1.register(projectRoutes, { services });
      await v1.register(templateRoutes, { services });
      await v1.register(organizationRoutes, { services });
      await v1.register(chatRoutes, { services });
    },
    { prefix: '/v1' },
  );

  return app;
}

/** How many Host lines a request's header holds (`rawHeaders` alternates names and values). */
function hostLines(rawHeaders: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') n++;
  }
  return n;
}
