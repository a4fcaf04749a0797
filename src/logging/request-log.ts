import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';

/**
 * The logger Folio gives Fastify: pino at `level`, writing to `stream`
 * (pino's standard output without one), with the `authorization` header
 * redacted wherever a line carries one.
 */
export function loggerOptions(level: string, stream?: DestinationStream) {
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization'], censor: '[redacted]' },
    ...(stream ? { stream } : {}),
  };
}

/**
 * One log line per request, written by the request's own logger when it
 * completes (its id, method, path, status, time in milliseconds and client
 * address), instead of Fastify's pair of lines per request. Every other log
 * line is Fastify's own, or Folio's.
 */
export class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const fields = {
      method: request.method,
      url: request.url,
      statusCode: reply.statusCode,
      responseTime: Math.round(reply.elapsedTime * 100) / 100,
      remoteAddress: request.socket?.remoteAddress,
    };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else reply.log.info(fields, 'request completed');
  }
}
