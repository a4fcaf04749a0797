import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openDatabase, type Db } from '../src/store/sqlite/database.js';
import { listPageSql } from '../src/store/sqlite/page-limit.js';
import { listBranches, MAX_PROJECT_BRANCHES, type ScopeKind } from '../src/store/sqlite/visibility.js';
import { call, setup, type TestContext } from './helpers.js';

/**
 * A personal page merges the caller's own content with that of each project
 * shared with the caller, each read along its index (listBranches): one
 * branch per project up to MAX_PROJECT_BRANCHES, then one for the rest.
 * Pages must come out newest first, ties by id, wherever the rows come from.
 */
describe('a page merged from many shared projects', () => {
  let t: TestContext;
  let key: string;
  let reader: string;
  const projects: string[] = [];
  /** Every document the reader sees, with its sort time. */
  const docs: { id: string; at: number; project: string | null }[] = [];
  const chats: { id: string; at: number }[] = [];

  before(async () => {
    t = await setup({ env: { READ_LIMIT_PER_MIN: '100000' } });
    reader = (await t.make.user()).id;
    const owner = (await t.make.user()).id;
    key = (await t.make.key(reader)).secret;
    // More projects than branches of their own, so that the last ones share one.
    for (let i = 0; i < MAX_PROJECT_BRANCHES + 4; i++) projects.push((await t.make.project(owner, { shareWith: [reader] })).id);
    await t.make.document(owner); // the owner's own, never the reader's
    const places: (string | null)[] = [null, ...projects];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < places.length; i++) {
        // Every third document shares its time with the one before, in another branch: ties go by id.
        if ((round * places.length + i) % 3 !== 0) t.clock.advance(1000);
        const project = places[(i * 7 + round) % places.length]!;
        const doc = await t.make.document(project === null ? reader : owner, { projectId: project });
        docs.push({ id: doc.id, at: t.clock(), project });
        const chat = await t.make.chat(owner, { projectId: project ?? undefined });
        if (project !== null) chats.push({ id: chat.id, at: t.clock() });
      }
    }
    // The newest of all in the projects past the per-project branches, and an edit that moves an old one first.
    t.clock.advance(1000);
    const last = projects[projects.length - 1]!;
    const newest = await t.make.document(owner, { projectId: last });
    docs.push({ id: newest.id, at: t.clock(), project: last });
    t.clock.advance(1000);
    const edited = docs[1]!;
    const res = await t.store.updateDocument({ userId: reader, orgId: null }, edited.id, { contentMarkdown: 'edited', expectedUpdatedAt: null }, () => new Date(t.clock()).toISOString());
    assert.equal(res.status, 'updated');
    edited.at = t.clock();
  });
  after(async () => {
    await t.close();
  });

  const newestFirst = <T extends { id: string; at: number }>(items: T[]) =>
    [...items].sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1)).map((d) => d.id);

  it('lists documents newest first, ties by id, at every page size, as JSON and as rows', async () => {
    const expected = newestFirst(docs);
    assert.ok(docs.some((d, i) => docs.findIndex((e) => e.at === d.at) !== i), 'the data set has ties');
    for (const limit of [1, 5, 20, 100]) {
      const res = await call(t.app, 'GET', `/v1/documents?limit=${limit}`, { key });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.documents.map((d: { id: string }) => d.id), expected.slice(0, limit), `limit ${limit}`);
      const rows = await t.store.listDocuments({ userId: reader, orgId: null }, { limit });
      assert.deepEqual(rows.map((d) => d.id), expected.slice(0, limit), `rows, limit ${limit}`);
    }
  });

  it('lists one project at a time, in a branch of its own or among the rest', async () => {
    for (const project of [projects[0]!, projects[MAX_PROJECT_BRANCHES - 1]!, projects[MAX_PROJECT_BRANCHES]!, projects.at(-1)!]) {
      const res = await call(t.app, 'GET', `/v1/documents?limit=100&projectId=${project}`, { key });
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.documents.map((d: { id: string }) => d.id),
        newestFirst(docs.filter((d) => d.project === project)),
      );
    }
  });

  it('lists chats the same way', async () => {
    const expected = newestFirst(chats);
    for (const limit of [3, 100]) {
      const res = await call(t.app, 'GET', `/v1/chats?limit=${limit}`, { key });
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.chats.map((c: { id: string }) => c.id), expected.slice(0, limit), `limit ${limit}`);
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

  const sorts = (sql: string) =>
    (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ uid: 'u', oid: 'o', projects: '[]', limit: 20, pid: 'p', title: 't' }) as { detail: string }[]).filter((r) =>
      r.detail.includes('TEMP B-TREE'),
    ).length;

  for (const [table, t, key, extra] of [
    ['documents', 'd', 'seq', ' AND d.project_id = @pid'],
    ['chats', 'c', 'rowid', ' AND instr(c.title_folded, @title) > 0'],
  ] as const) {
    it(`sorts no branch of ${table} but the projects past the per-project branches`, () => {
      const cases: [ScopeKind, number][] = [
        ['personal', 0],
        ['personal', 1],
        ['personal', 3],
        ['personal', MAX_PROJECT_BRANCHES],
        ['personal', MAX_PROJECT_BRANCHES + 1],
        ['org', 0],
        ['org', 5],
      ];
      for (const [kind, shared] of cases) {
        for (const more of ['', extra]) {
          const branches = listBranches[kind](t, shared).map((b) => ({ where: b.where + more, ordered: b.ordered }));
          const sql = listPageSql({ table, t, key, branches, select: `${t}.id` });
          const where = `${kind}, ${shared} shared projects${more}`;
          // The branch of the rest picks its own page (a sort, unless one project is asked for), which the merge sorts again.
          if (shared > MAX_PROJECT_BRANCHES) assert.ok(sorts(sql) <= 2, where);
          else assert.equal(sorts(sql), 0, where);
        }
      }
    });
  }
});
