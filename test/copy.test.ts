import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { run } from '../src/cli/program.js';
import type { Config } from '../src/config.js';
import { COPIED_TABLES, type TableCounts } from '../src/store/copy.js';
import { openStore } from '../src/store/open.js';
import { DOCUMENTS_WITH_CONTENT } from '../src/store/postgres/migrations.js';
import { contentLexemes, searchVectorSql, titleLexemes } from '../src/store/postgres/search.js';
import type { Store } from '../src/store/store.js';
import { call, factories, queryRows, TEST_DATABASE, testClock, testConfig } from './helpers.js';
import { createTestDatabase, describeOrSkip, POSTGRES_SKIPPED, postgresUrl, type TestDatabase } from './postgres.js';

/**
 * `folio copy --to postgres://…` (DESIGN §5, §8): a populated SQLite
 * deployment copied into PostgreSQL answers every API request as the
 * original does.
 */

async function folio(env: Record<string, string>, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(argv, { out: (s) => out.push(s), err: (s) => err.push(s), env });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** Every copied table's rows, in a fixed order: what a refused copy must leave as it was. */
async function snapshot(config: Config): Promise<unknown> {
  const tables: Record<string, unknown> = {};
  for (const table of COPIED_TABLES) tables[table] = await queryRows(config, `SELECT * FROM ${table} ORDER BY 1, 2`);
  return tables;
}

async function counts(config: Config): Promise<TableCounts> {
  const result = {} as TableCounts;
  for (const table of COPIED_TABLES) result[table] = Number((await queryRows<{ n: number | string }>(config, `SELECT count(*) AS n FROM ${table}`))[0]!.n);
  return result;
}

const ENV = { READ_LIMIT_PER_MIN: '1000000', WRITE_LIMIT_PER_MIN: '1000000' };

const server = await postgresUrl();
const skip = TEST_DATABASE === 'postgres' ? 'copies SQLite into PostgreSQL itself, in the SQLite run' : server === null ? POSTGRES_SKIPPED : false;

describeOrSkip('folio copy --to postgres://…', skip, () => {
  let database: TestDatabase;
  let dir: string;
  let env: Record<string, string>;
  let config: Config;
  let store: Store;
  let app: FastifyInstance;
  const clock = testClock();
  /** Every key's secret, revoked and read-only ones included. */
  const keys: { name: string; secret: string; live: boolean }[] = [];
  const docs: { id: string; orgId: string | null }[] = [];
  const orgIds: string[] = [];
  const projectIds: string[] = [];

  before(async () => {
    database = await createTestDatabase(server!);
    dir = mkdtempSync(join(tmpdir(), 'folio-copy-'));
    env = { DATABASE_URL: `sqlite:${join(dir, 'folio.db')}`, PUBLIC_APP_URL: 'https://folio.test', LOG_LEVEL: 'silent' };
    config = testConfig({ ...env, ...ENV });
    store = await openStore(config);
    app = await buildApp({ config, store, clock });
    await app.ready();
    await populate();
  });

  after(async () => {
    await app?.close();
    await store?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A deployment with a bit of everything, written through the store (as the command line writes) and the API (as keys write). */
  async function populate() {
    const make = factories(store, clock);
    const tick = () => clock.advance(1000);
    const ada = await make.user({ email: 'ada@example.com', name: 'Ada Lovelace', plan: 'pro_monthly' });
    tick();
    const bob = await make.user({ email: 'Bob@Example.com', name: 'Bob', plan: null });
    const cleo = await make.user({ email: 'cleo@example.com', name: null, plan: 'enterprise' });
    tick();
    const dmitri = await make.user({ email: 'dmitri@example.com', name: 'Дмитрий Шостакович', plan: 'free' });
    const alpha = await make.org({ name: 'Équipe Alpha', plan: 'team_monthly' });
    const ten = await make.org({ name: 'Team 10', plan: 'enterprise' });
    const two = await make.org({ name: 'Team 2', plan: null });
    orgIds.push(alpha.id, ten.id, two.id);
    tick();
    // Bob has no plan of his own: Me.plan is his earliest-joined team's, and two of his joins share a millisecond.
    await store.addMember(two.id, bob.id, new Date(clock()).toISOString());
    tick();
    await store.addMember(ten.id, bob.id, new Date(clock()).toISOString());
    await store.addMember(alpha.id, bob.id, new Date(clock()).toISOString());
    await store.addMember(alpha.id, ada.id, new Date(clock()).toISOString());
    tick();
    await store.addMember(alpha.id, cleo.id, new Date(clock()).toISOString());
    await store.addMember(two.id, dmitri.id, new Date(clock()).toISOString());

    const key = async (name: string, userId: string, o: { write?: boolean; keyName?: string | null } = {}) => {
      const k = await make.key(userId, { write: o.write, name: o.keyName === undefined ? name : o.keyName });
      keys.push({ name, secret: k.secret, live: true });
      return k;
    };
    const adaWrite = await key('ada write', ada.id, { write: true, keyName: 'Claude' });
    await key('ada read', ada.id);
    const revoked = await key('ada revoked', ada.id, { write: true });
    tick();
    await store.revokeKey(revoked.record.id, new Date(clock()).toISOString());
    keys.at(-1)!.live = false;
    const bobWrite = await key('bob write', bob.id, { write: true, keyName: 'Агент' });
    const cleoWrite = await key('cleo write', cleo.id, { write: true, keyName: null });
    await key('cleo read', cleo.id);
    await key('dmitri read', dmitri.id);
    tick();

    const adaShared = await make.project(ada.id, { name: 'Roadmap', description: 'Où allons-nous ?', shareWith: [cleo.id] });
    const adaPrivate = await make.project(ada.id, { name: 'Private' });
    tick();
    const alphaShared = await make.project(ada.id, { orgId: alpha.id, name: 'Σχέδιο', shareWith: [bob.id] });
    const alphaBob = await make.project(bob.id, { orgId: alpha.id, name: 'Bob only', description: null });
    projectIds.push(adaShared.id, adaPrivate.id, alphaShared.id, alphaBob.id);
    tick();

    await make.template({ title: 'Meeting notes', description: 'Built in', isDefault: true });
    await make.template({ title: 'Blank' });
    tick();
    await make.template({ title: 'Ada’s default', workspaceId: ada.id, creatorId: ada.id, isDefault: true });
    await make.template({ title: 'Alpha retro', workspaceId: alpha.id, creatorId: null });
    await make.template({ title: 'Ten weekly', workspaceId: ten.id, creatorId: bob.id, isDefault: true });
    tick();

    const chat = await make.chat(ada.id, { title: 'Ελληνικά σημειώσεις', messages: 12 });
    await make.chat(ada.id, { projectId: adaShared.id, title: 'Crème brûlée planning' });
    await make.chat(bob.id, { orgId: alpha.id, title: null, messages: 3 });
    await make.chat(ada.id, { projectId: alphaShared.id, title: 'Съешь же ещё' });
    tick();

    // Written as the command line writes: no author.
    const cli = await make.document(ada.id, { title: 'From the command line', content: 'Plain ASCII words, the end.', threadId: chat.id });
    docs.push({ id: cli.id, orgId: null });
    const texts = [
      ['Crème brûlée', '# Crème brûlée à la façon de Noël\n\nÇa coûte 3 € — naïve café, Straße, Ørsted.'],
      ['Η γρήγορη αλεπού', 'Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο. Ελληνικά ΓΡΉΓΟΡΗ.'],
      ['Съешь же', 'Съешь же ещё этих мягких французских булок, да выпей чаю. ЁЛКА ёлка.'],
      ['Mixed 🚀', 'c++ and "quotes" AND NEAR( x — emoji 🚀 stay text; ﬁnance ＡＢＣ'],
    ] as const;
    const places: { key: string; orgId?: string; projectId?: string }[] = [
      { key: adaWrite.secret },
      { key: adaWrite.secret, projectId: adaShared.id },
      { key: adaWrite.secret, projectId: adaPrivate.id },
      { key: bobWrite.secret, orgId: alpha.id },
      { key: adaWrite.secret, orgId: alpha.id, projectId: alphaShared.id },
      { key: bobWrite.secret, orgId: alpha.id, projectId: alphaBob.id },
      { key: bobWrite.secret },
      { key: cleoWrite.secret },
    ];
    for (const [i, place] of places.entries()) {
      for (const [j, [title, content]] of texts.entries()) {
        if ((i + j) % 2 === 1) continue;
        const body = { title: `${title} ${i}`, contentMarkdown: content, organizationId: place.orgId, projectId: place.projectId };
        const created = await call(app, 'POST', '/v1/documents', { key: place.key, body });
        assert.equal(created.status, 201, created.raw);
        docs.push({ id: created.body.id, orgId: place.orgId ?? null });
        // Every second creation in the same millisecond as the one before: ties are ordered by id.
        if (j % 2 === 0) tick();
      }
    }
    // History: several updates of most documents, some by another user's key, and a restore.
    for (const [i, doc] of docs.entries()) {
      const writer = doc.orgId === null ? (i % 3 === 0 ? cleoWrite : adaWrite) : i % 2 === 0 ? bobWrite : adaWrite;
      for (let round = 0; round < i % 4; round++) {
        const q = doc.orgId === null ? '' : `?organizationId=${doc.orgId}`;
        const current = await call(app, 'GET', `/v1/documents/${doc.id}${q}`, { key: writer.secret });
        if (current.status !== 200) break;
        tick();
        const body = {
          contentMarkdown: `${current.body.contentMarkdown}\n\nRound ${round}: édition ${round} — ревизия ${round}, αναθεώρηση ${round}.`,
          expectedUpdatedAt: current.body.updatedAt,
          ...(round === 1 ? { title: `${current.body.title} (révisé)` } : {}),
          ...(doc.orgId === null ? {} : { organizationId: doc.orgId }),
        };
        const updated = await call(app, 'PATCH', `/v1/documents/${doc.id}`, { key: writer.secret, body });
        assert.equal(updated.status, 200, updated.raw);
        if (round === 2) {
          const { updatedAt } = (await call(app, 'GET', `/v1/documents/${doc.id}${q}`, { key: writer.secret })).body;
          tick();
          const restored = await call(app, 'POST', `/v1/documents/${doc.id}/revisions/1/restore`, {
            key: writer.secret,
            body: { expectedUpdatedAt: updatedAt, ...(doc.orgId === null ? {} : { organizationId: doc.orgId }) },
          });
          assert.equal(restored.status, 200, restored.raw);
        }
      }
    }
  }

  /** Every request the API answers with content, for every key in every scope: to be answered alike by both apps. */
  async function compareEverything(source: FastifyInstance, copy: FastifyInstance): Promise<number> {
    let compared = 0;
    const same = async (url: string, key: string) => {
      const a = await call(source, 'GET', url, { key });
      const b = await call(copy, 'GET', url, { key });
      assert.deepEqual({ status: b.status, body: b.body }, { status: a.status, body: a.body }, `GET ${url} differs on the copy`);
      compared++;
      return a;
    };
    const queries = ['crème', 'CREME BRU', 'creme', 'γρηγορη', 'ΓΡΉΓΟΡΗ αλε', 'съешь', 'ЕЩЕ', 'ёлка', 'strasse', 'orsted', 'naive cafe', 'c++', '"quotes" AND', 'NEAR(', '🚀', 'finance', 'abc', 'round 2', 'r', 'ré', 'révisé', 'nothingmatches'];
    for (const { secret } of keys) {
      for (const orgId of [null, ...orgIds]) {
        const scope = orgId === null ? '' : `organizationId=${orgId}`;
        const q = (more: string) => `?${[scope, more].filter((s) => s !== '').join('&')}`;
        if (orgId === null) await same('/v1/me', secret);
        await same(`/v1/organizations`, secret);
        await same(`/v1/projects${q('limit=100')}`, secret);
        await same(`/v1/templates${q('limit=100')}`, secret);
        await same(`/v1/templates${q('includeSystem=false')}`, secret);
        await same(`/v1/chats${q('limit=100')}`, secret);
        await same(`/v1/chats${q(`q=${encodeURIComponent('ÈME')}`)}`, secret);
        await same(`/v1/documents${q('limit=100')}`, secret);
        await same(`/v1/documents${q('limit=3')}`, secret);
        for (const text of queries) await same(`/v1/documents${q(`limit=100&q=${encodeURIComponent(text)}`)}`, secret);
        for (const projectId of projectIds) {
          await same(`/v1/documents${q(`projectId=${projectId}&limit=100`)}`, secret);
          await same(`/v1/documents${q(`projectId=${projectId}&q=round`)}`, secret);
          await same(`/v1/chats${q(`projectId=${projectId}`)}`, secret);
        }
        for (const doc of docs) {
          await same(`/v1/documents/${doc.id}${q('')}`, secret);
          const history = await same(`/v1/documents/${doc.id}/revisions${q('limit=100')}`, secret);
          await same(`/v1/documents/${doc.id}/revisions${q('limit=2')}`, secret);
          const numbers: number[] = history.status === 200 ? history.body.revisions.map((r: { number: number }) => r.number) : [1];
          for (const n of [...numbers, Math.max(...numbers) + 1]) await same(`/v1/documents/${doc.id}/revisions/${n}${q('')}`, secret);
        }
      }
    }
    return compared;
  }

  let target: string;
  let targetConfig: Config;

  it('copies everything; every API response of the copy is the original’s', async () => {
    target = await database.schemaUrl();
    targetConfig = testConfig({ DATABASE_URL: target, DATABASE_POOL_MAX: '4', ...ENV });
    const before = await counts(config);
    assert.ok(before.document_revisions > before.documents, 'the documents have history');

    const r = await folio(env, 'copy', '--to', target, '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.split('\n').length, 1);
    const { copied } = JSON.parse(r.stdout) as { copied: TableCounts };
    assert.deepEqual(Object.keys(copied), [...COPIED_TABLES]);
    assert.deepEqual(copied, before, 'the counts printed are the source’s');
    assert.deepEqual(await counts(targetConfig), before, 'and the copy’s');

    const copyStore = await openStore(targetConfig);
    const copyApp = await buildApp({ config: testConfig({ ...env, ...ENV, DATABASE_URL: target }), store: copyStore, clock });
    await copyApp.ready();
    try {
      // The secrets still open the copy: the hashes came over as they were.
      for (const { name, secret, live } of keys) {
        const me = await call(copyApp, 'GET', '/v1/me', { key: secret });
        assert.equal(me.status, live ? (name.startsWith('dmitri') ? 402 : 200) : 401, `${name} on the copy`);
      }
      const compared = await compareEverything(app, copyApp);
      assert.ok(compared > 3000, `${compared} requests compared`);

      // Each document's search words are the PostgreSQL store's own.
      const rows = await queryRows<{ id: string; title: string; content: string; workspace_id: string; project_id: string | null; title_words: string[]; search: string }>(
        targetConfig,
        `SELECT d.id, d.title, c.content, d.workspace_id, d.project_id, d.title_words, d.search::text AS search ${DOCUMENTS_WITH_CONTENT}`,
      );
      for (const d of rows) {
        const sql = `SELECT ${searchVectorSql('v.title', 'v.content', 'v.workspace', 'v.project')}::text AS search
          FROM (SELECT ?::text[] AS title, ?::text[] AS content, ?::text AS workspace, ?::text AS project) v`;
        const [expected] = await queryRows<{ search: string }>(targetConfig, sql, titleLexemes(d.title), contentLexemes(d.content), d.workspace_id, d.project_id);
        assert.equal(d.search, expected!.search, `the search words of ${d.id}`);
        assert.deepEqual(d.title_words, titleLexemes(d.title), `the title's words of ${d.id}`);
      }

      // The copy goes on as the original does: the same update on both answers alike, and new rows take new ids.
      const adaWrite = keys.find((k) => k.name === 'ada write')!.secret;
      const doc = docs[1]!;
      clock.advance(60_000);
      const read = await call(app, 'GET', `/v1/documents/${doc.id}`, { key: adaWrite });
      const body = { contentMarkdown: 'Après la copie: Ωμέγα и Щука.', expectedUpdatedAt: read.body.updatedAt };
      const [a, b] = [await call(app, 'PATCH', `/v1/documents/${doc.id}`, { key: adaWrite, body }), await call(copyApp, 'PATCH', `/v1/documents/${doc.id}`, { key: adaWrite, body })];
      assert.deepEqual({ status: b.status, body: b.body }, { status: a.status, body: a.body });
      await compareEverything(app, copyApp);
      const template = { title: 'After the copy', description: null, workspaceId: null, creatorId: null, isDefault: false, now: new Date(clock()).toISOString() };
      assert.deepEqual(await copyStore.createTemplate(template), await store.createTemplate(template), 'the next template id follows the copied ones');
    } finally {
      await copyApp.close();
      await copyStore.close();
    }
  });

  it('refuses a target that holds Folio data, naming it without its password, and leaves it as it was', async () => {
    const url = new URL(target);
    if (url.password === '') url.password = 'pw-never-shown';
    const held = await snapshot(targetConfig);
    const r = await folio(env, 'copy', '--to', url.toString());
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /already holds Folio data \(users: \d+, .*\); folio copy copies only into an empty database/);
    assert.ok(r.stderr.includes(`${url.hostname}:${url.port || '5432'}${url.pathname}`), r.stderr);
    assert.ok(!r.stderr.includes(url.password), 'no password in the message');
    assert.deepEqual(await snapshot(targetConfig), held);
  });

  it('prints the counts as text without --json', async () => {
    const r = await folio(env, 'copy', '--to', await database.schemaUrl());
    assert.equal(r.code, 0, r.stderr);
    const now = await counts(config);
    assert.match(r.stdout, /^Copied .*folio\.db into PostgreSQL at .*; the counts of every table match the source's:/);
    for (const table of COPIED_TABLES) assert.match(r.stdout, new RegExp(`\\n  ${table} +${now[table]}(\\n|$)`), table);
  });

  it('copies all or nothing: a row PostgreSQL cannot hold stops it, naming the row, with nothing written', async () => {
    const file = join(dir, 'nul.db');
    const nulConfig = testConfig({ DATABASE_URL: `sqlite:${file}` });
    const nulStore = await openStore(nulConfig);
    const make = factories(nulStore, clock);
    const user = await make.user();
    await make.document(user.id, { content: 'fine' });
    const bad = await make.document(user.id, { content: 'a\u0000b' });
    await nulStore.close();
    const into = await database.schemaUrl();
    const r = await folio({ ...env, DATABASE_URL: `sqlite:${file}` }, 'copy', '--to', into);
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`document ${bad.id} holds the character U\\+0000`));
    const empty = Object.fromEntries(COPIED_TABLES.map((t) => [t, 0]));
    assert.deepEqual(await counts(testConfig({ DATABASE_URL: into })), empty, 'the users copied before it were undone');
  });

  it('refuses a source that is not SQLite or does not exist, and a target that is not PostgreSQL', async () => {
    const into = await database.schemaUrl();
    const fromPostgres = await folio({ ...env, DATABASE_URL: into }, 'copy', '--to', into);
    assert.equal(fromPostgres.code, 1);
    assert.match(fromPostgres.stderr, /copies an SQLite database, and DATABASE_URL names PostgreSQL/);

    const missing = join(dir, 'nowhere', 'folio.db');
    const noSource = await folio({ ...env, DATABASE_URL: `sqlite:${missing}` }, 'copy', '--to', into);
    assert.equal(noSource.code, 1);
    assert.ok(noSource.stderr.includes(`"${missing}"`) && /does not exist/.test(noSource.stderr), noSource.stderr);
    assert.equal(existsSync(join(dir, 'nowhere')), false, 'the source is never created');

    const toSqlite = await folio(env, 'copy', '--to', `sqlite:${join(dir, 'other.db')}`);
    assert.equal(toSqlite.code, 1);
    assert.match(toSqlite.stderr, /--to must name a PostgreSQL database/);
    assert.equal(existsSync(join(dir, 'other.db')), false);

    const malformed = await folio(env, 'copy', '--to', 'mysql://x@y/z');
    assert.equal(malformed.code, 1);
    assert.match(malformed.stderr, /^folio: --to: unsupported scheme "mysql:"/);

    const unreachable = await folio(env, 'copy', '--to', 'postgres://folio:secret@127.0.0.1:1/folio');
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /cannot connect to PostgreSQL at 127\.0\.0\.1:1\/folio/);
    assert.ok(!unreachable.stderr.includes('secret'));

    const noTarget = await folio(env, 'copy');
    assert.notEqual(noTarget.code, 0);
    assert.match(noTarget.stderr, /--to/);
    const tables = await queryRows(testConfig({ DATABASE_URL: into }), 'SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()');
    assert.deepEqual(tables, [], 'a refused copy does not even migrate the target');
  });

  it('says what it does with --help', async () => {
    const r = await folio(env, 'copy', '--help');
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Usage: folio copy \[options\]/);
    assert.match(r.stdout, /--to <databaseUrl>/);
    assert.match(r.stdout, /into an empty\s+PostgreSQL database/);
  });
});
