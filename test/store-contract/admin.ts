import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { foldTitle } from '../../src/domain/search.js';
import { ALL } from './check-view.js';
import { useStore, type OpenStore } from './harness.js';
import { at } from './fixtures.js';

/** Projects, templates and chats as the command line makes them; health, migrations and transactions. */
export function adminContract(open: OpenStore): void {
  describe('projects, templates, chats, and the store itself', () => {
    const h = useStore(open);

    it('creates projects in a personal or a team workspace and shares each once per user', async () => {
      const [owner, friend] = [await h.make.user(), await h.make.user()];
      const org = await h.make.org();
      const personal = await h.make.project(owner.id, { name: 'Garden', description: 'Seeds and beds', now: at(1) });
      const team = await h.make.project(owner.id, { orgId: org.id, name: 'Launch' });
      assert.match(personal.id, /^prj_/);
      assert.deepEqual(await h.store.getProject(personal.id), { id: personal.id, name: 'Garden', workspaceId: owner.id, creatorId: owner.id });
      assert.deepEqual(await h.store.getProject(team.id), { id: team.id, name: 'Launch', workspaceId: org.id, creatorId: owner.id });
      assert.equal(await h.store.getProject('prj_nothing'), null);
      assert.equal(await h.make.share(personal.id, friend.id), true);
      assert.equal(await h.make.share(personal.id, friend.id), false, 'already shared');
      const listed = await h.store.listProjects({ userId: friend.id, orgId: null }, ALL);
      assert.deepEqual(listed, [{ id: personal.id, name: 'Garden', description: 'Seeds and beds', createdAt: at(1), isSharedWithYou: true }]);
      assert.equal((await h.store.listProjects({ userId: owner.id, orgId: null }, ALL))[0]?.isSharedWithYou, false);
    });

    it('lists users and organizations oldest first, and members in the order they joined', async () => {
      const before = { users: (await h.store.listUsers()).length, orgs: (await h.store.listOrgs()).length };
      const [first, second] = [await h.make.user({ name: 'First', plan: null }), await h.make.user({ name: null })];
      const users = (await h.store.listUsers()).slice(before.users);
      assert.deepEqual(users, [first, second]);
      const org = await h.make.org({ name: 'Engines', plan: null });
      assert.deepEqual((await h.store.listOrgs()).slice(before.orgs), [org]);
      const joined = h.make.tick();
      // Two joins in one millisecond keep their order.
      await h.make.member(org.id, second.id, joined);
      await h.make.member(org.id, first.id, joined);
      assert.deepEqual(await h.store.listMembers(org.id), [
        { id: second.id, email: second.email, name: null, joinedAt: joined },
        { id: first.id, email: first.email, name: 'First', joinedAt: joined },
      ]);
      await h.make.leave(org.id, second.id);
      assert.deepEqual((await h.store.listMembers(org.id))?.map((m) => m.id), [first.id]);
      assert.deepEqual(await h.store.listMembers((await h.make.org()).id), []);
      assert.equal(await h.store.listMembers('org_nothing'), null);
    });

    it('keeps at most one default template per workspace', async () => {
      const [user, other] = [await h.make.user(), await h.make.user()];
      const org = await h.make.org();
      await h.make.member(org.id, user.id);
      const mine = { workspaceId: user.id, creatorId: user.id };
      const first = await h.make.template({ ...mine, title: 'Weekly', description: 'A week', isDefault: true });
      const theirs = await h.make.template({ workspaceId: other.id, creatorId: other.id, isDefault: true });
      const teams = await h.make.template({ workspaceId: org.id, creatorId: user.id, isDefault: true });
      const defaults = async (viewer: { userId: string; orgId: string | null }) =>
        (await h.store.listTemplates(viewer, false, ALL)).filter((t) => t.isDefault).map((t) => t.id);
      const personal = { userId: user.id, orgId: null };
      assert.deepEqual(await h.store.listTemplates(personal, false, ALL), [{ id: first.id, title: 'Weekly', description: 'A week', isSystem: false, isDefault: true }]);
      const second = await h.make.template({ ...mine, isDefault: true });
      await h.make.template({ ...mine, isDefault: false });
      assert.deepEqual(await defaults(personal), [second.id], 'the newer default replaces the older');
      assert.deepEqual(await defaults({ userId: other.id, orgId: null }), [theirs.id], "another workspace's default stays");
      assert.deepEqual(await defaults({ userId: user.id, orgId: org.id }), [teams.id]);
      await h.make.template({ isDefault: true });
      const system = await h.make.template({ isDefault: true });
      const rows = await h.store.listTemplates(personal, true, ALL);
      assert.deepEqual(rows.filter((t) => t.isDefault).map((t) => t.id).sort(), [system.id, second.id].sort(), 'one system default too');
      assert.equal(rows.find((t) => t.id === system.id)?.isSystem, true);
    });

    it('creates chats, in or out of projects, as they are listed', async () => {
      const user = await h.make.user();
      const viewer = { userId: user.id, orgId: null };
      const project = await h.make.project(user.id, { name: 'Research' });
      const loose = await h.make.chat(user.id, { title: 'Ideas', messageCount: 0, now: at(1) });
      const inProject = await h.make.chat(user.id, { title: null, projectId: project.id, messageCount: 12, now: at(2) });
      const listed = await h.store.listChats(viewer, { limit: ALL });
      assert.deepEqual(listed, [
        { id: inProject.id, title: null, createdAt: at(2), updatedAt: null, messageCount: 12, project: { id: project.id, name: 'Research' } },
        { id: loose.id, title: 'Ideas', createdAt: at(1), updatedAt: null, messageCount: 0, project: null },
      ]);
      assert.deepEqual((await h.store.listChats(viewer, { limit: ALL, projectId: project.id })).map((c) => c.id), [inProject.id]);
      assert.equal(await h.store.isChatVisible(viewer, loose.id), true);
      // In a given place: the project's chats in the project, the others outside projects.
      assert.equal(await h.store.isChatVisible(viewer, loose.id, null), true);
      assert.equal(await h.store.isChatVisible(viewer, loose.id, project.id), false);
      assert.equal(await h.store.isChatVisible(viewer, inProject.id, project.id), true);
      assert.equal(await h.store.isChatVisible(viewer, inProject.id, null), false);
      assert.equal(await h.store.isChatVisible({ userId: (await h.make.user()).id, orgId: null }, inProject.id, project.id), false, 'not seen');
    });

    it('finds chats by any text in their titles, wildcards and case aside', async () => {
      const viewer = { userId: (await h.make.user()).id, orgId: null };
      for (const title of ['Budget 100% done', 'snake_case notes', 'ΠΡΟΣΦΟΡΑ', 'Straße', 'Plain [x] chat', null]) await h.make.chat(viewer.userId, { title });
      for (const typed of ['%', '_', 'E_C', '0% D', 'προσ', 'STRASSE', '[x]', 'budget', 'a', ' ', '*', '.*']) {
        const titleContains = foldTitle(typed);
        const found = (await h.store.listChats(viewer, { limit: ALL, titleContains })).map((c) => c.id);
        assert.deepEqual(found, h.model.visibleChats(viewer, { titleContains }).map((c) => c.id), typed);
      }
    });

    it('answers a ping, and migrates again without losing anything', async () => {
      await h.store.ping();
      const user = await h.make.user();
      const viewer = { userId: user.id, orgId: null };
      const doc = await h.make.doc(viewer, { contentMarkdown: 'survives migration' });
      await h.store.migrate();
      await h.store.migrate();
      assert.deepEqual(await h.store.getUser(user.id), user);
      assert.equal((await h.store.getDocument(viewer, doc.id))?.contentMarkdown, 'survives migration');
      assert.deepEqual((await h.store.listDocuments(viewer, { limit: ALL, terms: ['migration'] })).map((d) => d.id), [doc.id]);
      await h.store.ping();
    });

    const newDocument = (title: string, contentMarkdown: string) => ({ title, contentMarkdown, projectId: null, threadId: null });

    it('keeps every write of an atomic run, which reads its own writes', async () => {
      const kept = await h.store.atomically(async (tx) => {
        const user = await tx.createUser({ email: `kept.${h.make.unique()}@example.com`, name: null, plan: null, now: at(1) });
        const org = await tx.createOrg({ name: 'Kept', plan: null, now: at(1) });
        await tx.addMember(org.id, user.id, at(1));
        const viewer = { userId: user.id, orgId: null };
        const doc = await tx.createDocument(viewer, newDocument('Kept', 'atomicword'), at(1));
        assert.equal((await tx.getDocument(viewer, doc!.id))?.contentMarkdown, 'atomicword');
        assert.deepEqual((await tx.listDocuments(viewer, { limit: ALL, terms: ['atomicword'] })).map((d) => d.id), [doc!.id]);
        return { user, org, doc, viewer };
      });
      assert.deepEqual(await h.store.getUser(kept.user.id), kept.user);
      assert.equal(await h.store.isMember(kept.org.id, kept.user.id), true);
      assert.deepEqual((await h.store.listDocuments(kept.viewer, { limit: ALL, terms: ['atomicword'] })).map((d) => d.id), [kept.doc?.id]);
    });

    it('keeps no write of an atomic run that throws, and rethrows', async () => {
      const owner = await h.make.user();
      const viewer = { userId: owner.id, orgId: null };
      const org = await h.make.org();
      const doc = await h.make.doc(viewer, { contentMarkdown: 'untouchedword' });
      const email = `undone.${h.make.unique()}@example.com`;
      const failure = new Error('stopped midway');
      const made: { userId?: string; orgId?: string; docId?: string } = {};
      await assert.rejects(
        h.store.atomically(async (tx) => {
          made.userId = (await tx.createUser({ email, name: null, plan: null, now: at(2) })).id;
          made.orgId = (await tx.createOrg({ name: 'Undone', plan: null, now: at(2) })).id;
          await tx.addMember(org.id, made.userId, at(2));
          made.docId = (await tx.createDocument(viewer, newDocument('Undone', 'rolledbackword'), at(2)))?.id;
          const outcome = await tx.updateDocument(viewer, doc.id, { contentMarkdown: 'replacedword', expectedUpdatedAt: null }, () => at(3));
          assert.equal(outcome.status, 'updated');
          throw failure;
        }),
        (err) => err === failure,
      );
      assert.equal(await h.store.getUser(made.userId!), null);
      assert.equal(await h.store.findUserByEmail(email), null);
      assert.equal(await h.store.getOrg(made.orgId!), null);
      assert.equal(await h.store.isMember(org.id, made.userId!), false);
      assert.equal(await h.store.getDocument(viewer, made.docId!), null);
      const search = async (word: string) => (await h.store.listDocuments(viewer, { limit: ALL, terms: [word] })).map((d) => d.id);
      assert.deepEqual([await search('rolledbackword'), await search('replacedword'), await search('untouchedword')], [[], [], [doc.id]]);
      const row = await h.store.getDocument(viewer, doc.id);
      assert.deepEqual([row?.contentMarkdown, row?.updatedAt], ['untouchedword', null]);
      assert.deepEqual((await h.store.listDocuments(viewer, { limit: ALL })).map((d) => d.id), [doc.id]);
      // The e-mail is free again, and the document can be updated as never updated.
      assert.equal((await h.make.user({ email })).email, email);
      assert.equal((await h.make.update(viewer, doc.id, { contentMarkdown: 'laterword' })).status, 'updated');
      assert.deepEqual([await search('laterword'), await search('untouchedword')], [[doc.id], []]);
    });
  });
}
