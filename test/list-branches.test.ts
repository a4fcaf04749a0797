import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openDatabase, type Db } from '../src/store/sqlite/database.js';
import { documentPageSql } from '../src/store/sqlite/documents.js';
import { chatPageSql } from '../src/store/sqlite/workspace.js';
import { MAX_PROJECT_BRANCHES, type ScopeKind } from '../src/store/sqlite/visibility.js';
import { call, setup, type TestContext } from './helpers.js';

/**
 * A personal page merges the caller's own content with that of each project
 * shared with the caller, each read along its index (listBranches): one
 * branch per project up to MAX_PROJECT_BRANCHES, then one for the rest.
 * Pages must come out newest first, ties by id, wherever the rows come from,
 * and callers with different numbers of shared projects (statements of
 * different shapes, prepared once each) must each get their own.
 */
describe('pages merged from many shared projects', () => {
  let t: TestContext;
  const projects: string[] = [];
  /** Readers sharing the first `shared` projects. */
  const readers: { id: string; key: string; shared: number }[] = [];
  /** Every document and chat, with where it is and its sort time. */
  const docs: { id: string; at: number; project: string | null; owner: string }[] = [];
  const chats: { id: string; at: number; project: string | null; owner: string; title: string }[] = [];

  before(async () => {
    t = await setup({ env: { READ_LIMIT_PER_MIN: '100000' } });
    const owner = (await t.make.user()).id;
    for (let i = 0; i < MAX_PROJECT_BRANCHES + 4; i++) projects.push((await t.make.project(owner)).id);
    // Every branch count the statements tell apart: past the per-project branches, up to them, one past them, a few, none.
    for (const shared of [projects.length, MAX_PROJECT_BRANCHES, MAX_PROJECT_BRANCHES + 1, 3, 0]) {
      const id = (await t.make.user()).id;
      for (const p of projects.slice(0, shared)) await t.store.shareProject(p, id);
      readers.push({ id, key: (await t.make.key(id)).secret, shared });
    }
    const places: { project: string | null; owner: string }[] = [
      { project: null, owner },
      ...readers.map((r) => ({ project: null, owner: r.id })),
      ...projects.map((project) => ({ project, owner })),
    ];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < places.length; i++) {
        // Every third item shares its time with the one before, in another branch: ties go by id.
        if ((round * places.length + i) % 3 !== 0) t.clock.advance(1000);
        const { project, owner: by } = places[(i * 7 + round) % places.length]!;
        const doc = await t.make.document(by, { projectId: project });
        docs.push({ id: doc.id, at: t.clock(), project, owner: by });
        const title = `${i % 2 === 0 ? 'Plan' : 'Notes'} ${round}-${i}`;
        const chat = await t.make.chat(by, { projectId: project, title });
        chats.push({ id: chat.id, at: t.clock(), project, owner: by, title });
      }
    }
    // The newest of all in the last project, past the per-project branches, and an edit that moves an old one first.
    t.clock.advance(1000);
    const last = projects.at(-1)!;
    docs.push({ id: (await t.make.document(owner, { projectId: last })).id, at: t.clock(), project: last, owner });
    t.clock.advance(1000);
    const edited = docs.find((d) => d.project === projects[0])!;
    const res = await t.store.updateDocument({ userId: owner, orgId: null }, edited.id, { contentMarkdown: 'edited', expectedUpdatedAt: null }, () => new Date(t.clock()).toISOString());
    assert.equal(res.status, 'updated');
    edited.at = t.clock();
  });
  after(async () => {
    await t.close();
  });

  const newestFirst = <T extends { id: string; at: number }>(items: T[]) =>
    [...items].sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1)).map((d) => d.id);
  /** What a reader sees: their own, and what is in the projects shared with them. */
  const seenBy = <T extends { project: string | null; owner: string }>(reader: (typeof readers)[number], items: T[]) =>
    items.filter((i) => (i.project === null ? i.owner === reader.id : projects.indexOf(i.project) < reader.shared));

  it('lists documents newest first, ties by id, at every page size, as JSON and as rows, for every number of shared projects', async () => {
    assert.ok(docs.some((d, i) => docs.findIndex((e) => e.at === d.at) !== i), 'the data set has ties');
    for (const reader of readers) {
      const expected = newestFirst(seenBy(reader, docs));
      assert.equal(expected.length, 3 * (1 + reader.shared) + (reader.shared === projects.length ? 1 : 0));
      for (const limit of [1, 5, 20, 100]) {
        const where = `${reader.shared} shared projects, limit ${limit}`;
        const res = await call(t.app, 'GET', `/v1/documents?limit=${limit}`, { key: reader.key });
        assert.equal(res.status, 200);
        assert.deepEqual(res.body.documents.map((d: { id: string }) => d.id), expected.slice(0, limit), where);
        const rows = await t.store.listDocuments({ userId: reader.id, orgId: null }, { limit });
        assert.deepEqual(rows.map((d) => d.id), expected.slice(0, limit), `${where}, rows`);
      }
    }
  });

  it('lists one project at a time, in a branch of its own or among the rest', async () => {
    const reader = readers[0]!;
    for (const project of [projects[0]!, projects[MAX_PROJECT_BRANCHES - 1]!, projects[MAX_PROJECT_BRANCHES]!, projects.at(-1)!]) {
      const res = await call(t.app, 'GET', `/v1/documents?limit=100&projectId=${project}`, { key: reader.key });
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.documents.map((d: { id: string }) => d.id),
        newestFirst(docs.filter((d) => d.project === project)),
      );
    }
  });

  it('lists chats the same way, with and without a title filter', async () => {
    for (const reader of readers) {
      const seen = seenBy(reader, chats);
      for (const [query, expected] of [
        ['limit=3', newestFirst(seen).slice(0, 3)],
        ['limit=100', newestFirst(seen)],
        ['limit=100&q=plan', newestFirst(seen.filter((c) => c.title.startsWith('Plan')))],
        [`limit=100&q=notes&projectId=${projects.at(-1)}`, reader.shared === projects.length ? newestFirst(seen.filter((c) => c.title.startsWith('Notes') && c.project === projects.at(-1))) : null],
      ] as const) {
        const res = await call(t.app, 'GET', `/v1/chats?${query}`, { key: reader.key });
        if (expected === null) {
          assert.equal(res.status, 400, `${reader.shared} shared projects, ${query}`);
          continue;
        }
        assert.equal(res.status, 200);
        assert.deepEqual(res.body.chats.map((c: { id: string }) => c.id), expected, `${reader.shared} shared projects, ${query}`);
      }
    }
  });
});

/**
 * A page reads each branch along an index that gives its rows newest first,
 * and stops once the page is full: SQLite sorts nothing but the branch of
 * the projects past MAX_PROJECT_BRANCHES. A sort of a branch would read all
 * of it (all of a heavy user's documents) for every page.
 */
describe('the plan of a page', () => {
  let dir: string;
  let db: Db;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'folio-plan-'));
    db = openDatabase(join(dir, 'folio.db'));
    migrate(db);
  });
  after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Sorts for an ORDER BY in the statement's plan (group_concat's own ordering of the page's rows is not one). */
  const sorts = (sql: string) =>
    (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ uid: 'u', oid: 'o', projects: '[]', limit: 20, pid: 'p', title: 't', urls: 'u' }) as { detail: string }[]).filter(
      (r) => r.detail.includes('TEMP B-TREE FOR ORDER BY'),
    ).length;

  const cases: [ScopeKind, number][] = [
    ['personal', 0],
    ['personal', 1],
    ['personal', 3],
    ['personal', MAX_PROJECT_BRANCHES],
    ['personal', MAX_PROJECT_BRANCHES + 1],
    ['org', 0],
    ['org', 5],
  ];
  const check = (sql: string, shared: number, where: string) => {
    // The branch of the rest picks its own page (a sort, unless one project is asked for), which the merge sorts again.
    if (shared > MAX_PROJECT_BRANCHES) assert.ok(sorts(sql) <= 2, where);
    else assert.equal(sorts(sql), 0, where);
  };

  it('sorts no branch of a page of documents but the projects past the per-project branches', () => {
    for (const [kind, shared] of cases) {
      for (const project of [false, true]) {
        for (const rendered of [false, true]) {
          check(documentPageSql(kind, project, shared, rendered), shared, `${kind}, ${shared} shared, project ${project}, rendered ${rendered}`);
        }
      }
    }
  });

  it('sorts no branch of a page of chats but the projects past the per-project branches', () => {
    for (const [kind, shared] of cases) {
      for (const project of [false, true]) {
        for (const title of [false, true]) {
          check(chatPageSql(kind, title, project, shared), shared, `${kind}, ${shared} shared, project ${project}, title ${title}`);
        }
      }
    }
  });
});
