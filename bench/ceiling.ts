/**
 * The ceiling: a bare node:http server that answers each request with the
 * exact bytes Folio returned for it (status, headers, body), captured before
 * the run. No routing, parsing, validation, authentication, logging or
 * database: the most any Node.js server could do for those responses on the
 * same core, which Folio's rate is read against.
 *
 *   tsx bench/ceiling.ts <captured.json> <port>
 */
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';

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

function startCeiling(book: ResponseBook, port: number) {
  const answer = responder(book);
  const server = createServer((req, res) => {
    const found = answer(req.method!, req.url!, req.headers.authorization);
    const send = () => {
      if (!found) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(found.status, found.headers);
      res.end(found.body);
    };
    // A write's body is read to its end, as Folio must, before the answer.
    if (req.method === 'GET') {
      send();
    } else {
      req.resume();
      req.on('end', send);
    }
  });
  // Fastify's default, so that idle connections live as long as Folio's.
  server.keepAliveTimeout = 72_000;
  server.listen(port, '127.0.0.1', () => process.stdout.write('listening\n'));
  return server;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const book = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as ResponseBook;
  const server = startCeiling(book, Number(process.argv[3]));
  process.once('SIGTERM', () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
