import { Writable } from 'node:stream';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { endianness, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp, type AppDeps } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { generateKey, hashKey, lastFour } from '../src/domain/keys.js';
import { SCOPE_MARK } from '../src/domain/search.js';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Redis } from 'ioredis';
import { openStore } from '../src/store/open.js';
import { assertContract } from './contract.js';
import { sql, withDatabase } from './postgres.js';
import type { Store } from '../src/store/store.js';

/** Runs `sql` against `file` from a separate Node.js process, as `folio` on the command line does. */
export function inAnotherProcess(file: string, sql: string, ...params: unknown[]): void {
  const script = `const D = require('better-sqlite3'); const db = new D(process.argv[1]); db.pragma('busy_timeout = 5000');
    db.prepare(process.argv[2]).run(...JSON.parse(process.argv[3])); db.close();`;
  // Bounded: a child that never finished would hold the whole test file (and the suite) with it.
  const run = spawnSync(process.execPath, ['-e', script, file, sql, JSON.stringify(params)], { cwd: process.cwd(), encoding: 'utf8', timeout: 30_000 });
  assert.equal(run.error, undefined, `the other process did not finish: ${run.error?.message}`);
  assert.equal(run.status, 0, run.stderr);
}

/** A controllable clock: starts at a fixed instant, moves only when told. */
export function testClock(start = Date.parse('2026-03-01T12:00:00.000Z')) {
  let now = start;
  const clock = () => now;
  return Object.assign(clock, {
    advance(ms: number) {
      now += ms;
    },
    set(ms: number) {
      now = ms;
    },
  });
}

export type TestClock = ReturnType<typeof testClock>;

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ LOG_LEVEL: 'silent', PUBLIC_APP_URL: 'https://folio.test', ...env });
}

/** The database file of a configuration that names SQLite (tests of SQLite's own behaviour). */
export function sqliteFile(config: Config): string {
  if (config.database.kind !== 'sqlite') throw new Error(`this test needs an SQLite database, not ${config.database.kind}`);
  return config.database.file;
}

export interface TestContext {
  app: FastifyInstance;
  store: Store;
  config: Config;
  clock: TestClock;
  dir: string;
  /** Fixture factories, writing through the store like the command line does. */
  make: Factories;
  close(): Promise<void>;
}

/**
 * The database of the suite's PostgreSQL run (test/run-postgres.ts sets
 * it): each test context then gets a schema of its own in it. Without it,
 * each gets an SQLite file of its own.
 */
const POSTGRES_RUN = process.env.FOLIO_TEST_POSTGRES_URL;

/** Which database the suite runs on. */
export const TEST_DATABASE: 'sqlite' | 'postgres' = POSTGRES_RUN ? 'postgres' : 'sqlite';

/** The reason a test of SQLite's own behaviour gives for not running on PostgreSQL. */
export const SQLITE_ONLY = { skip: TEST_DATABASE === 'postgres' ? 'about SQLite itself' : false } as const;

let schemas = 0;

/** A new schema in the run's PostgreSQL database, and the URL of connections that use it; dropped by `drop`. */
async function postgresSchema(runUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `ctx_${process.pid}_${++schemas}`;
  await sql(runUrl, `CREATE SCHEMA ${schema}`);
  const database = new URL(runUrl).pathname.slice(1);
  return { url: withDatabase(runUrl, database, schema), drop: async () => void (await sql(runUrl, `DROP SCHEMA ${schema} CASCADE`)) };
}

/**
 * A database of its own for one test, not yet opened: an SQLite file in a
 * temporary folder, or a schema in the PostgreSQL run's database. `drop`
 * removes it (and the folder).
 */
export async function freshDatabase(env: Record<string, string> = {}): Promise<{ config: Config; dir: string; drop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'folio-test-'));
  const schema = POSTGRES_RUN ? await postgresSchema(POSTGRES_RUN) : null;
  const config = testConfig({ DATABASE_URL: schema?.url ?? `sqlite:${join(dir, 'folio.db')}`, DATABASE_POOL_MAX: '4', ...env });
  return {
    config,
    dir,
    async drop() {
      await schema?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Folio app on a freshly migrated database of its own: an SQLite file in a temporary folder, or a PostgreSQL schema. */
export async function setup(options: { env?: Record<string, string>; deps?: Partial<AppDeps> } = {}): Promise<TestContext> {
  const { config, dir, drop } = await freshDatabase(options.env);
  const store = await openStore(config);
  const clock = testClock();
  const app = await buildApp({ config, store, clock, ...options.deps });
  await app.ready();
  return {
    app,
    store,
    config,
    clock,
    dir,
    make: factories(store, clock),
    async close() {
      await app.close();
      await store.close();
      await drop();
    },
  };
}

/**
 * Runs a write (`?` for each parameter) on the test's database from outside
 * the server: from another process on SQLite, as the command line does; on
 * another connection on PostgreSQL, as another instance does.
 */
export async function writeElsewhere(config: Config, sql: string, ...params: unknown[]): Promise<void> {
  if (config.database.kind === 'sqlite') return inAnotherProcess(config.database.file, sql, ...params);
  await queryRows(config, sql, ...params);
}

/** The rows a query (`?` for each parameter) reads from the test's database, on a connection of its own. */
export async function queryRows<R = Record<string, unknown>>(config: Config, sql: string, ...params: unknown[]): Promise<R[]> {
  if (config.database.kind === 'sqlite') {
    const db = new Database(config.database.file, { readonly: true });
    try {
      return db.prepare(sql).all(...params) as R[];
    } finally {
      db.close();
    }
  }
  let n = 0;
  const client = new pg.Client({ connectionString: config.database.url });
  await client.connect();
  try {
    return (await client.query(sql.replace(/\?/g, () => `$${++n}`), params)).rows as R[];
  } finally {
    await client.end();
  }
}

let sequence = 0;
const unique = (prefix: string) => `${prefix}${++sequence}`;

export type Factories = ReturnType<typeof factories>;

export function factories(store: Store, clock: () => number) {
  const now = () => new Date(clock()).toISOString();
  return {
    async user(o: { email?: string; name?: string | null; plan?: string | null } = {}) {
      return store.createUser({
        email: o.email ?? `${unique('user')}@example.com`,
        name: o.name === undefined ? 'Test User' : o.name,
        plan: o.plan === undefined ? 'pro_monthly' : o.plan,
        now: now(),
      });
    },
    async org(o: { name?: string; plan?: string | null; members?: string[] } = {}) {
      const org = await store.createOrg({ name: o.name ?? unique('Team '), plan: o.plan ?? null, now: now() });
      for (const m of o.members ?? []) await store.addMember(org.id, m, now());
      return org;
    },
    /** Returns the key's secret with its record. */
    async key(userId: string, o: { write?: boolean; name?: string | null } = {}) {
      const secret = generateKey();
      const record = await store.createKey({
        userId,
        name: o.name === undefined ? 'test key' : o.name,
        canWrite: o.write ?? false,
        hash: hashKey(secret),
        last4: lastFour(secret),
        now: now(),
      });
      return { secret, record };
    },
    async project(creatorId: string, o: { orgId?: string | null; name?: string; description?: string | null; shareWith?: string[] } = {}) {
      const p = await store.createProject({
        creatorId,
        orgId: o.orgId ?? null,
        name: o.name ?? unique('Project '),
        description: o.description ?? null,
        now: now(),
      });
      for (const u of o.shareWith ?? []) await store.shareProject(p.id, u);
      return p;
    },
    async document(
      userId: string,
      o: { orgId?: string | null; projectId?: string | null; title?: string; content?: string; threadId?: string | null } = {},
    ) {
      const doc = await store.createDocument(
        { userId, orgId: o.orgId ?? null },
        {
          title: o.title ?? unique('Document '),
          contentMarkdown: o.content ?? '# Hello\n\nSome text.',
          projectId: o.projectId ?? null,
          threadId: o.threadId ?? null,
        },
        now(),
      );
      if (!doc) throw new Error('fixture document could not be created: project not visible');
      return doc;
    },
    async chat(creatorId: string, o: { orgId?: string | null; projectId?: string | null; title?: string | null; messages?: number } = {}) {
      const project = o.projectId ? await store.getProject(o.projectId) : null;
      return store.createChat({
        creatorId,
        workspaceId: project?.workspaceId ?? o.orgId ?? creatorId,
        projectId: o.projectId ?? null,
        title: o.title === undefined ? unique('Chat ') : o.title,
        messageCount: o.messages ?? 0,
        now: now(),
      });
    },
    async template(o: { title?: string; workspaceId?: string | null; creatorId?: string | null; isDefault?: boolean; description?: string | null } = {}) {
      return store.createTemplate({
        title: o.title ?? unique('Template '),
        description: o.description ?? null,
        workspaceId: o.workspaceId ?? null,
        creatorId: o.creatorId ?? null,
        isDefault: o.isDefault ?? false,
        now: now(),
      });
    },
  };
}

/** `app.inject` with a bearer key, returning the parsed JSON body too. */
export async function call(
  app: FastifyInstance,
  method: InjectOptions['method'],
  url: string,
  o: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  const res = await app.inject({
    method,
    url,
    headers: {
      ...(o.key !== undefined ? { authorization: `Bearer ${o.key}` } : {}),
      ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...o.headers,
    },
    ...(o.body !== undefined ? { payload: typeof o.body === 'string' ? o.body : JSON.stringify(o.body) } : {}),
  });
  // Every response of the HTTP suite must keep the OpenAPI document's promise
  // for its operation and status; one that drifts fails the test here.
  assertContract(app, { method: String(method), url, status: res.statusCode, headers: res.headers, body: res.body });
  let json: any;
  try {
    json = res.body === '' ? undefined : JSON.parse(res.body);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, body: json, raw: res.body };
}


/** The words of titles and content in the search index of `file`, in order, each once for each document that has it. */
export function indexedWords(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    db.exec(`CREATE VIRTUAL TABLE temp.words USING fts5vocab(main, documents_fts, 'instance')`);
    // Scope tokens begin with SCOPE_MARK (since migration 14; before it, with the scope column's letters).
    const words = db.prepare(`SELECT term FROM temp.words WHERE col IS NULL OR col IN ('title', 'content') ORDER BY term`).pluck().all() as string[];
    return words.filter((w) => !w.startsWith(SCOPE_MARK)).join(' ');
  } finally {
    db.close();
  }
}

/** The search index's segments: each has its own rows in the index of leaf pages. */
export function segments(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT count(DISTINCT segid) FROM documents_fts_idx').pluck().get() as number;
  } finally {
    db.close();
  }
}

/**
 * Frames in the write-ahead log and how many of them a checkpoint has
 * copied into the database file, read from the WAL index (the -shm file;
 * https://www.sqlite.org/walformat.html): mxFrame at byte 16 of the header,
 * nBackfill at byte 96, in the machine's byte order.
 */
export function walState(file: string): { frames: number; copied: number } {
  const shm = readFileSync(`${file}-shm`);
  const read = (at: number) => (endianness() === 'LE' ? shm.readUInt32LE(at) : shm.readUInt32BE(at));
  return { frames: read(16), copied: read(96) };
}

/** A log stream for `setup({ deps: { logStream } })`, and the lines written to it so far. */
export function logCollector() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const text = () => lines.join('');
  /** The log's lines, parsed; with `reqIdPrefix`, only those of requests whose id starts with it. */
  const entries = (reqIdPrefix?: string): any[] =>
    text()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => reqIdPrefix === undefined || (typeof l.reqId === 'string' && l.reqId.startsWith(reqIdPrefix)));
  return { stream, text, entries };
}

/** The Redis the tests use (REDIS_TEST_URL, or the machine's), and why its tests are skipped when none answers. */
export const TEST_REDIS = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';

export async function redisMissing(): Promise<string | false> {
  const probe = new Redis(TEST_REDIS, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
    return false;
  } catch (error) {
    return `no Redis answers at ${TEST_REDIS} (${(error as Error).message}): start one, or set REDIS_TEST_URL, to run the tests of shared rate limits`;
  } finally {
    probe.disconnect();
  }
}
