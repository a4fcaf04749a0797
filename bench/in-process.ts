/**
 * Folio's own cost per request, without sockets or a load generator: the
 * read scenarios' requests sent through Fastify's `inject`, one after
 * another, on a copy of a data set made by `npm run bench`. On a noisy
 * machine this is the steadier way to compare two versions: run it in
 * each checkout, alternately, and compare the best of several rounds.
 *
 *   npx tsx bench/in-process.ts [--docs 100000] [--only me,get] [--requests 3000] [--rounds 3]
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import type { Manifest } from './generate.js';
import { readRequests } from './scenarios.js';

const { values: args } = parseArgs({
  options: {
    docs: { type: 'string', default: '100000' },
    only: { type: 'string', default: 'me,list,search,search-rare,get' },
    requests: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '3' },
  },
});

const data = resolve(import.meta.dirname, 'results', 'data');
const manifest = JSON.parse(readFileSync(join(data, `docs-${args.docs}.json`), 'utf8')) as Manifest;
const requests = readRequests(manifest);
type ReadScenario = keyof typeof requests;
const only = args.only.split(',') as ReadScenario[];
for (const name of only) if (!(name in requests)) throw new Error(`unknown read scenario "${name}" (${Object.keys(requests).join(', ')})`);
const perRound = Number(args.requests);
const rounds = Number(args.rounds);

// A copy: requests write the keys' last-used times.
const dir = mkdtempSync(join(tmpdir(), 'folio-in-process-'));
const file = join(dir, 'folio.db');
copyFileSync(join(data, `docs-${args.docs}.db`), file);
const store = openSqliteStore(file);
const config = loadConfig({
  DATABASE_URL: `sqlite:${file}`,
  READ_LIMIT_PER_MIN: '1000000000',
  WRITE_LIMIT_PER_MIN: '1000000000',
  LOG_LEVEL: 'info',
});
const logStream = new Writable({ write: (_chunk, _encoding, done) => done() });
const app = await buildApp({ config, store, logStream });
await app.ready();

try {
  for (const name of only) {
    const list = requests[name];
    const send = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const r = list[i % list.length]!;
        const res = await app.inject({ method: r.method, url: r.path, headers: { authorization: `Bearer ${r.key}` } });
        if (res.statusCode !== 200) throw new Error(`${name}: ${r.method} ${r.path} answered ${res.statusCode}: ${res.body}`);
      }
    };
    await send(Math.min(500, perRound));
    const times: number[] = [];
    for (let k = 0; k < rounds; k++) {
      const start = process.hrtime.bigint();
      await send(perRound);
      times.push(Number(process.hrtime.bigint() - start) / perRound / 1000);
    }
    const fmt = (x: number) => x.toFixed(0);
    process.stdout.write(`${name.padEnd(12)} best ${fmt(Math.min(...times)).padStart(5)} µs/request   rounds ${times.map(fmt).join(', ')}\n`);
  }
} finally {
  await app.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
