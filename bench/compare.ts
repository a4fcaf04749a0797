/**
 * Two versions of Folio over HTTP, in alternating rounds: the working tree
 * against a git revision (default HEAD), both servers running at once on the
 * server core over one copy of the data set of an earlier `npm run bench` (a
 * copy each when a scenario writes), the load generator on the other core.
 * The machine's speed drifts within minutes, so each round measures both, in
 * turns (ABBA…), and what to read is the ratio of the medians and how many
 * rounds agree with it: a difference that single rounds do not agree on
 * needs more and longer rounds.
 *
 *   npx tsx bench/compare.ts [--base REF] [--only me,get] [--rounds 8] [--duration 5] [--warmup 1] [--docs 100000] [-- NAME=value …]
 *
 * With `--together`, each round loads both versions at the same time
 * instead, each by a load generator of its own (both on the load core, each
 * with the given connections): the two servers then share the server core
 * as the kernel shares it between two busy processes, evenly, so that the
 * ratio of their rates is the inverse ratio of their costs per request,
 * measured over the same seconds, whatever the machine's speed did in them.
 * Read it only when both servers' cores were busy (the printed busy shares
 * add up to about 100 %) and the load core was not.
 *
 * Each version runs as it would be deployed from its own checkout: compiled,
 * with its own package.json's Node flags, and with its native addon built if
 * it has one (binding.gyp). Both are loaded by the working tree's load
 * generator. Arguments after `--` are environment variables for the working
 * tree's server only. For reads both versions serve one copy of the data
 * set; a version whose schema is newer than the data set's would upgrade
 * that copy under the other (`--own-copies` gives each a copy of its own
 * then). When a scenario writes, each upgrades its own copy as it starts.
 * A base whose schema is older than the data set's cannot read it: the
 * base's own generator then makes the data set (kept in
 * bench/results/compare/data/ for the next run), and each version has its
 * own copy, the working tree upgrading its copy as it starts; give
 * `--warmup` the seconds that upgrade's aftermath takes (10 for 100,000
 * documents).
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import type { LoadResult, LoadSpec } from './load.js';
import { build, folioEnv, freePort, freshCopy, loadProcess, pinnedNode, removeDatabase, run, startFlags, waitFor } from './processes.js';
import { busyShares, failures, median } from './report.js';
import { SCENARIOS } from './scenarios.js';

const ROOT = resolve(import.meta.dirname, '..');
const RESULTS = join(ROOT, 'bench', 'results');
const WORK = join(RESULTS, 'compare');

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    base: { type: 'string', default: 'HEAD' },
    only: { type: 'string', default: 'me' },
    rounds: { type: 'string', default: '8' },
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    docs: { type: 'string', default: '100000' },
    connections: { type: 'string', default: '50' },
    together: { type: 'boolean', default: false },
    'own-copies': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    'server-core': { type: 'string', default: '0' },
    'load-core': { type: 'string', default: '1' },
    help: { type: 'boolean', default: false },
  },
});

if (args.help) {
  process.stdout.write(`npx tsx bench/compare.ts [options] [-- NAME=value …]
  --base REF        the git revision to compare the working tree with (default HEAD)
  --only a,b        scenarios (default me; any of ${SCENARIOS.map((s) => s.id).join(', ')})
  --rounds N        rounds per scenario, each measuring both versions (default 8)
  --together        load both versions at once, sharing the server core, instead of in turns
  --own-copies      a copy of the data set for each version even for reads (versions of different schemas)
  --profile         run both servers under --cpu-prof: base.cpuprofile and tree.cpuprofile in bench/results/compare/profiles/
  --duration S      measured seconds per version and round (default 5)
  --warmup S        warm-up seconds before each measurement (default 1)
  --docs N          the data set of an earlier npm run bench to use (default 100000)
  --connections N   concurrent connections (default 50)
  NAME=value        after --: environment of the working tree's server only
`);
  process.exit(0);
}

const say = (line: string) => process.stderr.write(`${line}\n`);

function positive(name: string, value: string, integer: boolean): number {
  const n = Number(value);
  if (!(n > 0) || (integer && !Number.isInteger(n))) throw new Error(`--${name}: expected a positive ${integer ? 'whole ' : ''}number, got "${value}"`);
  return n;
}
const rounds = positive('rounds', args.rounds, true);
positive('duration', args.duration, false);
positive('connections', args.connections, true);
if (!(Number(args.warmup) >= 0)) throw new Error(`--warmup: expected a number of seconds, got "${args.warmup}"`);
const scenarios = args.only.split(',');
for (const s of scenarios) if (!SCENARIOS.some((x) => x.id === s)) throw new Error(`--only: no scenario "${s}"`);
const extraEnv = Object.fromEntries(
  positionals.map((p) => {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new Error(`"${p}": give environment variables as NAME=value`);
    return [p.slice(0, eq), p.slice(eq + 1)];
  }),
);

let pristine = join(RESULTS, 'data', `docs-${args.docs}.db`);
let manifestFile = join(RESULTS, 'data', `docs-${args.docs}.json`);
if (!existsSync(pristine) || !existsSync(manifestFile)) {
  throw new Error(`no data set of ${args.docs} documents: run "npm run bench -- --docs ${args.docs} --only me" first`);
}

mkdirSync(WORK, { recursive: true });
const baseDir = join(WORK, 'base');
function removeWorktree() {
  rmSync(baseDir, { recursive: true, force: true });
  run('git', ['worktree', 'prune'], ROOT);
}
// Left by a run that was interrupted.
removeWorktree();
const rev = spawnSync('git', ['rev-parse', '--short', args.base], { cwd: ROOT, encoding: 'utf8' }).stdout.trim();
if (rev === '') throw new Error(`--base: no git revision "${args.base}"`);
say(`build: the working tree, and ${args.base} (${rev}) in ${baseDir}…`);
run('git', ['worktree', 'add', '--detach', '--force', baseDir, rev], ROOT);
symlinkSync(join(ROOT, 'node_modules'), join(baseDir, 'node_modules'));
// A version with a native addon looks for it in build/Release above its
// compiled files; without it, it would run, slower, on its fallback path.
// `npm ci` built it with npm's own node-gyp and npm's configuration (where
// Node's headers are), which `npm exec` provides too.
if (existsSync(join(baseDir, 'binding.gyp'))) {
  say(`build: ${rev}'s native addon (binding.gyp)…`);
  run('npm', ['exec', '--call', 'node-gyp rebuild --release --loglevel=warn'], baseDir);
}
const builds = { base: build(baseDir), tree: build(ROOT) };
const checkouts = { base: baseDir, tree: ROOT };

/** The schema version of a SQLite file, and the last one a build knows. */
const schemaOf = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
};
const knownSchema = async (buildDir: string) =>
  ((await import(pathToFileURL(join(buildDir, 'src', 'store', 'sqlite', 'migrations.js')).href)) as { migrations: unknown[] }).migrations.length;

const baseMade = schemaOf(pristine) > (await knownSchema(builds.base));
if (baseMade) {
  pristine = join(WORK, 'data', `docs-${args.docs}-${rev}.db`);
  manifestFile = join(WORK, 'data', `docs-${args.docs}-${rev}.json`);
  if (!existsSync(manifestFile)) {
    say(`data: ${rev} cannot read the data set, of a newer schema: made by ${rev}'s own generator into ${pristine}…`);
    mkdirSync(join(WORK, 'data'), { recursive: true });
    // Older generators name the file `file`, newer ones `database`.
    const script = `const { generate } = await import(${JSON.stringify(pathToFileURL(join(builds.base, 'bench', 'generate.js')).href)});
      const out = ${JSON.stringify(pristine)};
      const manifest = await generate({ file: out, database: out, docs: ${Number(args.docs)}, log: (l) => process.stderr.write(l + '\\n') });
      (await import('node:fs')).writeFileSync(${JSON.stringify(manifestFile)}, JSON.stringify(manifest));`;
    run(process.execPath, ['--input-type=module', '-e', script], baseDir);
  }
}

interface Server {
  child: ChildProcess;
  url: string;
  /** The database it serves, which a PATCH's load generator reads the current updatedAt from. */
  db: string;
}

/**
 * For reads, both servers serve the same copy of the data set (SQLite lets
 * several processes share a database), so that neither reads from a copy
 * the machine's page cache holds less of. When a scenario writes, each has
 * a copy of its own: over one copy, each server's writes would wait for
 * the other's to commit. With --own-copies each has its own for reads too:
 * versions of different schemas each upgrade their own as they start.
 */
const writes = args['own-copies'] || baseMade || scenarios.some((id) => SCENARIOS.find((s) => s.id === id)!.writes);
const shared = join(WORK, 'folio.db');
const dbs = writes ? { base: join(WORK, 'base.db'), tree: join(WORK, 'tree.db') } : { base: shared, tree: shared };
const copies = [...new Set(Object.values(dbs))];
for (const db of copies) freshCopy(pristine, db);

async function start(name: 'base' | 'tree', env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const profile = args.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(WORK, 'profiles')}`, `--cpu-prof-name=${name}.cpuprofile`] : [];
  const argv = [...profile, ...startFlags(checkouts[name]), join(builds[name], 'src', 'cli', 'index.js'), 'serve'];
  const child = pinnedNode(args['server-core'], argv, { ...folioEnv(dbs[name], port, 'info'), ...env }, 'ignore');
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/healthz`, child, `Folio (${name})`);
  return { child, url, db: dbs[name] };
}

/** One measurement by the working tree's load generator, as `npm run bench` runs it. */
async function load(server: Server, scenario: string, specName = 'load'): Promise<LoadResult> {
  const spec: LoadSpec = {
    url: server.url,
    scenario,
    connections: Number(args.connections),
    warmupSeconds: Number(args.warmup),
    durationSeconds: Number(args.duration),
    manifestFile,
    database: server.db,
    serverPid: server.child.pid,
  };
  return loadProcess(join(builds.tree, 'bench', 'load.js'), args['load-core'], spec, join(WORK, `${specName}.json`));
}

const fmt = (r: LoadResult) => `${Math.round(r.rps).toString().padStart(6)} req/s p99 ${r.p99.toFixed(1).padStart(6)} ms busy ${busyShares(r.busy)}`;

const servers: Server[] = [];
try {
  // Both run throughout, so that neither is measured on a warmer machine.
  const base = await start('base', {});
  servers.push(base);
  const tree = await start('tree', extraEnv);
  servers.push(tree);
  for (const scenario of scenarios) {
    const rps = { base: [] as number[], tree: [] as number[] };
    say(`${scenario}: base ${rev} against the working tree${positionals.length ? ` (${positionals.join(' ')})` : ''}`);
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? (['base', 'tree'] as const) : (['tree', 'base'] as const);
      const got: Partial<Record<'base' | 'tree', LoadResult>> = {};
      const measure = async (name: 'base' | 'tree') => {
        const r = await load(name === 'base' ? base : tree, scenario, `load-${name}`);
        const failed = failures(r);
        if (failed > 0) say(`  ${name}: ${failed} requests failed (${JSON.stringify(r.statuses)}): figures not to be trusted`);
        got[name] = r;
      };
      if (args.together) await Promise.all(order.map(measure));
      else for (const name of order) await measure(name);
      for (const name of order) rps[name].push(got[name]!.rps);
      say(`  round ${i + 1}: base ${fmt(got.base!)}   tree ${fmt(got.tree!)}   tree/base ${(got.tree!.rps / got.base!.rps).toFixed(3)}`);
    }
    const ratios = rps.tree.map((t, i) => t / rps.base[i]!);
    const line = `${scenario.padEnd(11)} median base ${Math.round(median(rps.base))} req/s, tree ${Math.round(median(rps.tree))} req/s: tree/base ${(median(rps.tree) / median(rps.base)).toFixed(3)}, the rounds' own median ${median(ratios).toFixed(3)} (rounds ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}, tree ahead in ${ratios.filter((r) => r > 1).length} of ${rounds})`;
    process.stdout.write(`${line}\n`);
  }
} finally {
  for (const s of servers) s.child.kill('SIGTERM');
  await Promise.all(servers.map((s) => new Promise((done) => (s.child.exitCode !== null ? done(null) : s.child.once('exit', done)))));
  removeWorktree();
  for (const db of copies) removeDatabase(db);
}
