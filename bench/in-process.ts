/**
 * Folio's own cost per request, without sockets or a load generator: the
 * read scenarios' requests sent through Fastify's `inject`, one after
 * another, on a copy of a data set made by `npm run bench`. On a noisy
 * machine this is the steadier way to compare two versions: run it in
 * each checkout, alternately, and compare the best of several rounds.
 *
 *   npx tsx bench/in-process.ts [--docs 100000] [--only me,get] [--requests 3000] [--rounds 3]
 */
import { parseArgs } from 'node:util';
import { appOnCopy } from './app-on-copy.js';
import { readRequests } from './scenarios.js';

const { values: args } = parseArgs({
  options: {
    docs: { type: 'string', default: '100000' },
    only: { type: 'string', default: 'me,list,search,search-rare,get' },
    requests: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '3' },
  },
});

const { app, manifest, close } = await appOnCopy(args.docs);
const requests = readRequests(manifest);
type ReadScenario = keyof typeof requests;
const only = args.only.split(',') as ReadScenario[];
for (const name of only) if (!(name in requests)) throw new Error(`unknown read scenario "${name}" (${Object.keys(requests).join(', ')})`);
const perRound = Number(args.requests);
const rounds = Number(args.rounds);

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
  await close();
}
