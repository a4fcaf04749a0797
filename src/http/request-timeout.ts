import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * A request must arrive whole within `timeoutMs` (REQUEST_TIMEOUT_S). Node
 * enforces that itself only until a request's headers are in: a body that
 * stops arriving afterwards would hold its connection open for as long as
 * the client keeps it. Such a request is answered as Node answers one whose
 * headers never came (the `clientError` path, errors.ts: 400 in the
 * envelope, then the connection closed); if its answer already went out (a
 * refusal that needed no body), the connection is closed.
 *
 * A connection that closes after a refusal sent before its body arrived
 * (Folio's refusal of a body over MAX_BODY_BYTES, or any refusal to a client
 * that sent `Connection: close`, as nginx does) is closed in stages (RFC 9112
 * §9.6): the response and the end of Folio's side go out, and what the
 * client still sends is read and dropped until the body is in, the client
 * closes its side, or the time is up. Closed at once, as Node would, the
 * socket answers the client's next bytes with a TCP reset, and a client still
 * sending the body (a reverse proxy) reports a broken connection (nginx and
 * Caddy: 502) in place of Folio's refusal.
 *
 * A server shutting down does not wait for the rest of a body it has
 * already answered: such a connection is closed once its answer has gone
 * out, with those answered later while it shuts down.
 */
export function endStalledRequests(app: FastifyInstance, timeoutMs: number): void {
  // The connections whose request is answered while its body still arrives, each with what closes it.
  const answeredEarly = new Map<Socket, () => void>();
  let shuttingDown = false;
  app.addHook('preClose', async () => {
    shuttingDown = true;
    for (const close of [...answeredEarly.values()]) close();
  });

  app.addHook('onRequest', (request, reply, done) => {
    const { raw } = request;
    // `complete` is false until the whole request is in (an injected request has none: it is whole).
    const arrived = () => raw.complete !== false;
    // A request without a body (RFC 9112 §6.3: no Content-Length or
    // Transfer-Encoding) is whole once its headers are in.
    const bodyless = raw.headers['transfer-encoding'] === undefined && (raw.headers['content-length'] ?? '0') === '0';
    if (bodyless || arrived()) {
      done();
      return;
    }
    const socket = raw.socket as Socket & { destroySoon(): void };
    let closing = false;
    // A client that closes its side after its refusal, the rest of the body
    // unsent, has had its answer: the connection ends quietly, not as a
    // request the HTTP parser refuses (errors.ts). Before Node's own listener.
    const clientDone = () => {
      if (reply.raw.writableFinished) socket.destroy();
    };
    socket.prependOnceListener('end', clientDone);
    const timer = setTimeout(() => {
      stop();
      if (arrived() || socket.destroyed) return;
      if (reply.raw.headersSent) {
        socket.destroy();
        return;
      }
      app.server.emit('clientError', Object.assign(new Error('the request did not arrive in time'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket);
    }, timeoutMs);
    timer.unref();
    // Every listener goes when the request is whole, so that a keep-alive connection gathers none.
    const stop = () => {
      clearTimeout(timer);
      raw.off('end', stop);
      socket.off('close', stop);
      reply.raw.off('finish', answered);
      socket.off('end', clientDone);
      if (!answeredEarly.delete(socket)) return;
      // The socket's own destroySoon again, for the next request on the connection.
      delete (socket as Partial<typeof socket>).destroySoon;
      // Closed once the response has gone out to the socket, as Node would have.
      if (closing) socket.destroySoon();
    };
    const closeNow = () => {
      closing = true;
      stop();
    };
    const answered = () => {
      if (arrived()) {
        stop();
        return;
      }
      // Node closes a connection after its last response with the socket's
      // destroySoon (end, then destroy), in a listener that follows this one;
      // until the body is in, it only ends Folio's side. Only such a socket
      // is changed: an own property on every socket would cost every request.
      socket.destroySoon = () => {
        closing = true;
        socket.end();
      };
      answeredEarly.set(socket, closeNow);
      if (shuttingDown) closeNow();
    };
    raw.once('end', stop);
    socket.once('close', stop);
    // Before Node's own listener, which closes a connection not kept alive.
    reply.raw.prependOnceListener('finish', answered);
    done();
  });
}
