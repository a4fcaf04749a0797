import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Viewer } from '../../src/domain/visibility.js';
import { checkView } from './check-view.js';
import { useStore, type OpenStore } from './harness.js';

/**
 * A small world with content in every place it can live, and every user in
 * every scope (personal, and each team, member or not) checked against the
 * domain's predicates (check-view.ts).
 */

const USERS = {
  A: 'the owner',
  B: 'a teammate',
  C: 'a project sharee',
  D: 'an outsider',
  E: 'a member of the other team',
  F: 'a former member',
} as const;
type UserName = keyof typeof USERS;
type TeamName = 'T' | 'U';

/** Members when content is written; F leaves T afterwards. */
const TEAMS: Record<TeamName, UserName[]> = { T: ['A', 'B', 'F'], U: ['E'] };

interface Place {
  by: UserName;
  team: TeamName | null;
  /** A project with the users it is shared with, or null for content outside projects. */
  project: UserName[] | null;
}

/** Each place holds one document (created, then updated once) and one chat. tShared is shared with C and E, who are not in T. */
const PLACES: Record<string, Place> = {
  aHome: { by: 'A', team: null, project: null },
  aPrivate: { by: 'A', team: null, project: [] },
  aShared: { by: 'A', team: null, project: ['C'] },
  bHome: { by: 'B', team: null, project: null },
  cOwn: { by: 'C', team: null, project: [] },
  dHome: { by: 'D', team: null, project: null },
  tHome: { by: 'B', team: 'T', project: null },
  tPrivate: { by: 'A', team: 'T', project: [] },
  tShared: { by: 'A', team: 'T', project: ['B', 'C', 'E'] },
  tOfB: { by: 'B', team: 'T', project: [] },
  tOfF: { by: 'F', team: 'T', project: ['A'] },
  tByF: { by: 'F', team: 'T', project: null },
  uHome: { by: 'E', team: 'U', project: null },
  uProject: { by: 'E', team: 'U', project: [] },
};

/** In every document's text and every chat's title. */
const WORD = 'leakcheck';

export function visibilityContract(open: OpenStore): void {
  describe('who sees what, in a small world', () => {
    const h = useStore(open);
    const users = {} as Record<UserName, string>;
    const teams = {} as Record<TeamName, string>;

    before(async () => {
      for (const name of Object.keys(USERS) as UserName[]) users[name] = (await h.make.user({ name })).id;
      for (const team of ['T', 'U'] as const) {
        teams[team] = (await h.make.org({ name: team })).id;
        for (const member of TEAMS[team]) assert.equal(await h.make.member(teams[team], users[member]), true);
      }
      for (const [place, spec] of Object.entries(PLACES)) await fill(place, spec);
      await h.make.template({ title: 'System default', isDefault: true });
      await h.make.template({ title: 'System' });
      const owners: [string, string][] = [[users.A, users.A], [users.B, users.B], [teams.T, users.A], [teams.T, users.B], [teams.U, users.E]];
      for (const [workspaceId, creatorId] of owners) await h.make.template({ workspaceId, creatorId, isDefault: true });
      assert.equal(await h.make.leave(teams.T, users.F), true);
    });

    async function fill(place: string, spec: Place): Promise<void> {
      const creator = users[spec.by];
      const orgId = spec.team === null ? null : teams[spec.team];
      const shareWith = spec.project?.map((u) => users[u]);
      const projectId = shareWith === undefined ? null : (await h.make.project(creator, { orgId, name: place, shareWith })).id;
      const viewer = { userId: creator, orgId };
      const doc = await h.make.doc(viewer, { title: `${place} notes`, contentMarkdown: `${WORD} in ${place}`, projectId, author: { userId: creator, keyName: null } });
      // A second revision, so that a document's history is more than its creation.
      const revised = await h.make.update(viewer, doc.id, { contentMarkdown: `${WORD} in ${place}, revised`, author: { userId: creator, keyName: place } });
      assert.equal(revised.status, 'updated');
      await h.make.chat(creator, { orgId, projectId, title: `Leakcheck ${place}` });
    }

    for (const [name, role] of Object.entries(USERS) as [UserName, string][]) {
      it(`shows ${role} (${name}) exactly what DESIGN §1 lets them see, in every scope`, async () => {
        const scopes: [string, Viewer][] = [
          ['personal', { userId: users[name], orgId: null }],
          ['T', { userId: users[name], orgId: teams.T }],
          ['U', { userId: users[name], orgId: teams.U }],
        ];
        for (const [scope, viewer] of scopes) await checkView(h.store, h.model, viewer, `${name} in scope ${scope}`, WORD);
      });
    }

    it('tells current members from others', async () => {
      for (const team of ['T', 'U'] as const) {
        for (const name of Object.keys(USERS) as UserName[]) {
          assert.equal(await h.store.isMember(teams[team], users[name]), h.model.isMember(teams[team], users[name]), `${name} in ${team}`);
        }
      }
    });

    it('answers false and null for ids that name nothing', async () => {
      const viewer = { userId: users.A, orgId: null };
      assert.equal(await h.store.isProjectVisible(viewer, 'prj_nothing'), false);
      assert.equal(await h.store.isChatVisible(viewer, '00000000-0000-4000-8000-000000000000'), false);
      assert.equal(await h.store.getDocument(viewer, '00000000-0000-4000-8000-000000000000'), null);
    });

    it('finds nothing for ids and chat titles holding U+0000, which no stored text holds (a query string can carry one)', async () => {
      const viewer = { userId: users.A, orgId: null };
      assert.equal(await h.store.isProjectVisible(viewer, '\u0000'), false);
      assert.equal(await h.store.isProjectVisible(viewer, 'prj_\u0000x'), false);
      assert.equal(await h.store.isChatVisible(viewer, 'a\u0000'), false);
      assert.equal(await h.store.isMember(teams.T, `${users.A}\u0000`), false);
      assert.deepEqual(await h.store.listChats(viewer, { limit: 100, titleContains: 'leak\u0000' }), []);
      assert.deepEqual(await h.store.listChats(viewer, { limit: 100, projectId: '\u0000' }), []);
      assert.deepEqual(await h.store.listDocuments(viewer, { limit: 100, projectId: '\u0000' }), []);
      assert.deepEqual(await h.store.listDocuments(viewer, { limit: 100, projectId: '\u0000', terms: [WORD] }), []);
    });
  });
}
