import assert from 'node:assert/strict';
import { foldTitle } from '../../src/domain/search.js';
import { canSeeContent, canSeeProject, type Viewer } from '../../src/domain/visibility.js';
import type { RevisionRow, RevisionSummaryRow, Store } from '../../src/store/store.js';
import type { Model } from './model.js';

/** Large enough for every world of the suite; the API's own maximum. */
export const ALL = 100;

const ids = (rows: readonly { id: string | number }[]) => rows.map((r) => r.id);

/**
 * Everything a viewer can read, asked of the store, against what the model
 * says DESIGN §1 lets them see, in DESIGN §3's order: documents (listed,
 * searched for `word`, per project, one by one), chats (listed, by title,
 * per project, one by one), projects (with isSharedWithYou) and templates
 * (with and without the system ones, and which is each workspace's
 * default), and each document's history (listed, its newest and oldest
 * revisions read) exactly when the document is seen. `who` names the
 * viewer in failures.
 */
export async function checkView(store: Store, model: Model, viewer: Viewer, who: string, word: string): Promise<void> {
  const see = (what: string) => `${who} ${what}`;
  const visibleProjects = model.visibleProjects(viewer);

  assert.deepEqual(ids(await store.listDocuments(viewer, { limit: ALL })), ids(model.visibleDocuments(viewer)), see('lists the documents'));
  assert.deepEqual(
    ids(await store.listDocuments(viewer, { limit: ALL, terms: [word] })),
    ids(model.visibleDocuments(viewer, { terms: [word] })),
    see(`finds the documents holding "${word}"`),
  );
  assert.deepEqual(ids(await store.listChats(viewer, { limit: ALL })), ids(model.visibleChats(viewer)), see('lists the chats'));
  const titleContains = foldTitle(word);
  assert.deepEqual(
    ids(await store.listChats(viewer, { limit: ALL, titleContains })),
    ids(model.visibleChats(viewer, { titleContains })),
    see(`finds the chats titled with "${word}"`),
  );
  assert.deepEqual(await projectFlags(store, viewer), visibleProjects, see('lists the projects (with isSharedWithYou)'));
  for (const includeSystem of [true, false]) {
    const templates = await store.listTemplates(viewer, includeSystem, ALL);
    assert.deepEqual(
      templates.map((t) => ({ id: t.id, isDefault: t.isDefault })),
      model.visibleTemplates(viewer, includeSystem),
      see(`lists the templates (includeSystem ${includeSystem}) with their defaults`),
    );
  }

  for (const doc of model.documents.values()) {
    const visible = canSeeContent(viewer, model.contentFacts(doc), model.isMember);
    const seen = await store.getDocument(viewer, doc.id);
    assert.equal(seen?.id, visible ? doc.id : undefined, see(`reads document "${doc.title}"`));
    // Its history is shown exactly to those who see the document (DESIGN §7).
    const revisions = model.revisionsOf(doc.id);
    const listed = await store.listRevisions(viewer, doc.id, ALL);
    assert.deepEqual(listed && listed.map(summary), visible ? revisions.map(summary) : null, see(`lists the revisions of "${doc.title}"`));
    for (const revision of [revisions[0]!, revisions.at(-1)!]) {
      const read = await store.getRevision(viewer, doc.id, revision.number);
      assert.deepEqual(typeof read === 'string' ? read : whole(read), visible ? revision : 'no_document', see(`reads revision ${revision.number} of "${doc.title}"`));
    }
  }
  for (const chat of model.chats.values()) {
    const visible = canSeeContent(viewer, model.contentFacts(chat), model.isMember);
    assert.equal(await store.isChatVisible(viewer, chat.id), visible, see(`sees chat "${chat.title}"`));
  }
  for (const project of model.projects.values()) {
    assert.equal(await store.isProjectVisible(viewer, project.id), canSeeProject(viewer, project, model.isMember), see(`sees project "${project.name}"`));
    const filter = { projectId: project.id };
    const docs = await store.listDocuments(viewer, { limit: ALL, ...filter });
    assert.deepEqual(ids(docs), ids(model.visibleDocuments(viewer, filter)), see(`lists the documents of "${project.name}"`));
    const chats = await store.listChats(viewer, { limit: ALL, ...filter });
    assert.deepEqual(ids(chats), ids(model.visibleChats(viewer, filter)), see(`lists the chats of "${project.name}"`));
  }
}

/** A revision's fields the interface names (a store may carry more). */
const summary = ({ number, createdAt, title, userId, keyName }: RevisionSummaryRow) => ({ number, createdAt, title, userId, keyName });
const whole = (row: RevisionRow) => ({ ...summary(row), contentMarkdown: row.contentMarkdown });

async function projectFlags(store: Store, viewer: Viewer): Promise<{ id: string; isSharedWithYou: boolean }[]> {
  return (await store.listProjects(viewer, ALL)).map((p) => ({ id: p.id, isSharedWithYou: p.isSharedWithYou }));
}
