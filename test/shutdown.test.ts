import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import type { Config } from '../src/config.js';
import { openStore } from '../src/store/open.js';
import { factories, freshDatabase, testClock } from './helpers.js';

/** `folio serve` on `config`'s database in a process of its own, on a port the system chooses; resolves once it listens. */
async function startServer(config: Config, env: Record<string, string> = {}) {
  const url = config.database.kind === 'sqlite' ? `sqlite:${config.database.file}` : config.database.url;
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/serve.ts'], {
    env: { ...process.env, DATABASE_URL: url, PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (m) resolve(Number(m[1]));
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`server exited early (${code}): ${output}`)));
  });
  return { child, port, output: () => output };
}

/** On the suite's database: an SQLite file in the SQLite run, a PostgreSQL schema (and the pool's connections) in the PostgreSQL run. */
describe('graceful shutdown', () => {
  it('on SIGTERM, finishes the request in flight, then closes the database cleanly', async () => {
    const database = await freshDatabase();
    const { config } = database;
    let server: ChildProcess | undefined;
    try {
      const setupStore = await openStore(config);
      const make = factories(setupStore, testClock());
      const user = await make.user();
      const { secret } = await make.key(user.id, { write: true });
      await setupStore.close();

      const started = await startServer(config);
      const { child, port } = started;
      server = child;

      const keepAlive = new Agent({ keepAlive: true });
      const body = JSON.stringify({ title: 'Written during shutdown', contentMarkdown: 'Still saved.' });
      const req = request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/documents',
        // A client that keeps its connection for the next request: the server must not wait for it.
        agent: keepAlive,
        headers: {
          authorization: `Bearer ${secret}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          // The server answers "100 Continue" once it has read the headers:
          // the request is then in flight, whatever the machine's load.
          expect: '100-continue',
        },
      });
      const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
        req.on('response', (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on('error', reject);
      });
      req.flushHeaders();
      await once(req, 'continue');
      req.write(body.slice(0, 10));
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(child.exitCode, null, 'still running while a request is in flight');
      // A second signal does not cut the request short (it used to end the process at once).
      child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(child.exitCode, null, 'still running after a second SIGTERM');
      req.end(body.slice(10));

      const res = await response;
      assert.equal(res.status, 201, res.text);
      // PORT 0: the url fields name the port the system chose, not 0.
      assert.ok((JSON.parse(res.text) as { url: string }).url.startsWith(`http://127.0.0.1:${port}/documents/`), res.text);
      // The client keeps its connection; the server closes it and exits (it used to wait up to 72 s).
      const [code] = await Promise.race([
        exited,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still running 10 s after the response: ${started.output()}`)), 10_000)),
      ]);
      keepAlive.destroy();
      assert.equal(code, 0, started.output());
      // The log lines of the last turns before the exit were written too.
      assert.match(started.output(), /"signal":"SIGTERM","msg":"shutting down"/);
      assert.match(started.output(), /"method":"POST","url":"\/v1\/documents",[^\n]*"statusCode":201[^\n]*"msg":"request completed"/);

      if (config.database.kind === 'sqlite') {
        const wal = `${config.database.file}-wal`;
        assert.ok(!existsSync(wal) || statSync(wal).size === 0, 'the WAL was checkpointed by a clean close');
      }
      const check = await openStore(config);
      const docs = await check.listDocuments({ userId: user.id, orgId: null }, { limit: 10 });
      assert.deepEqual(docs.map((d) => d.title), ['Written during shutdown']);
      await check.close();
    } finally {
      // A failed check leaves no server running (nor its connections to the database dropped next).
      if (server && server.exitCode === null && server.signalCode === null) {
        const gone = once(server, 'exit');
        server.kill('SIGKILL');
        await gone;
      }
      await database.drop();
    }
  });

  it('on SIGTERM, does not wait for the rest of a body it has already refused', async () => {
    const database = await freshDatabase();
    const { config } = database;
    let server: ChildProcess | undefined;
    const sockets: Socket[] = [];
    try {
      const started = await startServer(config, { REQUEST_TIMEOUT_S: '60' });
      const { child, port } = started;
      server = child;
      // Without a key, so refused at once; a part of the body sent, the rest never: on a connection to close, and on one to keep.
      for (const connection of ['close', 'keep-alive']) {
        const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
        sockets.push(socket);
        socket.on('error', () => undefined);
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (text += chunk));
        socket.write(`POST /v1/documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\nConnection: ${connection}\r\n\r\n{"title":`);
        for (const deadline = Date.now() + 10_000; !text.includes('\r\n\r\n'); ) {
          assert.ok(Date.now() < deadline, `no answer on a connection to ${connection}: ${started.output()}`);
          await new Promise((r) => setTimeout(r, 20));
        }
        assert.match(text, /^HTTP\/1\.1 401 /);
      }
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await Promise.race([
        exited,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still running 10 s after SIGTERM: ${started.output()}`)), 10_000)),
      ]);
      assert.equal(code, 0, started.output());
    } finally {
      for (const socket of sockets) socket.destroy();
      if (server && server.exitCode === null && server.signalCode === null) {
        const gone = once(server, 'exit');
        server.kill('SIGKILL');
        await gone;
      }
      await database.drop();
    }
  });
});
