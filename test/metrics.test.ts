import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { memoryLimiter } from '../src/rate-limit/limiter.js';
import { call, setup, TEST_DATABASE } from './helpers.js';

const TOKEN = 'metrics-token-0123456789';

describe('/metrics and /readyz', () => {
  it('serves no /metrics without METRICS_TOKEN', async () => {
    const t = await setup();
    try {
      const res = await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().error.code, 'not_found');
    } finally {
      await t.close();
    }
  });

  it('asks for the token, and counts requests by route, rate-limit refusals and MCP tool calls', async () => {
    const t = await setup({ env: { METRICS_TOKEN: TOKEN, READ_LIMIT_PER_MIN: '8' } });
    try {
      for (const authorization of [undefined, 'Bearer wrong-token-0123456789', `Bearer ${TOKEN}x`, TOKEN]) {
        const res = await t.app.inject({ url: '/metrics', headers: authorization === undefined ? {} : { authorization } });
        assert.equal(res.statusCode, 401, String(authorization));
        assert.equal(res.json().error.code, 'unauthorized');
        assert.equal(res.headers['www-authenticate'], 'Bearer');
      }
      const user = await t.make.user();
      const key = (await t.make.key(user.id)).secret;
      const doc = await t.make.document(user.id);
      assert.equal((await call(t.app, 'GET', `/v1/documents/${doc.id}`, { key })).status, 200);
      assert.equal((await call(t.app, 'GET', '/v1/nowhere', { key })).status, 404);
      const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
      const client = new Client({ name: 'metrics-test', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
      await client.callTool({ name: 'get_me', arguments: {} });
      await client.callTool({ name: 'get_document', arguments: { id: '00000000-0000-4000-8000-000000000000' } });
      // Reads: 1 REST, 3 to connect and list nothing but call, 2 tool calls: the limit of 8 is reached by two more.
      for (let i = 0; i < 4; i++) await call(t.app, 'GET', '/v1/me', { key });
      await client.close();
      // Refused outside the routes: a path that does not decode (before routing), a method the HTTP parser does not know, CONNECT.
      assert.equal((await t.app.inject({ url: '/v1/documents/%ZZ' })).statusCode, 401);
      for (const request of ['FROB / HTTP/1.1\r\nHost: x\r\n\r\n', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n']) {
        const socket = connect(Number(new URL(base).port), '127.0.0.1');
        socket.end(request);
        const answer = (await socket.toArray()).join('');
        assert.match(answer, /^HTTP\/1\.1 404 /, request);
      }

      const res = await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.statusCode, 200);
      assert.match(res.headers['content-type'] as string, /^text\/plain; version=0\.0\.4/);
      const text = res.body;
      assert.match(text, /^folio_http_requests_total\{route="\/v1\/documents\/:id",method="GET",status="200"\} 1$/m);
      assert.match(text, /^folio_http_requests_total\{route="unmatched",method="GET",status="404"\} 1$/m);
      assert.match(text, /^folio_http_requests_total\{route="unrouted",method="GET",status="401"\} 1$/m);
      assert.match(text, /^folio_http_requests_total\{route="unrouted",method="",status="404"\} 1$/m);
      assert.match(text, /^folio_http_requests_total\{route="unrouted",method="CONNECT",status="404"\} 1$/m);
      assert.match(text, /^folio_http_requests_total\{route="\/v1\/me",method="GET",status="429"\} [1-9]/m);
      assert.match(text, /^folio_http_request_duration_seconds_count\{route="\/v1\/documents\/:id",method="GET"\} 1$/m);
      assert.match(text, /^folio_rate_limit_refusals_total\{class="read"\} [1-9]/m);
      assert.match(text, /^folio_mcp_tool_calls_total\{tool="get_me",outcome="ok"\} 1$/m);
      assert.match(text, /^folio_mcp_tool_calls_total\{tool="get_document",outcome="not_found"\} 1$/m);
      assert.match(text, /^process_cpu_user_seconds_total /m);
      assert.match(text, /^nodejs_eventloop_lag_seconds /m);
      assert.equal(text.includes(key.slice(4, 30)), false);
    } finally {
      await t.close();
    }
  });

  it("shows the database pool's use on PostgreSQL, and no pool on SQLite's one connection", async () => {
    const t = await setup({ env: { METRICS_TOKEN: TOKEN, DATABASE_POOL_MAX: '3' } });
    try {
      const user = await t.make.user();
      const key = (await t.make.key(user.id)).secret;
      // Requests at once, so that the pool opens more than one connection.
      await Promise.all(Array.from({ length: 8 }, () => call(t.app, 'GET', '/v1/documents', { key })));
      const scrape = async () => (await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body;
      const value = (text: string, pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? Number.NaN);
      const inUse = /^folio_db_pool_connections\{state="in_use"\} (\d+)$/m;
      const waiting = /^folio_db_pool_waiting (\d+)$/m;
      let text = await scrape();
      if (TEST_DATABASE === 'postgres') {
        assert.equal(value(text, /^folio_db_pool_max_connections (\d+)$/m), 3);
        // The key's last use is written without being waited for: once that is done, every open connection is idle.
        for (let i = 0; i < 100 && (value(text, inUse) !== 0 || value(text, waiting) !== 0); i++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          text = await scrape();
        }
        assert.equal(value(text, inUse), 0);
        assert.equal(value(text, waiting), 0);
        const idle = value(text, /^folio_db_pool_connections\{state="idle"\} (\d+)$/m);
        // Eight requests at once opened more than one connection, and no more than the pool's three.
        assert.ok(idle >= 2 && idle <= 3, `idle connections: ${idle}`);
      } else {
        assert.doesNotMatch(text, /^folio_db_pool/m);
      }
    } finally {
      await t.close();
    }
  });

  it('/readyz answers when the database and the limits\' shared store do, and 503 otherwise', async () => {
    const ok = await setup();
    try {
      const res = await ok.app.inject({ url: '/readyz' });
      assert.deepEqual([res.statusCode, res.json()], [200, { status: 'ready' }]);
    } finally {
      await ok.close();
    }
    const limiter = { ...memoryLimiter({ readPerMin: 10, writePerMin: 10 }), ready: () => Promise.reject(new Error('Redis is gone')) };
    const down = await setup({ deps: { limiter } });
    try {
      const res = await down.app.inject({ url: '/readyz' });
      assert.equal(res.statusCode, 503);
      assert.equal(res.json().error.code, 'internal_error');
      assert.equal((await down.app.inject({ url: '/healthz' })).statusCode, 200, 'healthy: the database answers');
    } finally {
      await down.close();
    }
  });
});
