/**
 * What a ratio to the ceiling leaves a server for its own work, on this
 * machine and day: the ceiling (bench/ceiling.ts) again, answering the same
 * captured responses, but first busy for a fixed number of microseconds on
 * each request. The share of the plain ceiling that a given amount of work
 * per request still reaches is the budget behind a ratio target: a target
 * of 60 % is a budget of the work at which this ladder shows 60 %.
 *
 *   npx tsx bench/ladder.ts [--only me,get] [--busy 0,5,10,20,40] [--folio] [--rounds 3] [--duration 5] [--warmup 1] [--docs 100000]
 *
 * With `--folio`, each round measures Folio too (the working tree, as `npm
 * run bench` starts it, on a copy of the data set), so that its share can
 * be read against the ladder's. With `--fastify`, it measures two references
 * as well: the same responses from a bare Fastify app (`fastify`), and from
 * that app writing Folio's log line for each request (`fastify+log`): what
 * the framework and the log line alone leave of the ceiling.
 * It uses the responses captured by the newest finished `npm run bench` of
 * the same data set (its captured.json), and that data set for the load
 * generator's requests.
 * Each round measures every amount of work in turn, in alternating order;
 * the shares are of the same round's plain ceiling (0 µs), their medians
 * printed at the end.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { LoadResult, LoadSpec } from './load.js';
import { build, folioEnv, freePort, freshCopy, loadProcess, pinnedNode, startFlags, waitFor } from './processes.js';
import { failures, medianBusyShares, percent } from './report.js';
import { checkRoundOptions, median, ROUND_ARGS, savedDataSet } from './rounds.js';
import { SCENARIOS } from './scenarios.js';

const ROOT = resolve(import.meta.dirname, '..');
const RESULTS = join(ROOT, 'bench', 'results');
const WORK = join(RESULTS, 'ladder');

const { values: args } = parseArgs({
  options: {
    ...ROUND_ARGS,
    busy: { type: 'string', default: '0,5,10,20,40' },
    folio: { type: 'boolean', default: false },
    fastify: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '3' },
  },
});

if (args.help) {
  process.stdout.write(`npx tsx bench/ladder.ts [options]
  --only a,b        scenarios (default me; any of ${SCENARIOS.map((s) => s.id).join(', ')})
  --busy a,b        microseconds of busy work per request to measure (default 0,5,10,20,40; 0 is always measured)
  --folio           measure Folio (the working tree) in each round too
  --fastify         measure the same responses from a bare Fastify app, without and with Folio's log line, in each round too
  --rounds N        rounds, each measuring every amount of work (default 3)
  --duration S      measured seconds per measurement (default 5)
  --warmup S        warm-up seconds before each measurement (default 1)
  --docs N          the data set of an earlier npm run bench, and its newest finished run's responses (default 100000)
  --connections N   concurrent connections (default 50)
`);
  process.exit(0);
}

const say = (line: string) => process.stderr.write(`${line}\n`);
const { rounds, scenarios } = checkRoundOptions(args);
const busy = [
  0,
  ...args.busy!.split(',').map((b) => {
    const n = Number(b);
    if (b.trim() === '' || !(n >= 0)) throw new Error(`--busy: expected microseconds (0 or more), got "${b}"`);
    return n;
  }),
].filter((b, i, all) => all.indexOf(b) === i);

const { db: dbFile, manifestFile } = savedDataSet(RESULTS, args.docs!);

/** A finished run over the data set of --docs documents: its captured responses answer the requests made from that data set's manifest. */
function capturedFor(dir: string): boolean {
  const results = join(RESULTS, dir, 'results.json');
  if (!existsSync(join(RESULTS, dir, 'captured.json')) || !existsSync(results)) return false;
  return (JSON.parse(readFileSync(results, 'utf8')) as { options?: { docs?: number } }).options?.docs === Number(args.docs);
}
// Run directories are named by their start time, so the newest sorts last.
const runs = existsSync(RESULTS) ? readdirSync(RESULTS).filter((d) => /^\d{4}-/.test(d) && capturedFor(d)) : [];
if (runs.length === 0) throw new Error(`no finished run of ${args.docs} documents with captured responses: run "npm run bench -- --docs ${args.docs}" first`);
const bookFile = join(RESULTS, runs.sort().at(-1)!, 'captured.json');
say(`responses: ${bookFile}`);

mkdirSync(WORK, { recursive: true });
const builtDir = build(ROOT);

/** A step of the ladder (busy microseconds per request), a framework reference (bench/ceiling.ts), or Folio. */
type Subject = number | 'fastify' | 'fastify+log' | 'Folio';

/** Folio's own copy of the data set, fresh for each measurement: the write scenarios change it. */
const folioDb = join(WORK, 'folio.db');

function startServer(subject: Subject, port: number) {
  if (subject !== 'Folio') {
    const mode = subject === 'fastify+log' ? 'fastify-log' : String(subject);
    return pinnedNode(args['server-core']!, [join(builtDir, 'bench', 'ceiling.js'), bookFile, String(port), mode], process.env, 'ignore');
  }
  freshCopy(dbFile, folioDb);
  return pinnedNode(args['server-core']!, [...startFlags(), join(builtDir, 'src', 'cli', 'index.js'), 'serve'], folioEnv(folioDb, port, 'info'), 'ignore');
}

async function measure(scenario: string, subject: Subject): Promise<LoadResult> {
  const port = await freePort();
  const child = startServer(subject, port);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(`${url}/healthz`, child, subject === 'Folio' ? 'Folio' : 'the ceiling server', subject !== 'Folio');
    const spec: LoadSpec = {
      url,
      scenario,
      connections: Number(args.connections),
      warmupSeconds: Number(args.warmup),
      durationSeconds: Number(args.duration),
      manifestFile,
      dbFile: subject === 'Folio' ? folioDb : dbFile,
      serverPid: child.pid,
    };
    return await loadProcess(join(builtDir, 'bench', 'load.js'), args['load-core']!, spec, join(WORK, 'load.json'));
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((done) => child.once('exit', done));
  }
}

const subjects: Subject[] = [...busy, ...(args.fastify ? (['fastify', 'fastify+log'] as const) : []), ...(args.folio ? (['Folio'] as const) : [])];
const label = (x: Subject) => (typeof x === 'number' ? `${x} µs` : x);

for (const scenario of scenarios) {
  const results = new Map<Subject, LoadResult[]>(subjects.map((x) => [x, []]));
  const shares = new Map<Subject, number[]>(subjects.map((x) => [x, []]));
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? subjects : [...subjects].reverse();
    for (const x of order) {
      const r = await measure(scenario, x);
      const failed = failures(r);
      if (failed > 0) say(`  ${label(x)}: ${failed} requests failed (${JSON.stringify(r.statuses)}): figures not to be trusted`);
      results.get(x)!.push(r);
    }
    /** A subject's rate in this round. */
    const got = (x: Subject) => results.get(x)!.at(-1)!.rps;
    for (const x of subjects) shares.get(x)!.push(got(x) / got(0));
    say(`  ${scenario} round ${i + 1}: ${subjects.map((x) => `${label(x)} ${Math.round(got(x))}`).join(', ')} req/s`);
  }
  process.stdout.write(`\n${scenario}: the ceiling with busy work per request (medians of ${rounds} rounds)\n`);
  process.stdout.write('    busy µs   req/s  share  µs/request  cores busy (server/load)\n');
  for (const x of subjects) {
    const r = median(results.get(x)!.map((m) => m.rps));
    const share = median(shares.get(x)!);
    process.stdout.write(`${String(x).padStart(11)} ${String(Math.round(r)).padStart(7)} ${percent(share).padStart(6)} ${(1e6 / r).toFixed(1).padStart(11)}  ${medianBusyShares(results.get(x)!)}\n`);
  }
}
