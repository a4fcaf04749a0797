import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, setup, type TestContext } from './helpers.js';
import { nextUpdatedAt } from '../src/domain/time.js';
import { canSeeContent } from '../src/domain/visibility.js';

/**
 * Lists, searches, reads and histories of documents, compared with DESIGN §1 (who
 * sees what, src/domain/visibility.ts) and a plain model of §3 (newest first by coalesce(updatedAt,
 * createdAt), ties by id; search terms all required, as word prefixes) over
 * a random workspace: shared and unshared projects, teams, ties in time, and
 * a clock that jumps back.
 */

const WORDS = ['alpha', 'alphabet', 'beta', 'gamma', 'delta', 'deltoid', 'epsilon', 'zeta', 'omega'];

function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface ModelDoc {
  id: string;
  workspace: string;
  project: string | null;
  words: Set<string>;
  createdAt: string;
  updatedAt: string | null;
  /** The times of its revisions (DESIGN §7), oldest first: its creation's, then each edit's. */
  revisions: string[];
}

interface ModelProject {
  id: string;
  workspace: string;
  isOrg: boolean;
  creator: string;
  shares: Set<string>;
}

for (const seed of [1, 2, 3]) {
  describe(`document visibility and order match the model (world ${seed})`, () => {
    let t: TestContext;
    const rnd = prng(seed);
    const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
    const users: { id: string; key: string }[] = [];
    const orgs: { id: string; members: Set<string> }[] = [];
    const projects: ModelProject[] = [];
    const docs: ModelDoc[] = [];

    before(async () => {
      t = await setup({ env: { READ_LIMIT_PER_MIN: '1000000' } });
      for (let i = 0; i < 5; i++) {
        const u = await t.make.user();
        users.push({ id: u.id, key: (await t.make.key(u.id)).secret });
      }
      const memberships = [[0, 1, 2], [2, 3]];
      for (const m of memberships) {
        const o = await t.make.org({ plan: 'team_monthly', members: m.map((i) => users[i]!.id) });
        orgs.push({ id: o.id, members: new Set(m.map((i) => users[i]!.id)) });
      }
      // Personal projects (some shared), team projects (some shared, one with a non-member).
      const plan: [owner: number, org: number | null, shares: number[]][] = [
        [0, null, [1]],
        [1, null, [0, 1, 2]], // also shared with its owner, who must not see its documents twice
        [0, null, []],
        [3, null, [0, 1, 2, 4]],
        [0, 0, [0, 1]],
        [2, 0, []],
        [1, 0, [0, 3]],
        [3, 1, [2]],
        [2, 1, []],
      ];
      for (const [owner, org, shares] of plan) {
        const ownerId = users[owner]!.id;
        const orgId = org === null ? null : orgs[org]!.id;
        const p = await t.make.project(ownerId, { orgId, shareWith: shares.map((i) => users[i]!.id) });
        projects.push({ id: p.id, workspace: orgId ?? ownerId, isOrg: orgId !== null, creator: ownerId, shares: new Set(shares.map((i) => users[i]!.id)) });
      }

      // Documents, written by whoever may write there; time mostly moves on,
      // sometimes stands still (ties) and sometimes jumps back.
      const step = () => {
        const r = rnd();
        if (r < 0.3) return;
        if (r < 0.4) t.clock.advance(-Math.floor(rnd() * 5000));
        else t.clock.advance(Math.floor(rnd() * 2000));
      };
      for (let i = 0; i < 140; i++) {
        step();
        const words = new Set(Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(WORDS)));
        const [title, ...rest] = [...words];
        const content = rest.length > 0 ? rest.join(' ') : 'plain';
        if (rest.length === 0) words.add('plain');
        const r = rnd();
        let writer: string;
        let orgId: string | null = null;
        let project: ModelProject | null = null;
        if (r < 0.35) {
          writer = pick(users).id;
        } else if (r < 0.6) {
          const o = pick(orgs);
          orgId = o.id;
          writer = pick([...o.members]);
        } else {
          project = pick(projects);
          if (project.isOrg) {
            orgId = project.workspace;
            writer = project.creator;
          } else {
            writer = rnd() < 0.5 || project.shares.size === 0 ? project.creator : pick([...project.shares]);
          }
        }
        const d = await t.make.document(writer, { orgId, projectId: project?.id ?? null, title: title!, content });
        const createdAt = new Date(t.clock()).toISOString();
        docs.push({ id: d.id, workspace: project?.workspace ?? orgId ?? writer, project: project?.id ?? null, words, createdAt, updatedAt: null, revisions: [createdAt] });
      }
      // Edits, some in the same millisecond as others, some with the clock behind.
      for (let i = 0; i < 60; i++) {
        step();
        const d = pick(docs);
        const viewer = { userId: '', orgId: null as string | null };
        if (d.workspace.startsWith('org_')) {
          viewer.orgId = d.workspace;
          viewer.userId = d.project ? projects.find((p) => p.id === d.project)!.creator : [...orgs.find((o) => o.id === d.workspace)!.members][0]!;
        } else {
          viewer.userId = d.workspace;
        }
        const outcome = await t.store.updateDocument(
          viewer,
          d.id,
          { contentMarkdown: [...d.words].slice(1).join(' ') || 'plain', expectedUpdatedAt: d.updatedAt },
          (previous) => nextUpdatedAt(t.clock(), previous),
        );
        assert.equal(outcome.status, 'updated');
        if (outcome.status === 'updated') {
          d.updatedAt = outcome.document.updatedAt;
          d.revisions.push(d.updatedAt!);
        }
      }
    });
    after(() => t.close());

    /** DESIGN §1, as src/domain/visibility.ts states it. */
    function visible(d: ModelDoc, userId: string, orgId: string | null): boolean {
      const p = d.project === null ? null : projects.find((x) => x.id === d.project)!;
      const project = p === null ? null : { workspaceId: p.workspace, inTeam: p.isOrg, creatorId: p.creator, sharedWith: [...p.shares] };
      const isMember = (org: string, user: string) => orgs.find((o) => o.id === org)!.members.has(user);
      return canSeeContent({ userId, orgId }, { workspaceId: d.workspace, project }, isMember);
    }

    const sortAt = (d: ModelDoc) => d.updatedAt ?? d.createdAt;
    const newestFirst = (a: ModelDoc, b: ModelDoc) =>
      sortAt(a) !== sortAt(b) ? (sortAt(a) < sortAt(b) ? 1 : -1) : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
    const matches = (d: ModelDoc, terms: string[]) => terms.every((term) => [...d.words].some((w) => w.startsWith(term)));

    it('has ties and out-of-order times to get right', () => {
      const times = docs.map(sortAt);
      assert.ok(new Set(times).size < times.length, 'some documents share their sort time');
    });

    it('lists and searches exactly the visible documents, newest first, ties by id', async () => {
      const queries: { terms: string[]; limit: number }[] = [
        { terms: [], limit: 100 },
        { terms: [], limit: 20 },
        { terms: [], limit: 3 },
        { terms: ['alpha'], limit: 100 },
        { terms: ['alpha'], limit: 2 },
        { terms: ['del'], limit: 5 },
        { terms: ['gamma', 'beta'], limit: 100 },
        { terms: ['zeta'], limit: 1 },
        { terms: ['omeg'], limit: 20 },
      ];
      for (const u of users) {
        for (const orgId of [null, ...orgs.filter((o) => o.members.has(u.id)).map((o) => o.id)]) {
          for (const q of queries) {
            const params = new URLSearchParams({ limit: String(q.limit) });
            if (q.terms.length > 0) params.set('q', q.terms.join(' '));
            if (orgId !== null) params.set('organizationId', orgId);
            const res = await call(t.app, 'GET', `/v1/documents?${params}`, { key: u.key });
            assert.equal(res.status, 200);
            const expected = docs
              .filter((d) => visible(d, u.id, orgId) && matches(d, q.terms))
              .sort(newestFirst)
              .slice(0, q.limit)
              .map((d) => d.id);
            assert.deepEqual(
              res.body.documents.map((d: { id: string }) => d.id),
              expected,
              `user ${users.indexOf(u)}, scope ${orgId ?? 'personal'}, q=${q.terms.join(' ')}, limit ${q.limit}`,
            );
          }
        }
      }
    });

    it('lists and searches within a project filter', async () => {
      for (const u of users) {
        for (const orgId of [null, ...orgs.filter((o) => o.members.has(u.id)).map((o) => o.id)]) {
          for (const p of projects) {
            const params = new URLSearchParams({ projectId: p.id, limit: '100' });
            if (orgId !== null) params.set('organizationId', orgId);
            const all = await call(t.app, 'GET', `/v1/documents?${params}`, { key: u.key });
            params.set('q', 'alpha');
            const found = await call(t.app, 'GET', `/v1/documents?${params}`, { key: u.key });
            const inProject = docs.filter((d) => d.project === p.id && visible(d, u.id, orgId)).sort(newestFirst);
            if (all.status === 400) {
              assert.equal(inProject.length, 0, 'a project refused as not visible has no visible documents');
              continue;
            }
            assert.equal(all.status, 200);
            assert.deepEqual(all.body.documents.map((d: { id: string }) => d.id), inProject.map((d) => d.id));
            assert.deepEqual(
              found.body.documents.map((d: { id: string }) => d.id),
              inProject.filter((d) => matches(d, ['alpha'])).map((d) => d.id),
            );
          }
        }
      }
    });

    it('opens exactly the visible documents', async () => {
      for (const u of users) {
        for (const orgId of [null, ...orgs.filter((o) => o.members.has(u.id)).map((o) => o.id)]) {
          for (const d of docs) {
            const res = await call(t.app, 'GET', `/v1/documents/${d.id}${orgId ? `?organizationId=${orgId}` : ''}`, { key: u.key });
            assert.equal(res.status, visible(d, u.id, orgId) ? 200 : 404, `user ${users.indexOf(u)}, scope ${orgId ?? 'personal'}`);
            if (res.status === 200) assert.equal(res.body.updatedAt, d.updatedAt);
          }
        }
      }
    });

    it('shows the history of exactly the visible documents: one revision per change, at its time, newest first', async () => {
      for (const u of users) {
        for (const orgId of [null, ...orgs.filter((o) => o.members.has(u.id)).map((o) => o.id)]) {
          for (const d of docs) {
            const where = `user ${users.indexOf(u)}, scope ${orgId ?? 'personal'}`;
            const scope = orgId ? `&organizationId=${orgId}` : '';
            const res = await call(t.app, 'GET', `/v1/documents/${d.id}/revisions?limit=100${scope}`, { key: u.key });
            const newest = await call(t.app, 'GET', `/v1/documents/${d.id}/revisions/${d.revisions.length}?${scope.slice(1)}`, { key: u.key });
            const seen = visible(d, u.id, orgId);
            assert.deepEqual([res.status, newest.status], seen ? [200, 200] : [404, 404], where);
            if (!seen) continue;
            assert.deepEqual(
              res.body.revisions.map((r: { number: number; createdAt: string }) => [r.number, r.createdAt]),
              d.revisions.map((at, i) => [i + 1, at]).reverse(),
              where,
            );
            assert.equal(newest.body.createdAt, d.updatedAt ?? d.createdAt, where);
          }
        }
      }
    });
  });
}
