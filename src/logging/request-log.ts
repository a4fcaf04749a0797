import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { symbols, type Logger } from 'pino';
import type { LogDestination } from './turn-destination.js';

/**
 * The logger Folio gives Fastify: pino at `level`, writing to `stream`
 * (pino's standard output without one), with the `authorization` header
 * redacted wherever a line carries one.
 */
export function loggerOptions(level: string, stream?: LogDestination) {
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization'], censor: '[redacted]' },
    ...(stream ? { stream } : {}),
  };
}

/** The fields of a request's completion line, in the order the line gives them. */
export interface CompletedRequest {
  method: string;
  url: string;
  statusCode: number;
  /** Milliseconds, two decimals. */
  responseTime: number;
  remoteAddress: string | undefined;
}

/**
 * The completion line as pino would write it through a request's logger
 * whose bindings (pid, hostname, the request id) pino keeps as `chindings`,
 * the JSON text it adds to every line: the same bytes, built as one
 * template instead of by pino's generic walk over a fields object, which
 * (with the escaping of each value and the lookups of serializers and
 * redaction for each key) cost `GET /v1/me` about a tenth of its rate
 * (bench/README.md, "The log line written as pino writes it").
 * test/request-log.test.ts holds it to pino's own output.
 */
export function completedLine(time: number, chindings: string, line: CompletedRequest): string {
  const address = line.remoteAddress === undefined ? '' : `,"remoteAddress":${JSON.stringify(line.remoteAddress)}`;
  const responseTime = Number.isFinite(line.responseTime) ? line.responseTime : null;
  return (
    `{"level":30,"time":${time}${chindings},"method":${JSON.stringify(line.method)},"url":${JSON.stringify(line.url)}` +
    `,"statusCode":${line.statusCode},"responseTime":${responseTime}${address},"msg":"request completed"}\n`
  );
}

/** What a pino logger holds that the completion line needs: its destination and its bindings as JSON text. */
interface PinoParts {
  [symbols.streamSym]: { write(line: string): void };
  [symbols.chindingsSym]: string;
}

/**
 * One log line per request, written when it completes: its id, method,
 * path, status, time and client address, instead of Fastify's pair of lines
 * built by its serializers. Logging was the largest share of a fast
 * request's cost (bench/README.md). Every other log line is Fastify's own,
 * or Folio's, written by pino.
 */
export class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    // Plain fields rather than Fastify's request and reply serializers, whose
    // getters cost more than the rest of the line.
    const fields: CompletedRequest = {
      method: request.method,
      url: request.url,
      statusCode: reply.statusCode,
      responseTime: Math.round(reply.elapsedTime * 100) / 100,
      remoteAddress: request.socket?.remoteAddress,
    };
    if (error) {
      reply.log.error(Object.assign(fields, { err: error }), 'request errored');
      return;
    }
    // Fastify's request loggers are pino's (Folio gives Fastify pino's options: loggerOptions).
    const log = reply.log as unknown as Logger & PinoParts;
    if (!log.isLevelEnabled('info')) return;
    log[symbols.streamSym].write(completedLine(Date.now(), log[symbols.chindingsSym], fields));
  }
}
