import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { call, queryRows, setup, type TestContext } from './helpers.js';
import {
  CALLERS,
  COMMON_WORD,
  PLACES,
  PLACE_NAMES,
  PROJECT_PLACES,
  ROLE,
  SCOPES,
  buildWorld,
  type CallerName,
  type PlaceName,
  type ProjectPlace,
  type ScopeName,
  type World,
} from './world.js';

/**
 * The access matrix of DESIGN §1 and §3: every endpoint, called by the owner
 * (A), a teammate (B), a project sharee (C), an outsider (D) and a member of
 * another team (E), in the personal scope and in the scopes of teams T and U,
 * on the content of every place (test/world.ts). The tables below are the
 * specification; the tests derive every request from them and compare exact
 * sets of ids, so that anything seen where it must not be, or missing where
 * it must be, fails.
 */

/** The caller is not a member of the scope's team: the organization is inaccessible. */
const NO_ACCESS = 'no access';
type NoAccess = typeof NO_ACCESS;

/**
 * Documents and chats: the places whose content each caller sees, per scope.
 * Personal content is its owner's, plus personal projects shared with the
 * caller (C sees A's `aShared`). Team content outside projects is every
 * member's; a team project is its creator's and its sharees' who are members
 * (B sees `tShared` but not `tPrivate`; A, though it created the team's
 * other projects, does not see B's `tOfB`; C and E hold shares of `tShared`
 * but are not members of T). Team content never appears in a personal scope.
 */
const CONTENT: Record<CallerName, Record<ScopeName, PlaceName[] | NoAccess>> = {
  A: { personal: ['aHome', 'aPrivate', 'aShared'], T: ['tHome', 'tPrivate', 'tShared'], U: NO_ACCESS },
  B: { personal: ['bHome'], T: ['tHome', 'tShared', 'tOfB'], U: NO_ACCESS },
  C: { personal: ['cHome', 'cOwn', 'aShared'], T: NO_ACCESS, U: NO_ACCESS },
  D: { personal: ['dHome'], T: NO_ACCESS, U: NO_ACCESS },
  E: { personal: ['eHome'], T: NO_ACCESS, U: ['uHome', 'uProject'] },
};

/** Projects each caller sees, per scope, with the `isSharedWithYou` each must carry. */
const PROJECTS: Record<CallerName, Record<ScopeName, Partial<Record<ProjectPlace, boolean>> | NoAccess>> = {
  A: { personal: { aPrivate: false, aShared: false }, T: { tPrivate: false, tShared: false }, U: NO_ACCESS },
  B: { personal: {}, T: { tShared: true, tOfB: false }, U: NO_ACCESS },
  C: { personal: { cOwn: false, aShared: true }, T: NO_ACCESS, U: NO_ACCESS },
  D: { personal: {}, T: NO_ACCESS, U: NO_ACCESS },
  E: { personal: {}, T: NO_ACCESS, U: { uProject: false } },
};

type TemplateName = 'aPersonal' | 'bPersonal' | 'T' | 'U';
/** Templates other than the system ones, which every scope shows unless `includeSystem=false`. */
const TEMPLATES: Record<CallerName, Record<ScopeName, TemplateName[] | NoAccess>> = {
  A: { personal: ['aPersonal'], T: ['T'], U: NO_ACCESS },
  B: { personal: ['bPersonal'], T: ['T'], U: NO_ACCESS },
  C: { personal: [], T: NO_ACCESS, U: NO_ACCESS },
  D: { personal: [], T: NO_ACCESS, U: NO_ACCESS },
  E: { personal: [], T: NO_ACCESS, U: ['U'] },
};

/** Teams each caller belongs to (GET /me, GET /organizations). */
const ORGANIZATIONS: Record<CallerName, ('T' | 'U')[]> = { A: ['T'], B: ['T'], C: [], D: [], E: ['U'] };

/** Where a document created without a project lands: the scope's own content. */
const HOME: Record<CallerName, PlaceName> = { A: 'aHome', B: 'bHome', C: 'cHome', D: 'dHome', E: 'eHome' };
const homeOf = (caller: CallerName, scope: ScopeName): PlaceName =>
  scope === 'personal' ? HOME[caller] : scope === 'T' ? 'tHome' : 'uHome';

const sees = (caller: CallerName, scope: ScopeName, place: PlaceName) => {
  const cell = CONTENT[caller][scope];
  return cell !== NO_ACCESS && cell.includes(place);
};
const seesProject = (caller: CallerName, scope: ScopeName, project: ProjectPlace) => {
  const cell = PROJECTS[caller][scope];
  return cell !== NO_ACCESS && project in cell;
};
const cells = CALLERS.flatMap((caller) => SCOPES.map((scope) => ({ caller, scope, label: `${caller} (${ROLE[caller]}), ${scope} scope` })));

const unknownOrg = () => `org_${randomUUID().replaceAll('-', '')}`;
const unknownProject = () => `prj_${randomUUID().replaceAll('-', '')}`;
const sorted = (xs: readonly string[]) => [...xs].sort();
const ids = (items: { id: string }[]) => sorted(items.map((x) => x.id));

/** `assert.deepEqual`, counted: each test reports how many checks it made. */
let checks = 0;
function eq(actual: unknown, expected: unknown, message: string) {
  checks++;
  assert.deepEqual(actual, expected, message);
}
function counted(name: string, fn: () => Promise<void>) {
  it(name, async (ctx) => {
    const before = checks;
    await fn();
    ctx.diagnostic(`${checks - before} checks`);
  });
}

async function world(env: Record<string, string> = {}) {
  const t = await setup({ env: { READ_LIMIT_PER_MIN: '1000000', WRITE_LIMIT_PER_MIN: '1000000', ...env } });
  return { t, w: await buildWorld(t) };
}

function client(t: TestContext, w: World) {
  const query = (params: Record<string, string | undefined>) => {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
    const s = q.toString();
    return s === '' ? '' : `?${s}`;
  };
  return {
    get: (caller: CallerName, path: string, params: Record<string, string | undefined> = {}) =>
      call(t.app, 'GET', `/v1${path}${query(params)}`, { key: w.users[caller].read }),
    post: (caller: CallerName, body: Record<string, unknown>, key: 'write' | 'read' = 'write') =>
      call(t.app, 'POST', '/v1/documents', { key: w.users[caller][key], body }),
    patch: (caller: CallerName, id: string, body: Record<string, unknown>, key: 'write' | 'read' = 'write') =>
      call(t.app, 'PATCH', `/v1/documents/${id}`, { key: w.users[caller][key], body }),
    restore: (caller: CallerName, id: string, number: number, body: Record<string, unknown>, key: 'write' | 'read' = 'write') =>
      call(t.app, 'POST', `/v1/documents/${id}/revisions/${number}/restore`, { key: w.users[caller][key], body }),
    /** The place's document's history as its creator lists it, newest first. */
    async history(place: PlaceName) {
      const spec = PLACES[place];
      const res = await call(t.app, 'GET', `/v1/documents/${w.docs[place].id}/revisions${query({ ...w.scope(spec.team ?? 'personal'), limit: '100' })}`, {
        key: w.users[spec.by].read,
      });
      assert.equal(res.status, 200, `${place}'s creator lists its history`);
      return res.body.revisions as { number: number; createdAt: string; title: string; userId: string | null; keyName: string | null }[];
    },
    /** The place's document as its creator reads it. */
    async read(place: PlaceName) {
      const spec = PLACES[place];
      const res = await call(t.app, 'GET', `/v1/documents/${w.docs[place].id}${query(w.scope(spec.team ?? 'personal'))}`, {
        key: w.users[spec.by].read,
      });
      assert.equal(res.status, 200, `${place}'s creator reads its document`);
      return res.body as { contentMarkdown: string; updatedAt: string | null; project: { id: string } | null };
    },
  };
}

describe('access matrix: reads', () => {
  let t: TestContext;
  let w: World;
  let api: ReturnType<typeof client>;
  before(async () => {
    ({ t, w } = await world());
    api = client(t, w);
  });
  after(() => t.close());

  /**
   * A list call in a scope the caller has no access to is 400 naming
   * organizationId, exactly as for an organization that does not exist.
   */
  async function refusedAsUnknownOrg(caller: CallerName, path: string, scope: ScopeName, params: Record<string, string> = {}) {
    const res = await api.get(caller, path, { ...params, ...w.scope(scope) });
    const unknown = await api.get(caller, path, { ...params, organizationId: unknownOrg() });
    eq(res.status, 400, `${caller} ${path} in ${scope}: status`);
    eq(res.body, unknown.body, `${caller} ${path} in ${scope}: same body as an unknown organization`);
    assert.match(res.body.error.message, /organizationId/);
  }

  it('the tables agree with the memberships of the world', () => {
    for (const { caller, scope } of cells) {
      const member = scope === 'personal' || ORGANIZATIONS[caller].includes(scope);
      for (const table of [CONTENT, PROJECTS, TEMPLATES]) assert.equal(table[caller][scope] !== NO_ACCESS, member, `${caller} ${scope}`);
    }
    // Every place is seen by someone, so a hidden document is a real one.
    for (const place of PLACE_NAMES) assert.ok(cells.some((c) => sees(c.caller, c.scope, place)), place);
  });

  counted('GET /me and GET /organizations show exactly the teams the caller belongs to', async () => {
    for (const caller of CALLERS) {
      const expected = sorted(ORGANIZATIONS[caller].map((team) => w.teams[team]));
      const me = await api.get(caller, '/me');
      eq(me.status, 200, `${caller} /me`);
      eq(me.body.id, w.users[caller].id, `${caller} /me id`);
      eq(ids(me.body.organizations), expected, `${caller} /me organizations`);
      const orgs = await api.get(caller, '/organizations');
      eq(ids(orgs.body.organizations), expected, `${caller} /organizations`);
      eq(orgs.body.count, expected.length, `${caller} /organizations count`);
    }
  });

  counted('GET /documents lists exactly the table, plain and searching a word every document has', async () => {
    for (const { caller, scope, label } of cells) {
      const cell = CONTENT[caller][scope];
      if (cell === NO_ACCESS) {
        await refusedAsUnknownOrg(caller, '/documents', scope);
        await refusedAsUnknownOrg(caller, '/documents', scope, { q: COMMON_WORD });
        continue;
      }
      const expected = sorted(cell.map((p) => w.docs[p].id));
      for (const q of [undefined, COMMON_WORD]) {
        const res = await api.get(caller, '/documents', { ...w.scope(scope), q, limit: '100' });
        eq(res.status, 200, `${label}, q=${q}: status`);
        eq(ids(res.body.documents), expected, `${label}, q=${q}: documents`);
        eq(res.body.count, expected.length, `${label}, q=${q}: count`);
      }
    }
  });

  counted("GET /documents?q finds each document's own word only where the document is visible", async () => {
    for (const { caller, scope, label } of cells) {
      if (CONTENT[caller][scope] === NO_ACCESS) continue;
      for (const place of PLACE_NAMES) {
        const res = await api.get(caller, '/documents', { ...w.scope(scope), q: w.docs[place].word });
        eq(ids(res.body.documents), sees(caller, scope, place) ? [w.docs[place].id] : [], `${label}: search for ${place}'s word`);
      }
    }
  });

  counted('GET /documents?projectId lists a project only in a scope where it is visible, otherwise 400 as for an unknown project', async () => {
    for (const { caller, scope, label } of cells) {
      if (CONTENT[caller][scope] === NO_ACCESS) {
        await refusedAsUnknownOrg(caller, '/documents', scope, { projectId: w.projects.aShared });
        continue;
      }
      const unknown = await api.get(caller, '/documents', { ...w.scope(scope), projectId: unknownProject() });
      eq(unknown.status, 400, `${label}: an unknown project`);
      assert.match(unknown.body.error.message, /projectId/);
      for (const project of PROJECT_PLACES) {
        for (const q of [undefined, COMMON_WORD]) {
          const res = await api.get(caller, '/documents', { ...w.scope(scope), projectId: w.projects[project], q });
          if (seesProject(caller, scope, project)) {
            eq(res.status, 200, `${label}: project ${project}, q=${q}`);
            eq(ids(res.body.documents), [w.docs[project].id], `${label}: documents of project ${project}, q=${q}`);
          } else {
            eq([res.status, res.body], [unknown.status, unknown.body], `${label}: project ${project}, q=${q} is refused like an unknown one`);
          }
        }
      }
    }
  });

  counted('GET /documents/{id} opens exactly the visible documents; any other is the same 404 as a random id', async () => {
    for (const { caller, scope, label } of cells) {
      const random = await api.get(caller, `/documents/${randomUUID()}`, w.scope(scope));
      eq(random.status, 404, `${label}: a random id`);
      eq(random.body.error.code, 'not_found', `${label}: a random id's code`);
      for (const place of PLACE_NAMES) {
        const doc = w.docs[place];
        const res = await api.get(caller, `/documents/${doc.id}`, w.scope(scope));
        if (sees(caller, scope, place)) {
          eq(res.status, 200, `${label}: ${place} opens`);
          eq(
            [res.body.id, res.body.contentMarkdown, res.body.project],
            [doc.id, doc.content, PLACES[place].project === null ? null : { id: w.projects[place as ProjectPlace], name: `Project ${place}` }],
            `${label}: ${place}'s document`,
          );
        } else {
          eq([res.status, res.body], [random.status, random.body], `${label}: ${place} is indistinguishable from a random id`);
        }
      }
      if (scope !== 'personal' && CONTENT[caller][scope] === NO_ACCESS) {
        const other = await api.get(caller, `/documents/${randomUUID()}`, { organizationId: unknownOrg() });
        eq([random.status, random.body], [other.status, other.body], `${label}: an inaccessible team is an unknown one`);
      }
    }
  });

  counted("a document's history (GET …/revisions and …/revisions/{number}) is shown exactly with the document; any other is the same 404 as a random id", async () => {
    for (const { caller, scope, label } of cells) {
      const randomId = randomUUID();
      const random = { list: await api.get(caller, `/documents/${randomId}/revisions`, w.scope(scope)), one: await api.get(caller, `/documents/${randomId}/revisions/1`, w.scope(scope)) };
      eq([random.list.status, random.list.body.error.code], [404, 'not_found'], `${label}: a random id's history`);
      eq([random.one.status, random.one.body.error.code], [404, 'not_found'], `${label}: a random id's revision`);
      for (const place of PLACE_NAMES) {
        const doc = w.docs[place];
        const list = await api.get(caller, `/documents/${doc.id}/revisions`, w.scope(scope));
        const one = await api.get(caller, `/documents/${doc.id}/revisions/1`, w.scope(scope));
        if (sees(caller, scope, place)) {
          // Written by the world's fixtures, as the command line writes: no author.
          const first = { number: 1, createdAt: list.body.revisions[0]?.createdAt, title: `Document of ${place}`, userId: null, keyName: null };
          eq([list.status, list.body.revisions, list.body.count], [200, [first], 1], `${label}: ${place}'s history`);
          eq([one.status, one.body], [200, { ...first, contentMarkdown: doc.content }], `${label}: ${place}'s revision 1`);
          const missing = await api.get(caller, `/documents/${doc.id}/revisions/2`, w.scope(scope));
          eq([missing.status, missing.body.error.code], [404, 'not_found'], `${label}: ${place}'s revision 2`);
        } else {
          eq([list.status, list.body], [random.list.status, random.list.body], `${label}: ${place}'s history is a random id's`);
          eq([one.status, one.body], [random.one.status, random.one.body], `${label}: ${place}'s revision 1 is a random id's`);
        }
      }
      if (scope !== 'personal' && CONTENT[caller][scope] === NO_ACCESS) {
        const other = await api.get(caller, `/documents/${randomUUID()}/revisions`, { organizationId: unknownOrg() });
        eq([random.list.status, random.list.body], [other.status, other.body], `${label}: an inaccessible team is an unknown one`);
      }
    }
  });

  counted('a team document read without its organizationId, or a personal one read with one, is 404', async () => {
    const notFound = async (caller: CallerName, place: PlaceName, params: Record<string, string>) => {
      const res = await api.get(caller, `/documents/${w.docs[place].id}`, params);
      eq(res.status, 404, `${caller} reads ${place} with ${JSON.stringify(params)}`);
    };
    await notFound('A', 'tHome', {});
    await notFound('A', 'tPrivate', {});
    await notFound('B', 'tShared', {});
    await notFound('E', 'uHome', {});
    await notFound('A', 'aHome', { organizationId: w.teams.T });
    await notFound('A', 'aShared', { organizationId: w.teams.T });
    await notFound('B', 'bHome', { organizationId: w.teams.T });
    await notFound('E', 'eHome', { organizationId: w.teams.U });
    await notFound('A', 'tHome', { organizationId: w.teams.U });
  });

  counted('GET /chats lists, searches and filters by project by the same table as documents', async () => {
    for (const { caller, scope, label } of cells) {
      const cell = CONTENT[caller][scope];
      if (cell === NO_ACCESS) {
        await refusedAsUnknownOrg(caller, '/chats', scope);
        await refusedAsUnknownOrg(caller, '/chats', scope, { q: COMMON_WORD });
        await refusedAsUnknownOrg(caller, '/chats', scope, { projectId: w.projects.aShared });
        continue;
      }
      const expected = sorted(cell.map((p) => w.chats[p].id));
      for (const q of [undefined, COMMON_WORD, COMMON_WORD.toUpperCase()]) {
        const res = await api.get(caller, '/chats', { ...w.scope(scope), q, limit: '100' });
        eq(res.status, 200, `${label}, q=${q}: status`);
        eq(ids(res.body.chats), expected, `${label}, q=${q}: chats`);
        eq(res.body.count, expected.length, `${label}, q=${q}: count`);
      }
      for (const place of PLACE_NAMES) {
        const res = await api.get(caller, '/chats', { ...w.scope(scope), q: w.chats[place].word });
        eq(ids(res.body.chats), sees(caller, scope, place) ? [w.chats[place].id] : [], `${label}: search for ${place}'s chat`);
      }
      const unknown = await api.get(caller, '/chats', { ...w.scope(scope), projectId: unknownProject() });
      eq(unknown.status, 400, `${label}: chats of an unknown project`);
      for (const project of PROJECT_PLACES) {
        const res = await api.get(caller, '/chats', { ...w.scope(scope), projectId: w.projects[project] });
        if (seesProject(caller, scope, project)) {
          eq(res.status, 200, `${label}: chats of ${project}`);
          eq(ids(res.body.chats), [w.chats[project].id], `${label}: chats of ${project}`);
          eq(res.body.chats[0].project, { id: w.projects[project], name: `Project ${project}` }, `${label}: chat's project of ${project}`);
        } else {
          eq([res.status, res.body], [unknown.status, unknown.body], `${label}: chats of ${project} refused like an unknown project`);
        }
      }
    }
  });

  counted('GET /projects lists exactly the table, with isSharedWithYou', async () => {
    for (const { caller, scope, label } of cells) {
      const cell = PROJECTS[caller][scope];
      if (cell === NO_ACCESS) {
        await refusedAsUnknownOrg(caller, '/projects', scope);
        continue;
      }
      const res = await api.get(caller, '/projects', { ...w.scope(scope), limit: '100' });
      eq(res.status, 200, `${label}: status`);
      const expected = Object.entries(cell)
        .map(([p, shared]) => [w.projects[p as ProjectPlace], shared] as const)
        .sort(([a], [b]) => (a < b ? -1 : 1));
      const actual = (res.body.projects as { id: string; isSharedWithYou: boolean }[])
        .map((p) => [p.id, p.isSharedWithYou] as const)
        .sort(([a], [b]) => (a < b ? -1 : 1));
      eq(actual, expected, `${label}: projects and isSharedWithYou`);
      eq(res.body.count, expected.length, `${label}: count`);
    }
  });

  counted('GET /templates: system templates in every scope, then the scope’s own; includeSystem=false leaves only the own', async () => {
    for (const { caller, scope, label } of cells) {
      const cell = TEMPLATES[caller][scope];
      if (cell === NO_ACCESS) {
        await refusedAsUnknownOrg(caller, '/templates', scope);
        await refusedAsUnknownOrg(caller, '/templates', scope, { includeSystem: 'false' });
        continue;
      }
      const own = cell.map((name) => w.templates[name]).sort((a, b) => a - b);
      const withSystem = await api.get(caller, '/templates', { ...w.scope(scope), limit: '100' });
      const without = await api.get(caller, '/templates', { ...w.scope(scope), includeSystem: 'false', limit: '100' });
      const list = (res: typeof withSystem) =>
        (res.body.templates as { id: number; isSystem: boolean }[]).map((x) => [x.id, x.isSystem] as const).sort(([a], [b]) => a - b);
      eq(
        list(withSystem),
        [...w.templates.system.map((id) => [id, true] as const), ...own.map((id) => [id, false] as const)].sort(([a], [b]) => a - b),
        `${label}: templates`,
      );
      eq(list(without), own.map((id) => [id, false] as const), `${label}: templates without the system ones`);
    }
  });
});

describe('access matrix: writes', () => {
  let t: TestContext;
  let w: World;
  let api: ReturnType<typeof client>;
  before(async () => {
    ({ t, w } = await world());
    api = client(t, w);
  });
  after(() => t.close());

  counted('PATCH /documents/{id} updates exactly the visible documents; any other is the same 404 as a random id and stays unchanged', async () => {
    const stale = '2000-01-01T00:00:00.000Z';
    for (const { caller, scope, label } of cells) {
      const random = await api.patch(caller, randomUUID(), { ...w.scope(scope), contentMarkdown: 'x', expectedUpdatedAt: null });
      eq(random.status, 404, `${label}: a random id`);
      for (const place of PLACE_NAMES) {
        const id = w.docs[place].id;
        const before = await api.read(place);
        // A read-only key is refused before anything is looked up, visible or not.
        const readOnly = await api.patch(caller, id, { ...w.scope(scope), contentMarkdown: 'x', expectedUpdatedAt: before.updatedAt }, 'read');
        eq(readOnly.status, 401, `${label}: ${place} with a read-only key`);
        const contentMarkdown = `${before.contentMarkdown}\n\nEdited by ${caller} in the ${scope} scope.`;
        if (sees(caller, scope, place)) {
          const res = await api.patch(caller, id, { ...w.scope(scope), contentMarkdown, expectedUpdatedAt: before.updatedAt });
          eq([res.status, res.body.id], [200, id], `${label}: updates ${place}`);
          const after = await api.read(place);
          eq(after.contentMarkdown, contentMarkdown, `${label}: ${place}'s creator reads the update`);
          assert.notEqual(after.updatedAt, before.updatedAt);
        } else {
          for (const expectedUpdatedAt of [before.updatedAt, stale]) {
            const res = await api.patch(caller, id, { ...w.scope(scope), contentMarkdown, expectedUpdatedAt });
            eq([res.status, res.body], [random.status, random.body], `${label}: ${place} (expecting ${expectedUpdatedAt}) is a random id`);
          }
          eq(await api.read(place), before, `${label}: ${place} is unchanged`);
        }
      }
    }
  });

  counted('POST …/revisions/{number}/restore restores exactly the visible documents, as a new revision by the key; any other is the same 404 as a random id and stays unchanged', async () => {
    const stale = '2000-01-01T00:00:00.000Z';
    for (const { caller, scope, label } of cells) {
      const random = await api.restore(caller, randomUUID(), 1, { ...w.scope(scope), expectedUpdatedAt: null });
      eq([random.status, random.body.error.code], [404, 'not_found'], `${label}: a random id`);
      for (const place of PLACE_NAMES) {
        const id = w.docs[place].id;
        const before = await api.read(place);
        const history = await api.history(place);
        // A read-only key is refused before anything is looked up, visible or not.
        const readOnly = await api.restore(caller, id, 1, { ...w.scope(scope), expectedUpdatedAt: before.updatedAt }, 'read');
        eq(readOnly.status, 401, `${label}: ${place} with a read-only key`);
        if (sees(caller, scope, place)) {
          const res = await api.restore(caller, id, 1, { ...w.scope(scope), expectedUpdatedAt: before.updatedAt });
          eq([res.status, res.body.id, res.body.title], [200, id, `Document of ${place}`], `${label}: restores ${place}`);
          const after = await api.read(place);
          eq(after.contentMarkdown, w.docs[place].content, `${label}: ${place}'s creator reads revision 1's content`);
          const [newest, ...older] = await api.history(place);
          eq(older, history, `${label}: ${place}'s earlier revisions are kept`);
          eq(
            newest,
            { number: history[0]!.number + 1, createdAt: after.updatedAt, title: `Document of ${place}`, userId: w.users[caller].id, keyName: `${caller} write` },
            `${label}: ${place}'s new revision, by the restoring key`,
          );
        } else {
          for (const expectedUpdatedAt of [before.updatedAt, stale]) {
            const res = await api.restore(caller, id, 1, { ...w.scope(scope), expectedUpdatedAt });
            eq([res.status, res.body], [random.status, random.body], `${label}: ${place} (expecting ${expectedUpdatedAt}) is a random id`);
          }
          eq(await api.read(place), before, `${label}: ${place} is unchanged`);
          eq(await api.history(place), history, `${label}: ${place}'s history is unchanged`);
        }
      }
    }
  });

  counted('POST /documents creates in a visible project or in an accessible scope, where the same people see it; otherwise 404 like an unknown project', async () => {
    const countDocuments = async () => Number((await queryRows<{ n: number }>(t.config, 'SELECT count(*) AS n FROM documents'))[0]!.n);
    const initial = await countDocuments();
    let created = 0;
    for (const { caller, scope, label } of cells) {
      const accessible = CONTENT[caller][scope] !== NO_ACCESS;
      const unknown = await api.post(caller, { ...w.scope(scope), title: 'x', contentMarkdown: 'x', projectId: unknownProject() });
      eq(unknown.status, 404, `${label}: an unknown project`);
      if (!accessible) {
        const unknownTeam = await api.post(caller, { organizationId: unknownOrg(), title: 'x', contentMarkdown: 'x' });
        eq([unknown.status, unknown.body], [unknownTeam.status, unknownTeam.body], `${label}: an inaccessible team is an unknown one`);
      }
      for (const target of [null, ...PROJECT_PLACES]) {
        const body = {
          ...w.scope(scope),
          title: `By ${caller} in ${scope} / ${target ?? 'no project'}`,
          contentMarkdown: 'Created through the API.',
          ...(target === null ? {} : { projectId: w.projects[target] }),
        };
        const res = await api.post(caller, body);
        const allowed = accessible && (target === null || seesProject(caller, scope, target));
        if (!allowed) {
          eq([res.status, res.body], [unknown.status, unknown.body], `${label}: creating in ${target ?? 'no project'} is refused like an unknown project`);
          continue;
        }
        eq(res.status, 201, `${label}: creates in ${target ?? 'no project'}`);
        created++;
        // The new document lives where the place's document lives: the
        // same callers see it in the same scopes, with the same project.
        const like = target ?? homeOf(caller, scope);
        for (const reader of cells) {
          const read = await api.get(reader.caller, `/documents/${res.body.id}`, w.scope(reader.scope));
          eq(read.status, sees(reader.caller, reader.scope, like) ? 200 : 404, `${label}: its document in ${target ?? 'no project'} as ${reader.label}`);
          if (read.status === 200) {
            eq(read.body.project, target === null ? null : { id: w.projects[target], name: `Project ${target}` }, `${label}: project`);
          }
        }
      }
    }
    eq(await countDocuments(), initial + created, 'refused creations wrote nothing');
  });

  counted("a document the sharee creates in the owner's shared project is in the owner's workspace", async () => {
    const res = await api.post('C', { title: 'From the sharee', contentMarkdown: `Written by C, ${COMMON_WORD} zyxsharee`, projectId: w.projects.aShared });
    eq(res.status, 201, 'C creates in aShared');
    const id = res.body.id as string;
    const listed = async (caller: CallerName, params: Record<string, string> = {}) =>
      (await api.get(caller, '/documents', { ...params, limit: '100' })).body.documents.map((d: { id: string }) => d.id).includes(id);
    eq(await listed('A'), true, "in A's personal list");
    eq(await listed('A', { projectId: w.projects.aShared }), true, "in A's list of the project");
    eq(await listed('A', { q: 'zyxsharee' }), true, "in A's search");
    eq(await listed('C'), true, "in C's personal list");
    eq(await listed('A', { organizationId: w.teams.T }), false, "not in A's team list");
    for (const other of ['B', 'D', 'E'] as const) eq(await listed(other), false, `not in ${other}'s list`);
    const byOwner = await api.patch('A', id, { contentMarkdown: 'A edits what C wrote.', expectedUpdatedAt: null });
    eq(byOwner.status, 200, 'A updates it');
    const read = await api.get('C', `/documents/${id}`);
    eq([read.body.contentMarkdown, read.body.project.id], ['A edits what C wrote.', w.projects.aShared], 'C reads the update, in the project');
  });

  counted('nobody moves a document through the API: a projectId in an update is ignored', async () => {
    const before = await api.read('aHome');
    const res = await api.patch('A', w.docs.aHome.id, { contentMarkdown: 'Still at home.', expectedUpdatedAt: before.updatedAt, projectId: w.projects.aShared });
    eq(res.status, 200, 'A updates aHome');
    eq((await api.read('aHome')).project, null, 'aHome stays outside projects');
    eq((await api.get('C', `/documents/${w.docs.aHome.id}`)).status, 404, 'C still cannot see it');
    const team = await api.patch('A', w.docs.aHome.id, {
      contentMarkdown: 'Into the team?',
      expectedUpdatedAt: (await api.read('aHome')).updatedAt,
      organizationId: w.teams.T,
    });
    eq(team.status, 404, 'addressed in the team scope, a personal document does not exist');
  });
});

describe('access matrix: membership removal takes effect on the next request', () => {
  let t: TestContext;
  let w: World;
  let api: ReturnType<typeof client>;
  before(async () => {
    ({ t, w } = await world());
    api = client(t, w);
  });
  after(() => t.close());

  counted('a removed teammate loses the team at once, on every endpoint', async () => {
    const T = w.teams.T;
    const tHome = w.docs.tHome.id;
    eq((await api.get('B', `/documents/${tHome}`, { organizationId: T })).status, 200, 'B reads tHome while a member');
    eq((await api.get('B', `/documents/${w.docs.tShared.id}`, { organizationId: T })).status, 200, 'B reads tShared while a member');

    assert.equal(await t.store.removeMember(T, w.users.B.id), true);

    const gone = { organizationId: unknownOrg() };
    const read = await api.get('B', `/documents/${tHome}`, { organizationId: T });
    const readUnknown = await api.get('B', `/documents/${tHome}`, gone);
    eq([read.status, read.body], [404, readUnknown.body], 'B reads tHome: 404 as for an unknown team');
    eq((await api.get('B', `/documents/${w.docs.tShared.id}`, { organizationId: T })).status, 404, 'B reads tShared');
    for (const path of ['/documents', '/chats', '/projects', '/templates']) {
      const res = await api.get('B', path, { organizationId: T });
      const unknown = await api.get('B', path, gone);
      eq([res.status, res.body], [400, unknown.body], `B lists ${path} of T: 400 as for an unknown team`);
    }
    for (const path of [`/documents/${tHome}/revisions`, `/documents/${tHome}/revisions/1`]) {
      const res = await api.get('B', path, { organizationId: T });
      const unknown = await api.get('B', path, gone);
      eq([res.status, res.body], [404, unknown.body], `B reads ${path} of T: 404 as for an unknown team`);
    }
    const restore = await api.restore('B', tHome, 1, { organizationId: T, expectedUpdatedAt: null });
    eq([restore.status, restore.body], [404, readUnknown.body], 'B restores tHome: 404 as for an unknown team');
    const patch = await api.patch('B', tHome, { organizationId: T, contentMarkdown: 'x', expectedUpdatedAt: null });
    eq(patch.status, 404, 'B updates tHome');
    eq((await api.post('B', { organizationId: T, title: 'x', contentMarkdown: 'x' })).status, 404, 'B creates in T');
    eq((await api.post('B', { organizationId: T, title: 'x', contentMarkdown: 'x', projectId: w.projects.tShared })).status, 404, 'B creates in tShared');
    eq((await api.get('B', '/me')).body.organizations, [], "B's /me");
    eq((await api.get('B', '/organizations')).body.organizations, [], "B's /organizations");
    // Nothing of the team surfaces in B's personal scope instead.
    eq(ids((await api.get('B', '/documents', { limit: '100' })).body.documents), [w.docs.bHome.id], "B's personal documents");
    eq(ids((await api.get('B', '/chats', { limit: '100' })).body.chats), [w.chats.bHome.id], "B's personal chats");
    eq((await api.get('B', '/projects')).body.projects, [], "B's personal projects");
    // The team goes on for A.
    eq(
      ids((await api.get('A', '/documents', { organizationId: T, limit: '100' })).body.documents),
      sorted(['tHome', 'tPrivate', 'tShared'].map((p) => w.docs[p as PlaceName].id)),
      "A's team documents",
    );
    // Membership is the gate: back in the team, B sees its content again.
    await t.store.addMember(T, w.users.B.id, new Date(t.clock()).toISOString());
    eq((await api.get('B', `/documents/${tHome}`, { organizationId: T })).status, 200, 'B reads tHome once a member again');
    eq((await api.get('B', `/documents/${tHome}/revisions`, { organizationId: T })).status, 200, "B reads tHome's history once a member again");
  });

  counted("a project's creator removed from the team loses the project too", async () => {
    const T = w.teams.T;
    eq((await api.get('A', `/documents/${w.docs.tPrivate.id}`, { organizationId: T })).status, 200, 'A reads tPrivate while a member');
    assert.equal(await t.store.removeMember(T, w.users.A.id), true);
    eq((await api.get('A', `/documents/${w.docs.tPrivate.id}`, { organizationId: T })).status, 404, 'A reads tPrivate');
    eq((await api.get('A', `/documents/${w.docs.tPrivate.id}`)).status, 404, 'A reads tPrivate in the personal scope');
    eq((await api.get('A', '/projects', { organizationId: T })).status, 400, "A lists T's projects");
    eq(sorted((await api.get('A', '/projects')).body.projects.map((p: { id: string }) => p.id)), sorted([w.projects.aPrivate, w.projects.aShared]), "A's personal projects");
    // Nor does the project pass to anyone else.
    eq((await api.get('B', `/documents/${w.docs.tPrivate.id}`, { organizationId: T })).status, 404, 'B reads tPrivate');
  });
});
