/**
 * The server's memory under large request bodies and answers: Folio, built
 * and started as `npm start` runs it (pinned to core 0) on a fresh
 * database, receives rounds of POST /v1/documents with bodies just under
 * MAX_BODY_BYTES, all sent at once, then rounds of reads of one such
 * document, by GET /v1/documents/{id} and by MCP's get_document, and the
 * script prints the server's peak RSS in each round, sampled every 20 ms.
 * Extra arguments after `--` go to Folio as environment variables, to
 * compare settings:
 *
 *   npx tsx bench/large-bodies.ts [--concurrent 50] [--rounds 2] [-- BODY_BYTES_IN_FLIGHT=67108864]
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { generateKey, hashKey, lastFour } from '../src/domain/keys.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import { freePort, startFlags, waitFor, withRss } from './processes.js';

const { values: args, positionals } = parseArgs({
  options: {
    concurrent: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '2' },
  },
  allowPositionals: true,
});
const ROOT = resolve(import.meta.dirname, '..');
const MAX_BODY_BYTES = 5 * 1024 * 1024;

const build = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
if (build.status !== 0) throw new Error('build failed');

const dir = mkdtempSync(join(tmpdir(), 'folio-large-bodies-'));
const file = join(dir, 'folio.db');
const now = new Date().toISOString();
const store = openSqliteStore(file);
const user = await store.createUser({ email: 'bodies@example.com', name: null, plan: 'pro', now });
const key = generateKey();
await store.createKey({ userId: user.id, name: 'bench', canWrite: true, hash: hashKey(key), last4: lastFour(key), now });
await store.close();

const port = await freePort();
const extraEnv = Object.fromEntries(positionals.map((p) => p.split('=', 2) as [string, string]));
const server = spawn('taskset', ['-c', '0', process.execPath, ...startFlags(), join(ROOT, 'dist', 'cli', 'index.js'), 'serve'], {
  env: {
    ...process.env,
    DATABASE_URL: `sqlite:${file}`,
    HOST: '127.0.0.1',
    PORT: String(port),
    WRITE_LIMIT_PER_MIN: '1000000',
    READ_LIMIT_PER_MIN: '1000000',
    LOG_LEVEL: 'warn',
    ...extraEnv,
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
// taskset execs node, so the child's pid is the server's.
const pid = server.pid!;

try {
  await waitFor(`${base}/healthz`, server, 'Folio');
  const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu'.split(' ');
  let text = '';
  for (let i = 0; text.length < MAX_BODY_BYTES - 4096; i++) text += `${words[i % words.length]} `;
  const body = JSON.stringify({ title: 'Large', contentMarkdown: text });
  const { rssMb: idle } = await withRss(pid, async () => {});
  const started = Date.now();
  console.log(`${args.concurrent} bodies of ${(body.length / 1048576).toFixed(1)} MiB at once, ${args.rounds} rounds; idle RSS ${idle.toFixed(0)} MB`);
  const send = async () => {
    const res = await fetch(`${base}/v1/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body,
    });
    await res.arrayBuffer();
    return res.status;
  };
  const rounds = async (what: string, request: () => Promise<number>) => {
    for (let round = 1; round <= Number(args.rounds); round++) {
      const { result: statuses, rssMb: peak } = await withRss(pid, () => Promise.all(Array.from({ length: Number(args.concurrent) }, request)), 20);
      const counts = statuses.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
      console.log(`${what}, round ${round}: statuses ${JSON.stringify(counts)}, peak RSS ${peak.toFixed(0)} MB, ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  };
  await rounds('POST', send);
  const created = await fetch(`${base}/v1/documents`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
  const { id } = (await created.json()) as { id: string };
  const read = (url: string, init: RequestInit) => async () => {
    const res = await fetch(url, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers } });
    await res.arrayBuffer();
    return res.status;
  };
  await rounds('GET', read(`${base}/v1/documents/${id}`, {}));
  const toolCall = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_document', arguments: { id } } };
  const mcp = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
  await rounds('MCP get_document', read(`${base}/mcp`, { method: 'POST', headers: mcp, body: JSON.stringify(toolCall) }));
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
