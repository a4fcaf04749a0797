import type { FastifyInstance, FastifyReply } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** Writes the responses coalesceWrites holds back, now. */
    writeHeldResponses?: () => void;
    /**
     * Whether `reply` is finished but held back by coalesceWrites. An error
     * raised for it after it was finished (a handler that sends, then
     * throws) must not change it: once written, Fastify would only log it.
     */
    isHeld?: (reply: FastifyReply) => boolean;
  }
}

/** The most finished responses held back at once; the one that reaches it writes them all. */
export const MOST_HELD = 16;

/**
 * Read responses finished during one turn of the event loop are written
 * together: each is held back when it is ready to go out, and the held ones
 * are written, in the order they finished, when the turn's work is done
 * (`setImmediate`) or when `most` of them are waiting, whichever is first.
 * A lone request's response waits for nothing but the end of its own turn.
 *
 * Each write to a client on the same machine (a proxy in front of Folio,
 * or a load generator) runs that client's side of TCP and wakes it; when
 * the client has gone idle between two responses, waking its core costs
 * the writing core dearly on a virtual machine (about 11 µs a wake-up on
 * the benchmark's, a tenth of Folio's core under `GET /v1/me`). Written
 * together, the responses of a turn wake the client once. Unbounded, the
 * holding would make the server wait idle while the client answers a whole
 * turn's responses at once; 16 at a time keeps both busy (bench/README.md,
 * "Writing responses together").
 *
 * Writes are answered as they are: their responses already go out
 * together, once their group commit returns (src/store/sqlite/group-commit.ts),
 * and that happens at the end of a turn, where holding them would keep them
 * until the end of the next one. Streamed responses are not held either.
 *
 * While a response is held, Node and Fastify take it as not yet sent, so
 * whatever else may write to its connection writes the held ones first:
 * the answer to a malformed request pipelined behind a good one
 * (`writeHeldResponses`, errors.ts), and closing, which also marks them
 * `Connection: close`, since Node closes only the keep-alive connections
 * whose responses are finished.
 */
export function coalesceWrites(app: FastifyInstance, most = MOST_HELD) {
  let held: Array<{ reply: FastifyReply; write: () => void }> = [];
  let scheduled = false;
  let closing = false;

  const writeHeld = () => {
    const due = held;
    held = [];
    for (const { reply, write } of due) {
      try {
        if (closing) reply.header('connection', 'close');
        write();
      } catch (err) {
        // What Fastify does when writing a response throws (a header value
        // Node refuses, say): answer 500 if nothing went out yet, else drop
        // the connection, so that no client is left waiting.
        if (!reply.raw.headersSent) reply.send(err as Error);
        else reply.raw.destroy(err as Error);
      }
    }
  };
  const atTurnEnd = () => {
    scheduled = false;
    writeHeld();
  };
  const isHeld = (reply: FastifyReply) => held.some((h) => h.reply === reply);
  app.decorate('writeHeldResponses', writeHeld);
  app.decorate('isHeld', isHeld);
  app.addHook('preClose', (done) => {
    closing = true;
    writeHeld();
    done();
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    // A stream's errors are Fastify's to handle as soon as it has the stream.
    const streamed = typeof (payload as { pipe?: unknown } | null)?.pipe === 'function';
    if ((request.method !== 'GET' && request.method !== 'HEAD') || streamed) {
      done(null, payload);
      return;
    }
    // A second send of a held reply (a handler that sends and also returns)
    // is dropped, as Fastify drops it once a response is out.
    if (isHeld(reply)) return;
    held.push({ reply, write: () => done(null, payload) });
    if (held.length >= most) {
      writeHeld();
    } else if (!scheduled) {
      scheduled = true;
      setImmediate(atTurnEnd);
    }
  });
}
