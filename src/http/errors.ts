import { randomUUID } from 'node:crypto';
import { maxHeaderSize, STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifySchemaValidationError } from 'fastify';
import { ApiError, InternalError, InvalidRequest, NotFound } from '../errors.js';
import type { RouteGuard } from './auth.js';
import { BODY_TOO_SLOW } from './body-budget.js';
import { loggedUrl } from '../logging/request-log.js';

/**
 * One place turns every failure into the spec's envelope: API errors,
 * validation, bad or oversized bodies, unknown routes and crashes. A crash is
 * logged in full and answered with a message that shows nothing of it.
 */
export function installErrorHandling(app: FastifyInstance, maxBodyBytes: number): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // A path or method nothing answers is 404 (DESIGN §3) even when the
    // body it carries cannot be read: that body was never asked for.
    const apiError = request.is404 ? notFound(request) : toApiError(err, maxBodyBytes, request.query);
    if (apiError instanceof InternalError) request.log.error({ err }, 'request failed');
    return reply.code(apiError.status).headers(apiError.headers).send(apiError.toBody());
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => reply.code(404).send(notFound(request).toBody()));
}

const notFound = (request: FastifyRequest) => new NotFound(`No endpoint matches ${request.method} ${request.url.split('?')[0]}.`);

function toApiError(err: FastifyError, maxBodyBytes: number, query: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err.validation) return new InvalidRequest(validationMessage(err, query));
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new InvalidRequest(`The request body is larger than the limit of ${maxBodyBytes} bytes.`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new InvalidRequest('The request body must be JSON, sent with Content-Type: application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new InvalidRequest('The request body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new InvalidRequest('The request body is not valid JSON.');
  }
  if (err instanceof SyntaxError || err.statusCode === 400 || err.statusCode === 413 || err.statusCode === 415) {
    return new InvalidRequest('The request could not be read: check its body and headers.');
  }
  if (err.statusCode === 404) return new NotFound();
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    return new InvalidRequest('The request is not valid.');
  }
  return new InternalError();
}

/** Plainer words for the pattern rules of a few fields. */
const PATTERN_HINTS: Record<string, string | undefined> = {
  contentMarkdown: 'must contain at least one non-whitespace character',
  organizationId: 'must be an organization id starting with "org_"',
};

/** "query parameter limit: must be <= 100.", naming the parameter as the caller sent it. */
function validationMessage(err: FastifyError, query: unknown): string {
  return describeInvalid(err.validation ?? [], err.validationContext ?? 'body', query);
}

/** Where a value that failed its schema came from: a part of an HTTP request, or an MCP tool's arguments. */
export type InputPart = string;

const PART_NAMES: Record<string, string | undefined> = { querystring: 'query parameter', params: 'path parameter', arguments: 'argument' };

/** The message of a schema failure (Ajv's errors, first one first) of the input `part`. */
export function describeInvalid(errors: readonly FastifySchemaValidationError[], context: InputPart, query?: unknown): string {
  const first = errors[0];
  if (!first) return 'The request is not valid.';
  const part = PART_NAMES[context] ?? 'body field';
  const path = first.instancePath.replace(/^\//, '').replaceAll('/', '.');
  // A parameter sent more than once reaches the schema as a list of its values.
  if (context === 'querystring' && Array.isArray((query as Record<string, unknown> | undefined)?.[path])) {
    return `${part} ${path}: must be given once.`;
  }
  const missing = (first.params as { missingProperty?: string }).missingProperty;
  if (missing !== undefined) {
    const where = path === '' ? '' : `${path}.`;
    return `${part} ${where}${missing}: is required.`;
  }
  if (path === '') {
    if (context === 'arguments') return `The arguments ${first.message ?? 'are not valid'}.`;
    return context === 'body' ? `The request body ${first.message ?? 'is not valid'}.` : `The request ${first.message ?? 'is not valid'}.`;
  }
  if (first.keyword === 'const') {
    // One of a few values (`includeSystem`): Ajv reports each one it was not, as "must be equal to constant".
    const allowed = errors.filter((e) => e.keyword === 'const' && e.instancePath === first.instancePath).map((e) => String(e.params.allowedValue));
    return `${part} ${path}: must be ${allowed.join(' or ')}.`;
  }
  const hint = first.keyword === 'pattern' ? PATTERN_HINTS[path.split('.').pop()!] : undefined;
  return `${part} ${path}: ${hint ?? first.message ?? 'is not valid'}.`;
}


/**
 * The guards of the API's routes by method and path, for the requests the
 * router cannot route (below): a route's path parameters match any one
 * segment of a path as it was sent.
 */
export function routeGuards() {
  const routes: { method: string; path: RegExp; guard: RouteGuard }[] = [];
  const segment = (part: string) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return {
    add(method: string, url: string, guard: RouteGuard) {
      routes.push({ method, path: new RegExp(`^${url.split('/').map(segment).join('/')}$`), guard });
    },
    find(method: string, path: string): RouteGuard | undefined {
      return routes.find((route) => route.method === method && route.path.test(path))?.guard;
    },
  };
}

export type RouteGuards = ReturnType<typeof routeGuards>;

/**
 * Fastify's `frameworkErrors`: a request the router cannot route, because
 * its path holds a malformed percent-encoding (`/v1/documents/%ZZ`), or a
 * path parameter past the router's length (app.ts sets it past any request
 * line Node.js reads by default). It is checked as its route would check
 * it, in DESIGN §2's order: the key, plan and rate limit of the endpoint its
 * path names come first (401, 402, 429), then the path is `400`; a path that
 * names no endpoint is `404`. The answer is in the envelope with its request
 * id. Such a reply passes none of Fastify's hooks, the request log's
 * included, so its log line is written here.
 */
const UNROUTABLE: Record<string, string> = {
  FST_ERR_BAD_URL: 'The request path is not valid: it holds a malformed percent-encoding.',
  FST_ERR_MAX_PARAM_LENGTH: 'A path parameter is longer than any id.',
};

export function answerFrameworkError(guards: RouteGuards) {
  return async (err: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const refusal = UNROUTABLE[err.code];
    const guard = refusal === undefined ? undefined : guards.find(request.method, request.url.split('?')[0]!);
    let error: ApiError;
    try {
      if (refusal === undefined) throw err;
      if (guard !== undefined) await guard(request, reply);
      error = guard === undefined ? notFound(request) : new InvalidRequest(refusal);
    } catch (thrown) {
      error = thrown instanceof ApiError ? thrown : new InternalError();
      if (error instanceof InternalError) request.log.error({ err: thrown }, 'request failed');
    }
    const { method, url } = request;
    const fields = { method, url: loggedUrl(url), statusCode: error.status, remoteAddress: request.ip, keyId: request.caller?.keyId, userId: request.caller?.userId };
    request.log.info(fields, 'request refused before routing');
    request.server.countUnrouted?.(method, error.status);
    reply.code(error.status).header('x-request-id', request.id).headers(error.headers).send(error.toBody());
  };
}

/**
 * Fastify's `clientErrorHandler`: a request that Node's HTTP parser refuses
 * (a method it does not know, headers past its limit, a broken
 * Content-Length, a request that never finished arriving) never reaches
 * Fastify. It is answered here in the envelope, with a request id and a log
 * line, and its connection is closed, as Node does. The status stays among
 * those the spec lists: an unknown method is a path nothing answers (404,
 * DESIGN §3), the rest 400. Folio sends two refusals of its own this way,
 * to a request whose body stops arriving in time: request-timeout.ts's and
 * body-budget.ts's, whose error carries the message.
 */
const PARSER_ERRORS: Record<string, (err: Error, app: FastifyInstance) => ApiError> = {
  HPE_INVALID_METHOD: () => new NotFound('No endpoint answers this method.'),
  // Node's limit (its --max-http-header-size), which app.ts leaves as it is: the request line counts in it.
  HPE_HEADER_OVERFLOW: () => new InvalidRequest(`The request line and headers are larger than the limit of ${maxHeaderSize} bytes.`),
  // REQUEST_TIMEOUT_S, which app.ts gives Node as the server's requestTimeout.
  ERR_HTTP_REQUEST_TIMEOUT: (_err, app) => {
    const seconds = app.server.requestTimeout / 1000;
    return new InvalidRequest(`The request did not arrive in time: it must arrive whole, body included, within ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`);
  },
  [BODY_TOO_SLOW]: (err) => new InvalidRequest(err.message),
};

export function answerClientError(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
  // A connection the client dropped has nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const error =
    (err.code === undefined ? undefined : PARSER_ERRORS[err.code]?.(err, this)) ??
    new InvalidRequest('The request is not valid HTTP: check its request line and headers.');
  // The method of a request the parser could not read is unknown.
  answerOnSocket(this, socket, error, { code: err.code }, 'request refused by the HTTP parser', '');
  socket.destroy(err);
}

/** How long a CONNECT's answer may take to go out before its connection is closed. */
const CONNECT_ANSWER_TIMEOUT_MS = 10_000;

/**
 * What Node's HTTP server would otherwise answer itself, outside the
 * envelope: a CONNECT request (no answer at all: its connection was closed)
 * is a method nothing answers, 404 (DESIGN §3); an `Expect` other than
 * `100-continue` (a bare 417, which the spec does not list) is ignored as
 * any unknown header is, and the request served.
 */
export function answerBeforeFastify(app: FastifyInstance): void {
  app.server.on('connect', (req: IncomingMessage, socket: Socket) => {
    // Node hands the socket over without its own listeners: an error on it
    // (a client that reset the connection) would otherwise stop the
    // process, and one that never reads would hold it open.
    socket.on('error', () => socket.destroy());
    socket.setTimeout(CONNECT_ANSWER_TIMEOUT_MS, () => socket.destroy());
    if (socket.destroyed) return;
    const fields = { method: req.method, url: loggedUrl(req.url ?? ''), remoteAddress: socket.remoteAddress };
    answerOnSocket(app, socket, new NotFound('No endpoint answers this method.'), fields, 'request refused before routing', 'CONNECT');
    socket.destroySoon();
  });
  app.server.on('checkExpectation', (req, res) => app.server.emit('request', req, res));
}

/** Writes `error` in the envelope straight to the socket, with a request id, a log line and a count, and asks to close the connection. */
function answerOnSocket(app: FastifyInstance, socket: Socket, error: ApiError, fields: object, message: string, method: string): void {
  const body = JSON.stringify(error.toBody());
  const id = randomUUID();
  app.log.info({ reqId: id, statusCode: error.status, ...fields }, message);
  app.countUnrouted?.(method, error.status);
  // As Node does: not into the middle of a response going out on this connection.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean; writableEnded?: boolean } | null })._httpMessage;
  if (socket.writable && !(inFlight?.headersSent && !inFlight.writableEnded)) {
    socket.write(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
}
