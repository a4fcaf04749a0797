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
 * Anything shaped like a Folio key (`fol_` and its random characters),
 * wherever it stands in a URL, its characters written as they are or
 * percent-encoded (`fol%5F…`, `%41` for `A`), as a client's URL encoder may
 * write them: the server reads both as the same key.
 */
const KEY_SHAPE = /(?:f|%[46]6)(?:o|%[46]f)(?:l|%[46]c)(?:_|%5f)(?:[0-9a-z]|%3[0-9]|%[46][1-9a-f]|%[57][0-9a]){20,}/i;
/** KEY_SHAPE, every occurrence (for replace). */
const KEY_SHAPED = new RegExp(KEY_SHAPE.source, 'gi');

/** Whether `text` holds anything shaped like a Folio key. */
export const holdsKeyShape = (text: string): boolean => KEY_SHAPE.test(text);

/**
 * A request's URL as the log shows it: a key pasted into a path or a query
 * redacted, and the value of `q` (the words a user searched for) left out.
 */
export function loggedUrl(url: string): string {
  const at = url.indexOf('?');
  const path = at === -1 ? url : url.slice(0, at);
  const query =
    at === -1
      ? ''
      : `?${url
          .slice(at + 1)
          .split('&')
          .map((pair) => (isQ(pair) ? `${pair.slice(0, pair.indexOf('=') + 1 || pair.length)}[redacted]` : pair))
          .join('&')}`;
  return (path + query).replace(KEY_SHAPED, 'fol_[redacted]');
}

/** A `q=…` pair of a query string, however its name is written (`q`, `%71`). */
function isQ(pair: string): boolean {
  const name = pair.split('=', 1)[0]!;
  try {
    return decodeURIComponent(name.replaceAll('+', ' ')) === 'q';
  } catch {
    return false;
  }
}

/**
 * One log line per request, written by the request's own logger when it
 * completes (its id, method, path, status, time in milliseconds, client
 * address, and the key and user it came with), instead of Fastify's pair of
 * lines per request. Every other log line is Fastify's own, or Folio's.
 */
export class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const fields = {
      method: request.method,
      url: loggedUrl(request.url),
      route: request.routeOptions.url,
      statusCode: reply.statusCode,
      responseTime: Math.round(reply.elapsedTime * 100) / 100,
      // The client's address: behind a trusted proxy (TRUST_PROXY), the one the proxy saw.
      remoteAddress: request.ip,
      keyId: request.caller?.keyId,
      userId: request.caller?.userId,
    };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else reply.log.info(fields, 'request completed');
  }
}
