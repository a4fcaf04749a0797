import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { maxHeaderSize } from 'node:http';
import { call, logCollector, setup, type TestContext } from './helpers.js';
import type { FastifyInstance } from 'fastify';
import type { Store } from '../src/store/store.js';

describe('HTTP basics', () => {
  let t: TestContext;
  let key: string;
  before(async () => {
    t = await setup();
    key = (await t.make.key((await t.make.user()).id)).secret;
  });
  after(() => t.close());

  it('serves /healthz without a key', async () => {
    const res = await call(t.app, 'GET', '/healthz');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok' });
  });

  it('puts an X-Request-Id on every response, keeping a sane one the client sent', async () => {
    const ok = await call(t.app, 'GET', '/v1/me', { key });
    const err = await call(t.app, 'GET', '/v1/me');
    const missing = await call(t.app, 'GET', '/nowhere');
    const writer = (await t.make.key((await t.make.user()).id, { write: true })).secret;
    const others = [
      await call(t.app, 'HEAD', '/v1/me', { key }),
      await call(t.app, 'GET', '/v1/documents?limit=0', { key }),
      await call(t.app, 'GET', `/v1/documents/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`, { key }),
      await call(t.app, 'POST', '/v1/documents', { key: writer, body: { title: 'Stamped', contentMarkdown: 'x' } }),
      await call(t.app, 'POST', '/v1/documents', { key: writer, body: '{not json' }),
      await call(t.app, 'POST', '/v1/documents', { key }),
      await call(t.app, 'DELETE', '/v1/me', { key }),
    ];
    assert.deepEqual(others.map((r) => r.status), [200, 400, 404, 201, 400, 401, 404]);
    for (const res of [ok, err, missing, ...others]) assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    assert.notEqual(ok.headers['x-request-id'], err.headers['x-request-id']);
    const given = await call(t.app, 'GET', '/v1/me', { key, headers: { 'x-request-id': 'trace-123' } });
    assert.equal(given.headers['x-request-id'], 'trace-123');
    const hostile = await call(t.app, 'GET', '/v1/me', { key, headers: { 'x-request-id': 'a b<script>' } });
    assert.notEqual(hostile.headers['x-request-id'], 'a b<script>');
    // A key sent as the request id would be written into every log line of the request.
    for (const keyShaped of [key, `trace-${key}`, `FOL_${key.slice(4)}`]) {
      const res = await call(t.app, 'GET', '/v1/me', { key, headers: { 'x-request-id': keyShaped } });
      assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/, keyShaped);
    }
  });

  it('answers unknown paths and unsupported methods with 404 in the error envelope', async () => {
    for (const [method, url] of [
      ['GET', '/'],
      ['GET', '/v1'],
      ['GET', '/v2/me'],
      ['GET', '/v1/documentz'],
      ['DELETE', '/v1/documents/6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11'],
      ['PUT', '/v1/documents'],
      ['POST', '/v1/me'],
      ['GET', '/v1/documents/'],
      ['PATCH', '/v1/documents/'],
      ['GET', '/v1/projects/'],
      ['GET', '/v1/documents/6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11/revisions/'],
      ['HEAD', '/v1/documents/6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11/revisions/'],
    ] as const) {
      const res = await call(t.app, method, url, { key });
      assert.equal(res.status, 404, `${method} ${url}`);
      assert.equal(res.body.error.code, 'not_found');
      assert.equal(typeof res.body.error.message, 'string');
      assert.equal((await call(t.app, method, url)).status, 404, `${method} ${url} without a key`);
    }
  });

  it('answers 404 to an unknown path or method whatever body it carries', async () => {
    const id = '6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11';
    for (const [method, url, body, type] of [
      ['POST', '/v1/nowhere', '{bad', 'application/json'],
      ['POST', '/v1/me', '{bad', 'application/json'],
      ['DELETE', `/v1/documents/${id}`, '{bad', 'application/json'],
      ['PUT', `/v1/documents/${id}`, '{"a":1}', 'text/plain'],
      ['POST', '/v1/me', '', 'application/json'],
      ['PUT', `/v1/documents/${id}`, JSON.stringify({ contentMarkdown: 'x'.repeat(t.config.maxBodyBytes) }), 'application/json'],
      // `/documents/` is answered by a route of its own (it is no document's path), before its body is read.
      ['PATCH', '/v1/documents/', '{bad', 'application/json'],
      ['PATCH', '/v1/documents/', '{"a":1}', 'text/plain'],
      ['PATCH', '/v1/documents/', JSON.stringify({ contentMarkdown: 'x'.repeat(t.config.maxBodyBytes) }), 'application/json'],
    ] as const) {
      const res = await call(t.app, method, url, { key, body, headers: { 'content-type': type } });
      assert.equal(res.status, 404, `${method} ${url} ${body.slice(0, 10)}: ${res.raw.slice(0, 200)}`);
      assert.equal(res.body.error.code, 'not_found');
    }
  });

  it('keeps serving when clients reset their connections as it answers their CONNECT', async () => {
    const own = await setup();
    const port = Number(new URL(await own.app.listen({ port: 0, host: '127.0.0.1' })).port);
    const key = (await own.make.key((await own.make.user()).id)).secret;
    try {
      await Promise.all(
        Array.from({ length: 50 }, (_, i) => new Promise<void>((resolve) => {
          const socket = connect(port, '127.0.0.1', () => {
            socket.write(`CONNECT 127.0.0.1:${443 + i} HTTP/1.1\r\nHost: x\r\n\r\n`);
            // Node took its own error listener off the socket it handed over: an error there had none.
            setTimeout(() => socket.resetAndDestroy(), i % 5);
          });
          socket.on('error', () => undefined);
          socket.on('close', () => resolve());
        })),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const res = await rawExchange(port, `GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`);
      assert.equal(res.status, 200, res.text);
    } finally {
      await own.close();
    }
  });

  it('answers requests refused before routing in the error envelope, with a request id and a log line', async () => {
    const logs = logCollector();
    const t = await setup({ deps: { logStream: logs.stream }, env: { LOG_LEVEL: 'info' } });
    try {
      const port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
      const key = (await t.make.key((await t.make.user()).id)).secret;
      const asked = (head: string) => `${head}\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n`;
      for (const [request, status, code, message] of [
        // Fastify: a malformed percent-encoding, in a path that names an endpoint or none.
        [`${asked('GET /v1/documents/%ZZ HTTP/1.1')}\r\n`, 400, 'invalid_request'],
        [`${asked('GET /v1/documents/%C0%80 HTTP/1.1')}\r\n`, 400, 'invalid_request'],
        [`${asked('GET /v1/nowhere%ZZ HTTP/1.1')}\r\n`, 404, 'not_found'],
        // Node's HTTP parser: a method it does not know, a broken Content-Length, headers past its limit.
        [`${asked('FOO /v1/me HTTP/1.1')}\r\n`, 404, 'not_found'],
        [`${asked('POST /v1/documents HTTP/1.1')}Content-Type: application/json\r\nContent-Length: abc\r\n\r\n{}`, 400, 'invalid_request'],
        [`${asked('GET /v1/me HTTP/1.1')}X-Big: ${'x'.repeat(20_000)}\r\n\r\n`, 400, 'invalid_request', `The request line and headers are larger than the limit of ${maxHeaderSize} bytes.`],
        [`${asked(`GET /v1/documents?q=${'x'.repeat(20_000)} HTTP/1.1`)}\r\n`, 400, 'invalid_request', `The request line and headers are larger than the limit of ${maxHeaderSize} bytes.`],
        // Node's HTTP server: CONNECT (it closed the connection unanswered), and no Host header (its bare 400).
        [`${asked('CONNECT /v1/me HTTP/1.1')}\r\n`, 404, 'not_found'],
        [`CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n`, 404, 'not_found'],
        [`GET /v1/me HTTP/1.1\r\nAuthorization: Bearer ${key}\r\n\r\n`, 400, 'invalid_request'],
        // Two Host lines (RFC 9112 §3.2), whatever their case and order: Node read the first alone and served it.
        [`${asked('GET /v1/me HTTP/1.1')}host: y\r\n\r\n`, 400, 'invalid_request'],
        [`GET /v1/me HTTP/1.0\r\nHOST: a\r\nAuthorization: Bearer ${key}\r\nHost: b\r\n\r\n`, 400, 'invalid_request'],
      ] as [string, number, string, string?][]) {
        const res = await rawExchange(port, request);
        const what = request.slice(0, 40);
        assert.equal(res.status, status, `${what}: ${res.text}`);
        assert.match(res.headers['content-type'] ?? '', /^application\/json/, what);
        assert.match(res.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/, what);
        const body = JSON.parse(res.body);
        assert.deepEqual(Object.keys(body), ['error'], what);
        assert.equal(body.error.code, code, what);
        assert.equal(typeof body.error.message, 'string', what);
        // A refusal for a limit names it.
        if (message !== undefined) assert.equal(body.error.message, message, what);
        assert.ok(logs.text().includes(res.headers['x-request-id']!), `${what}: logged with its request id`);
      }
      // An expectation other than 100-continue is ignored as an unknown header is (Node answered a bare 417).
      const expecting = await rawExchange(port, `${asked('GET /v1/me HTTP/1.1')}Expect: something-else\r\n\r\n`);
      assert.equal(expecting.status, 200, expecting.text);
      assert.equal(typeof JSON.parse(expecting.body).key.name, 'string', 'the request was served');
      // HTTP/1.0 needs no Host header.
      const old = await rawExchange(port, `GET /v1/me HTTP/1.0\r\nAuthorization: Bearer ${key}\r\n\r\n`);
      assert.equal(old.status, 200, old.text);
    } finally {
      await t.close();
    }
  });

  it('checks a path it cannot decode, and an id of any length, in the same order as any other request', async () => {
    const limited = await setup({ env: { READ_LIMIT_PER_MIN: '1', WRITE_LIMIT_PER_MIN: '1' } });
    try {
      const port = Number(new URL(await limited.app.listen({ port: 0, host: '127.0.0.1' })).port);
      const planless = (await limited.make.key((await limited.make.user({ plan: null })).id, { write: true })).secret;
      const user = (await limited.make.user()).id;
      const exchange = async (method: string, path: string, key?: string) => {
        const auth = key === undefined ? '' : `Authorization: Bearer ${key}\r\n`;
        const body = method === 'PATCH' ? '{"contentMarkdown":"x","expectedUpdatedAt":null}' : '';
        const type = body === '' ? '' : `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n`;
        const res = await rawExchange(port, `${method} ${path} HTTP/1.1\r\nHost: x\r\n${auth}${type}\r\n${body}`);
        return { ...res, code: res.body === '' ? undefined : (JSON.parse(res.body) as { error: { code: string } }).error.code };
      };
      for (const path of ['/v1/documents/%ZZ', '/v1/documents/%C0%80', `/v1/documents/${'a'.repeat(200)}`, `/v1/documents/${'b'.repeat(5000)}`]) {
        for (const method of ['GET', 'HEAD', 'PATCH']) {
          const what = `${method} ${path.slice(0, 30)}`;
          assert.equal((await exchange(method, path)).status, 401, `${what} without a key`);
          assert.equal((await exchange(method, path, 'fol_x')).status, 401, `${what} with an unknown key`);
          assert.equal((await exchange(method, path, planless)).status, 402, `${what} without a plan`);
          const key = (await limited.make.key(user, { write: true })).secret;
          const first = await exchange(method, path, key);
          assert.equal(first.status, 400, `${what}: ${first.text}`);
          assert.equal(first.headers['ratelimit-limit'], '1', what);
          if (method !== 'HEAD') assert.equal(first.code, 'invalid_request', what);
          const second = await exchange(method, path, key);
          assert.equal(second.status, 429, `${what}: the key's one request is spent`);
          assert.ok(Number(second.headers['retry-after']) >= 1, what);
        }
      }
      const nowhere = await exchange('GET', '/v1/nowhere/%ZZ');
      assert.deepEqual([nowhere.status, nowhere.code], [404, 'not_found']);
      const elsewhere = await exchange('PATCH', '/v1/me/%ZZ', planless);
      assert.deepEqual([elsewhere.status, elsewhere.code], [404, 'not_found']);
    } finally {
      await limited.close();
    }
  });

  it('answers and closes, after REQUEST_TIMEOUT_S, a request whose body stops arriving', async () => {
    const t = await setup({ env: { REQUEST_TIMEOUT_S: '1' } });
    try {
      const port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
      const key = (await t.make.key((await t.make.user()).id, { write: true })).secret;
      const started = Date.now();
      const res = await rawExchange(
        port,
        `POST /v1/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"title":`,
      );
      assert.equal(res.status, 400, res.text);
      assert.equal(JSON.parse(res.body).error.code, 'invalid_request');
      assert.equal(JSON.parse(res.body).error.message, 'The request did not arrive in time: it must arrive whole, body included, within 1 second.');
      assert.ok(Date.now() - started < 10_000, `answered after ${Date.now() - started} ms`);
      // Refused before its body was needed (no key): answered at once, then the connection is closed.
      const refused = await new Promise<{ text: string; ms: number }>((resolve) => {
        const at = Date.now();
        let text = '';
        const socket = connect(port, '127.0.0.1', () => socket.write('POST /v1/documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{'));
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (text += chunk));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve({ text, ms: Date.now() - at }));
      });
      assert.match(refused.text, /^HTTP\/1\.1 401 /);
      assert.ok(refused.ms < 10_000, `closed after ${refused.ms} ms`);
    } finally {
      await t.close();
    }
  });

  it('closes a connection in stages after a refusal sent before the body: a client still sending the body (a proxy) reads the refusal, not a reset', async () => {
    const logs = logCollector();
    const t = await setup({ deps: { logStream: logs.stream }, env: { MAX_BODY_BYTES: '65536', LOG_LEVEL: 'info' } });
    try {
      const port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
      const key = (await t.make.key((await t.make.user()).id, { write: true })).secret;
      const body = 1024 * 1024;
      const head = (headers: string) => `POST /v1/documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body}\r\n${headers}\r\n`;
      // No key, on a connection the client (as nginx does) asks to close.
      const unauthorized = await sendBodyAfterAnswer(port, head('Connection: close\r\n'), body);
      assert.match(unauthorized.text, /^HTTP\/1\.1 401 /);
      assert.equal(unauthorized.error, null, 'the rest of the body is taken, without a reset');
      // A body over MAX_BODY_BYTES, on a connection Folio closes itself.
      const tooLarge = await sendBodyAfterAnswer(port, head(`Authorization: Bearer ${key}\r\n`), body);
      assert.match(tooLarge.text, /^HTTP\/1\.1 400 [^]*connection: close[^]*larger than the limit of 65536 bytes/i);
      assert.equal(tooLarge.error, null, 'the rest of the body is taken, without a reset');
      // A client that stops sending a refused body and closes the connection has had its answer: no other refusal is logged.
      const abandoned = await sendBodyAfterAnswer(port, head(''), 64 * 1024);
      assert.match(abandoned.text, /^HTTP\/1\.1 401 /);
      assert.equal(abandoned.error, null);
      assert.deepEqual(logs.entries().filter((l) => l.statusCode !== undefined).map((l) => [l.msg, l.statusCode]), [
        ['request completed', 401],
        ['request completed', 400],
        ['request completed', 401],
      ]);
    } finally {
      await t.close();
    }
  });

  it('closes the connection of a client that stops taking a large answer, and sends it whole to one that reads', async () => {
    // A large answer must be taken at this rate after the grace, as a large body must arrive.
    const t = await setup({ deps: { bodyArrival: { bytesPerSecond: 10_000_000, graceMs: 200 } } });
    try {
      const port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
      const user = await t.make.user();
      const key = (await t.make.key(user.id)).secret;
      // Its answer, each `"` escaped, is more than the system's buffers take unread.
      const content = '"'.repeat(6_000_000);
      const doc = await t.make.document(user.id, { title: 'Large', content });
      const socket = connect(port, '127.0.0.1', () => socket.write(`GET /v1/documents/${doc.id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`));
      socket.pause();
      socket.on('error', () => undefined);
      try {
        await until(async () => (await connections(t.app)) === 1, 'the request has arrived');
        // The server's side of the connection goes; the client's sees it only once it reads again.
        await until(async () => (await connections(t.app)) === 0, 'the server closed the connection of a client that stopped reading');
      } finally {
        socket.destroy();
      }
      const read = await fetch(`http://127.0.0.1:${port}/v1/documents/${doc.id}`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(read.status, 200);
      assert.equal(((await read.json()) as { contentMarkdown: string }).contentMarkdown, content);
    } finally {
      await t.close();
    }
  });

  it('checks in order: key, plan, rate limit, input, resource, concurrency', async () => {
    const limited = await setup({ env: { READ_LIMIT_PER_MIN: '1', WRITE_LIMIT_PER_MIN: '100' } });
    try {
      const planless = await limited.make.user({ plan: null });
      const planlessKey = (await limited.make.key(planless.id, { write: true })).secret;
      const user = await limited.make.user();
      const readKey = (await limited.make.key(user.id)).secret;
      const writeKey = (await limited.make.key(user.id, { write: true })).secret;
      const badQuery = '/v1/documents?limit=0';
      // 401 before 402: an unknown key on a plan-less request.
      assert.equal((await call(limited.app, 'GET', badQuery, { key: 'fol_x' })).status, 401);
      // 402 before 429 and 400.
      assert.equal((await call(limited.app, 'GET', badQuery, { key: planlessKey })).status, 402);
      // 429 before 400.
      await call(limited.app, 'GET', '/v1/me', { key: readKey });
      assert.equal((await call(limited.app, 'GET', badQuery, { key: readKey })).status, 429);
      // 401 for a read-only key on a write, before 400.
      assert.equal((await call(limited.app, 'POST', '/v1/documents', { key: readKey, body: {} })).status, 401);
      // 400 before 404.
      assert.equal((await call(limited.app, 'PATCH', '/v1/documents/not-a-uuid', { key: writeKey, body: {} })).status, 400);
      const nowhere = '/v1/documents/6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11';
      assert.equal((await call(limited.app, 'PATCH', nowhere, { key: writeKey, body: {} })).status, 400);
      // 404 before 409: a stale expectedUpdatedAt on a missing document.
      const stale = { contentMarkdown: 'x', expectedUpdatedAt: '2020-01-01T00:00:00Z' };
      assert.equal((await call(limited.app, 'PATCH', nowhere, { key: writeKey, body: stale })).status, 404);
      const doc = await limited.make.document(user.id);
      assert.equal((await call(limited.app, 'PATCH', `/v1/documents/${doc.id}`, { key: writeKey, body: stale })).status, 409);
    } finally {
      await limited.close();
    }
  });
});

describe('failures and logs', () => {
  it('answers a crash with 500 internal_error, showing no stack or SQL, and logs it', async () => {
    const t = await appOverStore('info', () => ({
      listDocuments: async () => {
        throw new Error('SQLITE_ERROR: no such column: d.secret_column in SELECT * FROM documents');
      },
      // A store method that throws instead of rejecting.
      listProjects: () => {
        throw new Error('SQLITE_ERROR: no such column: p.hidden_column in SELECT * FROM projects');
      },
    }));
    try {
      for (const [url, cause] of [
        ['/v1/documents', 'secret_column'],
        ['/v1/projects', 'hidden_column'],
      ] as const) {
        const res = await call(t.app, 'GET', url, { key: t.key });
        assert.equal(res.status, 500, url);
        assert.equal(res.body.error.code, 'internal_error', url);
        assert.doesNotMatch(res.raw, /SQLITE|SELECT|_column|at .*\.ts/, url);
        assert.match(t.logs.text(), new RegExp(cause), `${url}: the cause is in the log`);
      }
    } finally {
      await t.close();
    }
  });

  it('never writes an API key to the log', async () => {
    const logs = logCollector();
    const t = await setup({ deps: { logStream: logs.stream }, env: { LOG_LEVEL: 'trace' } });
    try {
      const key = (await t.make.key((await t.make.user()).id, { write: true })).secret;
      await call(t.app, 'GET', '/v1/me', { key });
      await call(t.app, 'GET', '/v1/documents?limit=0', { key });
      await call(t.app, 'POST', '/v1/documents', { key, body: '{bad json' });
      await call(t.app, 'GET', '/v1/nowhere', { key });
      await call(t.app, 'GET', '/v1/me', { key: key.slice(0, -1) + 'Z' });
      const text = logs.text();
      assert.ok(text.length > 0, 'requests were logged');
      assert.equal(text.includes(key.slice(4, 30)), false, 'no part of the key body appears in the log');
    } finally {
      await t.close();
    }
  });

  it('logs one line per request, with its id, method, path, status and time', async () => {
    const logs = logCollector();
    const t = await setup({ deps: { logStream: logs.stream }, env: { LOG_LEVEL: 'info' } });
    try {
      const key = (await t.make.key((await t.make.user()).id)).secret;
      const ok = await call(t.app, 'GET', '/v1/me', { key, headers: { 'x-request-id': 'trace-me-1' } });
      const bad = await call(t.app, 'GET', '/v1/documents?limit=0', { key, headers: { 'x-request-id': 'trace-me-2' } });
      assert.deepEqual([ok.status, bad.status], [200, 400]);
      const lines = logs.entries('trace-me-');
      assert.deepEqual(
        lines.map((l) => [l.reqId, l.msg, l.method, l.url, l.statusCode, l.level]),
        [
          ['trace-me-1', 'request completed', 'GET', '/v1/me', 200, 30],
          ['trace-me-2', 'request completed', 'GET', '/v1/documents?limit=0', 400, 30],
        ],
      );
      for (const l of lines) assert.equal(typeof l.responseTime, 'number');
    } finally {
      await t.close();
    }
  });

  it('logs the key and user of each request, never the words searched for nor a key pasted into the URL', async () => {
    const logs = logCollector();
    const t = await setup({ deps: { logStream: logs.stream }, env: { LOG_LEVEL: 'info' } });
    try {
      const user = await t.make.user();
      const { secret, record } = await t.make.key(user.id);
      const pasted = (await t.make.key(user.id)).secret;
      await call(t.app, 'GET', '/v1/documents?q=confidential%20merger&limit=5', { key: secret, headers: { 'x-request-id': 'who-1' } });
      await call(t.app, 'GET', `/v1/chats?%71=secretword&organizationId=${pasted}`, { key: secret, headers: { 'x-request-id': 'who-2' } });
      await call(t.app, 'GET', `/v1/documents/${pasted}`, { headers: { 'x-request-id': 'who-3' } });
      const lines = logs.entries('who-');
      assert.deepEqual(
        lines.map((l) => [l.reqId, l.url, l.keyId, l.userId]),
        [
          ['who-1', '/v1/documents?q=[redacted]&limit=5', record.id, user.id],
          ['who-2', '/v1/chats?%71=[redacted]&organizationId=fol_[redacted]', record.id, user.id],
          ['who-3', '/v1/documents/fol_[redacted]', undefined, undefined],
        ],
      );
      assert.equal(/confidential|merger|secretword/.test(logs.text()), false);
      assert.equal(logs.text().includes(pasted.slice(4, 30)), false);
    } finally {
      await t.close();
    }
  });

  it('redacts a key pasted into the URL percent-encoded, as a URL encoder may write it', async () => {
    const logs = logCollector();
    const t = await setup({ deps: { logStream: logs.stream }, env: { LOG_LEVEL: 'info' } });
    try {
      const user = await t.make.user();
      const { secret } = await t.make.key(user.id);
      const pasted = (await t.make.key(user.id)).secret;
      // Every character encoded, or only the underscore; upper- or lower-case hex digits.
      const everyByte = [...pasted].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');
      await call(t.app, 'GET', `/v1/me?token=${everyByte}`, { key: secret, headers: { 'x-request-id': 'enc-1' } });
      await call(t.app, 'GET', `/v1/me?token=${pasted.replace('_', '%5f')}`, { key: secret, headers: { 'x-request-id': 'enc-2' } });
      await call(t.app, 'GET', `/v1/documents/${pasted.replace('_', '%5F')}`, { headers: { 'x-request-id': 'enc-3' } });
      const lines = logs.entries('enc-');
      assert.deepEqual(
        lines.map((l) => [l.reqId, l.url]),
        [
          ['enc-1', '/v1/me?token=fol_[redacted]'],
          ['enc-2', '/v1/me?token=fol_[redacted]'],
          ['enc-3', '/v1/documents/fol_[redacted]'],
        ],
      );
      for (const form of [pasted.slice(4, 30), everyByte.slice(12, 60)]) assert.equal(logs.text().includes(form), false, form);
    } finally {
      await t.close();
    }
  });

  it('logs the client address a trusted proxy saw, with TRUST_PROXY, and the connection\'s otherwise', async () => {
    for (const [trust, expected] of [
      [undefined, '10.0.0.7'],
      ['true', '203.0.113.9'],
      ['1', '203.0.113.9'],
      ['10.0.0.0/8', '203.0.113.9'],
      ['192.168.0.1', '10.0.0.7'],
    ] as const) {
      const logs = logCollector();
      const t = await setup({ deps: { logStream: logs.stream }, env: { LOG_LEVEL: 'info', ...(trust ? { TRUST_PROXY: trust } : {}) } });
      try {
        await t.app.inject({ method: 'GET', url: '/healthz', remoteAddress: '10.0.0.7', headers: { 'x-forwarded-for': '203.0.113.9', 'x-request-id': 'proxied' } });
        const line = logs
          .text()
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l))
          .find((l) => l.reqId === 'proxied');
        assert.equal(line.remoteAddress, expected, `TRUST_PROXY=${trust}`);
      } finally {
        await t.close();
      }
    }
  });

  it("times a request from its start to its response, and logs Fastify's and Folio's lines about it under its id", async () => {
    const t = await appOverStore('info', (store) => ({
      listDocuments: async (...args) => {
        await new Promise((resolve) => setTimeout(resolve, 60));
        return store.listDocuments(...args);
      },
      getDocument: async () => {
        throw new Error('disk I/O error');
      },
    }));
    try {
      const page = await call(t.app, 'GET', '/v1/documents', { key: t.key, headers: { 'x-request-id': 'timed-1' } });
      const crash = await call(t.app, 'GET', `/v1/documents/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`, {
        key: t.key,
        headers: { 'x-request-id': 'crash-1' },
      });
      assert.deepEqual([page.status, crash.status], [200, 500]);
      const lines = t.lines();
      const timed = lines.find((l) => l.reqId === 'timed-1' && l.msg === 'request completed');
      assert.ok(timed.responseTime >= 55 && timed.responseTime < 5_000, `responseTime ${timed.responseTime} ms covers the 60 ms the store took`);
      // The crash's own line comes from the request's logger, bound to its id, before the request's line.
      assert.deepEqual(
        lines.filter((l) => l.reqId === 'crash-1').map((l) => [l.level, l.msg, l.err?.message, l.statusCode]),
        [
          [50, 'request failed', 'disk I/O error', undefined],
          [30, 'request completed', undefined, 500],
        ],
      );
    } finally {
      await t.close();
    }
  });

  it('writes no line for answered requests below the info level, but still their failures', async () => {
    const t = await appOverStore('warn', () => ({
      listDocuments: async () => {
        throw new Error('disk I/O error');
      },
    }));
    try {
      assert.equal((await call(t.app, 'GET', '/v1/me', { key: t.key })).status, 200);
      assert.equal((await call(t.app, 'GET', '/v1/documents', { key: t.key, headers: { 'x-request-id': 'warn-1' } })).status, 500);
      assert.deepEqual(
        t.lines().map((l) => [l.reqId, l.level, l.msg]),
        [['warn-1', 50, 'request failed']],
      );
    } finally {
      await t.close();
    }
  });
});

/**
 * An app over the test store with some of its methods replaced, logging at
 * `level`, and a key of a user: `lines()` are the log's lines, parsed.
 */
async function appOverStore(level: string, replace: (store: Store) => Partial<Store>) {
  const logs = logCollector();
  const t = await setup({ deps: { logStream: logs.stream }, env: { LOG_LEVEL: level } });
  const key = (await t.make.key((await t.make.user()).id)).secret;
  const { buildApp } = await import('../src/app.js');
  const app = await buildApp({ config: t.config, store: { ...t.store, ...replace(t.store) }, logStream: logs.stream });
  return {
    app,
    key,
    logs,
    lines: () =>
      logs
        .text()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    close: async () => {
      await app.close();
      await t.close();
    },
  };
}

/**
 * Sends a request's head, waits for its answer, then sends `bytes` bytes of
 * its body and closes the connection's sending side, as a proxy that writes
 * the body it buffered does. Resolves once the connection has closed, with
 * what was read and the connection's error, if any (a reset).
 */
function sendBodyAfterAnswer(port: number, head: string, bytes: number): Promise<{ text: string; error: Error | null }> {
  return new Promise((resolve) => {
    // Half-open: the server's end of its side does not end the client's.
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => socket.write(head));
    let text = '';
    let error: Error | null = null;
    let sending = false;
    const send = async () => {
      sending = true;
      // Time for a server that closes at once to have closed.
      await new Promise((r) => setTimeout(r, 100));
      const chunk = Buffer.alloc(64 * 1024, 'a');
      for (let sent = 0; sent < bytes && !socket.destroyed; sent += chunk.length) {
        if (!socket.write(chunk.subarray(0, Math.min(chunk.length, bytes - sent)))) await new Promise((r) => socket.once('drain', r));
      }
      socket.end();
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const [answerHead = '', answerBody = ''] = text.split('\r\n\r\n', 2);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(answerHead)?.[1]);
      if (!sending && text.includes('\r\n\r\n') && Buffer.byteLength(answerBody) >= length) void send();
    });
    socket.on('error', (err) => (error = err));
    socket.on('close', () => resolve({ text, error }));
  });
}

/** Sends `request` as raw bytes on a new connection and reads the answer until the server closes it. */
/** The connections the app's server holds open. */
function connections(app: FastifyInstance): Promise<number> {
  return new Promise((resolve, reject) => app.server.getConnections((err, count) => (err ? reject(err) : resolve(count))));
}

/** Waits until `condition` holds, for at most 20 s. */
async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function rawExchange(port: number, request: string): Promise<{ status: number; headers: Record<string, string>; body: string; text: string }> {
  return new Promise((resolve, reject) => {
    // The request is sent without closing the connection's sending side: a
    // server answering after a database round trip may otherwise see the
    // connection end first. The exchange is read until the answer is whole
    // (by its Content-Length) or the server closes the connection.
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    let done = false;
    const parse = () => {
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      return { status: Number(statusLine.split(' ')[1]), headers, body, text };
    };
    const finish = () => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve(parse());
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const answer = parse();
      const length = Number(answer.headers['content-length']);
      // The answer to HEAD is its head alone.
      const whole = request.startsWith('HEAD ') || (Number.isInteger(length) && Buffer.byteLength(answer.body) >= length);
      if (text.includes('\r\n\r\n') && whole) finish();
    });
    // The server may reset a connection it refused once its answer is out.
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? finish() : reject(err)));
    socket.on('close', finish);
  });
}
