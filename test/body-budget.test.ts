import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyInstance } from 'fastify';
import { byteBudget, limitBodiesInFlight, SMALL_BODY_BYTES, type ArrivalRate } from '../src/http/body-budget.js';
import { answerClientError, installErrorHandling } from '../src/http/errors.js';
import { setup, type TestContext } from './helpers.js';

const tick = () => new Promise<void>((resolve) => process.nextTick(resolve));

describe('byteBudget', () => {
  it('grants in arrival order while there is room, and queues the rest', async () => {
    const budget = byteBudget(100);
    const granted: string[] = [];
    const a = budget.acquire(60, 'a', () => granted.push('a'));
    const b = budget.acquire(60, 'b', () => granted.push('b'));
    const c = budget.acquire(10, 'c', () => granted.push('c'));
    // c would fit, but waits behind b: first come, first served.
    assert.deepEqual(granted, ['a']);
    assert.equal(budget.used, 60);
    assert.equal(budget.waiting, 2);
    a();
    assert.equal(budget.used, 70);
    await tick();
    assert.deepEqual(granted, ['a', 'b', 'c']);
    b();
    c();
    assert.equal(budget.used, 0);
  });

  it('grants more than the whole capacity to a request that is alone', async () => {
    const budget = byteBudget(100);
    const granted: string[] = [];
    const small = budget.acquire(10, 'small', () => granted.push('small'));
    const big = budget.acquire(500, 'big', () => granted.push('big'));
    assert.deepEqual(granted, ['small']);
    small();
    await tick();
    assert.deepEqual(granted, ['small', 'big']);
    assert.equal(budget.used, 500);
    big();
    assert.equal(budget.used, 0);
  });

  it('lets the ones behind a waiter that leaves go ahead, and gives back bytes only once', async () => {
    const budget = byteBudget(100);
    const granted: string[] = [];
    const a = budget.acquire(80, 'a', () => granted.push('a'));
    const b = budget.acquire(80, 'b', () => granted.push('b'));
    const c = budget.acquire(20, 'c', () => granted.push('c'));
    b();
    await tick();
    assert.deepEqual(granted, ['a', 'c']);
    assert.equal(budget.waiting, 0);
    b();
    a();
    a();
    assert.equal(budget.used, 20);
    c();
    assert.equal(budget.used, 0);
  });

  it('never grants a request that left between its turn and its grant', async () => {
    const budget = byteBudget(100);
    const granted: string[] = [];
    const a = budget.acquire(100, 'a', () => granted.push('a'));
    const b = budget.acquire(100, 'b', () => granted.push('b'));
    a();
    b();
    await tick();
    assert.deepEqual(granted, ['a']);
    assert.equal(budget.used, 0);
    assert.equal(budget.waiting, 0);
  });

  it("holds one key to half the budget once it holds anything, and lets other keys' bodies past its own", async () => {
    const budget = byteBudget(100);
    const granted: string[] = [];
    const a1 = budget.acquire(40, 'A', () => granted.push('a1'));
    const a2 = budget.acquire(40, 'A', () => granted.push('a2'));
    const b = budget.acquire(40, 'B', () => granted.push('b'));
    // a2 would fit in the room, but A would then hold 80 of 100: B goes first.
    assert.deepEqual(granted, ['a1', 'b']);
    assert.equal(budget.waiting, 1);
    a1();
    await tick();
    assert.deepEqual(granted, ['a1', 'b', 'a2']);
    a2();
    b();
    // A key holding nothing may take any room there is.
    const alone = budget.acquire(90, 'A', () => granted.push('alone'));
    assert.deepEqual(granted.at(-1), 'alone');
    alone();
    assert.equal(budget.used, 0);
  });

  it("lets other keys' bodies past a key's next ones when no two bodies fit together", async () => {
    const budget = byteBudget(100);
    const granted: string[] = [];
    const done = new Map<string, () => void>();
    const send = (name: string, owner: string) => done.set(name, budget.acquire(60, owner, () => granted.push(name)));
    // One key sends three bodies at once, each more than half the budget; two other keys one each, later.
    send('a1', 'A');
    send('a2', 'A');
    send('a3', 'A');
    send('b1', 'B');
    send('c1', 'C');
    send('b2', 'B');
    for (const name of ['a1', 'b1', 'c1', 'a2', 'b2', 'a3']) {
      assert.equal(granted.at(-1), name);
      done.get(name)!();
      await tick();
    }
    assert.equal(budget.used, 0);
    assert.equal(budget.waiting, 0);
  });

  it('tells how long until a body would be let in, if the ones being read arrive at the slowest allowed rate', () => {
    // 1,000 bytes a second after a grace of 2 s: 60 bytes are due within 2.06 s, 30 within 2.03 s.
    const budget = byteBudget(100, { bytesPerSecond: 1000, graceMs: 2000 });
    const a = budget.acquire(60, 'A', () => {});
    const b = budget.acquire(30, 'B', () => {});
    const within = (bytes: number, owner: string) => budget.freeWithinMs(bytes, owner);
    assert.equal(within(10, 'C'), 0);
    assert.ok(Math.abs(within(20, 'C') - 2030) <= 20, `${within(20, 'C')}`);
    assert.ok(Math.abs(within(80, 'C') - 2060) <= 20, `${within(80, 'C')}`);
    // B's own second body must wait for B's first, though there is room.
    assert.ok(Math.abs(within(30, 'B') - 2030) <= 20, `${within(30, 'B')}`);
    a();
    b();
    assert.equal(within(500, 'C'), 0);
  });
});

/** Waits until `condition` holds (the server's state, seen between its events). */
async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(5);
  }
}

interface Sent {
  /** Sends the body on, up to its `end`th byte. */
  sendUpTo(end: number): void;
  /** Sends the rest of the body. */
  finish(): void;
  /** Closes the connection before the body is complete. */
  abort(): void;
  response: Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }>;
  /** Whether a response has arrived yet. */
  answered(): boolean;
}

/** Requests still open when a test ends (one that failed) are closed, so that the server can stop. */
const sent: Sent[] = [];
afterEach(() => {
  for (const s of sent.splice(0)) if (!s.answered()) s.abort();
});

/** A POST whose body is sent only up to `sendFirst` bytes until finish(). */
function post(
  port: number,
  path: string,
  body: string,
  o: { key?: string; sendFirst?: number; chunked?: boolean; agent?: Agent } = {},
): Sent {
  const bytes = Buffer.from(body);
  const req = httpRequest({
    host: '127.0.0.1',
    port,
    path,
    method: 'POST',
    agent: o.agent ?? false,
    headers: {
      'content-type': 'application/json',
      ...(o.chunked ? {} : { 'content-length': String(bytes.length) }),
      ...(o.key ? { authorization: `Bearer ${o.key}` } : {}),
    },
  });
  let done = false;
  const response = new Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }>((resolve, reject) => {
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        done = true;
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), headers: res.headers });
      });
    });
    req.on('error', reject);
  });
  let at = o.sendFirst ?? bytes.length;
  // A request not ended keeps its socket from going back to a keep-alive agent.
  if (at === bytes.length) req.end(bytes);
  else req.write(bytes.subarray(0, at));
  response.catch(() => {});
  const result: Sent = {
    sendUpTo: (end) => {
      req.write(bytes.subarray(at, end));
      at = end;
    },
    finish: () => req.end(bytes.subarray(at)),
    abort: () => req.destroy(),
    response,
    answered: () => done,
  };
  sent.push(result);
  return result;
}

/** A document body of exactly `bytes` bytes. */
function documentOf(bytes: number, title: string): string {
  const empty = JSON.stringify({ title, contentMarkdown: '' });
  return JSON.stringify({ title, contentMarkdown: 'x'.repeat(bytes - empty.length) });
}

describe('large request bodies in flight (Folio)', () => {
  let t: TestContext;
  let key: string;
  let port: number;
  const large = 150_000;
  const idle = () => t.app.bodyBudget.used === 0 && t.app.bodyBudget.waiting === 0;
  before(async () => {
    t = await setup({
      env: { MAX_BODY_BYTES: '300000', BODY_BYTES_IN_FLIGHT: '200000', WRITE_LIMIT_PER_MIN: '1000', READ_LIMIT_PER_MIN: '1000' },
      // Bodies held back on purpose are not cut off, however slow the machine running the tests.
      deps: { bodyArrival: { bytesPerSecond: 64 * 1024, graceMs: 120_000 } },
    });
    key = (await t.make.key((await t.make.user()).id, { write: true })).secret;
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = Number(new URL(address).port);
  });
  afterEach(() => until(idle, 'the budget is given back'));
  after(() => t.close());

  it('reads a large body only once the large bodies before it are done, and never holds back small ones', async () => {
    const a = post(port, '/v1/documents', documentOf(large, 'A'), { key, sendFirst: 1000 });
    await until(() => t.app.bodyBudget.used === large, 'A has its turn');
    const b = post(port, '/v1/documents', documentOf(large, 'B'), { key });
    await until(() => t.app.bodyBudget.waiting === 1, 'B waits');

    const small = await post(port, '/v1/documents', documentOf(SMALL_BODY_BYTES, 'small'), { key }).response;
    assert.equal(small.status, 201, small.body);
    assert.equal(b.answered(), false);
    assert.equal(t.app.bodyBudget.waiting, 1);

    a.finish();
    const [ra, rb] = await Promise.all([a.response, b.response]);
    assert.equal(ra.status, 201, ra.body);
    assert.equal(rb.status, 201, rb.body);
    for (const [r, title] of [[ra, 'A'], [rb, 'B']] as const) {
      const id = (JSON.parse(r.body) as { id: string }).id;
      const got = await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: { authorization: `Bearer ${key}` } });
      const doc = got.json() as { title: string; contentMarkdown: string };
      assert.equal(doc.title, title);
      assert.equal(doc.contentMarkdown.length, large - JSON.stringify({ title, contentMarkdown: '' }).length);
    }
  });

  it('gives the budget back when a client leaves in the middle of its body', async () => {
    const a = post(port, '/v1/documents', documentOf(large, 'left'), { key, sendFirst: 1000 });
    await until(() => t.app.bodyBudget.used === large, 'A has its turn');
    const b = post(port, '/v1/documents', documentOf(large, 'next'), { key });
    await until(() => t.app.bodyBudget.waiting === 1, 'B waits');
    a.abort();
    const rb = await b.response;
    assert.equal(rb.status, 201, rb.body);
  });

  it('gives the budget back after each response on a kept-alive connection', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (const title of ['first', 'second', 'third']) {
        const r = await post(port, '/v1/documents', documentOf(large, title), { key, agent }).response;
        assert.equal(r.status, 201, r.body);
        await until(idle, `the budget is given back after ${title}`);
      }
    } finally {
      agent.destroy();
    }
  });

  it('counts a body sent in chunks without a length as the largest allowed, once it is past the small size', async () => {
    const a = post(port, '/v1/documents', documentOf(large, 'chunked'), { key, chunked: true, sendFirst: 1000 });
    await sleep(200);
    assert.equal(t.app.bodyBudget.used, 0);
    a.sendUpTo(SMALL_BODY_BYTES + 1000);
    await until(() => t.app.bodyBudget.used === 300_000, 'the chunked body has its turn');
    a.finish();
    const r = await a.response;
    assert.equal(r.status, 201, r.body);
    const id = (JSON.parse(r.body) as { id: string }).id;
    const got = await t.app.inject({ method: 'GET', url: `/v1/documents/${id}`, headers: { authorization: `Bearer ${key}` } });
    assert.equal((got.json() as { contentMarkdown: string }).contentMarkdown, JSON.parse(documentOf(large, 'chunked')).contentMarkdown);
  });

  it('never holds back a small body sent in chunks, while a large one sent in chunks holds the budget', async () => {
    const other = (await t.make.key((await t.make.user()).id, { write: true })).secret;
    const a = post(port, '/v1/documents', documentOf(large, 'large'), { key, chunked: true, sendFirst: SMALL_BODY_BYTES + 1000 });
    await until(() => t.app.bodyBudget.used === 300_000, 'the large chunked body has its turn');
    const small = await post(port, '/v1/documents', documentOf(SMALL_BODY_BYTES, 'small'), { key: other, chunked: true }).response;
    assert.equal(small.status, 201, small.body);
    assert.equal(a.answered(), false);
    a.finish();
    assert.equal((await a.response).status, 201);
  });

  it('gives the budget back when a body it let in is refused', async () => {
    const broken = `{"title": "x", "contentMarkdown": "${'y'.repeat(large)}`;
    const r = await post(port, '/v1/documents', broken, { key }).response;
    assert.equal(r.status, 400);
    assert.equal((JSON.parse(r.body) as { error: { code: string } }).error.code, 'invalid_request');
  });

  it("lets another user's large write in while one key holds idle uploads", async () => {
    // The budget here is 200,000 bytes: two idle uploads of 100,000 from one
    // key would fill it, and every other key's large body would wait.
    const other = (await t.make.key((await t.make.user()).id, { write: true })).secret;
    const a1 = post(port, '/v1/documents', documentOf(100_000, 'idle 1'), { key, sendFirst: 1000 });
    await until(() => t.app.bodyBudget.used === 100_000, 'the first idle upload has its turn');
    const a2 = post(port, '/v1/documents', documentOf(100_000, 'idle 2'), { key, sendFirst: 1000 });
    await until(() => t.app.bodyBudget.waiting === 1, "the key's second upload waits");
    const started = Date.now();
    const b = await post(port, '/v1/documents', documentOf(100_000, 'other user'), { key: other }).response;
    assert.equal(b.status, 201, b.body);
    assert.ok(Date.now() - started < 4000, `the other user's write waited ${Date.now() - started} ms`);
    a1.finish();
    a2.finish();
    assert.equal((await a1.response).status, 201);
    assert.equal((await a2.response).status, 201);
  });

  it('refuses a request without a valid key before it takes a turn', async () => {
    const a = post(port, '/v1/documents', documentOf(large, 'holder'), { key, sendFirst: 1000 });
    await until(() => t.app.bodyBudget.used === large, 'A has its turn');
    const anonymous = await post(port, '/v1/documents', documentOf(large, 'anon')).response;
    assert.equal(anonymous.status, 401);
    assert.equal(t.app.bodyBudget.waiting, 0);
    a.finish();
    assert.equal((await a.response).status, 201);
  });
});

describe('large request bodies in flight (time limits)', () => {
  const apps: FastifyInstance[] = [];
  /** A bare app that echoes the size of the JSON it was sent, behind the budget. */
  async function echo(limits: { waitMs: number; rate: ArrivalRate }) {
    const app = Fastify({ bodyLimit: 300_000, clientErrorHandler: answerClientError });
    apps.push(app);
    installErrorHandling(app, 300_000);
    const budget = limitBodiesInFlight(app, { capacity: 200_000, ...limits });
    app.post('/echo', async (request) => ({ bytes: JSON.stringify(request.body).length }));
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    return { budget, port: Number(new URL(address).port) };
  }
  after(() => Promise.all(apps.map((app) => app.close())));

  it('refuses a body that waited too long with 429 rate_limited and Retry-After, in the envelope', async () => {
    // A's 150,000 bytes are due within 8.5 s + 1.5 s of its turn at the slowest: B, refused about 0.2 s after, is told 10 s.
    const { budget, port } = await echo({ waitMs: 200, rate: { bytesPerSecond: 100_000, graceMs: 8500 } });
    const a = post(port, '/echo', documentOf(150_000, 'A'), { sendFirst: 1000 });
    await until(() => budget.used === 150_000, 'A has its turn');
    const b = await post(port, '/echo', documentOf(150_000, 'B')).response;
    assert.equal(b.status, 429);
    const body = JSON.parse(b.body) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'rate_limited');
    // 9 s only if B's refusal came more than a second late.
    const seconds = b.headers['retry-after'];
    assert.ok(seconds === '10' || seconds === '9', `Retry-After: ${seconds}`);
    assert.equal(body.error.message, `The server is busy reading other large request bodies. Retry after ${seconds} seconds.`);
    assert.equal(budget.waiting, 0);
    a.finish();
    const ra = await a.response;
    assert.equal(ra.status, 200);
    assert.deepEqual(JSON.parse(ra.body), { bytes: 150_000 });
  });

  it("tells the truth in Retry-After: retried then, a body is let in though the one before it stalled", async () => {
    // The stalled body is due within 1.5 s + 1 s; it is cut off soon after 1.5 s.
    const { budget, port } = await echo({ waitMs: 100, rate: { bytesPerSecond: 150_000, graceMs: 1500 } });
    const stalled = post(port, '/echo', documentOf(150_000, 'stalled'), { sendFirst: 1000 });
    await until(() => budget.used === 150_000, 'the stalled body has its turn');
    const refused = await post(port, '/echo', documentOf(150_000, 'B')).response;
    assert.equal(refused.status, 429);
    const seconds = Number(refused.headers['retry-after']);
    assert.ok(seconds >= 2 && seconds <= 3, `Retry-After: ${seconds}`);
    await sleep(seconds * 1000);
    const retried = await post(port, '/echo', documentOf(150_000, 'B')).response;
    assert.equal(retried.status, 200, retried.body);
    assert.equal((await stalled.response).status, 400);
  });

  it('answers a body that stalls after its turn 400, closes its connection, and lets the next one in', async () => {
    const { budget, port } = await echo({ waitMs: 5000, rate: { bytesPerSecond: 100_000, graceMs: 300 } });
    const stalled = post(port, '/echo', documentOf(150_000, 'stalled'), { sendFirst: 1000 });
    await until(() => budget.used === 150_000, 'the stalled body has its turn');
    const next = post(port, '/echo', documentOf(150_000, 'next'));
    const refused = await stalled.response;
    assert.equal(refused.status, 400);
    assert.equal(refused.headers.connection, 'close');
    assert.deepEqual(JSON.parse(refused.body), {
      error: { code: 'invalid_request', message: 'The request body arrived too slowly: a large body must keep arriving at 98 KiB/s or faster.' },
    });
    const r = await next.response;
    assert.equal(r.status, 200);
    await until(() => budget.used === 0, 'the budget is given back');
  });

  it('refuses a large body sent in chunks that waited too long with 429, and closes its connection', async () => {
    const { budget, port } = await echo({ waitMs: 200, rate: { bytesPerSecond: 100_000, graceMs: 8500 } });
    const a = post(port, '/echo', documentOf(150_000, 'A'), { sendFirst: 1000 });
    await until(() => budget.used === 150_000, 'A has its turn');
    // B's turn is refused while most of its body is still to come: the client is not left sending it.
    const b = await post(port, '/echo', documentOf(150_000, 'B'), { chunked: true, sendFirst: SMALL_BODY_BYTES + 1000 }).response;
    assert.equal(b.status, 429);
    assert.equal(b.headers.connection, 'close');
    assert.equal((JSON.parse(b.body) as { error: { code: string } }).error.code, 'rate_limited');
    assert.equal(budget.waiting, 0);
    a.finish();
    assert.equal((await a.response).status, 200);
  });

  it('keeps reading a body that arrives slowly but at the allowed rate', async () => {
    // 150,000 bytes in 15 pieces, one every 100 ms: 100,000 bytes a second against 20,000 allowed.
    const { port } = await echo({ waitMs: 5000, rate: { bytesPerSecond: 20_000, graceMs: 300 } });
    const slow = post(port, '/echo', documentOf(150_000, 'slow'), { sendFirst: 10_000 });
    for (let end = 20_000; end < 150_000; end += 10_000) {
      await sleep(100);
      slow.sendUpTo(end);
    }
    slow.finish();
    assert.equal((await slow.response).status, 200);
  });

  it('gives the bytes back once the answer is ready, before it is sent', async () => {
    const app = Fastify({ bodyLimit: 300_000 });
    apps.push(app);
    const budget = limitBodiesInFlight(app, { capacity: 200_000 });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    // A later onSend hook holds the answer back, as a client that does not read it would.
    let handled = false;
    app.post('/held', { onSend: async () => gate }, async () => {
      handled = true;
      assert.equal(budget.used, 150_000);
      return { ok: true };
    });
    const port = Number(new URL(await app.listen({ port: 0, host: '127.0.0.1' })).port);
    const held = post(port, '/held', documentOf(150_000, 'held'));
    await until(() => handled && budget.used === 0, 'the body is handled and its bytes given back');
    assert.equal(held.answered(), false);
    open();
    assert.equal((await held.response).status, 200);
  });
});
