import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs, { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { buildApp } from '../src/app.js';
import { run } from '../src/cli/program.js';
import { generateKey, hashKey, lastFour } from '../src/domain/keys.js';
import { openStore } from '../src/store/open.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import { call, factories, testClock, testConfig } from './helpers.js';
import { createTestDatabase, describeOrSkip, POSTGRES_SKIPPED, postgresUrl } from './postgres.js';

/**
 * `folio backup FILE` (DESIGN §5, §9): an online copy of the SQLite
 * database while a server writes to it, and the restore procedure of
 * docs/operations.md ("Backups and restore") for both databases.
 */

const exec = promisify(execFile);
const CLI = ['--import', 'tsx', 'src/cli/index.ts'];
/** No request of these tests is refused for its rate. */
const UNLIMITED = { READ_LIMIT_PER_MIN: '1000000', WRITE_LIMIT_PER_MIN: '1000000' };

/** Runs `folio …` in process against the database of `env`, capturing its output. */
async function folio(env: Record<string, string>, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, { out: (s) => out.push(s), err: (s) => err.push(s), env });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

describe('folio backup FILE', () => {
  let dir: string;
  let env: Record<string, string>;
  let source: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'folio-backup-'));
    source = join(dir, 'folio.db');
    env = { DATABASE_URL: `sqlite:${source}`, PUBLIC_APP_URL: 'https://folio.test' };
    assert.equal((await folio(env, 'migrate')).code, 0);
    assert.equal((await folio(env, 'user', 'create', '--email', 'ada@example.com')).code, 0);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** The files in the test's folder besides the source database's: what a command left behind. */
  const leftovers = () => readdirSync(dir).filter((f) => !f.startsWith('folio.db')).sort();

  it('prints {"file","bytes"}: the absolute path of a copy that holds the database, and its size', async () => {
    const target = join(dir, 'copy.db');
    const r = await folio(env, 'backup', target, '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.split('\n').length, 1, 'exactly one line on stdout');
    const printed = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(printed), ['file', 'bytes']);
    assert.equal(printed.file, target);
    assert.equal(printed.bytes, statSync(target).size);
    assert.ok(printed.bytes > 0);
    const copy = new Database(target, { readonly: true });
    try {
      assert.deepEqual(copy.prepare('SELECT email FROM users').pluck().all(), ['ada@example.com']);
    } finally {
      copy.close();
    }
    assert.deepEqual(leftovers(), ['copy.db'], 'no temporary file is left');

    // A relative FILE is named by its absolute path; without --json the same in words.
    const relativeTarget = relative(process.cwd(), join(dir, 'relative.db'));
    const readable = await folio(env, 'backup', relativeTarget);
    assert.equal(readable.code, 0, readable.stderr);
    assert.equal(readable.stdout, `Backed up ${source} to ${resolve(relativeTarget)} (${statSync(relativeTarget).size} bytes).`);
  });

  it('refuses a FILE that exists, naming it, and leaves it as it was', async () => {
    const existing = join(dir, 'existing.db');
    writeFileSync(existing, 'keep me');
    const dangling = join(dir, 'dangling.db');
    symlinkSync(join(dir, 'nowhere'), dangling);
    for (const file of [existing, dangling]) {
      const r = await folio(env, 'backup', file, '--json');
      assert.equal(r.code, 1, file);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, `folio: "${file}" already exists; folio backup never overwrites a file: name a new one, or remove that one first`);
    }
    const unnamed = await folio(env, 'backup', '');
    assert.deepEqual([unnamed.code, unnamed.stderr], [1, 'folio: FILE must name the file to write the copy to']);
    assert.equal(readFileSync(existing, 'utf8'), 'keep me');
    assert.equal(readlinkSync(dangling), join(dir, 'nowhere'));
    assert.deepEqual(leftovers(), ['copy.db', 'dangling.db', 'existing.db', 'relative.db']);
  });

  it('writes the copy onto a file system without hard links (exFAT, FAT), still never over a file that exists', async () => {
    // Such a file system refuses link(2) with EPERM, as exFAT does on a removable disk.
    const link = fs.linkSync;
    fs.linkSync = () => {
      throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM', syscall: 'link' });
    };
    syncBuiltinESMExports();
    try {
      const target = join(dir, 'removable.db');
      const r = await folio(env, 'backup', target, '--json');
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { file: target, bytes: statSync(target).size });
      const copy = new Database(target, { readonly: true });
      try {
        assert.deepEqual(copy.prepare('SELECT email FROM users').pluck().all(), ['ada@example.com']);
      } finally {
        copy.close();
      }
      const again = await folio(env, 'backup', target, '--json');
      assert.equal(again.code, 1);
      assert.equal(again.stderr, `folio: "${target}" already exists; folio backup never overwrites a file: name a new one, or remove that one first`);
      assert.deepEqual(leftovers(), ['copy.db', 'dangling.db', 'existing.db', 'relative.db', 'removable.db'], 'no temporary file is left');
      rmSync(target);
    } finally {
      fs.linkSync = link;
      syncBuiltinESMExports();
    }
  });

  it('never creates the database: pointed at a missing file, or at one that is no database, it stops naming it and writes nothing', async () => {
    const missing = join(dir, 'missing', 'folio.db');
    const target = join(dir, 'never.db');
    const r = await folio({ DATABASE_URL: `sqlite:${missing}` }, 'backup', target);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `folio: DATABASE_URL: the database file "${missing}" does not exist; point DATABASE_URL at the database to back up`);
    assert.equal(existsSync(join(dir, 'missing')), false, 'neither the file nor its folder is made');

    const notes = join(dir, 'notes.txt');
    writeFileSync(notes, 'not a database, just notes\n'.repeat(200));
    const notADatabase = await folio({ DATABASE_URL: `sqlite:${notes}` }, 'backup', target);
    assert.equal(notADatabase.code, 1);
    assert.match(notADatabase.stderr, new RegExp(`^folio: DATABASE_URL: cannot open the database file "${notes}": file is not a database$`));
    rmSync(notes);

    const noFolder = join(dir, 'no-such-folder', 'copy.db');
    const unwritable = await folio(env, 'backup', noFolder);
    assert.equal(unwritable.code, 1);
    assert.equal(unwritable.stderr, `folio: cannot write the backup "${noFolder}": the folder "${join(dir, 'no-such-folder')}" does not exist`);
    assert.deepEqual(leftovers(), ['copy.db', 'dangling.db', 'existing.db', 'relative.db'], 'no backup, whole or partial');
  });

  it('refuses PostgreSQL, without connecting, and says to use pg_dump', async () => {
    // Port 1, where nothing listens: a command that tried to connect would fail there, saying so.
    const server = await postgresUrl();
    const target = join(dir, 'from-postgres.dump');
    for (const url of ['postgres://folio@127.0.0.1:1/folio', ...(server === null ? [] : [server])]) {
      const r = await folio({ DATABASE_URL: url }, 'backup', target, '--json');
      assert.equal(r.code, 1, url);
      assert.equal(r.stdout, '');
      const where = new URL(url);
      assert.match(r.stderr, new RegExp(`^folio: folio backup copies an SQLite database, and DATABASE_URL names PostgreSQL at ${where.hostname}:${where.port}${where.pathname};`));
      assert.ok(r.stderr.includes(`pg_dump --format=custom --file=${target} "$DATABASE_URL"`), r.stderr);
    }
    assert.equal(existsSync(target), false);
  });

  it('has --help', async () => {
    const r = await folio(env, 'backup', '--help');
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: folio backup \[options\] <file>/);
    assert.match(r.stdout, /pg_dump/);
  });
});

/** The document as GET /v1/documents/{id} answers it. */
interface Doc {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string | null;
  threadId: string | null;
  url: string;
  contentMarkdown: string;
  project: unknown;
}

/** A `folio serve` process on `env`'s database, once it listens. */
async function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; base: string; output(): string }> {
  const child = spawn(process.execPath, [...CLI, 'serve'], {
    env: { ...process.env, ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not listen within 60 s: ${output}`)), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const m = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`the server exited early (${code}): ${output}`)));
  });
  return { child, base: `http://127.0.0.1:${port}/v1`, output: () => output };
}

describe('a backup taken while the server writes, restored', () => {
  it('is one state of the database: the restored server answers exactly what the source answered at that point', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'folio-backup-live-'));
    const file = join(dir, 'folio.db');
    const backupFile = join(dir, 'backups', 'folio-backup.db');
    const env = { DATABASE_URL: `sqlite:${file}`, PUBLIC_APP_URL: 'https://folio.test', ...UNLIMITED };
    const servers: ChildProcess[] = [];
    try {
      const setupStore = openSqliteStore(file);
      const now = new Date().toISOString();
      const user = await setupStore.createUser({ email: 'writer@example.com', name: 'Writer', plan: 'pro', now });
      const secret = generateKey();
      await setupStore.createKey({ userId: user.id, name: 'writer', canWrite: true, hash: hashKey(secret), last4: lastFour(secret), now });
      // Another user's documents, which the writer's key never sees, make
      // the database some megabytes: SQLite copies it in many steps (of 100
      // pages), between which the server commits.
      const other = await setupStore.createUser({ email: 'other@example.com', name: 'Other', plan: 'pro', now });
      const filler = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(70);
      for (let i = 0; i < 1500; i++) {
        await setupStore.createDocument({ userId: other.id, orgId: null }, { title: `Filler ${i}`, contentMarkdown: `${filler}${i}`, projectId: null, threadId: null }, now);
      }
      await setupStore.close();

      const api = async (base: string, method: string, path: string, body?: unknown) => {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: res.status, body: (await res.json()) as any };
      };

      const source = await startServer(env);
      servers.push(source.child);

      // One writer, one request at a time: the writes are totally ordered,
      // and the read after each is the document as that write left it.
      // Every content names its write, so a copy tells which writes it holds.
      const MAX_DOCS = 60; // below the list's limit of 100: one list shows them all
      const current = new Map<string, Doc>();
      const answered: { write: number; doc: Doc }[] = [];
      let sent = 0;
      let acknowledged = 0;
      let stop = false;
      const writeOnce = async () => {
        const write = ++sent;
        let id: string;
        const docs = [...current.values()];
        if (docs.length < MAX_DOCS && (docs.length < 5 || write % 4 === 0)) {
          const res = await api(source.base, 'POST', '/documents', { title: `Document ${docs.length + 1}`, contentMarkdown: `# Notes\n\nwrite ${write}\n` });
          assert.equal(res.status, 201, JSON.stringify(res.body));
          id = res.body.id;
        } else {
          const doc = docs[(write * 7) % docs.length]!;
          const res = await api(source.base, 'PATCH', `/documents/${doc.id}`, {
            contentMarkdown: `# Notes\n\nwrite ${write}\n\n${doc.contentMarkdown.length > 2000 ? '' : doc.contentMarkdown}`,
            expectedUpdatedAt: doc.updatedAt,
            ...(write % 5 === 0 ? { title: `Document retitled by write ${write}` } : {}),
          });
          assert.equal(res.status, 200, JSON.stringify(res.body));
          id = doc.id;
        }
        acknowledged = write;
        const read = await api(source.base, 'GET', `/documents/${id}`);
        assert.equal(read.status, 200);
        current.set(id, read.body);
        answered.push({ write, doc: read.body });
      };
      const writer = (async () => {
        while (!stop) await writeOnce();
      })();
      const waitFor = async (done: () => boolean) => {
        while (!done()) await Promise.race([writer, new Promise((r) => setTimeout(r, 20))]);
      };

      await waitFor(() => acknowledged >= 40);
      const acknowledgedBefore = acknowledged;
      // A process of its own, as an operator runs it beside the server.
      mkdirSync(join(dir, 'backups'));
      const backup = await exec(process.execPath, [...CLI, 'backup', backupFile, '--json'], { env: { ...process.env, ...env }, timeout: 120_000 });
      const sentBy = sent;
      const printed = JSON.parse(backup.stdout);
      assert.deepEqual(printed, { file: backupFile, bytes: statSync(backupFile).size });
      // The server goes on: the restore must bring back the backup's state, not the latest.
      await waitFor(() => acknowledged >= sentBy + 20);
      stop = true;
      await writer;
      assert.ok(sentBy > acknowledgedBefore, 'writes were made while the backup ran');

      const copy = new Database(backupFile, { readonly: true });
      let rowsInCopy: number;
      try {
        assert.equal(copy.pragma('integrity_check', { simple: true }), 'ok');
        assert.deepEqual(copy.pragma('foreign_key_check'), []);
        rowsInCopy = copy.prepare('SELECT count(*) FROM documents WHERE creator_id = ?').pluck().get(user.id) as number;
        assert.equal(copy.prepare('SELECT count(*) FROM documents WHERE creator_id = ?').pluck().get(other.id), 1500);
      } finally {
        copy.close();
      }

      // The restore of docs/operations.md. Killed, not stopped cleanly: the
      // -wal beside the database may then hold writes newer than the backup,
      // which a restore that kept it would bring back over the copy.
      source.child.kill('SIGKILL');
      await once(source.child, 'exit');
      copyFileSync(backupFile, file);
      rmSync(`${file}-wal`, { force: true });
      rmSync(`${file}-shm`, { force: true });
      const restored = await startServer(env);
      servers.push(restored.child);

      const list = await api(restored.base, 'GET', '/documents?limit=100');
      assert.equal(list.status, 200);
      const docs = new Map<string, Doc>();
      for (const summary of list.body.documents as Doc[]) {
        const read = await api(restored.base, 'GET', `/documents/${summary.id}`);
        assert.equal(read.status, 200, `listed document ${summary.id} is readable`);
        docs.set(summary.id, read.body);
      }

      // The backup holds the writes up to some point k, all of them and no later one.
      const k = Math.max(...[...docs.values()].map((d) => Number(/write (\d+)/.exec(d.contentMarkdown)![1])));
      assert.ok(k >= acknowledgedBefore, `every write acknowledged before the backup began is in it (${k} < ${acknowledgedBefore})`);
      assert.ok(k <= sentBy, `no write made after the backup ended is in it (${k} > ${sentBy})`);
      const expected = new Map<string, Doc>();
      for (const { write, doc } of answered) if (write <= k) expected.set(doc.id, doc);
      assert.equal(rowsInCopy, expected.size, 'the backup holds no document the list leaves out');
      assert.deepEqual(Object.fromEntries(docs), Object.fromEntries(expected), 'each document as the source answered it after write k');
      const newestFirst = [...expected.values()].sort(
        (a, b) => (b.updatedAt ?? b.createdAt).localeCompare(a.updatedAt ?? a.createdAt) || (b.id < a.id ? -1 : b.id > a.id ? 1 : 0),
      );
      assert.deepEqual(
        list.body,
        { documents: newestFirst.map(({ contentMarkdown: _c, project: _p, ...summary }) => summary), count: expected.size },
        'the list is complete and in order',
      );
      // The copy's search index matches its documents.
      const found = await api(restored.base, 'GET', '/documents?q=notes&limit=100');
      assert.deepEqual((found.body.documents as Doc[]).map((d) => d.id).sort(), [...expected.keys()].sort());
      // And the restored server writes on from there.
      const [first] = newestFirst;
      const edit = await api(restored.base, 'PATCH', `/documents/${first!.id}`, { contentMarkdown: 'after the restore', expectedUpdatedAt: first!.updatedAt });
      assert.equal(edit.status, 200, JSON.stringify(edit.body));
    } finally {
      for (const child of servers) if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const pgServer = await postgresUrl();
const pgTools = ['pg_dump', 'pg_restore'].filter((tool) => spawnSync(tool, ['--version']).error !== undefined);
const pgSkip = pgServer === null ? POSTGRES_SKIPPED : pgTools.length > 0 ? `${pgTools.join(' and ')} not found on PATH: the PostgreSQL restore test is skipped` : false;

describeOrSkip('PostgreSQL: pg_dump, then pg_restore into an empty database', pgSkip, () => {
  it('the restored database answers every request as the original did', async () => {
    const original = await createTestDatabase(pgServer!);
    const restoredDb = await createTestDatabase(pgServer!);
    const dir = mkdtempSync(join(tmpdir(), 'folio-pg-backup-'));
    try {
      const clock = testClock();
      const open = async (url: string) => {
        const config = testConfig({ DATABASE_URL: url, ...UNLIMITED });
        const store = await openStore(config);
        const app = await buildApp({ config, store, clock });
        await app.ready();
        return { store, app, close: async () => (await app.close(), await store.close()) };
      };

      const folio = await open(original.url);
      const make = factories(folio.store, clock);
      const ada = await make.user({ email: 'ada@example.com', name: 'Ada' });
      const team = await make.org({ name: 'Équipe', plan: 'team', members: [ada.id] });
      const { secret } = await make.key(ada.id, { write: true, name: 'Claude' });
      const ids: { id: string; orgId?: string }[] = [];
      for (const [title, orgId] of [['Roadmap', undefined], ['Заметки', team.id]] as const) {
        clock.advance(1000);
        const created = await call(folio.app, 'POST', '/v1/documents', { key: secret, body: { title, contentMarkdown: `# ${title}\n\nfirst`, organizationId: orgId } });
        assert.equal(created.status, 201);
        ids.push({ id: created.body.id, orgId });
      }
      // A history: two updates, then the first revision brought back.
      const [roadmap] = ids;
      for (const content of ['second', 'third']) {
        clock.advance(1000);
        const doc = (await call(folio.app, 'GET', `/v1/documents/${roadmap!.id}`, { key: secret })).body;
        assert.equal((await call(folio.app, 'PATCH', `/v1/documents/${roadmap!.id}`, { key: secret, body: { contentMarkdown: content, expectedUpdatedAt: doc.updatedAt } })).status, 200);
      }
      clock.advance(1000);
      const latest = (await call(folio.app, 'GET', `/v1/documents/${roadmap!.id}`, { key: secret })).body;
      const restore = await call(folio.app, 'POST', `/v1/documents/${roadmap!.id}/revisions/1/restore`, { key: secret, body: { expectedUpdatedAt: latest.updatedAt } });
      assert.equal(restore.status, 200, JSON.stringify(restore.body));

      /** What the API answers about the workspace, as the key sees it. */
      const answers = async (app: typeof folio.app) => {
        const get = async (url: string) => {
          const res = await call(app, 'GET', url, { key: secret });
          assert.equal(res.status, 200, `${url}: ${res.raw}`);
          return res.body;
        };
        const result: Record<string, unknown> = {
          me: await get('/v1/me'),
          personal: await get('/v1/documents'),
          team: await get(`/v1/documents?organizationId=${team.id}`),
          search: await get('/v1/documents?q=roadmap'),
        };
        for (const { id, orgId } of ids) {
          const scope = orgId === undefined ? '' : `?organizationId=${orgId}`;
          result[id] = await get(`/v1/documents/${id}${scope}`);
          const revisions = await get(`/v1/documents/${id}/revisions${scope}`);
          result[`${id} revisions`] = revisions;
          for (const { number } of revisions.revisions as { number: number }[]) {
            result[`${id} revision ${number}`] = await get(`/v1/documents/${id}/revisions/${number}${scope}`);
          }
        }
        return result;
      };
      const before = await answers(folio.app);
      assert.equal((before[`${roadmap!.id} revisions`] as { revisions: unknown[] }).revisions.length, 4);
      await folio.close();

      // The commands of docs/operations.md.
      const dump = join(dir, 'folio.dump');
      await exec('pg_dump', ['--format=custom', `--file=${dump}`, original.url]);
      await exec('pg_restore', ['--no-owner', `--dbname=${restoredDb.url}`, dump]);

      const restored = await open(restoredDb.url);
      try {
        assert.deepEqual(await answers(restored.app), before);
        // Writes go on from where the original stopped: the next revision number, a new document.
        clock.advance(1000);
        const doc = (await call(restored.app, 'GET', `/v1/documents/${roadmap!.id}`, { key: secret })).body;
        const edit = await call(restored.app, 'PATCH', `/v1/documents/${roadmap!.id}`, { key: secret, body: { contentMarkdown: 'after the restore', expectedUpdatedAt: doc.updatedAt } });
        assert.equal(edit.status, 200);
        const revisions = (await call(restored.app, 'GET', `/v1/documents/${roadmap!.id}/revisions`, { key: secret })).body;
        assert.equal(revisions.revisions[0].number, 5);
        assert.equal((await call(restored.app, 'POST', '/v1/documents', { key: secret, body: { title: 'New', contentMarkdown: 'x' } })).status, 201);
      } finally {
        await restored.close();
      }
    } finally {
      await original.drop();
      await restoredDb.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
