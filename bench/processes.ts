/** What the benchmark's scripts share: building Folio, fresh copies of a data set, starting servers pinned to a core (a free port, Node's flags as deployed, waiting until one answers) and running the load generator. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, copyFileSync, fsyncSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import type { LoadResult, LoadSpec } from './load.js';
import { isPostgresUrl } from './postgres.js';

const ROOT = resolve(import.meta.dirname, '..');

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => done(port));
    });
  });
}

/** Node's own options as `npm start` passes them (the checkout's package.json), so that Folio runs as deployed. */
export function startFlags(checkout = ROOT): string[] {
  const pkg = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { scripts: { start: string } };
  return pkg.scripts.start.split(/\s+/).filter((a) => a.startsWith('--'));
}

/** Removes a SQLite database and its log files. */
export function removeDatabase(file: string) {
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
}

/**
 * A fresh copy of a data set's database at `target`, with no log files of an
 * earlier copy left beside it, on disk before it returns, so that the
 * kernel's write-back of the copy does not share the disk with the commits
 * of the write scenarios measured on it.
 */
export function freshCopy(pristine: string, target: string) {
  removeDatabase(target);
  copyFileSync(pristine, target);
  const fd = openSync(target, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Runs a command to its end, its output shown; throws if it fails. */
export function run(cmd: string, argv: string[], cwd: string) {
  const r = spawnSync(cmd, argv, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} failed in ${cwd}`);
}

/** Compiles a checkout of Folio and its benchmark as `npm run bench` does, into its bench/results/build. */
export function build(dir: string): string {
  run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'bench/tsconfig.json'], dir);
  const out = join(dir, 'bench', 'results', 'build');
  // The compiled src/version.js reads ../package.json, as dist/version.js finds the checkout's.
  copyFileSync(join(dir, 'package.json'), join(out, 'package.json'));
  return out;
}

/** Node on one core (taskset); its standard error is kept and printed if it fails. */
export function pinnedNode(core: string, argv: string[], env: NodeJS.ProcessEnv, stdout: 'ignore' | 'pipe'): ChildProcess {
  const child = spawn('taskset', ['-c', core, process.execPath, ...argv], { cwd: ROOT, env, stdio: ['ignore', stdout, 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    if (err.length > 20_000) err = err.slice(-10_000);
  });
  child.on('exit', (code) => {
    if (code !== 0 && code !== null) process.stderr.write(`${argv.join(' ')} exited with ${code}: ${err.trim().slice(-2000)}\n`);
  });
  return child;
}

/** One measurement by the load generator (`loadJs`, compiled bench/load.ts) on its own core, its spec written to `specFile`. */
export async function loadProcess(loadJs: string, core: string, spec: LoadSpec, specFile: string): Promise<LoadResult> {
  writeFileSync(specFile, JSON.stringify(spec));
  const child = pinnedNode(core, [loadJs, specFile], process.env, 'pipe');
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((done) => child.on('exit', done));
  if (code !== 0) throw new Error(`the load generator failed for ${spec.scenario}`);
  return JSON.parse(out) as LoadResult;
}

/**
 * Folio's environment in the benchmark: the data set's database (a SQLite
 * file or a postgres:// URL), rate limits out of the way, no public URL.
 */
export function folioEnv(database: string, port: number, logLevel: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: isPostgresUrl(database) ? database : `sqlite:${database}`,
    HOST: '127.0.0.1',
    PORT: String(port),
    READ_LIMIT_PER_MIN: '1000000000',
    WRITE_LIMIT_PER_MIN: '1000000000',
    LOG_LEVEL: logLevel,
  };
  delete env.PUBLIC_APP_URL;
  return env;
}

export async function waitFor(url: string, child: ChildProcess, what: string, anyStatus = false) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with status ${child.exitCode}`);
    try {
      const r = await fetch(url);
      await r.arrayBuffer();
      if (r.ok || anyStatus) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not start within a minute`);
}

/** Highest resident set size of a process while `work` runs, sampled every `everyMs` from /proc. */
export async function withRss<T>(pid: number, work: () => Promise<T>, everyMs = 100): Promise<{ result: T; rssMb: number }> {
  let max = 0;
  const sample = () => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) max = Math.max(max, Number(m[1]) / 1024);
    } catch {
      // the process is gone
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  try {
    const result = await work();
    sample();
    return { result, rssMb: max };
  } finally {
    clearInterval(timer);
  }
}
