import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Viewer } from '../../src/domain/visibility.js';
import { ALL } from './check-view.js';
import { useStore, type OpenStore } from './harness.js';
import type { DocumentModel, Model } from './model.js';

/** Reading a document whole, and where documents may be created. */

/** The fields of `row` the interface names, so that a store may carry more. */
function pick<T extends object>(row: T | null, keys: readonly (keyof T)[]): Partial<T> | null {
  return row === null ? null : Object.fromEntries(keys.map((k) => [k, row[k]])) as Partial<T>;
}

const SUMMARY = ['id', 'title', 'createdAt', 'updatedAt', 'threadId'] as const;
const WHOLE = [...SUMMARY, 'contentMarkdown', 'project'] as const;

/** The document as DocumentRow should show it. */
function asRow(model: Model, doc: DocumentModel) {
  const project = doc.projectId === null ? null : model.project(doc.projectId);
  return {
    id: doc.id,
    title: doc.title,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    threadId: doc.threadId,
    contentMarkdown: doc.contentMarkdown,
    project: project && { id: project.id, name: project.name },
  };
}

export function documentsContract(open: OpenStore): void {
  describe('documents', () => {
    const h = useStore(open);

    async function assertReads(viewer: Viewer, docs: DocumentModel[]): Promise<void> {
      for (const doc of docs) assert.deepEqual(pick(await h.store.getDocument(viewer, doc.id), WHOLE), asRow(h.model, doc), doc.title);
      const listed = (await h.store.listDocuments(viewer, { limit: ALL })).map((row) => pick(row, SUMMARY));
      assert.deepEqual(listed, h.model.visibleDocuments(viewer).map((d) => pick(asRow(h.model, d), SUMMARY)));
    }

    it('returns a document with its Markdown, its project and its thread', async () => {
      const user = await h.make.user();
      const viewer = { userId: user.id, orgId: null };
      const project = await h.make.project(user.id, { name: 'Roadmap 2026' });
      const chat = await h.make.chat(user.id, { projectId: project.id });
      const markdown = '# Plan\n\n- first *step*\n- «second» — ünïcödé, 日本語, emoji 🚀\n\n```ts\nconst x = 1;\n```\n';
      const inProject = await h.make.doc(viewer, { title: 'Plan', contentMarkdown: markdown, projectId: project.id, threadId: chat.id });
      const loose = await h.make.doc(viewer, { title: 'Loose', contentMarkdown: 'Nothing else.' });
      await assertReads(viewer, [inProject, loose]);
      const row = await h.store.getDocument(viewer, inProject.id);
      assert.deepEqual(row?.project, { id: project.id, name: 'Roadmap 2026' });
      assert.equal(row?.threadId, chat.id);
      assert.equal(row?.contentMarkdown, markdown);
      assert.equal((await h.store.getDocument(viewer, loose.id))?.project, null);

      assert.equal((await h.make.update(viewer, inProject.id, { contentMarkdown: 'Rewritten.' })).status, 'updated');
      await assertReads(viewer, [inProject, loose]);
      assert.equal((await h.store.getDocument(viewer, inProject.id))?.contentMarkdown, 'Rewritten.');
    });

    it('creates documents only in scopes and projects open to the viewer', async () => {
      const [me, owner, teammate] = [await h.make.user(), await h.make.user(), await h.make.user()];
      const team = await h.make.org();
      await h.make.member(team.id, teammate.id);
      const personal = { userId: me.id, orgId: null };
      const inTeam = { userId: me.id, orgId: team.id };
      const theirs = await h.make.project(owner.id);
      const sharedWithMe = await h.make.project(owner.id, { shareWith: [me.id] });
      const teamProject = await h.make.project(teammate.id, { orgId: team.id, shareWith: [me.id] });

      assert.ok(await h.make.document(personal));
      assert.equal(await h.make.document(inTeam), null, 'not a member');
      assert.equal(await h.make.document(personal, { projectId: theirs.id }), null, "another's project");
      assert.equal(await h.make.document(personal, { projectId: 'prj_unknown' }), null, 'an unknown project');
      assert.equal(await h.make.document(personal, { projectId: teamProject.id }), null, 'a team project from the personal scope');
      const shared = await h.make.document(personal, { projectId: sharedWithMe.id });
      assert.ok(shared, 'a project shared with me');
      assert.equal((await h.store.getDocument({ userId: owner.id, orgId: null }, shared.id))?.id, shared.id, 'it belongs to the project');

      await h.make.member(team.id, me.id);
      assert.ok(await h.make.document(inTeam), 'a member now');
      const inTeamProject = await h.make.document(inTeam, { projectId: teamProject.id });
      assert.ok(inTeamProject);
      assert.equal((await h.store.getDocument({ userId: teammate.id, orgId: team.id }, inTeamProject.id))?.id, inTeamProject.id);
      assert.equal(await h.make.document({ userId: owner.id, orgId: team.id }, { projectId: teamProject.id }), null, 'not a member');
    });
  });
}
