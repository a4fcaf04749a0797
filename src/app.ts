import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Config } from './config.js';
import { InvalidRequest } from './errors.js';
import { systemClock, type Clock } from './domain/time.js';
import { apiGuard } from './http/auth.js';
import { limitBodiesInFlight, type ByteBudget } from './http/body-budget.js';
import { answerBeforeFastify, answerClientError, answerFrameworkError, installErrorHandling, routeGuards } from './http/errors.js';
import { registerOpenApi } from './http/openapi.js';
import { hookList } from './http/route-hooks.js';
import { illFormedText, type FieldSchema } from './http/well-formed-text.js';
import { loggerOptions, RequestLog } from './logging/request-log.js';
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

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export interface AppDeps {
  config: Config;
  store: Store;
  limiter?: Limiter;
  clock?: Clock;
  /** Where logs go (default: standard output); tests pass a stream to read them. */
  logStream?: DestinationStream;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Large request bodies being read and handled (src/http/body-budget.ts). */
    bodyBudget: ByteBudget;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A body's `__proto__` or `constructor.prototype` keys are dropped like any
 * other unknown field (DESIGN §3), never applied to the parsed object: by
 * Fastify's options and by the JSON parser that checks bodies are UTF-8.
 */
const POISONED_KEYS = 'remove';

/**
 * A UUID is its 36 characters, in either case (RFC 4122 reads them without
 * regard to case); ajv-formats would also take a `urn:uuid:` prefix.
 */
function withUuids(ajv: Ajv): Ajv {
  return ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
}

/**
 * Input validation: query strings and paths are text, so their values are
 * coerced to the schema's types; JSON bodies are not, so `"title": 5` is
 * refused rather than turned into "5". A body that passes its schema must
 * also be Unicode text (src/http/well-formed-text.ts).
 */
function validatorCompiler() {
  const options = { useDefaults: true, strict: false, allErrors: false } as const;
  const bodyAjv = withUuids(addFormats(new Ajv({ ...options, coerceTypes: false })));
  const textAjv = withUuids(addFormats(new Ajv({ ...options, coerceTypes: true })));
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) => {
    if (httpPart !== 'body') return decimalIntegers(textAjv.compile(schema), schema);
    const valid = bodyAjv.compile(schema);
    // Fastify reads the failures from the function's `errors`, as Ajv leaves them.
    const validate = (body: unknown): boolean => {
      const pointer = valid(body) ? illFormedText(body, schema as FieldSchema) : null;
      validate.errors =
        pointer === null
          ? valid.errors
          : [{ instancePath: pointer, schemaPath: '', keyword: 'wellFormed', params: {}, message: 'must be Unicode text; it holds a lone surrogate' }];
      return !validate.errors;
    };
    validate.errors = null as typeof valid.errors;
    return validate;
  };
}

/** An integer as a query or path parameter is written in decimal digits, as the API's examples write it. */
const DECIMAL_INTEGER = /^-?[0-9]+$/;

/**
 * Ajv's coercion reads a parameter as JavaScript's `Number` does, so that
 * `limit=0x10`, `1e1`, `2.0` or ` 4 ` would pass as integers. The schema's
 * integer parameters must be decimal digits (with a sign, so that `-1` is
 * refused as out of range, saying so) before Ajv coerces them.
 */
function decimalIntegers(valid: ValidateFunction, schema: object): ValidateFunction {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const integers = Object.keys(properties).filter((name) => properties[name]!.type === 'integer');
  if (integers.length === 0) return valid;
  const validate = ((data: Record<string, unknown>) => {
    const bad = integers.find((name) => typeof data[name] === 'string' && !DECIMAL_INTEGER.test(data[name]));
    if (bad === undefined) {
      const ok = valid(data);
      validate.errors = valid.errors;
      return ok;
    }
    validate.errors = [
      { instancePath: `/${bad}`, schemaPath: `#/properties/${bad}/type`, keyword: 'type', params: { type: 'integer' }, message: 'must be integer' },
    ];
    return false;
  }) as ValidateFunction;
  validate.errors = null;
  return validate;
}

/** Builds the Folio HTTP application. It never listens: main.ts does, tests inject. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, store } = deps;
  const clock = deps.clock ?? systemClock;
  const limiter =
    deps.limiter ?? memoryLimiter({ readPerMin: config.readLimitPerMin, writePerMin: config.writeLimitPerMin });

  // The guard of each API route, for the requests the router cannot route.
  const guards = routeGuards();
  const app = Fastify({
    logger: loggerOptions(config.logLevel, deps.logStream),
    logController: new RequestLog(),
    bodyLimit: config.maxBodyBytes,
    onProtoPoisoning: POISONED_KEYS,
    onConstructorPoisoning: POISONED_KEYS,
    requestIdHeader: false,
    // While shutting down, requests already on open connections are served
    // (with Connection: close) rather than refused outside the error envelope.
    return503OnClosing: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Past any request line Node.js reads by default (16 KiB of headers), so
    // that an id of any length is routed, guarded and then refused by its
    // route's validation (DESIGN §2's order).
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 65_536 },
    frameworkErrors: answerFrameworkError(guards),
    clientErrorHandler: answerClientError,
    // Node answers an HTTP/1.1 request without a Host header with a bare 400
    // of its own; the hook below answers it in the envelope instead.
    http: { requireHostHeader: false },
  }).withTypeProvider<TypeBoxTypeProvider>();
  answerBeforeFastify(app);

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
  app.decorate('bodyBudget', limitBodiesInFlight(app, { capacity: config.bodyBytesInFlight }));

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // RFC 9112 §3.2: a server answers 400 to an HTTP/1.1 request without
    // one. (Requests refused before routing, answerFrameworkError, and
    // CONNECT, answered outside Fastify, get their own refusal instead.)
    if (request.raw.headers.host === undefined && request.raw.httpVersionMinor === 1 && request.raw.httpVersionMajor === 1) {
      reply.code(400).send(new InvalidRequest('The request has no Host header, which HTTP/1.1 requires.').toBody());
      return;
    }
    done();
  });

  app.get('/healthz', async () => {
    await store.ping();
    return { status: 'ok' };
  });

  await registerOpenApi(app, { reads: config.readLimitPerMin, writes: config.writeLimitPerMin });

  const services = makeServices({ config, store, clock });
  await app.register(
    async (v1) => {
      // Each route with a scope gets the guard as its first onRequest hook.
      const guard = apiGuard({ config, store, clock, limiter });
      v1.addHook('onRoute', (route) => {
        const scope = route.config?.scope;
        if (scope === undefined) return;
        const guarded = guard(scope);
        route.onRequest = [guarded, ...hookList(route.onRequest)];
        for (const method of hookList(route.method)) guards.add(method, route.url, guarded);
      });
      await v1.register(meRoutes, { services });
      await v1.register(documentRoutes, { services });
      await v1.register(projectRoutes, { services });
      await v1.register(templateRoutes, { services });
      await v1.register(organizationRoutes, { services });
      await v1.register(chatRoutes, { services });
    },
    { prefix: '/v1' },
  );

  return app;
}
