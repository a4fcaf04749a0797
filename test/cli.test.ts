import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { run } from '../src/cli/program.js';
import { buildApp } from '../src/app.js';
import { openStore } from '../src/store/open.js';
import { openDatabase } from '../src/store/sqlite/database.js';
import { postgresName } from '../src/store/postgres/database.js';
import { adminService } from '../src/services/admin.js';
import { ensureDemoWorkspace } from '../src/demo/workspace.js';
import { systemClock } from '../src/domain/time.js';
import type { Store } from '../src/store/store.js';
import type { Config } from '../src/config.js';
import Database from 'better-sqlite3';
import pg from 'pg';
import { migrations as sqliteMigrations } from '../src/store/sqlite/migrations.js';
import { migrations as postgresMigrations } from '../src/store/postgres/migrations.js';
import { call, freshDatabase, queryRows, sqliteFile, TEST_DATABASE, testConfig } from './helpers.js';
import { createTestDatabase, describeOrSkip, POSTGRES_SKIPPED, postgresUrl } from './postgres.js';

/**
 * The `folio` environment of a test database: its DATABASE_URL names an
 * SQLite file in the SQLite run, a schema of its own in the PostgreSQL run
 * (test/helpers.ts `freshDatabase`).
 */
function cliEnv(config: Config): Record<string, string> {
  const url = config.database.kind === 'sqlite' ? `sqlite:${config.database.file}` : config.database.url;
  return { DATABASE_URL: url, PUBLIC_APP_URL: 'https://folio.test' };
}

/** A database of its own for one test, not yet set up, with its `folio` environment; `drop` removes it. */
async function otherDatabase() {
  const database = await freshDatabase();
  return { ...database, env: cliEnv(database.config) };
}

/** Whether a database has been set up: its SQLite file made, or tables made in its PostgreSQL schema. */
async function setUp(config: Config): Promise<boolean> {
  if (config.database.kind === 'sqlite') return existsSync(config.database.file);
  const tables = await queryRows(config, 'SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()');
  return tables.length > 0;
}

/** For a test of SQLite's own files or locks: skipped in the PostgreSQL run, saying why. */
const sqliteOnly = (why: string) => ({ skip: TEST_DATABASE === 'postgres' ? why : false });

/** Runs `folio …` in process against the database of `env`, capturing its output. */
async function folio(env: Record<string, string>, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, { out: (s) => out.push(s), err: (s) => err.push(s), env });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** Runs a command with --json and returns its one JSON object. */
async function json(env: Record<string, string>, ...argv: string[]) {
  const r = await folio(env, ...argv, '--json');
  assert.equal(r.code, 0, `folio ${argv.join(' ')}: ${r.stderr}`);
  assert.equal(r.stdout.split('\n').length, 1, 'exactly one line on stdout');
  return JSON.parse(r.stdout);
}

async function fails(env: Record<string, string>, pattern: RegExp, ...argv: string[]) {
  const r = await folio(env, ...argv);
  assert.notEqual(r.code, 0, `folio ${argv.join(' ')} should fail`);
  assert.equal(r.stdout, '', 'nothing on stdout');
  assert.match(r.stderr, pattern);
}

/** On the suite's database: an SQLite file in the SQLite run, a PostgreSQL schema in the PostgreSQL run. */
describe('folio command line', () => {
  let database: Awaited<ReturnType<typeof otherDatabase>>;
  let dir: string;
  let env: Record<string, string>;
  before(async () => {
    database = await otherDatabase();
    ({ dir, env } = database);
  });
  after(() => database.drop());

  it('migrates', async () => {
    assert.deepEqual(await json(env, 'migrate'), { migrated: true });
    assert.deepEqual(await json(env, 'migrate'), { migrated: true });
  });

  it('creates users and sets their plans', async () => {
    const u = await json(env, 'user', 'create', '--email', 'ada@example.com', '--name', 'Ada', '--plan', 'pro_monthly');
    assert.match(u.id, /^user_[0-9A-Za-z]+$/);
    assert.deepEqual(Object.keys(u), ['id']);
    assert.deepEqual(await json(env, 'user', 'set-plan', u.id, 'free'), { id: u.id, plan: 'free' });
    assert.deepEqual(await json(env, 'user', 'set-plan', u.id, 'none'), { id: u.id, plan: null });
    // --json is taken before the command's name too, and between its options.
    for (const argv of [
      ['--json', 'user', 'create', '--email', 'early@example.com'],
      ['user', '--json', 'create', '--email', 'middle@example.com'],
      ['user', 'create', '--json', '--email', 'inside@example.com'],
    ]) {
      const r = await folio(env, ...argv);
      assert.equal(r.code, 0, `folio ${argv.join(' ')}: ${r.stderr}`);
      assert.match(JSON.parse(r.stdout).id, /^user_[0-9A-Za-z]+$/, argv.join(' '));
    }
    const readable = await folio(env, 'user', 'create', '--email', 'bob@example.com');
    assert.equal(readable.code, 0);
    assert.match(readable.stdout, /Created user user_\w+ <bob@example.com>/);

    await fails(env, /already exists/, 'user', 'create', '--email', 'ADA@example.com');
    await fails(env, /--email/, 'user', 'create');
    // What GET /v1/me's schema (format: email) would not show is refused here.
    for (const bad of ['nobody', '<a@b.cd>', 'a,b@c.de', 'a@b..c', 'a"b@x.y', 'x@-bad-.com', `${'l'.repeat(65)}@example.com`, `a@${'d'.repeat(250)}.com`]) {
      await fails(env, /not an e-mail/, 'user', 'create', '--email', bad);
    }
    assert.match((await json(env, 'user', 'create', '--email', 'a.b+c@sub.example.co.uk')).id, /^user_/);
    await fails(env, /malformed plan/, 'user', 'create', '--email', 'c@example.com', '--plan', 'Pro Plan');
    await fails(env, /unknown user id "user_nope"/, 'user', 'set-plan', 'user_nope', 'pro');
    await fails(env, /malformed plan/, 'user', 'set-plan', u.id, 'PRO!');
    await fails(env, /missing required argument/, 'user', 'set-plan', u.id);
    // A name is left out for none; an empty one is refused, not shown as "" by GET /v1/me.
    // Whitespace as Unicode defines it, as for a document's content: U+0085 NEXT LINE is whitespace too.
    for (const empty of ['', '   ', '\u0085', '\t\u0085\u2029']) {
      await fails(env, /the user name must not be empty; leave out --name for a user without one/, 'user', 'create', '--email', 'd@example.com', '--name', empty);
      await fails(env, /the key name must not be empty; leave out --name for a key without one/, 'key', 'create', '--user', u.id, '--name', empty);
      await fails(env, /the organization name must not be empty/, 'org', 'create', '--name', empty);
      await fails(env, /the project name must not be empty/, 'project', 'create', '--user', u.id, '--name', empty);
      await fails(env, /the template title must not be empty/, 'template', 'create', '--user', u.id, '--title', empty);
      await fails(env, /the title must not be empty/, 'doc', 'create', '--user', u.id, '--title', empty, '--content', 'x');
      await fails(env, /the chat title must not be empty/, 'chat', 'create', '--user', u.id, '--title', empty);
    }
    assert.match((await json(env, 'user', 'create', '--email', 'd@example.com')).id, /^user_/);
  });

  it('creates organizations, sets plans, adds and removes members', async () => {
    const u = await json(env, 'user', 'create', '--email', 'org-member@example.com');
    const o = await json(env, 'org', 'create', '--name', 'Acme', '--plan', 'team');
    assert.match(o.id, /^org_/);
    assert.deepEqual(await json(env, 'org', 'set-plan', o.id, 'enterprise'), { id: o.id, plan: 'enterprise' });
    assert.deepEqual(await json(env, 'org', 'add-member', o.id, u.id), { ok: true });
    await fails(env, /already a member/, 'org', 'add-member', o.id, u.id);
    assert.deepEqual(await json(env, 'org', 'remove-member', o.id, u.id), { ok: true });
    await fails(env, /not a member/, 'org', 'remove-member', o.id, u.id);
    await fails(env, /unknown organization id "org_nope"/, 'org', 'add-member', 'org_nope', u.id);
    await fails(env, /unknown user id/, 'org', 'add-member', o.id, 'user_nope');
    await fails(env, /--name/, 'org', 'create');
    await fails(env, /malformed plan/, 'org', 'set-plan', o.id, 'Team Plan');
  });

  it('creates projects, shares them, and creates templates, chats and documents', async () => {
    const owner = await json(env, 'user', 'create', '--email', 'owner@example.com', '--plan', 'pro');
    const mate = await json(env, 'user', 'create', '--email', 'mate@example.com');
    const outsider = await json(env, 'user', 'create', '--email', 'outsider@example.com');
    const team = await json(env, 'org', 'create', '--name', 'Team');
    await json(env, 'org', 'add-member', team.id, owner.id);
    await json(env, 'org', 'add-member', team.id, mate.id);

    const p = await json(env, 'project', 'create', '--user', owner.id, '--name', 'Launch', '--description', 'All of it');
    const tp = await json(env, 'project', 'create', '--user', owner.id, '--name', 'Team P', '--org', team.id);
    assert.deepEqual(await json(env, 'project', 'share', p.id, mate.id), { ok: true });
    assert.deepEqual(await json(env, 'project', 'share', tp.id, mate.id), { ok: true });
    await fails(env, new RegExp(`^folio: project ${p.id} is already shared with user ${mate.id}$`), 'project', 'share', p.id, mate.id);
    await fails(env, /not a member/, 'project', 'share', tp.id, outsider.id);
    await fails(env, /not a member/, 'project', 'create', '--user', outsider.id, '--name', 'X', '--org', team.id);
    await fails(env, /unknown project id/, 'project', 'share', 'prj_nope', mate.id);
    await fails(env, /--name/, 'project', 'create', '--user', owner.id);

    const sys = await json(env, 'template', 'create', '--title', 'Meeting notes', '--system', '--default');
    assert.equal(typeof sys.id, 'number');
    await json(env, 'template', 'create', '--title', 'Mine', '--user', owner.id, '--description', 'd');
    await json(env, 'template', 'create', '--title', 'Ours', '--org', team.id, '--user', owner.id);
    // A team template of the operator's: --user is optional (DESIGN §5).
    const operators = await json(env, 'template', 'create', '--title', 'Team default', '--org', team.id, '--default');
    assert.equal(typeof operators.id, 'number');
    await fails(env, /say whose/, 'template', 'create', '--title', 'Nobody');
    await fails(env, /without --user or --org/, 'template', 'create', '--title', 'Both', '--system', '--user', owner.id);
    await fails(env, /not a member/, 'template', 'create', '--title', 'T', '--org', team.id, '--user', outsider.id);

    const chat = await json(env, 'chat', 'create', '--user', owner.id, '--title', 'Planning', '--project', p.id, '--messages', '12');
    assert.match(chat.id, /^[0-9a-f-]{36}$/);
    await fails(env, /whole number/, 'chat', 'create', '--user', owner.id, '--messages', 'many');
    // Past the most either database stores: PostgreSQL's is a 32-bit integer.
    await fails(env, /--messages must be a whole number from 0 to 2147483647, got "2147483648"/, 'chat', 'create', '--user', owner.id, '--messages', '2147483648');
    await fails(env, /the chat title must not be empty; leave out --title for a chat without one/, 'chat', 'create', '--user', owner.id, '--title', ' ');
    await fails(env, /not visible/, 'chat', 'create', '--user', outsider.id, '--project', p.id);

    const doc = await json(env, 'doc', 'create', '--user', owner.id, '--title', 'Plan', '--content', '# Plan', '--project', p.id, '--thread', chat.id);
    assert.deepEqual(Object.keys(doc).sort(), ['id', 'url']);
    assert.equal(doc.url, `https://folio.test/documents/${doc.id}`);
    const file = join(dir, 'note.md');
    writeFileSync(file, '# From a file\n');
    const fromFile = await json(env, 'doc', 'create', '--user', owner.id, '--title', 'File', '--file', file, '--org', team.id);
    await fails(env, /exactly one of --content MD or --file PATH/, 'doc', 'create', '--user', owner.id, '--title', 'T');
    await fails(env, /exactly one of/, 'doc', 'create', '--user', owner.id, '--title', 'T', '--content', 'x', '--file', file);
    await fails(env, /non-whitespace/, 'doc', 'create', '--user', owner.id, '--title', 'T', '--content', '   ');
    await fails(env, /non-whitespace/, 'doc', 'create', '--user', owner.id, '--title', 'T', '--content', '\u0085\u3000');
    await fails(env, /at most 200/, 'doc', 'create', '--user', owner.id, '--title', 'x'.repeat(201), '--content', 'x');
    // Text only one database could store is refused on both, as the API refuses it.
    const nul = join(dir, 'nul.md');
    writeFileSync(nul, 'a\u0000b');
    await fails(env, /^folio: the content must not hold the character U\+0000$/, 'doc', 'create', '--user', owner.id, '--title', 'T', '--file', nul);
    await fails(env, /^folio: the title must be Unicode text; it holds a lone surrogate$/, 'doc', 'create', '--user', owner.id, '--title', 'a\ud800', '--content', 'x');
    await fails(env, /^folio: the project description must not hold the character U\+0000$/, 'project', 'create', '--user', owner.id, '--name', 'P', '--description', 'a\u0000');
    await fails(env, /^folio: the chat title must not hold the character U\+0000$/, 'chat', 'create', '--user', owner.id, '--title', 'a\u0000');
    await fails(env, /unknown chat id/, 'doc', 'create', '--user', owner.id, '--title', 'T', '--content', 'x', '--thread', 'nope');
    // A chat is attached only where its document's creator sees it.
    await fails(env, /not one that user sees/, 'doc', 'create', '--user', outsider.id, '--title', 'T', '--content', 'x', '--thread', chat.id);
    await fails(env, /not one that user sees/, 'doc', 'create', '--user', owner.id, '--title', 'T', '--content', 'x', '--org', team.id, '--thread', chat.id);
    // ...and only in its own place, which the same people see: a chat of
    // the mate's own is not attached to a document in the project shared
    // with them (its owner would see the private chat's id), nor the
    // project's chat to a document outside the project.
    const matesOwn = await json(env, 'chat', 'create', '--user', mate.id, '--title', 'Private');
    await fails(env, /not one that user sees in that workspace and project: a document's chat is in its project, or outside projects with it/, 'doc', 'create', '--user', mate.id, '--title', 'T', '--content', 'x', '--project', p.id, '--thread', matesOwn.id);
    await fails(env, /not one that user sees in that workspace and outside projects/, 'doc', 'create', '--user', owner.id, '--title', 'T', '--content', 'x', '--thread', chat.id);
    assert.deepEqual(Object.keys(await json(env, 'doc', 'create', '--user', mate.id, '--title', 'Mine', '--content', 'x', '--thread', matesOwn.id)).sort(), ['id', 'url']);
    await fails(env, /cannot read --file/, 'doc', 'create', '--user', owner.id, '--title', 'T', '--file', join(dir, 'missing.md'));
    // Only UTF-8, as over the API: other bytes are refused, not stored as U+FFFD; a byte-order mark is not content.
    const latin1 = join(dir, 'latin1.md');
    writeFileSync(latin1, Buffer.from('caf\xe9 notes', 'latin1'));
    await fails(env, /latin1\.md is not UTF-8 text/, 'doc', 'create', '--user', owner.id, '--title', 'T', '--file', latin1);
    const marked = join(dir, 'marked.md');
    writeFileSync(marked, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('# Marked\n')]));
    const fromMarked = await json(env, 'doc', 'create', '--user', owner.id, '--title', 'Marked', '--file', marked);
    await fails(env, /not visible/, 'doc', 'create', '--user', outsider.id, '--title', 'T', '--content', 'x', '--project', p.id);

    // What the command line made is what the API shows.
    const key = (await json(env, 'key', 'create', '--user', owner.id)).key;
    const store = await openStore(testConfig(env));
    const app = await buildApp({ config: testConfig(env), store });
    try {
      const got = await call(app, 'GET', `/v1/documents/${doc.id}`, { key });
      assert.equal(got.status, 200);
      assert.equal(got.body.threadId, chat.id);
      assert.deepEqual(got.body.project, { id: p.id, name: 'Launch' });
      const team_ = await call(app, 'GET', `/v1/documents/${fromFile.id}?organizationId=${team.id}`, { key });
      assert.equal(team_.body.contentMarkdown, '# From a file\n');
      assert.equal((await call(app, 'GET', `/v1/documents/${fromMarked.id}`, { key })).body.contentMarkdown, '# Marked\n');
      const chats = await call(app, 'GET', '/v1/chats', { key });
      assert.equal(chats.body.chats[0].messageCount, 12);
      const templates = await call(app, 'GET', '/v1/templates', { key });
      assert.deepEqual(templates.body.templates.map((t: any) => t.title), ['Meeting notes', 'Mine']);
      const teamTemplates = await call(app, 'GET', `/v1/templates?organizationId=${team.id}&includeSystem=false`, { key });
      assert.deepEqual(
        teamTemplates.body.templates.map((t: any) => [t.title, t.isDefault]),
        [['Team default', true], ['Ours', false]],
      );
    } finally {
      await app.close();
      await store.close();
    }
  });

  it('creates keys that the server accepts, lists them without secrets, and revokes them at once', async () => {
    const u = await json(env, 'user', 'create', '--email', 'keys@example.com', '--plan', 'pro');
    const read = await json(env, 'key', 'create', '--user', u.id, '--name', 'Claude');
    const write = await json(env, 'key', 'create', '--user', u.id, '--write');
    assert.match(read.key, /^fol_[0-9A-Za-z]{38}$/);
    assert.deepEqual(read.scopes, ['connector:read']);
    assert.deepEqual(write.scopes, ['connector:read', 'connector:write']);
    assert.deepEqual(Object.keys(read).sort(), ['id', 'key', 'scopes']);
    const readable = await folio(env, 'key', 'create', '--user', u.id);
    assert.match(readable.stdout, /fol_[0-9A-Za-z]{38}/);
    await fails(env, /unknown user id/, 'key', 'create', '--user', 'user_nope');
    await fails(env, /--user/, 'key', 'create');

    const listed = await json(env, 'key', 'list', '--user', u.id);
    assert.equal(listed.keys.length, 3);
    assert.deepEqual(Object.keys(listed.keys[0]).sort(), ['createdAt', 'id', 'lastUsedAt', 'name', 'revokedAt', 'scopes']);
    const text = await folio(env, 'key', 'list', '--user', u.id);
    for (const secret of [read.key, write.key]) {
      assert.equal(JSON.stringify(listed).includes(secret.slice(4, 30)), false);
      assert.equal(text.stdout.includes(secret.slice(4, 30)), false);
      assert.ok(text.stdout.includes(`fol_…${secret.slice(-4)}`), 'shows the last four characters');
    }

    const store = await openStore(testConfig(env));
    const app = await buildApp({ config: testConfig(env), store });
    try {
      assert.equal((await call(app, 'GET', '/v1/me', { key: read.key })).body.key.name, 'Claude');
      const created = await call(app, 'POST', '/v1/documents', { key: write.key, body: { title: 't', contentMarkdown: 'x' } });
      assert.equal(created.status, 201);

      const revoked = await json(env, 'key', 'revoke', read.id);
      assert.equal(revoked.id, read.id);
      assert.match(revoked.revokedAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const refused = await call(app, 'GET', '/v1/me', { key: read.key });
      assert.equal(refused.status, 401, 'the running server refuses the revoked key on its next request');
      assert.equal((await call(app, 'GET', '/v1/me', { key: write.key })).status, 200);
      const after_ = await json(env, 'key', 'list', '--user', u.id);
      assert.equal(after_.keys.find((k: any) => k.id === read.id).revokedAt, revoked.revokedAt);
      assert.notEqual(after_.keys.find((k: any) => k.id === write.id).lastUsedAt, null);
    } finally {
      await app.close();
      await store.close();
    }
    await fails(env, /unknown key id/, 'key', 'revoke', 'key_nope');
  });

  it('prunes history, keeping the newest N revisions of every document, and refuses a --keep that is not a whole number of at least 1', async (t) => {
    const historyDatabase = await otherDatabase();
    t.after(() => historyDatabase.drop());
    const history = historyDatabase.env;
    await json(history, 'migrate');
    const u = await json(history, 'user', 'create', '--email', 'history@example.com', '--plan', 'pro');
    const key = (await json(history, 'key', 'create', '--user', u.id, '--write')).key;
    const docs = [];
    for (const title of ['Once', 'Thrice', 'Six times']) docs.push((await json(history, 'doc', 'create', '--user', u.id, '--title', title, '--content', 'v1')).id);
    const store = await openStore(testConfig(history));
    const app = await buildApp({ config: testConfig(history), store });
    const numbers = async (id: string) =>
      (await call(app, 'GET', `/v1/documents/${id}/revisions?limit=100`, { key })).body.revisions.map((r: any) => r.number);
    const edit = async (id: string, times: number) => {
      let updatedAt: string | null = null;
      for (let v = 2; v <= times + 1; v++) {
        const r = await call(app, 'PATCH', `/v1/documents/${id}`, { key, body: { contentMarkdown: `v${v}`, expectedUpdatedAt: updatedAt } });
        assert.equal(r.status, 200);
        updatedAt = (await call(app, 'GET', `/v1/documents/${id}`, { key })).body.updatedAt;
      }
    };
    try {
      await edit(docs[1]!, 2);
      await edit(docs[2]!, 5);
      const before = await Promise.all(docs.map(numbers));
      assert.deepEqual(before, [[1], [3, 2, 1], [6, 5, 4, 3, 2, 1]]);

      for (const bad of ['0', '-1', '1.5', '2.0', '1e2', '+3', ' 3', '0x10', 'two', '', '99999999999999999999']) {
        await fails(history, new RegExp(`^folio: --keep must be a whole number of at least 1, got "${bad.replace(/[.+]/g, '\\$&')}"$`), 'revisions', 'prune', '--keep', bad);
      }
      await fails(history, /required option '--keep <count>' not specified/, 'revisions', 'prune');
      assert.deepEqual(await Promise.all(docs.map(numbers)), before, 'a refused prune removes nothing');

      assert.deepEqual(await json(history, 'revisions', 'prune', '--keep', '3'), { removed: 3 });
      assert.deepEqual(await Promise.all(docs.map(numbers)), [[1], [3, 2, 1], [6, 5, 4]]);
      assert.equal((await call(app, 'GET', `/v1/documents/${docs[2]}/revisions/3`, { key })).status, 404, 'a pruned revision is gone');
      assert.equal((await call(app, 'GET', `/v1/documents/${docs[2]}/revisions/6`, { key })).body.contentMarkdown, 'v6');

      const readable = await folio(history, 'revisions', 'prune', '--keep', '1');
      assert.equal(readable.code, 0, readable.stderr);
      assert.equal(readable.stdout, 'Removed 4 revisions; every document keeps its newest revision.');
      assert.deepEqual(await Promise.all(docs.map(numbers)), [[1], [3], [6]]);
      assert.deepEqual(await json(history, 'revisions', 'prune', '--keep', '1'), { removed: 0 });
      // The current state is always the newest revision, so it survives any prune; numbering goes on after it.
      const current = (await call(app, 'GET', `/v1/documents/${docs[2]}`, { key })).body;
      assert.equal(current.contentMarkdown, 'v6');
      const r = await call(app, 'PATCH', `/v1/documents/${docs[2]}`, { key, body: { contentMarkdown: 'v7', expectedUpdatedAt: current.updatedAt } });
      assert.equal(r.status, 200);
      assert.deepEqual(await numbers(docs[2]!), [7, 6]);
    } finally {
      await app.close();
      await store.close();
    }
  });

  it('creates the demo workspace once, with fresh keys on every run', async () => {
    const first = await json(env, 'demo');
    assert.deepEqual(Object.keys(first).sort(), ['baseUrl', 'key', 'userId', 'writeKey']);
    // The API where `npm start` serves it with this configuration, not PUBLIC_APP_URL (the `url` fields' base).
    assert.equal(first.baseUrl, 'http://127.0.0.1:8787/v1');
    assert.equal((await json({ ...env, HOST: '0.0.0.0', PORT: '9100' }, 'demo')).baseUrl, 'http://localhost:9100/v1');
    const second = await json(env, 'demo');
    assert.equal(second.userId, first.userId);
    assert.notEqual(second.key, first.key);
    // The banner points to the reference page, the MCP endpoint and the team's id.
    const banner = (await folio(env, 'demo')).stdout;
    assert.match(banner, /API docs {3}http:\/\/127\.0\.0\.1:8787\/v1\/docs\n/);
    assert.match(banner, /MCP {8}http:\/\/127\.0\.0\.1:8787\/mcp /);
    const team = /team {7}(org_\w+)/.exec(banner)?.[1];

    const store = await openStore(testConfig(env));
    const app = await buildApp({ config: testConfig(env), store });
    try {
      const me = await call(app, 'GET', '/v1/me', { key: second.key });
      assert.equal(me.body.plan, 'pro_monthly');
      assert.deepEqual(me.body.organizations.map((o: { id: string }) => o.id), [team]);
      assert.equal(me.body.organizations.length, 1, 'one team, not two');
      const org = me.body.organizations[0].id;
      const docs = await call(app, 'GET', '/v1/documents?limit=100', { key: second.key });
      const teamDocs = await call(app, 'GET', `/v1/documents?limit=100&organizationId=${org}`, { key: second.key });
      assert.equal(docs.body.count + teamDocs.body.count, 12, 'a dozen documents, created once');
      assert.ok(docs.body.documents.some((d: any) => d.threadId !== null), 'one created from a chat');
      const projects = await call(app, 'GET', '/v1/projects', { key: second.key });
      assert.equal(projects.body.count, 2);
      const teamProjects = await call(app, 'GET', `/v1/projects?organizationId=${org}`, { key: second.key });
      assert.equal(teamProjects.body.count, 1);
      const chats = await call(app, 'GET', '/v1/chats', { key: second.key });
      assert.ok(chats.body.chats.every((c: any) => c.messageCount > 0));
      const templates = await call(app, 'GET', '/v1/templates', { key: second.key });
      assert.ok(templates.body.templates.some((t: any) => t.isSystem));
      const teamTemplates = await call(app, 'GET', `/v1/templates?organizationId=${org}&includeSystem=false`, { key: second.key });
      assert.equal(teamTemplates.body.count, 1);
      const written = await call(app, 'POST', '/v1/documents', { key: second.writeKey, body: { title: 't', contentMarkdown: 'x' } });
      assert.equal(written.status, 201);
      const readable = await folio(env, 'demo');
      assert.match(readable.stdout, /curl -s -H "Authorization: Bearer fol_\w+" http:\/\/127\.0\.0\.1:8787\/v1\/documents/);
    } finally {
      await app.close();
      await store.close();
    }
  });

  it('leaves the built-in templates of a database that has some as they are, its default included', async (t) => {
    const shared = await otherDatabase();
    t.after(() => shared.drop());
    await json(shared.env, 'migrate');
    const ours = await json(shared.env, 'template', 'create', '--title', 'House style', '--system', '--default');
    const demo = await json(shared.env, 'demo');
    const store = await openStore(shared.config);
    try {
      const builtIn = (await store.listTemplates({ userId: demo.userId, orgId: null }, true, 100)).filter((x) => x.isSystem);
      assert.deepEqual(builtIn.map((x) => [x.id, x.title, x.isDefault]), [[ours.id, 'House style', true]]);
    } finally {
      await store.close();
    }
  });

  it('refuses to make the demo workspace where it cannot make all of it, writing nothing', async (t) => {
    const taken = await otherDatabase();
    t.after(() => taken.drop());
    const other = taken.env;
    await json(other, 'migrate');
    await json(other, 'user', 'create', '--email', 'grace@folio.local');
    for (let run = 0; run < 2; run++) {
      await fails(other, /grace@folio\.local is already the e-mail of a user.*nothing was created/, 'demo');
    }
    const store = await openStore(testConfig(other));
    try {
      assert.equal(await store.findUserByEmail('demo@folio.local'), null);
    } finally {
      await store.close();
    }
    // The demo's own e-mail taken by a user of the operator's: no keys for that user, nothing written.
    const mineDatabase = await otherDatabase();
    t.after(() => mineDatabase.drop());
    const mine = mineDatabase.env;
    await json(mine, 'migrate');
    const user = await json(mine, 'user', 'create', '--email', 'demo@folio.local');
    await fails(mine, /demo@folio\.local is already the e-mail of a user who is not the demo's.*nothing was created/, 'demo');
    assert.deepEqual(await json(mine, 'key', 'list', '--user', user.id), { keys: [] });
  });

  it('makes all of the demo workspace or none of it: a run that fails half-way leaves nothing, and the next makes all of it', async (t) => {
    const interrupted = await otherDatabase();
    t.after(() => interrupted.drop());
    const tables = ['users', 'organizations', 'memberships', 'projects', 'project_shares', 'templates', 'chats', 'documents', 'api_keys'];
    const rows = async () => {
      const counts: [string, number][] = [];
      for (const table of tables) counts.push([table, Number((await queryRows<{ n: unknown }>(interrupted.config, `SELECT count(*) AS n FROM ${table}`))[0]!.n)]);
      return Object.fromEntries(counts);
    };
    const store = await openStore(interrupted.config); // opening it sets its schema up
    try {
      const empty = await rows();
      let documents = 0;
      const stopping = (tx: Store) => {
        const admin = adminService({ store: tx, config: testConfig(env), clock: systemClock });
        return {
          ...admin,
          async createDocument(input: Parameters<typeof admin.createDocument>[0]) {
            if (++documents === 5) throw new Error('stopped half-way');
            return admin.createDocument(input);
          },
        };
      };
      await assert.rejects(ensureDemoWorkspace(store, stopping), /stopped half-way/);
      assert.equal(documents, 5, 'users, team, projects, templates, chats and four documents were written first');
      assert.deepEqual(await rows(), empty, 'none of them is left');
    } finally {
      await store.close();
    }
    const again = await folio(interrupted.env, 'demo');
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^Created the demo workspace/);
    const made = await rows();
    assert.equal(made.documents, 12);
    assert.equal(made.users, 2);
    assert.equal(made.api_keys, 2);
  });

  it('creates a key for a user whose plan grants no API access, warning on stderr that it will answer 402 until one does', async () => {
    const unpaid = await json(env, 'user', 'create', '--email', 'unpaid@example.com', '--plan', 'free');
    const r = await folio(env, 'key', 'create', '--user', unpaid.id, '--json');
    assert.equal(r.code, 0);
    assert.deepEqual(Object.keys(JSON.parse(r.stdout)).sort(), ['id', 'key', 'scopes']);
    assert.match(r.stderr, new RegExp(`^folio: warning: no plan of user ${unpaid.id} or of their teams grants API access .* 402 plan_required`));
    const paid = await json(env, 'user', 'create', '--email', 'paid@example.com', '--plan', 'pro_monthly');
    assert.equal((await folio(env, 'key', 'create', '--user', paid.id)).stderr, '', 'no warning when a plan grants access');
    const team = await json(env, 'org', 'create', '--name', 'Paying team', '--plan', 'team');
    await json(env, 'org', 'add-member', team.id, unpaid.id);
    assert.equal((await folio(env, 'key', 'create', '--user', unpaid.id)).stderr, '', "a team's plan grants it too");
  });

  it('lists users, organizations and an organization\'s members in the order they joined, and prints its version', async (t) => {
    const lists = await otherDatabase();
    t.after(() => lists.drop());
    const listEnv = lists.env;
    await json(listEnv, 'migrate');
    assert.deepEqual(await json(listEnv, 'user', 'list'), { users: [] });
    assert.deepEqual(await json(listEnv, 'org', 'list'), { organizations: [] });
    const ada = await json(listEnv, 'user', 'create', '--email', 'ada@example.com', '--name', 'Ada', '--plan', 'pro_monthly');
    const bob = await json(listEnv, 'user', 'create', '--email', 'bob@example.com');
    const team = await json(listEnv, 'org', 'create', '--name', 'Engines', '--plan', 'team');
    await json(listEnv, 'org', 'add-member', team.id, bob.id);
    await json(listEnv, 'org', 'add-member', team.id, ada.id);
    const users = (await json(listEnv, 'user', 'list')).users;
    assert.deepEqual(users.map((u: any) => [u.id, u.email, u.name, u.plan]), [[ada.id, 'ada@example.com', 'Ada', 'pro_monthly'], [bob.id, 'bob@example.com', null, null]]);
    for (const u of users) assert.match(u.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const orgs = (await json(listEnv, 'org', 'list')).organizations;
    assert.deepEqual(orgs.map((o: any) => [o.id, o.name, o.plan]), [[team.id, 'Engines', 'team']]);
    const members = (await json(listEnv, 'org', 'members', team.id)).members;
    assert.deepEqual(members.map((m: any) => Object.keys(m).sort()), [['email', 'id', 'joinedAt', 'name'], ['email', 'id', 'joinedAt', 'name']]);
    assert.deepEqual(members.map((m: any) => m.id), [bob.id, ada.id], 'in the order they joined');
    await fails(listEnv, /unknown organization id "org_nope"/, 'org', 'members', 'org_nope');
    const text = await folio(listEnv, 'user', 'list');
    assert.match(text.stdout, new RegExp(`^${ada.id}  ada@example.com  Ada  pro_monthly`));
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.deepEqual(await json(listEnv, '--version'), { version: pkg.version });
    assert.equal((await folio(listEnv, '--version')).stdout, pkg.version);
  });

  it('never creates a database but to set one up: pointed at a missing SQLite file, or a PostgreSQL database without Folio\'s tables, other commands stop, naming it', async (t) => {
    // The SQLite run's file is in a folder that does not exist yet; the PostgreSQL run's schema exists, empty.
    const fresh = await otherDatabase();
    t.after(() => fresh.drop());
    const { config } = fresh;
    const file = config.database.kind === 'sqlite' ? join(fresh.dir, 'missing', 'folio.db') : null;
    const freshEnv = file === null ? fresh.env : { ...fresh.env, DATABASE_URL: `sqlite:${file}` };
    const why =
      file === null
        ? `the database ${postgresName(fresh.env.DATABASE_URL!)} holds no Folio schema`
        : `the database file "${file}" does not exist`;
    const setUpNow = () => (file === null ? setUp(config) : existsSync(file));
    for (const argv of [['user', 'list'], ['org', 'list'], ['key', 'list', '--user', 'user_x'], ['user', 'create', '--email', 'x@example.com'], ['revisions', 'prune', '--keep', '1']]) {
      const r = await folio(freshEnv, ...argv);
      assert.equal(r.code, 1, argv.join(' '));
      assert.equal(r.stderr, `folio: DATABASE_URL: ${why}; create it with "folio migrate" (or "folio demo"), or point DATABASE_URL at an existing one`);
      assert.equal(await setUpNow(), false, `${argv.join(' ')} set the database up`);
    }
    assert.deepEqual(await json(freshEnv, 'migrate'), { migrated: true });
    assert.equal(await setUpNow(), true);
    assert.deepEqual(await json(freshEnv, 'user', 'list'), { users: [] });
  });

  it('has --help on every command and group', async () => {
    for (const argv of [[], ['user'], ['user', 'create'], ['user', 'set-plan'], ['org'], ['org', 'create'], ['org', 'set-plan'], ['org', 'add-member'], ['org', 'remove-member'], ['org', 'list'], ['org', 'members'], ['user', 'list'], ['key'], ['key', 'create'], ['key', 'list'], ['key', 'revoke'], ['project'], ['project', 'create'], ['project', 'share'], ['template', 'create'], ['chat', 'create'], ['doc', 'create'], ['revisions'], ['revisions', 'prune'], ['serve'], ['migrate'], ['demo']]) {
      const r = await folio(env, ...argv, '--help');
      assert.equal(r.code, 0, argv.join(' '));
      assert.match(r.stdout, /^Usage: folio/, argv.join(' '));
    }
    const keyHelp = (await folio(env, 'key', 'create', '--help')).stdout;
    assert.match(keyHelp, /--user <userId>\s+the user the key acts as \(required\)/);
    assert.doesNotMatch(keyHelp, /--name <name>[^\n]*\(required\)/);
    const unknown = await folio(env, 'frobnicate');
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /unknown command/);
  });

  it('stops with a message naming a bad configuration variable', async () => {
    const r = await folio({ DATABASE_URL: 'mysql://x' }, 'migrate');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^folio: DATABASE_URL: /);
  });

  it('refuses sqlite::memory:, where what it wrote would be gone when it ends, rather than report a user or a key made', async () => {
    const memory = { DATABASE_URL: 'sqlite::memory:' };
    for (const argv of [['migrate'], ['demo'], ['user', 'create', '--email', 'gone@example.com'], ['user', 'list'], ['org', 'create', '--name', 'Gone'], ['revisions', 'prune', '--keep', '1']]) {
      const r = await folio(memory, ...argv, '--json');
      assert.equal(r.code, 1, argv.join(' '));
      assert.equal(r.stdout, '', `${argv.join(' ')}: nothing reported made`);
      assert.match(r.stderr, /^folio: DATABASE_URL: sqlite::memory: is a database in one process's memory, which no other process can read: /, argv.join(' '));
    }
  });

  it('stops with a message naming DATABASE_URL when its file is no database or cannot be opened', sqliteOnly('about SQLite files'), async () => {
    const notADatabase = join(dir, 'notes.txt');
    writeFileSync(notADatabase, 'not a database, just notes\n'.repeat(200));
    for (const file of [notADatabase, dir]) {
      const r = await folio({ DATABASE_URL: `sqlite:${file}` }, 'migrate');
      assert.equal(r.code, 1, file);
      assert.match(r.stderr, new RegExp(`^folio: DATABASE_URL: cannot open the database file "${file}": `), file);
    }
  });

  it('serve stops at once, naming PORT or HOST, when it cannot listen', async () => {
    const exec = promisify(execFile);
    const busy = await new Promise<import('node:net').Server>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => resolve(server));
    });
    try {
      const port = String((busy.address() as import('node:net').AddressInfo).port);
      for (const [vars, pattern] of [
        [{ PORT: port, HOST: '127.0.0.1' }, new RegExp(`^folio: PORT: ${port} is already in use on 127.0.0.1$`, 'm')],
        [{ PORT: '0', HOST: '10.255.255.1' }, /^folio: HOST: "10.255.255.1" is not an address of this machine/m],
      ] as const) {
        // Said before the database is opened: an upgrade of its schema can take tens of seconds.
        const unopened = await otherDatabase();
        try {
          // Without the fix the server's background thread kept it running: the timeout fails the test.
          await assert.rejects(
            exec(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve'], {
              env: { ...process.env, ...env, ...vars, DATABASE_URL: unopened.env.DATABASE_URL!, LOG_LEVEL: 'silent' },
              timeout: 30_000,
            }),
            (err: any) => {
              assert.equal(err.killed, false, 'it stopped by itself');
              assert.equal(err.code, 1);
              assert.match(err.stderr, pattern);
              assert.doesNotMatch(err.stderr, /database schema/);
              return true;
            },
          );
          assert.equal(await setUp(unopened.config), false, 'the database was not set up');
        } finally {
          await unopened.drop();
        }
      }
    } finally {
      busy.close();
    }
  });

  it('reads while another process holds the write lock, and says the database is busy when a write waits too long', sqliteOnly("about SQLite's write lock"), async () => {
    const file = sqliteFile(testConfig(env));
    const u = await json(env, 'user', 'create', '--email', 'locked@example.com');
    const holder = openDatabase(file);
    holder.exec('BEGIN IMMEDIATE');
    try {
      // Opening the store took the write lock to look for migrations: this waited 5 s and failed.
      const listed = await json(env, 'key', 'list', '--user', u.id);
      assert.deepEqual(listed.keys, []);
      const started = Date.now();
      await fails(env, /^folio: the database is busy: another process held its write lock for more than 5 s .*try again$/, 'user', 'create', '--email', 'late@example.com');
      assert.ok(Date.now() - started >= 4_000, 'it waited for the lock first');
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    assert.match((await json(env, 'user', 'create', '--email', 'late@example.com')).id, /^user_/);
  });

  it('reads while another session holds a lock on a table, and says the database is busy when a write waits too long', { skip: TEST_DATABASE === 'postgres' ? false : "about PostgreSQL's locks: the SQLite run holds the write lock instead (above)" }, async () => {
    const { config } = database;
    if (config.database.kind !== 'postgres') throw new Error('this test needs PostgreSQL');
    const u = await json(env, 'user', 'create', '--email', 'pg-locked@example.com');
    // An operator's session that locked the users table for writes, and left its transaction open.
    const holder = new pg.Client({ connectionString: config.database.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE users IN EXCLUSIVE MODE');
      assert.equal((await json(env, 'user', 'list')).users.some((x: { id: string }) => x.id === u.id), true);
      const started = Date.now();
      await fails(env, /^folio: the database is busy: another session held a lock this command needs for more than 5 s .*try again$/, 'user', 'create', '--email', 'pg-late@example.com');
      assert.ok(Date.now() - started >= 4_000, 'it waited for the lock first');
    } finally {
      await holder.query('ROLLBACK').catch(() => {});
      await holder.end();
    }
    assert.match((await json(env, 'user', 'create', '--email', 'pg-late@example.com')).id, /^user_/);
  });

  it('says what is wrong with a .env that cannot be read, as the first line of its error output', async () => {
    const exec = promisify(execFile);
    const cwd = mkdtempSync(join(tmpdir(), 'folio-env-'));
    try {
      mkdirSync(join(cwd, '.env'));
      const entry = join(process.cwd(), 'src/cli/index.ts');
      await assert.rejects(
        // tsx named by its file: the working directory is outside the project.
        exec(process.execPath, ['--import', import.meta.resolve('tsx'), entry, 'migrate', '--json'], { cwd, env: { ...process.env, ...env } }),
        (err: any) => {
          assert.equal(err.code, 1);
          assert.equal(err.stdout, '');
          assert.equal(err.stderr, `folio: .env: cannot read the configuration file in ${cwd}: it is not a file\n`);
          return true;
        },
      );
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('works as a real process: one JSON object on stdout, errors on stderr with a non-zero status', async () => {
    const exec = promisify(execFile);
    const cli = ['--import', 'tsx', 'src/cli/index.ts'];
    const ok = await exec(process.execPath, [...cli, 'user', 'create', '--email', 'proc@example.com', '--json'], { env: { ...process.env, ...env } });
    assert.match(ok.stdout, /^\{"id":"user_\w+"\}\n$/);
    await assert.rejects(
      exec(process.execPath, [...cli, 'user', 'create', '--email', 'proc@example.com', '--json'], { env: { ...process.env, ...env } }),
      (err: any) => err.code === 1 && err.stdout === '' && /already exists/.test(err.stderr),
    );
  });

  it('says in one line, with a non-zero status, when its output cannot be written: a closed pipe or a full disk, never a stack trace', async () => {
    const cli = [process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'user', 'list', '--json']] as const;
    const finish = (child: ReturnType<typeof spawn>) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        let stderr = '';
        child.stderr!.on('data', (chunk) => (stderr += chunk));
        child.on('close', (code) => resolve({ code, stderr }));
      });
    const outputs: { name: string; start(): ReturnType<typeof spawn> }[] = [
      {
        name: 'a reader that went away (EPIPE)',
        start() {
          const child = spawn(...cli, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
          child.stdout!.destroy();
          return child;
        },
      },
    ];
    if (existsSync('/dev/full')) {
      outputs.push({
        name: 'a full disk (ENOSPC)',
        start: () => spawn(...cli, { env: { ...process.env, ...env }, stdio: ['ignore', openSync('/dev/full', 'w'), 'pipe'] }),
      });
    }
    for (const output of outputs) {
      const { code, stderr } = await finish(output.start());
      assert.equal(code, 1, output.name);
      assert.match(stderr, /^folio: cannot write to standard output: E[A-Z]+\n$/, output.name);
    }
  });

  it('runs Node.js with the same flags as npm start, which set the memory the server keeps (docs/operations.md)', () => {
    const flags = (line: string) => line.split(/\s+/).filter((word) => word.startsWith('--'));
    const shebang = readFileSync('src/cli/index.ts', 'utf8').split('\n')[0]!;
    const start = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start;
    assert.match(shebang, /^#!\/usr\/bin\/env -S node /);
    assert.ok(flags(start).length > 0);
    assert.deepEqual(flags(shebang), flags(start));
  });
});

/** The suite's database, as the names of the tests below say it. */
const DATABASE_NAME = TEST_DATABASE === 'postgres' ? 'PostgreSQL' : 'SQLite';

/**
 * A database of its own on the suite's database, and how to make it look
 * upgraded by a newer Folio, as each database records it: its schema one
 * version past this Folio's last migration.
 */
async function upgradableDatabase() {
  const database = await otherDatabase();
  const { config } = database;
  const withFile = <T>(work: (db: Database.Database) => T): T => {
    const db = new Database(sqliteFile(config));
    try {
      return work(db);
    } finally {
      db.close();
    }
  };
  return {
    env: { DATABASE_URL: database.env.DATABASE_URL! },
    async upgrade() {
      if (config.database.kind === 'sqlite') withFile((db) => db.pragma(`user_version = ${sqliteMigrations.length + 1}`));
      else await queryRows(config, 'INSERT INTO folio_schema_versions (version) VALUES (?)', postgresMigrations.length + 1);
    },
    async version() {
      if (config.database.kind === 'sqlite') return withFile((db) => db.pragma('user_version', { simple: true }) as number);
      return Number((await queryRows<{ v: unknown }>(config, 'SELECT max(version) AS v FROM folio_schema_versions'))[0]!.v);
    },
    close: () => database.drop(),
  };
}

// Needs no PostgreSQL server, so the SQLite run, which runs with or without one, tests it once.
describeOrSkip('folio and a PostgreSQL server it cannot use', TEST_DATABASE === 'postgres' && 'needs no PostgreSQL server: tested in the SQLite run', () => {
  it('names the database, never its password, whatever the connection failed on', async () => {
    // A server that takes the connection and closes it at once: the driver's error carries no code.
    const closer = await new Promise<import('node:net').Server>((resolve) => {
      const server = createServer((socket) => socket.destroy());
      server.listen(0, '127.0.0.1', () => resolve(server));
    });
    const dir = mkdtempSync(join(tmpdir(), 'folio-cli-'));
    try {
      const port = (closer.address() as import('node:net').AddressInfo).port;
      const url = `postgres://folio:hunter2-secret@127.0.0.1:${port}/folio`;
      const named = `cannot connect to PostgreSQL at 127.0.0.1:${port}/folio: Connection terminated unexpectedly`;
      const listed = await folio({ DATABASE_URL: url }, 'user', 'list', '--json');
      assert.equal(listed.code, 1);
      assert.equal(listed.stderr, `folio: DATABASE_URL: ${named}`);
      const source = { DATABASE_URL: `sqlite:${join(dir, 'folio.db')}` };
      await json(source, 'migrate');
      const copied = await folio(source, 'copy', '--to', url);
      assert.equal(copied.code, 1);
      assert.equal(copied.stderr, `folio: cannot connect to PostgreSQL at 127.0.0.1:${port}/folio (--to): Connection terminated unexpectedly`);
    } finally {
      closer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// A database of its own on the test server, whose connections are made read-only by their options: the SQLite run tests it once.
const readOnlyServer = await postgresUrl();
describeOrSkip(
  'folio and a PostgreSQL database that takes read-only transactions only',
  TEST_DATABASE === 'postgres' ? 'tested in the SQLite run' : readOnlyServer === null && POSTGRES_SKIPPED,
  () => {
    it('refuses to serve it, use it or copy into it, saying so, rather than serving reads and failing every write', async () => {
      const database = await createTestDatabase(readOnlyServer!);
      const dir = mkdtempSync(join(tmpdir(), 'folio-cli-'));
      try {
        assert.deepEqual(await json({ DATABASE_URL: database.url }, 'migrate'), { migrated: true });
        // As a standby server, or default_transaction_read_only set for the database or the role, would.
        const url = new URL(database.url);
        url.searchParams.set('options', '-c default_transaction_read_only=on');
        const why = `PostgreSQL at ${postgresName(url.toString())} takes read-only transactions only (a standby server, or default_transaction_read_only set), and Folio writes to its database`;
        for (const argv of [['user', 'list', '--json'], ['user', 'create', '--email', 'ada@example.com'], ['migrate'], ['serve']]) {
          const r = await folio({ DATABASE_URL: url.toString(), PORT: '0' }, ...argv);
          assert.equal(r.code, 1, `folio ${argv.join(' ')}: ${r.stderr}`);
          assert.equal(r.stderr, `folio: DATABASE_URL: ${why}`);
        }
        const source = { DATABASE_URL: `sqlite:${join(dir, 'folio.db')}` };
        await json(source, 'migrate');
        const copied = await folio(source, 'copy', '--to', url.toString());
        assert.equal(copied.code, 1);
        assert.equal(copied.stderr, `folio: --to: ${why}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
        await database.drop();
      }
    });
  },
);

describe(`folio migrate (${DATABASE_NAME})`, () => {
  it('says the database is up to date, naming it without the password its URL may hold', async () => {
    const db = await upgradableDatabase();
    try {
      const given = new URL(db.env.DATABASE_URL!);
      // PostgreSQL's trust authentication (as on the test server) takes any password.
      if (given.protocol === 'postgres:') given.password = 'hunter2-secret';
      const r = await folio({ DATABASE_URL: given.toString() }, 'migrate');
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout, /hunter2/);
      const name = given.protocol === 'postgres:' ? `PostgreSQL at ${given.host}${given.pathname}` : given.pathname;
      assert.equal(r.stdout, `Database ${name} is up to date.`);
    } finally {
      await db.close();
    }
  });
});

describe(`folio on a database a newer Folio upgraded (${DATABASE_NAME})`, () => {
  it('refuses to serve, migrate or write to it, saying why, and leaves it as it was', async () => {
    const db = await upgradableDatabase();
    try {
      assert.deepEqual(await json(db.env, 'migrate'), { migrated: true });
      await db.upgrade();
      const newer = await db.version();
      const known = newer - 1;
      const why = `folio: DATABASE_URL: the database's schema is version ${newer}, and this Folio knows versions up to ${known}: a newer Folio has upgraded this database; run that version, or restore a backup made before the upgrade`;
      for (const argv of [['migrate', '--json'], ['user', 'create', '--email', 'late@example.com', '--json'], ['serve']]) {
        const r = await folio({ ...db.env, PORT: '0' }, ...argv);
        assert.equal(r.code, 1, `folio ${argv.join(' ')}`);
        assert.equal(r.stdout, '');
        assert.equal(r.stderr, why);
      }
      assert.equal(await db.version(), newer);
    } finally {
      await db.close();
    }
  });
});
