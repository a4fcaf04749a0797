/**
 * The ceiling: a bare node:http server that answers each request with the
 * exact bytes Folio returned for it (status, headers, body), captured before
 * the run. No routing, parsing, validation, authentication or database: the
 * most any Node.js server could do for those responses on the same core.
 *
 *   tsx bench/ceiling.ts <captured.json> <port>
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

/** Keeps the thread busy for `ms` milliseconds. */
function spin(ms: number) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

export function startCeiling(book: ResponseBook, port: number, busyMicros = 0) {
  const busyMs = busyMicros / 1000;
  const exact = new Map(Object.entries(book.exact).map(([k, v]) => [k, prepare(v)]));
  const byMethod = new Map(Object.entries(book.byMethod).map(([k, v]) => [k, prepare(v)]));
  const server = createServer((req, res) => {
    const found = exact.get(bookKey(req.method!, req.url!, req.headers.authorization ?? '')) ?? byMethod.get(req.method!);
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

if (import.meta.url === `file://${process.argv[1]}`) {
  const book = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as ResponseBook;
  const server = startCeiling(book, Number(process.argv[3]), Number(process.argv[4] ?? 0));
  process.once('SIGTERM', () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
