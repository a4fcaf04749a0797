import {
  LogController,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import { pino, type Logger } from 'pino';
import type { LogDestination } from './turn-destination.js';

/**
 * Folio's logger: JSON lines (pino) at `level`, written to `stream` (pino's
 * standard output by default), with the `authorization` header redacted
 * wherever a line carries one.
 */
export function folioLogger(level: string, stream?: LogDestination): Logger {
  const options = {
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization'], censor: '[redacted]' },
    // Fastify's own lines about a request (LogController's) pass its request
    // and reply as `req` and `res`: a few of their fields, as Fastify's
    // serializers would write them.
    serializers: {
      req: (request: FastifyRequest) => ({ method: request.method, url: request.url, remoteAddress: request.socket?.remoteAddress }),
      res: (reply: FastifyReply) => ({ statusCode: reply.statusCode }),
    },
  };
  return stream ? pino(options, stream) : pino(options);
}

/** Fastify's lines about requests, but none when one comes in; the line of one completed is Folio's (requestLine). */
class FolioLogController extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(): void {}
}

/**
 * Fastify's options for logging through `logger` without handing Fastify a
 * logger of its own. Given one, Fastify follows every response to its end
 * (two listeners, two clock readings and a callback a request) only to log
 * it: 2.6 µs a request on a fast hour, a ninth of `GET /v1/me` (bench/README.md,
 * "What the framework and the log line leave"). Without one, each request's
 * `log` is still a child of `logger` bound to the request's id (made by the
 * factory below, as Fastify makes it), so that Fastify's lines and Folio's
 * about a request carry its id; the server's `log` is `logger`
 * (installLogging).
 */
export function loggingOptions(logger: Logger): Pick<FastifyServerOptions, 'childLoggerFactory' | 'logController'> {
  return {
    childLoggerFactory: (_fastifys, bindings, options) => logger.child(bindings, options),
    logController: new FolioLogController(),
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** When Folio began handling the request (`performance.now()`), for its log line; 0 before that. */
    startedAt: number;
  }
}

/** Makes `logger` the app's `log`, and gives each request the time it began (set by the app's first onRequest hook). */
export function installLogging(app: FastifyInstance, logger: Logger): void {
  app.log = logger;
  app.decorateRequest('startedAt', 0);
}

/**
 * The line of a request answered, written as its response is handed to
 * Node (the app's onSend hook calls it): its id, method, path, status, the
 * time Folio took to produce the response, in milliseconds, and the
 * client's address, as plain fields rather than through Fastify's request
 * and reply serializers, whose getters cost more than the rest of the line.
 * Null when the level leaves out `info` lines. A response that never passes
 * `onSend` (none of Folio's routes hijack a reply) has no such line.
 */
export function requestLine(logger: Logger): ((request: FastifyRequest, reply: FastifyReply) => void) | null {
  if (!logger.isLevelEnabled('info')) return null;
  return (request, reply) => {
    const { startedAt } = request;
    logger.info(
      {
        reqId: request.id,
        method: request.method,
        url: request.url,
        statusCode: reply.statusCode,
        responseTime: startedAt === 0 ? 0 : Math.round((performance.now() - startedAt) * 100) / 100,
        remoteAddress: request.socket?.remoteAddress,
      },
      'request completed',
    );
  };
}
