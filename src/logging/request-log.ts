import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * One log line per request, written when it completes: its id, method,
 * path, status, time and client address, instead of Fastify's pair of lines
 * built by its serializers. Logging was the largest share of a fast
 * request's cost (bench/README.md). Every other log line is Fastify's own.
 */
export class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    // Plain fields rather than Fastify's request and reply serializers, whose
    // getters cost more than the rest of the line.
    const fields = {
      method: request.method,
      url: request.url,
      statusCode: reply.statusCode,
      responseTime: Math.round(reply.elapsedTime * 100) / 100,
      remoteAddress: request.socket?.remoteAddress,
    };
    if (error) reply.log.error(Object.assign(fields, { err: error }), 'request errored');
    else reply.log.info(fields, 'request completed');
  }
}
