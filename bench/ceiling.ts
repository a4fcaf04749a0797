/**
 * The ceiling: a bare node:http server that answers each request with the
 * exact bytes Folio returned for it (status, headers, body), captured before
 * the run. No routing, parsing, validation, authentication or database: the
 * most any Node.js server could do for those responses on the same core.
 *
 *   tsx bench/ceiling.ts <captured.json> <port> [busy µs | fastify | fastify-log]
 *
 * With `fastify` the same bytes come from a bare Fastify app instead (one
 * route for every path, no validation, no logger), and with `fastify-log`
 * from that app logging Folio's one line per request as `folio serve` does:
 * references for what the framework and the log line leave of a ratio
 * (bench/ladder.ts --fastify).
 */
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

export interface Captured {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface ResponseBook {
  /** By `METHOD url authorization`. */
  exact: Record<string, Captured>;
  /** For requests never captured one by one (each write is new): one response per method. */
  byMethod: Record<string, Captured>;
}

export const bookKey = (method: string, url: string, authorization: string) => `${method} ${url} ${authorization}`;

interface Prepared {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const prepare = (c: Captured): Prepared => ({ status: c.status, headers: c.headers, body: Buffer.from(c.body) });

/** The book's answer to a request: the one captured for it, else the one for its method. */
function responder(book: ResponseBook): (method: string, url: string, authorization: string | undefined) => Prepared | undefined {
  const exact = new Map(Object.entries(book.exact).map(([k, v]) => [k, prepare(v)]));
  const byMethod = new Map(Object.entries(book.byMethod).map(([k, v]) => [k, prepare(v)]));
  return (method, url, authorization) => exact.get(bookKey(method, url, authorization ?? '')) ?? byMethod.get(method);
}

/** Keeps the thread busy for `ms` milliseconds. */
function spin(ms: number) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

export function startCeiling(book: ResponseBook, port: number, busyMicros = 0) {
  const busyMs = busyMicros / 1000;
  const answer = responder(book);
  const server = createServer((req, res) => {
    const found = answer(req.method!, req.url!, req.headers.authorization);
    const send = () => {
      if (busyMs > 0) spin(busyMs);
      if (!found) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(found.status, found.headers);
      res.end(found.body);
    };
    if (req.method === 'GET') {
      send();
    } else {
      req.resume();
      req.on('end', send);
    }
  });
  server.keepAliveTimeout = 72_000;
  server.listen(port, '127.0.0.1', () => process.stdout.write('listening\n'));
  return server;
}

/** The framework references: the responses of `book` from a bare Fastify app, with Folio's request log line if `logged`. */
export async function startFastify(book: ResponseBook, port: number, logged: boolean) {
  // Loaded only here, so that the plain ceiling stays a bare node:http process.
  const { default: Fastify } = await import('fastify');
  const { loggerOptions, RequestLog } = await import('../src/logging/request-log.js');
  const { turnDestination } = await import('../src/logging/turn-destination.js');
  const answer = responder(book);
  const app = Fastify(logged ? { logger: loggerOptions('info', turnDestination()), logController: new RequestLog() } : { logger: false });
  app.get('/healthz', (_req, reply) => reply.send({ status: 'ok' }));
  app.route({
    method: ['GET', 'POST', 'PATCH'],
    url: '/*',
    handler: (req, reply) => {
      const found = answer(req.method, req.url, req.headers.authorization);
      if (!found) return reply.code(404).send();
      return reply.code(found.status).headers(found.headers).send(found.body);
    },
  });
  await app.listen({ port, host: '127.0.0.1' });
  process.stdout.write('listening\n');
  return app;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const book = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as ResponseBook;
  const [port, mode = '0'] = [Number(process.argv[3]), process.argv[4]];
  if (mode === 'fastify' || mode === 'fastify-log') {
    const app = await startFastify(book, port, mode === 'fastify-log');
    process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
  } else {
    const server = startCeiling(book, port, Number(mode));
    process.once('SIGTERM', () => {
      server.close(() => process.exit(0));
      server.closeAllConnections();
    });
  }
}
