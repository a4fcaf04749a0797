import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { call, setup, type TestContext } from './helpers.js';
import {
  canSeeContent,
  canSeeProject,
  isSharedWithViewer,
  scopeOpen,
  workspaceForNewContent,
  type ProjectFacts,
  type Viewer,
} from '../src/domain/visibility.js';

/**
 * Random workspaces — users, teams, memberships, personal and team projects
 * shared with anyone (members or not, even their creator), documents created
 * through the API by anyone anywhere, chats, updates and restores, and
 * members removed afterwards — judged by DESIGN §1's predicates
 * (src/domain/visibility.ts). For every user in every scope (personal, and
 * every team of the world, member or not), the document list, a search, the
 * chat list, the project list, each project's documents, each document's
 * read and its history agree with the predicates. Every world shares one
 * database with the worlds before it, so anything of another world showing
 * up is a leak too.
 */

// --- The model: the world as built, judged by DESIGN §1's predicates (src/domain/visibility.ts) ---

/** A workspace: a user's personal one or a team's. */
type Workspace = { user: number } | { team: number };

interface Model {
  users: number;
  /** members[team] = the users in that team now. */
  members: Set<number>[];
  projects: { creator: number; team: number | null; shares: Set<number>; createdAt: number }[];
  /** With the authors of their revisions (users), oldest first. */
  docs: { workspace: Workspace; project: number | null; createdAt: number; updatedAt: number | null; revisions: number[] }[];
  chats: { workspace: Workspace; project: number | null; createdAt: number }[];
}

/** null: the personal scope; otherwise the team of the request's organizationId. */
type Scope = number | null;

// The model's users and teams under the names the domain's predicates compare.
const userName = (user: number) => `u${user}`;
const teamName = (team: number) => `t${team}`;
const viewerOf = (user: number, scope: Scope): Viewer => ({ userId: userName(user), orgId: scope === null ? null : teamName(scope) });
const workspaceName = (w: Workspace) => ('user' in w ? userName(w.user) : teamName(w.team));
const membership = (m: Model) => (orgId: string, userId: string) => m.members[Number(orgId.slice(1))]!.has(Number(userId.slice(1)));

function projectFacts(m: Model, project: number): ProjectFacts {
  const p = m.projects[project]!;
  return {
    workspaceId: p.team === null ? userName(p.creator) : teamName(p.team),
    inTeam: p.team !== null,
    creatorId: userName(p.creator),
    sharedWith: [...p.shares].map(userName),
  };
}

const accessible = (m: Model, user: number, scope: Scope) => scopeOpen(viewerOf(user, scope), membership(m));
const projectVisible = (m: Model, project: number, user: number, scope: Scope) =>
  canSeeProject(viewerOf(user, scope), projectFacts(m, project), membership(m));
const sharedWithYou = (m: Model, project: number, user: number) => isSharedWithViewer(viewerOf(user, null), projectFacts(m, project));
const contentVisible = (m: Model, item: { workspace: Workspace; project: number | null }, user: number, scope: Scope) =>
  canSeeContent(
    viewerOf(user, scope),
    { workspaceId: workspaceName(item.workspace), project: item.project === null ? null : projectFacts(m, item.project) },
    membership(m),
  );

/** Where a document created in this scope and project goes, or null when it cannot be created. */
function createdIn(m: Model, writer: number, scope: Scope, project: number | null): Workspace | null {
  const workspace = workspaceForNewContent(viewerOf(writer, scope), project === null ? null : projectFacts(m, project), membership(m));
  if (workspace === null) return null;
  const index = Number(workspace.slice(1));
  return workspace.startsWith('u') ? { user: index } : { team: index };
}

// --- Random worlds -----------------------------------------------------

/** Indices are reduced modulo the number of users, teams, projects or documents of the world. */
const worldArb = fc.record({
  users: fc.integer({ min: 2, max: 5 }),
  teams: fc.integer({ min: 0, max: 3 }),
  memberships: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 12 }),
  projects: fc.array(
    fc.record({ creator: fc.nat(), team: fc.option(fc.nat(), { nil: null }), shares: fc.array(fc.nat(), { maxLength: 4 }) }),
    { maxLength: 6 },
  ),
  documents: fc.array(
    fc.record({
      writer: fc.nat(),
      scope: fc.option(fc.nat(), { nil: null }),
      project: fc.option(fc.nat(), { nil: null }),
      /** Mostly a writer and scope that fit the project or team, so that most documents get created. */
      aimed: fc.integer({ min: 0, max: 9 }).map((n) => n < 7),
    }),
    { minLength: 1, maxLength: 16 },
  ),
  chats: fc.array(
    fc.record({ creator: fc.nat(), team: fc.option(fc.nat(), { nil: null }), project: fc.option(fc.nat(), { nil: null }) }),
    { maxLength: 6 },
  ),
  updates: fc.array(fc.record({ user: fc.nat(), scope: fc.option(fc.nat(), { nil: null }), doc: fc.nat() }), { maxLength: 8 }),
  /** Restores of a document's first revision (DESIGN §7), by anyone in any scope. */
  restores: fc.array(fc.record({ user: fc.nat(), scope: fc.option(fc.nat(), { nil: null }), doc: fc.nat() }), { maxLength: 4 }),
  removals: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 3 }),
});
type WorldPlan = typeof worldArb extends fc.Arbitrary<infer T> ? T : never;

const WORD = 'modelword';
const iso = (ms: number) => new Date(ms).toISOString();

describe('visibility matches a model of DESIGN §1 over random workspaces', () => {
  let t: TestContext;
  before(async () => {
    t = await setup({ env: { READ_LIMIT_PER_MIN: '100000000', WRITE_LIMIT_PER_MIN: '100000000' } });
  });
  after(() => t.close());

  async function check(plan: WorldPlan) {
    const tick = () => {
      t.clock.advance(1);
      return t.clock();
    };
    const m: Model = { users: plan.users, members: [], projects: [], docs: [], chats: [] };
    const users: { id: string; read: string; write: string }[] = [];
    for (let i = 0; i < plan.users; i++) {
      const u = await t.make.user();
      users.push({ id: u.id, read: (await t.make.key(u.id)).secret, write: (await t.make.key(u.id, { write: true })).secret });
    }
    const teams: string[] = [];
    for (let i = 0; i < plan.teams; i++) {
      teams.push((await t.make.org()).id);
      m.members.push(new Set());
    }
    const now = () => iso(t.clock());
    if (plan.teams > 0) {
      for (const [team, user] of plan.memberships) {
        const o = team % plan.teams;
        const u = user % plan.users;
        if (!m.members[o]!.has(u)) await t.store.addMember(teams[o]!, users[u]!.id, now());
        m.members[o]!.add(u);
      }
    }
    const teamOf = (i: number | null) => (i === null || plan.teams === 0 ? null : i % plan.teams);
    const projectIds: string[] = [];
    for (const p of plan.projects) {
      const creator = p.creator % plan.users;
      const team = teamOf(p.team);
      const shares = new Set(p.shares.map((s) => s % plan.users));
      const createdAt = tick();
      const made = await t.make.project(users[creator]!.id, {
        orgId: team === null ? null : teams[team]!,
        shareWith: [...shares].map((s) => users[s]!.id),
      });
      projectIds.push(made.id);
      m.projects.push({ creator, team, shares, createdAt });
    }
    const projectOf = (i: number | null) => (i === null || m.projects.length === 0 ? null : i % m.projects.length);

    // Documents, through the API: created where the model says they can be, refused elsewhere.
    const docIds: string[] = [];
    for (const d of plan.documents) {
      let writer = d.writer % plan.users;
      let scope = teamOf(d.scope);
      const project = projectOf(d.project);
      if (d.aimed && project !== null) {
        const p = m.projects[project]!;
        const viewers = [p.creator, ...p.shares];
        writer = viewers[d.writer % viewers.length]!;
        scope = p.team;
      } else if (d.aimed && scope !== null && m.members[scope]!.size > 0) {
        const members = [...m.members[scope]!];
        writer = members[d.writer % members.length]!;
      }
      const createdAt = tick();
      const res = await call(t.app, 'POST', '/v1/documents', {
        key: users[writer]!.write,
        body: {
          title: `Document ${docIds.length}`,
          contentMarkdown: `${WORD} number ${docIds.length}`,
          ...(scope === null ? {} : { organizationId: teams[scope] }),
          ...(project === null ? {} : { projectId: projectIds[project] }),
        },
      });
      const workspace = createdIn(m, writer, scope, project);
      assert.equal(res.status, workspace === null ? 404 : 201, `user ${writer} creates in scope ${scope}, project ${project}`);
      if (workspace === null) continue;
      docIds.push(res.body.id);
      m.docs.push({ workspace, project, createdAt, updatedAt: null, revisions: [writer] });
    }

    const chatIds: string[] = [];
    for (const c of plan.chats) {
      const creator = c.creator % plan.users;
      const project = projectOf(c.project);
      const team = teamOf(c.team);
      const workspace: Workspace =
        project !== null
          ? m.projects[project]!.team === null
            ? { user: m.projects[project]!.creator }
            : { team: m.projects[project]!.team! }
          : team !== null
            ? { team }
            : { user: creator };
      const createdAt = tick();
      const made = await t.make.chat(users[creator]!.id, {
        orgId: team === null ? null : teams[team]!,
        projectId: project === null ? null : projectIds[project]!,
        title: `Chat ${chatIds.length} ${WORD}`,
      });
      chatIds.push(made.id);
      m.chats.push({ workspace, project, createdAt });
    }

    // Updates by anyone in any scope: only where the document is visible; elsewhere 404, never 409.
    if (m.docs.length > 0) {
      for (const u of plan.updates) {
        const user = u.user % plan.users;
        const scope = teamOf(u.scope);
        const doc = u.doc % m.docs.length;
        const at = tick();
        const res = await call(t.app, 'PATCH', `/v1/documents/${docIds[doc]}`, {
          key: users[user]!.write,
          body: {
            contentMarkdown: `${WORD} updated`,
            expectedUpdatedAt: m.docs[doc]!.updatedAt === null ? null : iso(m.docs[doc]!.updatedAt!),
            ...(scope === null ? {} : { organizationId: teams[scope] }),
          },
        });
        const visible = contentVisible(m, m.docs[doc]!, user, scope);
        assert.equal(res.status, visible ? 200 : 404, `user ${user} updates document ${doc} in scope ${scope}`);
        if (visible) {
          m.docs[doc]!.updatedAt = at;
          m.docs[doc]!.revisions.push(user);
        }
      }
      // Restores the same: only where the document is visible; elsewhere 404, never 409.
      for (const r of plan.restores) {
        const user = r.user % plan.users;
        const scope = teamOf(r.scope);
        const doc = r.doc % m.docs.length;
        const at = tick();
        const res = await call(t.app, 'POST', `/v1/documents/${docIds[doc]}/revisions/1/restore`, {
          key: users[user]!.write,
          body: {
            expectedUpdatedAt: m.docs[doc]!.updatedAt === null ? null : iso(m.docs[doc]!.updatedAt!),
            ...(scope === null ? {} : { organizationId: teams[scope] }),
          },
        });
        const visible = contentVisible(m, m.docs[doc]!, user, scope);
        assert.equal(res.status, visible ? 200 : 404, `user ${user} restores document ${doc} in scope ${scope}`);
        if (visible) {
          m.docs[doc]!.updatedAt = at;
          m.docs[doc]!.revisions.push(user);
        }
      }
    }

    // Members removed after everything was created.
    if (plan.teams > 0) {
      for (const [team, user] of plan.removals) {
        const o = team % plan.teams;
        const u = user % plan.users;
        assert.equal(await t.store.removeMember(teams[o]!, users[u]!.id), m.members[o]!.has(u));
        m.members[o]!.delete(u);
      }
    }

    // Every user, every scope: the API agrees with the model.
    const newestFirst = <T extends { createdAt: number; updatedAt?: number | null }>(items: T[], idOf: (i: number) => string) =>
      items
        .map((item, i) => ({ at: item.updatedAt ?? item.createdAt, id: idOf(i), item }))
        .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : -1));
    for (let user = 0; user < plan.users; user++) {
      const key = users[user]!.read;
      for (const scope of [null, ...teams.map((_, i) => i)]) {
        const where = `user ${user}, scope ${scope}`;
        const get = (path: string, params: Record<string, string> = {}) =>
          call(t.app, 'GET', `/v1${path}?${new URLSearchParams({ ...params, ...(scope === null ? {} : { organizationId: teams[scope]! }) })}`, { key });
        if (!accessible(m, user, scope)) {
          for (const path of ['/documents', '/chats', '/projects']) assert.equal((await get(path)).status, 400, `${where}: ${path}`);
          for (const id of docIds) {
            assert.equal((await get(`/documents/${id}`)).status, 404, `${where}: document`);
            assert.equal((await get(`/documents/${id}/revisions`)).status, 404, `${where}: document's history`);
            assert.equal((await get(`/documents/${id}/revisions/1`)).status, 404, `${where}: document's revision 1`);
          }
          continue;
        }
        const docs = newestFirst(m.docs, (i) => docIds[i]!).filter((d) => contentVisible(m, d.item, user, scope)).map((d) => d.id);
        const listed = await get('/documents', { limit: '100' });
        assert.deepEqual(listed.body.documents.map((d: { id: string }) => d.id), docs, `${where}: documents`);
        const found = await get('/documents', { limit: '100', q: WORD });
        assert.deepEqual(found.body.documents.map((d: { id: string }) => d.id), docs, `${where}: search`);

        const chats = newestFirst(m.chats, (i) => chatIds[i]!).filter((c) => contentVisible(m, c.item, user, scope)).map((c) => c.id);
        const chatList = await get('/chats', { limit: '100' });
        assert.deepEqual(chatList.body.chats.map((c: { id: string }) => c.id), chats, `${where}: chats`);

        const projects = m.projects
          .map((p, i) => ({ p, i }))
          .filter(({ i }) => projectVisible(m, i, user, scope))
          .sort((a, b) => b.p.createdAt - a.p.createdAt)
          .map(({ i }) => ({ id: projectIds[i], isSharedWithYou: sharedWithYou(m, i, user) }));
        const projectList = await get('/projects', { limit: '100' });
        assert.deepEqual(
          projectList.body.projects.map((p: { id: string; isSharedWithYou: boolean }) => ({ id: p.id, isSharedWithYou: p.isSharedWithYou })),
          projects,
          `${where}: projects`,
        );

        for (let p = 0; p < projectIds.length; p++) {
          const res = await get('/documents', { limit: '100', projectId: projectIds[p]! });
          if (!projectVisible(m, p, user, scope)) {
            assert.equal(res.status, 400, `${where}: documents of project ${p}`);
            continue;
          }
          const inProject = newestFirst(m.docs, (i) => docIds[i]!).filter((d) => d.item.project === p).map((d) => d.id);
          assert.deepEqual(res.body.documents.map((d: { id: string }) => d.id), inProject, `${where}: documents of project ${p}`);
        }
        for (let d = 0; d < docIds.length; d++) {
          const visible = contentVisible(m, m.docs[d]!, user, scope);
          const res = await get(`/documents/${docIds[d]}`);
          assert.equal(res.status, visible ? 200 : 404, `${where}: document ${d}`);
          // Its history exactly with it (DESIGN §7): every revision, newest first, each by the user whose key made it.
          const history = await get(`/documents/${docIds[d]}/revisions`, { limit: '100' });
          assert.equal(history.status, visible ? 200 : 404, `${where}: history of document ${d}`);
          if (visible) {
            const authors = [...m.docs[d]!.revisions].reverse();
            assert.deepEqual(
              history.body.revisions.map((r: { number: number; userId: string }) => [r.number, r.userId]),
              authors.map((by, i) => [authors.length - i, users[by]!.id]),
              `${where}: history of document ${d}`,
            );
          }
          assert.equal((await get(`/documents/${docIds[d]}/revisions/1`)).status, visible ? 200 : 404, `${where}: revision 1 of document ${d}`);
        }
      }
    }
  }

  it('for every user and scope, in every world', async () => {
    await fc.assert(fc.asyncProperty(worldArb, check), { numRuns: 60 });
  });

  it('in a world with every kind of share: a sharee in a personal project, a teammate in a team project, shares with non-members and with the creator', async () => {
    await check({
      users: 4,
      teams: 2,
      memberships: [
        [0, 0],
        [0, 1],
        [1, 2],
        [1, 3],
      ],
      projects: [
        { creator: 0, team: null, shares: [1, 0] },
        { creator: 0, team: 0, shares: [1, 2] },
        { creator: 1, team: 0, shares: [] },
        { creator: 2, team: 1, shares: [3, 0] },
      ],
      documents: [
        { writer: 0, scope: null, project: 0, aimed: false },
        { writer: 1, scope: null, project: 0, aimed: false },
        { writer: 2, scope: null, project: 0, aimed: false },
        { writer: 0, scope: 0, project: 1, aimed: false },
        { writer: 1, scope: 0, project: 1, aimed: false },
        { writer: 1, scope: 0, project: 2, aimed: false },
        { writer: 0, scope: 0, project: 2, aimed: false },
        { writer: 0, scope: 0, project: null, aimed: false },
        { writer: 3, scope: 1, project: 3, aimed: false },
        { writer: 2, scope: 1, project: null, aimed: false },
        { writer: 0, scope: 1, project: 3, aimed: false },
      ],
      chats: [
        { creator: 0, team: null, project: 0 },
        { creator: 0, team: 0, project: 1 },
        { creator: 1, team: 0, project: null },
        { creator: 2, team: 1, project: 3 },
      ],
      updates: [
        { user: 1, scope: null, doc: 0 },
        { user: 2, scope: null, doc: 0 },
        { user: 1, scope: 0, doc: 2 },
        { user: 3, scope: 1, doc: 4 },
      ],
      restores: [
        { user: 2, scope: null, doc: 0 },
        { user: 1, scope: null, doc: 1 },
        { user: 0, scope: 0, doc: 2 },
        { user: 3, scope: 0, doc: 3 },
      ],
      removals: [[0, 1]],
    });
  });
});
