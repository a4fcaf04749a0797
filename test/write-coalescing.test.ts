import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import Fastify from 'fastify';
import { coalesceWrites, MOST_HELD } from '../src/http/write-coalescing.js';
import { answerClientError, installErrorHandling } from '../src/http/errors.js';

/** A listening app with coalesceWrites and Folio's client-error answer, and one route `/r`. */
async function listening() {
  const app = Fastify({ clientErrorHandler: answerClientError, return503OnClosing: false });
  coalesceWrites(app);
  // Answered within the request's own turn, as Folio answers reads it has at once.
  app.get('/r', () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: (app.server.address() as AddressInfo).port };
}

/** Sends `raw` on a new connection and resolves with everything read until the server closes it. */
function exchange(port: number, raw: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(raw));
    let text = '';
    socket.on('data', (d) => (text += d)).on('error', () => {}).on('close', () => resolve(text));
  });
}

/** An app whose route and last onSend hook note, in order, when each request was handled and when its response went on to be written. */
async function notingApp(most: number) {
  const app = Fastify();
  const events: string[] = [];
  coalesceWrites(app, most);
  app.addHook('onSend', (request, _reply, payload, done) => {
    events.push(`written ${(request.query as { i: string }).i}`);
    done(null, payload);
  });
  const handle = async (request: { query: unknown }) => {
    events.push(`handled ${(request.query as { i: string }).i}`);
    return { ok: true };
  };
  app.get('/r', handle);
  app.post('/r', handle);
  await app.ready();
  return { app, events };
}

describe('coalesceWrites', () => {
  it('writes the read responses finished in one turn together, at most `most` at a time, in order', async () => {
    const { app, events } = await notingApp(4);
    // Runs at the end of this turn, before the end-of-turn writing that the first response schedules.
    setImmediate(() => events.push('turn ended'));
    const responses = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => app.inject(`/r?i=${i}`)));
    assert.deepEqual(
      responses.map((r) => r.json()),
      Array(6).fill({ ok: true }),
    );
    // Every request was handled within the turn; the fourth held response wrote the first four.
    assert.deepEqual(events.filter((e) => !e.startsWith('handled')), [
      'written 1', 'written 2', 'written 3', 'written 4',
      'turn ended',
      'written 5', 'written 6',
    ]);
    assert.ok(events.indexOf('handled 6') < events.indexOf('turn ended'));
    await app.close();
  });

  it('writes a lone response at the end of its own turn, not later', async () => {
    const { app, events } = await notingApp(MOST_HELD);
    setImmediate(() => setImmediate(() => events.push('next turn ended')));
    const response = await app.inject('/r?i=1');
    assert.equal(response.statusCode, 200);
    await new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
    assert.deepEqual(events, ['handled 1', 'written 1', 'next turn ended']);
    await app.close();
  });

  it('answers writes at once: their responses already go out together after their group commit', async () => {
    const { app, events } = await notingApp(4);
    await Promise.all([1, 2, 3].map((i) => app.inject({ method: 'POST', url: `/r?i=${i}`, payload: {} })));
    assert.deepEqual(events, ['handled 1', 'written 1', 'handled 2', 'written 2', 'handled 3', 'written 3']);
    await app.close();
  });

  it('answers 500 rather than leaving the client waiting when writing a held response throws', async () => {
    const app = Fastify();
    coalesceWrites(app);
    app.get('/bad-header', async (_request, reply) => {
      reply.header('x-title', 'naïve ☃'); // Node refuses the header value when the response is written
      return { ok: true };
    });
    const response = await app.inject('/bad-header');
    assert.equal(response.statusCode, 500);
    await app.close();
  });

  it('writes a response once when a handler sends it and the send is repeated while it is held', async () => {
    const app = Fastify();
    coalesceWrites(app);
    let onSendRuns = 0;
    app.addHook('onSend', async () => {
      onSendRuns++;
    });
    app.get('/twice', async (_request, reply) => {
      reply.send({ first: true });
      reply.send({ second: true });
    });
    const response = await app.inject('/twice');
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { first: true });
    assert.equal(onSendRuns, 1);
    await app.close();
  });

  it('does not hold a streamed response, whose errors Fastify must be listening for at once', async () => {
    const app = Fastify();
    coalesceWrites(app);
    app.get('/stream', async () => {
      const stream = new Readable({ read() {} });
      // Fails within the turn, before any end-of-turn writing.
      queueMicrotask(() => queueMicrotask(() => stream.destroy(new Error('the source failed'))));
      return stream;
    });
    const response = await app.inject('/stream');
    assert.equal(response.statusCode, 500);
    await app.close();
  });

  it('answers a good request before refusing a malformed one pipelined behind it', async () => {
    const { app, port } = await listening();
    try {
      const text = await exchange(port, 'GET /r HTTP/1.1\r\nHost: x\r\n\r\nGET /r HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n');
      assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
      assert.match(text, /\{"ok":true\}/);
      // And then the refusal, after the whole first response.
      assert.match(text, /\}HTTP\/1\.1 400 Bad Request\r\n[\s\S]*Connection: close/);
    } finally {
      await app.close();
    }
  });

  it('writes a response held when the server starts closing at once, and closes its connection', async () => {
    const { app, port } = await listening();
    let closedIn = -1;
    // Closing starts in the turn the response is held in.
    app.server.once('request', () => {
      const start = Date.now();
      void app.close().then(() => (closedIn = Date.now() - start));
    });
    const text = await exchange(port, 'GET /r HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(text, /\r\nconnection: close\r\n/i);
    await new Promise((r) => setTimeout(r, 50));
    // Well before the keep-alive timeout (72 s in Folio, 72 s here too by Fastify's default).
    assert.ok(closedIn >= 0 && closedIn < 1000, `closed in ${closedIn} ms`);
  });

  it('leaves a held response as it is when its handler fails after sending it', async () => {
    const app = Fastify();
    coalesceWrites(app);
    installErrorHandling(app, 1024);
    app.get('/r', async (_request, reply) => {
      reply.send({ ok: true });
      throw new Error('failed after sending');
    });
    const response = await app.inject('/r');
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { ok: true });
    await app.close();
  });
});
