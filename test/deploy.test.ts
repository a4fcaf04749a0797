/**
 * The Dockerfile, without a Docker engine. Its stages are laid out as
 * directories standing for each stage's file system; COPY copies there as
 * Docker would, from a build context made of the repository's files less
 * .dockerignore's; every RUN of scripts/build.sh runs there (the RUNs that
 * set up the base image, apt-get and mkdir, are left to Docker and named in
 * the test's output). Then the last stage's CMD starts the server with the
 * stage's ENV and its DATABASE_URL inside the VOLUME, the HEALTHCHECK's own
 * command asks it, and the stage's `folio` command makes the key for an
 * authenticated request. better-sqlite3's binding comes as a prebuilt one
 * (prebuiltBinding below). What this cannot show: the base image itself,
 * the USER's permissions, and Docker's networking (docs/deploy.md).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, posix } from 'node:path';
import { setup } from './helpers.js';

const REPO = new URL('..', import.meta.url).pathname;
const SCRIPT = 'scripts/build.sh';
const STEPS = ['deps', 'compile', 'prod-deps', 'link'];
/** The variables Folio reads: the image's ENV and the test's choices only, none of the caller's. */
const FOLIO_VARIABLES = [
  'PORT', 'HOST', 'DATABASE_URL', 'DATABASE_POOL_MAX', 'REDIS_URL', 'PUBLIC_APP_URL', 'API_PLANS', 'READ_LIMIT_PER_MIN',
  'WRITE_LIMIT_PER_MIN', 'MAX_BODY_BYTES', 'BODY_BYTES_IN_FLIGHT', 'LOG_LEVEL', 'REQUEST_TIMEOUT_S', 'METRICS_TOKEN', 'TRUST_PROXY',
];

interface Instruction {
  op: string;
  args: string;
  line: number;
}

/** The Dockerfile's instructions: comments dropped, continued lines joined. */
function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let current = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trimEnd();
    if (/^\s*#/.test(line) || (current === '' && line.trim() === '')) return;
    if (current === '') start = i + 1;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      return;
    }
    current += line;
    const m = /^\s*([A-Za-z]+)\s+(.*)$/s.exec(current);
    assert.ok(m?.[1] !== undefined && m[2] !== undefined, `Dockerfile line ${start}: cannot read "${current}"`);
    out.push({ op: m[1].toUpperCase(), args: m[2].trim(), line: start });
    current = '';
  });
  return out;
}

/** An exec-form (JSON array) argument list. */
function execForm(args: string, where: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    assert.fail(`${where}: expected the exec form, a JSON array, got ${args}`);
  }
  assert.ok(Array.isArray(parsed) && parsed.length > 0 && parsed.every((a) => typeof a === 'string'), `${where}: a JSON array of strings`);
  return parsed as string[];
}

/** .dockerignore's patterns as Docker reads them: from the context's root, `**` across folders, `!` re-including, the last match deciding. */
function dockerIgnored(patterns: string[]): (path: string) => boolean {
  const rules = patterns
    .map((p) => p.trim())
    .filter((p) => p !== '' && !p.startsWith('#'))
    .map((p) => {
      const keep = p.startsWith('!');
      const glob = posix.normalize((keep ? p.slice(1) : p).replace(/^\/+/, '')).replace(/\/+$/, '');
      const source = glob
        .split(/(\*\*\/?|\*|\?)/)
        .map((part) => (part === '**/' ? '(?:.*/)?' : part === '**' ? '.*' : part === '*' ? '[^/]*' : part === '?' ? '[^/]' : part.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
        .join('');
      // A pattern that names a folder excludes everything in it.
      return { keep, re: new RegExp(`^${source}(?:/.*)?$`) };
    });
  return (path) => rules.reduce((ignored, r) => (r.re.test(path) ? !r.keep : ignored), false);
}

/** A build context: the repository's files (tracked, or new and not git-ignored) less those .dockerignore excludes. */
function buildContext(into: string): void {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' });
  assert.equal(listed.status, 0, `git ls-files: ${listed.stderr}`);
  const ignoreFile = join(REPO, '.dockerignore');
  assert.ok(existsSync(ignoreFile), 'a .dockerignore beside the Dockerfile');
  const ignored = dockerIgnored(readFileSync(ignoreFile, 'utf8').split('\n'));
  for (const file of new Set(listed.stdout.split('\0'))) {
    if (file === '' || ignored(file) || !existsSync(join(REPO, file)) || !statSync(join(REPO, file)).isFile()) continue;
    mkdirSync(join(into, dirname(file)), { recursive: true });
    cpSync(join(REPO, file), join(into, file));
  }
}

interface Stage {
  from: string;
  name: string | null;
  /** The directory that stands for the stage's `/`. */
  root: string;
  workdir: string;
  env: Record<string, string>;
  user: string | null;
  volumes: string[];
  exposed: string[];
  healthcheck: string[] | null;
  cmd: string[] | null;
  /** The steps of scripts/build.sh this stage runs, and the RUNs left to Docker. */
  steps: string[];
  notRun: string[];
  /** What the stage does, in order; `from` names the stage whose end an action waits for. */
  actions: Array<{ from: Stage | null; act: () => Promise<void> }>;
}

/** A path of the stage's file system, in the directory that stands for it. */
function inStage(stage: Stage, path: string): string {
  return join(stage.root, posix.resolve(stage.workdir, path));
}

/** The environment of a command in the image: this machine's, less Folio's variables and the test runner's, plus the stage's ENV. */
function imageEnv(stage: Stage, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !FOLIO_VARIABLES.includes(k) && k !== 'NODE_OPTIONS' && !k.startsWith('NODE_TEST')) env[k] = v;
  }
  return { ...env, ...stage.env, ...extra };
}

/** Runs a command to its end and returns its standard output, failing with the end of its output if it fails. */
async function runToEnd(command: string, args: string[], options: { cwd: string; env: Record<string, string> }, what: string): Promise<string> {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let output = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
    output += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  assert.equal(code, 0, `${what} failed (${signal ?? code}):\n${output.slice(-4000)}`);
  return stdout;
}

/** Copies as COPY does: a folder's contents into the destination, a file into a destination folder (`…/`) or as the destination. */
function copyLikeDocker(source: string, destination: string, intoFolder: boolean, where: string): void {
  assert.ok(existsSync(source), `${where}: nothing to copy at ${source}`);
  if (statSync(source).isDirectory()) {
    mkdirSync(destination, { recursive: true });
    cpSync(source, destination, { recursive: true, verbatimSymlinks: true });
  } else {
    const target = intoFolder ? join(destination, basename(source)) : destination;
    mkdirSync(dirname(target), { recursive: true });
    cpSync(source, target);
  }
}

/** The image's stages as the Dockerfile describes them, each in a directory under `root`; nothing is run yet. */
function readStages(dockerfile: Instruction[], context: string, root: string, buildEnv: Record<string, string>): Stage[] {
  const stages: Stage[] = [];
  let stage: Stage | null = null;
  for (const ins of dockerfile) {
    const where = `Dockerfile line ${ins.line} (${ins.op})`;
    if (ins.op === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      assert.ok(m?.[1] !== undefined, `${where}: FROM IMAGE [AS NAME]`);
      assert.equal(m[1], 'node:20-bookworm-slim', `${where}: every stage starts from Node.js 20's slim image`);
      stage = {
        from: m[1], name: m[2] ?? null, root: join(root, `stage-${stages.length}`), workdir: '/', env: {}, user: null,
        volumes: [], exposed: [], healthcheck: null, cmd: null, steps: [], notRun: [], actions: [],
      };
      mkdirSync(stage.root, { recursive: true });
      stages.push(stage);
      continue;
    }
    assert.ok(stage !== null, `${where}: before any FROM`);
    const s: Stage = stage;
    switch (ins.op) {
      case 'WORKDIR':
        s.workdir = posix.resolve(s.workdir, ins.args);
        mkdirSync(inStage(s, '.'), { recursive: true });
        break;
      case 'ENV':
        for (const pair of ins.args.split(/\s+/)) {
          const m = /^([A-Za-z_][A-Za-z0-9_]*)=([^"'$\s]*)$/.exec(pair);
          assert.ok(m?.[1] !== undefined && m[2] !== undefined, `${where}: this test reads ENV NAME=value pairs without quotes or $, got "${pair}"`);
          s.env[m[1]] = m[2];
        }
        break;
      case 'COPY': {
        const words = ins.args.split(/\s+/);
        let from: Stage | null = null;
        while (words[0]?.startsWith('--')) {
          const flag = words.shift() as string;
          if (flag.startsWith('--from=')) {
            from = stages.find((other) => other.name === flag.slice('--from='.length)) ?? null;
            assert.ok(from !== null, `${where}: no earlier stage named in ${flag}`);
          } else assert.match(flag, /^--(chown|chmod|link)\b/, `${where}: this test does not know ${flag}`);
        }
        const destination = words.pop();
        assert.ok(destination !== undefined && words.length > 0 && !words.some((w) => /[*?[]/.test(w)), `${where}: COPY SOURCE... DEST without wildcards`);
        const intoFolder = destination.endsWith('/') || words.length > 1;
        const other = from;
        s.actions.push({
          from: other,
          act: async () => {
            for (const source of words) {
              const path = other === null ? join(context, posix.normalize(source)) : inStage(other, source);
              copyLikeDocker(path, inStage(s, destination), intoFolder, where);
            }
          },
        });
        break;
      }
      case 'RUN': {
        if (!ins.args.startsWith(`${SCRIPT} `)) {
          assert.doesNotMatch(ins.args, /(?:^|&&|\|\||;|\|)\s*(?:npm|npx|node|tsc|yarn|pnpm)\s/, `${where}: building Folio belongs in ${SCRIPT}, which this test runs`);
          s.notRun.push(ins.args);
          break;
        }
        const args = ins.args.slice(SCRIPT.length).trim().split(/\s+/);
        assert.ok(args.every((a) => /^[\w./-]+$/.test(a)), `${where}: plain arguments only`);
        s.steps.push(...args.filter((a) => STEPS.includes(a)));
        // An absolute path is one of the stage's file system.
        const mapped = args.map((a) => (a.startsWith('/') ? inStage(s, a) : a));
        // The ENV lines above this RUN, not those below it.
        const options = { cwd: inStage(s, '.'), env: { ...imageEnv(s), ...buildEnv } };
        s.actions.push({ from: null, act: async () => void (await runToEnd(inStage(s, SCRIPT), mapped, options, `${where}: RUN ${ins.args}`)) });
        break;
      }
      case 'USER':
        s.user = ins.args;
        break;
      case 'VOLUME':
        s.volumes.push(...(ins.args.startsWith('[') ? execForm(ins.args, where) : ins.args.split(/\s+/)));
        break;
      case 'EXPOSE':
        s.exposed.push(...ins.args.split(/\s+/).map((p) => p.replace(/\/tcp$/, '')));
        break;
      case 'HEALTHCHECK': {
        const m = /^((?:--[a-z-]+=\S+\s+)*)CMD\s+(.*)$/s.exec(ins.args);
        assert.ok(m?.[2] !== undefined, `${where}: HEALTHCHECK [OPTIONS] CMD [...]`);
        s.healthcheck = execForm(m[2], where);
        break;
      }
      case 'CMD':
        s.cmd = execForm(ins.args, where);
        break;
      default:
        assert.fail(`${where}: this test does not know ${ins.op}; teach it, so that it builds what Docker builds`);
    }
  }
  return stages;
}

/**
 * Builds the stages; those that do not wait for each other build at once,
 * as BuildKit's do. Every stage has ended, one way or the other, when this
 * returns or throws.
 */
async function buildStages(stages: Stage[]): Promise<void> {
  const done = new Map<Stage, Promise<void>>();
  for (const stage of stages) {
    let chain = Promise.resolve();
    for (const { from, act } of stage.actions) {
      const before = from === null ? undefined : done.get(from);
      chain = chain.then(async () => {
        await before;
        await act();
      });
    }
    done.set(stage, chain);
  }
  const ends = await Promise.allSettled(done.values());
  for (const end of ends) if (end.status === 'rejected') throw end.reason;
}

/**
 * better-sqlite3's binding as a prebuilt one, for its install script to find
 * (prebuild-install's local prebuilds) instead of compiling SQLite for two
 * minutes: the one this checkout's `npm ci` built, when it is of the version
 * the lockfile pins. A Docker build downloads the project's own prebuilt
 * binding the same way. FOLIO_DEPLOY_TEST_COMPILE=1 compiles it instead, as
 * a build that cannot download one does. Returns the environment that
 * points to it, or nothing.
 */
function prebuiltBinding(root: string): Record<string, string> {
  if (process.env.FOLIO_DEPLOY_TEST_COMPILE === '1') return {};
  const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  const pinned = lock.packages['node_modules/better-sqlite3']?.version;
  const installed = join(REPO, 'node_modules', 'better-sqlite3');
  const binding = join(installed, 'build', 'Release', 'better_sqlite3.node');
  if (pinned === undefined || !existsSync(binding)) return {};
  if ((JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { version: string }).version !== pinned) return {};
  const dir = join(root, 'prebuilds');
  mkdirSync(dir);
  const file = `better-sqlite3-v${pinned}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const tar = spawnSync('tar', ['-czf', join(dir, file), '-C', installed, 'build/Release/better_sqlite3.node'], { encoding: 'utf8' });
  assert.equal(tar.status, 0, `tar: ${tar.stderr}`);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}

/** A port free on this machine. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Where a command of the image's PATH is, as the container's shell would find it. */
function onPath(command: string, path: string): string {
  if (command.includes('/')) return command;
  for (const dir of path.split(delimiter)) if (existsSync(join(dir, command))) return join(dir, command);
  assert.fail(`${command} is not on the image's PATH`);
}

describe('the deployment image', () => {
  const dockerfile = instructions(readFileSync(join(REPO, 'Dockerfile'), 'utf8'));

  it('builds every step with scripts/build.sh, runs as a user, keeps its data in a volume and checks its health', () => {
    const runs = dockerfile.filter((i) => i.op === 'RUN').map((i) => i.args);
    for (const step of STEPS) {
      assert.ok(runs.some((r) => r.startsWith(`${SCRIPT} `) && r.split(/\s+/).includes(step)), `the Dockerfile runs "${SCRIPT} ${step}"`);
    }
    const last = dockerfile.slice(dockerfile.map((i) => i.op).lastIndexOf('FROM'));
    const only = (op: string) => last.filter((i) => i.op === op).map((i) => i.args);
    assert.deepEqual(only('CMD').map((c) => execForm(c, 'CMD')), [['folio', 'serve']]);
    const user = only('USER').at(-1);
    assert.ok(user !== undefined && !/^(root|0)(:|$)/.test(user), `the server runs as a user other than root, not ${user}`);
    assert.deepEqual(only('VOLUME'), ['/data']);
    const env = Object.fromEntries(only('ENV').flatMap((e) => e.split(/\s+/)).map((p) => p.split('=', 2) as [string, string]));
    assert.match(env.DATABASE_URL ?? '', /^sqlite:\/data\/[^/]+$/, 'DATABASE_URL names an SQLite file in /data');
    assert.equal(env.HOST, '0.0.0.0', 'the server listens on every address of the container');
    assert.deepEqual(only('EXPOSE'), [env.PORT]);
    const healthcheck = only('HEALTHCHECK');
    assert.equal(healthcheck.length, 1);
    assert.match(healthcheck[0] ?? '', /--start-period=\d+s/, 'migrations at start get time before the health check counts');
    assert.doesNotMatch(healthcheck[0] ?? '', /\bcurl\b|\bwget\b/, 'the slim image has neither curl nor wget');
    assert.match(healthcheck[0] ?? '', /\/healthz/);
  });

  it('builds as the Dockerfile says, starts with its CMD, passes its HEALTHCHECK, answers a key made by its folio, and stops cleanly on SIGTERM', { timeout: 300_000 }, async (t) => {
    const started = Date.now();
    const root = mkdtempSync(join(tmpdir(), 'folio-image-'));
    let server: ChildProcess | null = null;
    try {
      const context = join(root, 'context');
      buildContext(context);
      const prebuilt = prebuiltBinding(root);
      t.diagnostic(prebuilt.npm_config_better_sqlite3_local_prebuilds ? 'better-sqlite3: the binding built by this checkout, as a prebuilt one' : 'better-sqlite3: compiled');
      // The packages come from npm's cache, which this checkout's own `npm ci` filled, when they are there:
      // the registry is asked only for what is missing.
      const stages = readStages(dockerfile, context, root, { ...prebuilt, npm_config_prefer_offline: 'true' });
      for (const s of stages) for (const r of s.notRun) t.diagnostic(`left to Docker (stage ${s.name ?? 'final'}): RUN ${r}`);
      await buildStages(stages);
      const image = stages.at(-1) as Stage;
      t.diagnostic(`built in ${Math.round((Date.now() - started) / 1000)} s`);
      assert.deepEqual(stages.flatMap((s) => s.steps).sort(), [...STEPS].sort(), 'each step of scripts/build.sh ran once');

      // Production dependencies only, and no sources.
      const app = inStage(image, '.');
      assert.ok(existsSync(join(app, 'node_modules', 'fastify')), 'the production dependencies are in the image');
      for (const dev of ['typescript', 'tsx', 'fast-check', 'autocannon']) {
        assert.ok(!existsSync(join(app, 'node_modules', dev)), `no development dependency (${dev}) in the image`);
      }
      assert.ok(!existsSync(join(app, 'src')), 'no TypeScript sources in the image');
      assert.ok(lstatSync(inStage(image, '/usr/local/bin/folio')).isSymbolicLink(), 'folio is on the PATH');

      // The volume, empty, as a new one is.
      const dbUrl = image.env.DATABASE_URL ?? '';
      const volume = image.volumes.find((v) => dbUrl.slice('sqlite:'.length).startsWith(`${v}/`));
      assert.ok(volume !== undefined, `DATABASE_URL (${dbUrl}) is in a VOLUME`);
      mkdirSync(inStage(image, volume), { recursive: true });
      const dbFile = inStage(image, dbUrl.slice('sqlite:'.length));
      const port = await freePort();
      const path = `${inStage(image, '/usr/local/bin')}${delimiter}${process.env.PATH ?? ''}`;
      // HOST: the image listens on every address; here, on this machine's loopback only.
      const env = imageEnv(image, { DATABASE_URL: `sqlite:${dbFile}`, PORT: String(port), HOST: '127.0.0.1', PATH: path });
      const base = `http://127.0.0.1:${port}`;
      const healthcheck = image.healthcheck as string[];
      const check = () =>
        new Promise<number | null>((resolve) => {
          const child = spawn(onPath(healthcheck[0] as string, path), healthcheck.slice(1), { cwd: app, env, stdio: 'ignore' });
          child.on('close', (code) => resolve(code));
        });
      assert.notEqual(await check(), 0, 'the health check fails while no server answers');

      const cmd = image.cmd as string[];
      const child = spawn(onPath(cmd[0] as string, path), cmd.slice(1), { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
      server = child;
      let log = '';
      child.stdout?.on('data', (c: Buffer) => (log += c.toString()));
      child.stderr?.on('data', (c: Buffer) => (log += c.toString()));
      const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;

      const answers = async (url: string) => {
        for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
          assert.equal(child.exitCode, null, `the server stopped: ${log}`);
          const res = await fetch(url).catch(() => null);
          if (res !== null) return { status: res.status, body: (await res.json()) as unknown };
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.fail(`${url} did not answer within 60 s: ${log}`);
      };
      assert.deepEqual(await answers(`${base}/healthz`), { status: 200, body: { status: 'ok' } });
      assert.deepEqual(await answers(`${base}/readyz`), { status: 200, body: { status: 'ready' } });
      assert.equal(await check(), 0, `the HEALTHCHECK's command passes: ${log}`);
      assert.ok(existsSync(dbFile), 'the database is in the volume');

      // The image's folio, on the server's database.
      const folio = async (...args: string[]) => JSON.parse(await runToEnd(onPath('folio', path), [...args, '--json'], { cwd: app, env }, `folio ${args.join(' ')}`)) as Record<string, unknown>;
      const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
      assert.deepEqual(await folio('--version'), { version: pkg.version });
      const user = await folio('user', 'create', '--email', 'ada@example.com', '--name', 'Ada', '--plan', 'pro_monthly');
      const key = await folio('key', 'create', '--user', String(user.id), '--name', 'deploy test');
      assert.equal((await fetch(`${base}/v1/me`)).status, 401, 'no key, no answer');
      const me = await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${String(key.key)}` } });
      const body = (await me.json()) as { id?: unknown; plan?: unknown; key?: { name?: unknown } };
      assert.equal(me.status, 200, JSON.stringify(body));
      assert.deepEqual([body.id, body.plan, body.key?.name], [user.id, 'pro_monthly', 'deploy test']);

      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const stopped = await Promise.race([exited, new Promise<null>((r) => (timer = setTimeout(() => r(null), 20_000)))]);
      clearTimeout(timer);
      assert.deepEqual(stopped, [0, null], `exits with status 0 within 20 s of SIGTERM: ${log}`);
      server = null;
      assert.match(log, /"msg":"shutting down"/);
      assert.ok(!existsSync(`${dbFile}-wal`) && !existsSync(`${dbFile}-shm`), 'a clean stop leaves no -wal or -shm file');
      assert.deepEqual(readdirSync(inStage(image, volume)), [basename(dbFile)]);
      t.diagnostic(`built, started, checked and stopped in ${Math.round((Date.now() - started) / 1000)} s`);
    } finally {
      server?.kill('SIGKILL');
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("README's requirements", () => {
  it('name only packages that npm ci installs: a package said to warn is one package-lock.json holds, at that version', () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const requirements = readme.slice(readme.indexOf('**Requirements:**'), readme.indexOf('\n\n', readme.indexOf('**Requirements:**')));
    const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
    const locked = new Set(Object.entries(lock.packages).map(([path, p]) => `${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${p.version}`));
    for (const [named] of requirements.matchAll(/[\w.-]+@\d+\.\d+\.\d+/g)) {
      assert.ok(locked.has(named), `the README names ${named}, which package-lock.json does not install`);
    }
  });
});

describe("deploy/'s configuration files", () => {
  /** The variables config.ts reads. */
  const read = new Set([...readFileSync(join(REPO, 'src', 'config.ts'), 'utf8').matchAll(/\(env, '([A-Z][A-Z0-9_]*)'/g)].map((m) => m[1]));

  it("compose.yaml gives Folio only variables it reads, needs its public address in .env, and its instructions write every value it needs", () => {
    const compose = readFileSync(join(REPO, 'deploy', 'compose.yaml'), 'utf8');
    const service = /^  folio:\n((?: {4}.*\n|\s*\n)*)/m.exec(compose)?.[1] ?? '';
    const environment = /^ {4}environment:\n((?: {6}.*\n)*)/m.exec(service)?.[1] ?? '';
    const variables = Object.fromEntries([...environment.matchAll(/^ {6}([A-Z][A-Z0-9_]*): (.*)$/gm)].map((m) => [m[1], m[2]]));
    assert.ok(Object.keys(variables).length > 0, "the folio service's environment");
    for (const name of Object.keys(variables)) assert.ok(read.has(name), `compose.yaml sets ${name}, which Folio does not read`);
    // Behind the proxy, Folio's own address is no public one: the `url` fields would point to this machine.
    assert.match(variables.PUBLIC_APP_URL ?? '', /^\$\{PUBLIC_APP_URL:\?/, 'PUBLIC_APP_URL must be given, not defaulted');
    const required = [...new Set([...compose.matchAll(/\$\{([A-Z][A-Z0-9_]*):\?/g)].map((m) => m[1]))];
    const instructions = /^#\s+printf '(.*)' .*> \.env$/m.exec(compose)?.[1] ?? '';
    for (const name of required) assert.match(instructions, new RegExp(`(^|\\\\n)${name}=`), `compose.yaml's instructions write ${name} into .env`);
  });

  it('folio.env names only variables Folio reads', () => {
    const env = readFileSync(join(REPO, 'deploy', 'folio.env'), 'utf8');
    const names = [...env.matchAll(/^#? ?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]);
    assert.ok(names.length > 0);
    for (const name of names) assert.ok(read.has(name), `folio.env names ${name}, which Folio does not read`);
  });
});

/** The path of `command` on this machine's PATH, or null. */
function installed(command: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir !== '' && existsSync(join(dir, command))) return join(dir, command);
  for (const dir of ['/usr/sbin', '/sbin']) if (existsSync(join(dir, command))) return join(dir, command);
  return null;
}

/** `text` with `from` replaced by `to`, which it must hold exactly `times` times: a file that drifts fails here, not quietly. */
function rewrite(text: string, from: string | RegExp, to: string, times = 1): string {
  const found = text.split(from).length - 1;
  assert.equal(found, times, `expected ${times} of ${String(from)} in the file, found ${found}`);
  return text.split(from).join(to);
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One request to the proxy on `port`: with fetch (the body in chunks,
 * without a Content-Length, if `chunked`), or, from another address of
 * this machine (`localAddress`), with node:http.
 */
async function send(port: number, o: { method: string; path: string; headers?: Record<string, string>; body?: string; chunked?: boolean; localAddress?: string }): Promise<Answer> {
  if (o.localAddress === undefined) {
    const body = o.chunked === true && o.body !== undefined ? new Blob([o.body]).stream() : o.body;
    const init = { method: o.method, headers: o.headers, body, duplex: 'half' } as RequestInit;
    const res = await fetch(`http://127.0.0.1:${port}${o.path}`, init).catch((err: Error & { cause?: Error }) => {
      throw new Error(`${o.method} ${o.path} with ${o.body?.length ?? 0} bytes: ${err.cause?.message ?? err.message}`);
    });
    return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method: o.method, path: o.path, headers: o.headers, agent: false, localAddress: o.localAddress },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', (err) => reject(new Error(`${o.method} ${o.path} with ${o.body?.length ?? 0} bytes: ${err.message}`)));
    req.end(o.body);
  });
}

/** A body of exactly `bytes` bytes (ASCII): a document to create. */
function documentBody(bytes: number): string {
  const head = '{"title":"large","contentMarkdown":"';
  const tail = '"}';
  const fill = bytes - head.length - tail.length;
  return `${head}${'a '.repeat(Math.floor(fill / 2))}${fill % 2 === 1 ? 'b' : ''}${tail}`;
}

/**
 * The proxies of deploy/, run as they are written, in front of a Folio
 * server, with only what this machine needs changed: the addresses they
 * listen on (plain HTTP, without the certificates: TLS is no part of what
 * is checked), the upstream's port, and, for nginx, a main configuration
 * holding its server blocks. Each is skipped, saying so, where it is not
 * installed.
 */
describe("deploy/'s reverse proxies, run in front of Folio", () => {
  const proxies: { name: string; command: string; start(dir: string, listen: number, redirect: number, upstream: number): string[] }[] = [
    {
      name: 'nginx (deploy/nginx.conf)',
      command: 'nginx',
      start(dir, listen, redirect, upstream) {
        let conf = readFileSync(join(REPO, 'deploy', 'nginx.conf'), 'utf8');
        conf = rewrite(conf, /^\s*listen \[::\]:.*\n/m, '', 2);
        conf = rewrite(conf, 'listen 80;', `listen 127.0.0.1:${redirect};`);
        conf = rewrite(conf, 'listen 443 ssl;', `listen 127.0.0.1:${listen};`);
        conf = rewrite(conf, /^\s*ssl_certificate(?:_key)? .*\n/m, '', 2);
        conf = rewrite(conf, 'proxy_pass http://127.0.0.1:8787;', `proxy_pass http://127.0.0.1:${upstream};`);
        writeFileSync(join(dir, 'folio.conf'), conf);
        const main = [
          `pid ${join(dir, 'nginx.pid')};`,
          `error_log ${join(dir, 'error.log')} warn;`,
          'worker_processes 1;',
          'events { worker_connections 64; }',
          'http {',
          `  access_log off;`,
          ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${join(dir, t)};`),
          `  include ${join(dir, 'folio.conf')};`,
          '}',
        ].join('\n');
        writeFileSync(join(dir, 'main.conf'), main);
        return ['-p', dir, '-c', join(dir, 'main.conf'), '-g', 'daemon off;'];
      },
    },
    {
      name: 'Caddy (deploy/Caddyfile)',
      command: 'caddy',
      start(dir, listen, redirect, upstream) {
        let conf = readFileSync(join(REPO, 'deploy', 'Caddyfile'), 'utf8');
        conf = rewrite(conf, /^folio\.example\.com \{$/m, `http://:${listen} {`);
        conf = rewrite(conf, 'reverse_proxy 127.0.0.1:8787', `reverse_proxy 127.0.0.1:${upstream}`);
        const global = `{\n\tadmin off\n\thttp_port ${redirect}\n\tstorage file_system ${join(dir, 'data')}\n}\n`;
        writeFileSync(join(dir, 'Caddyfile'), `${global}${conf}`);
        return ['run', '--adapter', 'caddyfile', '--config', join(dir, 'Caddyfile')];
      },
    },
  ];

  for (const proxy of proxies) {
    const path = installed(proxy.command);
    const skip = path === null ? `${proxy.command} is not installed on this machine, so ${proxy.name} was not run` : false;
    it(`${proxy.name}: passes a body of MAX_BODY_BYTES, Folio's refusals of larger bodies and of bodies without a key, MCP and the client's address, and refuses a body over its own limit in Folio's envelope`, { skip, timeout: 180_000 }, async (t) => {
      // The database and a key, made here; the server in a process of its own, as in production.
      const folio = await setup();
      const dir = mkdtempSync(join(tmpdir(), 'folio-proxy-'));
      // nginx's workers run as an unprivileged user when it is started as root: they must reach its temporary folders.
      chmodSync(dir, 0o755);
      let server: ChildProcess | null = null;
      let child: ChildProcess | null = null;
      try {
        const key = (await folio.make.key((await folio.make.user()).id, { write: true })).secret;
        const upstream = await freePort();
        const env = { DATABASE_URL: folio.config.databaseUrl, PORT: String(upstream), HOST: '127.0.0.1', TRUST_PROXY: '127.0.0.1', WRITE_LIMIT_PER_MIN: '1000', METRICS_TOKEN: 'a-token-for-the-metrics', LOG_LEVEL: 'info' };
        server = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve'], { cwd: REPO, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
        let serverLog = '';
        server.stdout?.on('data', (c: Buffer) => (serverLog += c.toString()));
        server.stderr?.on('data', (c: Buffer) => (serverLog += c.toString()));
        const [listen, redirect] = [await freePort(), await freePort()];
        const args = proxy.start(dir, listen, redirect, upstream);
        child = spawn(path as string, args, { cwd: dir, env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
        let log = '';
        child.stdout?.on('data', (c: Buffer) => (log += c.toString()));
        child.stderr?.on('data', (c: Buffer) => (log += c.toString()));
        for (const deadline = Date.now() + 60_000; ; ) {
          assert.equal(child.exitCode, null, `${proxy.command} stopped: ${log}`);
          assert.equal(server.exitCode, null, `Folio stopped: ${serverLog}`);
          const ok = await send(listen, { method: 'GET', path: '/healthz' }).catch(() => null);
          if (ok?.status === 200) break;
          assert.ok(Date.now() < deadline, `/healthz did not answer through ${proxy.command} within 60 s: ${log}${serverLog}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

        const health = await send(listen, { method: 'GET', path: '/healthz', headers: { 'x-request-id': 'through-the-proxy' } });
        assert.deepEqual([health.status, health.body, health.headers['x-request-id']], [200, '{"status":"ok"}', 'through-the-proxy']);

        const max = folio.config.maxBodyBytes;
        assert.equal(max, 5 * 1024 * 1024, "the proxies' limits are written for MAX_BODY_BYTES's default");
        const largest = await send(listen, { method: 'POST', path: '/v1/documents', headers: auth, body: documentBody(max) });
        assert.equal(largest.status, 201, `a body of MAX_BODY_BYTES: ${largest.body}`);
        // Refused by Folio before it reads the body, while the proxy still sends it: each refusal must reach the client.
        // Bodies up to the proxies' own limits (nginx's 6m, Caddy's 6MB): the more there is still to send, the likelier a reset.
        for (const [i, bytes] of [max + 1, 6_000_000, 6_000_000, 6_000_000, 6_000_000, 6_000_000].entries()) {
          const body = documentBody(bytes);
          const tooLarge = await send(listen, { method: 'POST', path: '/v1/documents', headers: auth, body });
          assert.equal(tooLarge.status, 400, `a body of ${bytes} bytes, try ${i + 1}: ${tooLarge.body}`);
          assert.match(JSON.parse(tooLarge.body).error.message, new RegExp(`larger than the limit of ${max} bytes`));
          const noKey = await send(listen, { method: 'POST', path: '/v1/documents', headers: { 'content-type': 'application/json' }, body });
          assert.equal(noKey.status, 401, `a body of ${bytes} bytes without a key, try ${i + 1}: ${noKey.body}`);
          assert.equal(JSON.parse(noKey.body).error.code, 'unauthorized');
        }

        // Over the proxy's own limit: refused by the proxy, or by Folio before the proxy's limit is reached, in Folio's envelope either way.
        for (const chunked of [false, true]) {
          const huge = await send(listen, { method: 'POST', path: '/v1/documents', headers: auth, body: documentBody(7_000_000), chunked });
          assert.equal(huge.status, 400, `a body of 7,000,000 bytes${chunked ? ' in chunks' : ''}: ${huge.body}`);
          assert.match(String(huge.headers['content-type']), /^application\/json/);
          assert.deepEqual(JSON.parse(huge.body), { error: { code: 'invalid_request', message: `The request body is larger than the limit of ${max} bytes.` } });
        }

        const mcpHeaders = { ...auth, accept: 'application/json, text/event-stream' };
        const initialize = await send(listen, {
          method: 'POST',
          path: '/mcp',
          headers: mcpHeaders,
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'proxy test', version: '1' } } }),
        });
        assert.equal(initialize.status, 200, initialize.body);
        assert.match(String(initialize.headers['content-type']), /^application\/json/);
        assert.equal(JSON.parse(initialize.body).result.serverInfo.name, 'folio');
        const stream = await send(listen, { method: 'GET', path: '/mcp', headers: mcpHeaders });
        assert.deepEqual([stream.status, stream.headers.allow], [405, 'POST']);

        assert.equal((await send(listen, { method: 'GET', path: '/metrics' })).status, 401, '/metrics asks for its token through the proxy');

        // The client's address as the proxy saw it, not what a client claims in X-Forwarded-For.
        await send(listen, { method: 'GET', path: '/healthz', headers: { 'x-request-id': 'from-a-client', 'x-forwarded-for': '203.0.113.9' }, localAddress: '127.0.0.2' });
        const logged = () =>
          serverLog
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l) as { reqId?: string; msg?: string; remoteAddress?: string })
            .find((l) => l.reqId === 'from-a-client' && l.msg === 'request completed');
        for (const deadline = Date.now() + 5_000; logged() === undefined && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
        assert.equal(logged()?.remoteAddress, '127.0.0.2', 'the address the proxy saw, in the log');
        t.diagnostic(`${proxy.command}: ${path}`);
      } finally {
        for (const c of [child, server]) {
          if (c === null || c.exitCode !== null || c.signalCode !== null) continue;
          c.kill('SIGTERM');
          await once(c, 'exit');
        }
        await folio.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
