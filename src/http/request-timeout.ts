import type { FastifyInstance } from 'fastify';

/**
 * A request must arrive whole within `timeoutMs` (REQUEST_TIMEOUT_S). Node
 * enforces that itself only until a request's headers are in: a body that
 * stops arriving afterwards would hold its connection open for as long as
 * the client keeps it. Such a request is answered as Node answers one whose
 * headers never came (the `clientError` path, errors.ts: 400 in the
 * envelope, then the connection closed); if its answer already went out (a
 * refusal that needed no body), the connection is closed.
 */
export function endStalledRequests(app: FastifyInstance, timeoutMs: number): void {
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
    const socket = raw.socket;
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
    };
    const answered = () => {
      if (arrived()) stop();
    };
    raw.once('end', stop);
    socket.once('close', stop);
    reply.raw.once('finish', answered);
    done();
  });
}
