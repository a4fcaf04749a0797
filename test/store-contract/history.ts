import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nextUpdatedAt } from '../../src/domain/time.js';
import type { Viewer } from '../../src/domain/visibility.js';
import type { RevisionAuthor, RevisionRow, RevisionSummaryRow, Store } from '../../src/store/store.js';
import { ALL } from './check-view.js';
import { at } from './fixtures.js';
import { useStore, type Harness, type OpenStore } from './harness.js';

/**
 * Document history (DESIGN §7): every creation and update records a
 * revision in the same write, numbered per document from 1, at the time
 * the change set, with its author; reads as visible as the document; and
 * pruning. Who sees a document's history in every scope is checked with
 * everything else a viewer sees (check-view.ts).
 */

/** The fields the interface names, so that a store may carry more. */
const summary = ({ number, createdAt, title, userId, keyName }: RevisionSummaryRow) => ({ number, createdAt, title, userId, keyName });
const whole = (row: RevisionRow | string) => (typeof row === 'string' ? row : { ...summary(row), contentMarkdown: row.contentMarkdown });
const numbers = (rows: RevisionSummaryRow[] | null) => rows?.map((r) => r.number) ?? null;

/** The model's revisions of a document, as listRevisions must answer them. */
const expected = (h: Harness, id: string) => h.model.revisionsOf(id).map(summary);

async function mine(h: Harness, author?: RevisionAuthor): Promise<{ viewer: Viewer; id: string }> {
  const viewer = { userId: (await h.make.user()).id, orgId: null };
  return { viewer, id: (await h.make.doc(viewer, { title: 'Original title', contentMarkdown: 'Original text.', author })).id };
}

export function historyContract(open: OpenStore): void {
  describe('document history', () => {
    const h = useStore(open);

    it('records revision 1 at creation and the next number at each update, at the time it set, with its author', async () => {
      const user = await h.make.user();
      const viewer = { userId: user.id, orgId: null };
      const doc = await h.make.doc(viewer, { title: 'First', contentMarkdown: 'One.', author: { userId: user.id, keyName: 'agent' }, now: at(0) });
      assert.deepEqual((await h.store.listRevisions(viewer, doc.id, ALL))?.map(summary), [
        { number: 1, createdAt: at(0), title: 'First', userId: user.id, keyName: 'agent' },
      ]);
      assert.deepEqual(whole(await h.store.getRevision(viewer, doc.id, 1)), {
        number: 1, createdAt: at(0), title: 'First', userId: user.id, keyName: 'agent', contentMarkdown: 'One.',
      });

      const second = await h.make.update(viewer, doc.id, { title: 'Second', contentMarkdown: 'Two.', author: { userId: user.id, keyName: null } }, () => at(1.5));
      assert.equal(second.status === 'updated' && second.document.updatedAt, at(1.5));
      // No title: the revision records the title kept. No author: the command line's change.
      const third = await h.make.update(viewer, doc.id, { contentMarkdown: 'Three.' }, () => at(2));
      assert.equal(third.status, 'updated');
      const fourth = await h.make.update(viewer, doc.id, { contentMarkdown: 'Four.', author: null }, () => at(3));
      assert.equal(fourth.status, 'updated');

      assert.deepEqual((await h.store.listRevisions(viewer, doc.id, ALL))?.map(summary), [
        { number: 4, createdAt: at(3), title: 'Second', userId: null, keyName: null },
        { number: 3, createdAt: at(2), title: 'Second', userId: null, keyName: null },
        { number: 2, createdAt: at(1.5), title: 'Second', userId: user.id, keyName: null },
        { number: 1, createdAt: at(0), title: 'First', userId: user.id, keyName: 'agent' },
      ]);
      assert.deepEqual((await h.store.listRevisions(viewer, doc.id, ALL))?.map(summary), expected(h, doc.id));
      for (const [number, content] of [[1, 'One.'], [2, 'Two.'], [3, 'Three.'], [4, 'Four.']] as const) {
        assert.equal((await h.store.getRevision(viewer, doc.id, number) as RevisionRow).contentMarkdown, content, `revision ${number}`);
      }
      // The newest revision is the document as it is now.
      const now = await h.store.getDocument(viewer, doc.id);
      assert.deepEqual([now?.title, now?.contentMarkdown, now?.updatedAt], ['Second', 'Four.', at(3)]);
    });

    it('numbers each document on its own', async () => {
      const a = await mine(h);
      const b = await mine(h);
      await h.make.update(a.viewer, a.id);
      await h.make.update(a.viewer, a.id);
      await h.make.update(b.viewer, b.id);
      assert.deepEqual(numbers(await h.store.listRevisions(a.viewer, a.id, ALL)), [3, 2, 1]);
      assert.deepEqual(numbers(await h.store.listRevisions(b.viewer, b.id, ALL)), [2, 1]);
    });

    it('records nothing for a conflicting update, nor for one the viewer may not make', async () => {
      const { viewer, id } = await mine(h);
      await h.make.update(viewer, id, { contentMarkdown: 'Kept text.' }, () => at(5));
      const before = await h.store.listRevisions(viewer, id, ALL);
      assert.deepEqual(numbers(before), [2, 1]);
      const change = (expectedUpdatedAt: string | null) => ({ title: 'Lost', contentMarkdown: 'Lost text.', expectedUpdatedAt, author: { userId: viewer.userId, keyName: 'late' } });
      for (const expectedUpdatedAt of [null, at(4), at(6)]) {
        assert.equal((await h.store.updateDocument(viewer, id, change(expectedUpdatedAt), () => at(9))).status, 'conflict');
      }
      const stranger = { userId: (await h.make.user()).id, orgId: null };
      assert.deepEqual(await h.store.updateDocument(stranger, id, change(at(5)), () => at(9)), { status: 'not_found' });
      assert.deepEqual(await h.store.listRevisions(viewer, id, ALL), before);
      assert.equal(await h.store.getRevision(viewer, id, 3), 'no_revision');
    });

    it('records exactly one revision for concurrent updates with the same expectation: the winner’s', async () => {
      const { viewer, id } = await mine(h);
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          h.store.updateDocument(viewer, id, { contentMarkdown: `Writer ${i}.`, expectedUpdatedAt: null, author: { userId: viewer.userId, keyName: `writer ${i}` } }, (prev) =>
            nextUpdatedAt(Date.parse(at(10)), prev),
          ),
        ),
      );
      const winner = outcomes.findIndex((o) => o.status === 'updated');
      assert.equal(outcomes.filter((o) => o.status === 'updated').length, 1);
      assert.deepEqual(numbers(await h.store.listRevisions(viewer, id, ALL)), [2, 1]);
      assert.deepEqual(whole(await h.store.getRevision(viewer, id, 2)), {
        number: 2, createdAt: at(10), title: 'Original title', userId: viewer.userId, keyName: `writer ${winner}`, contentMarkdown: `Writer ${winner}.`,
      });
    });

    it('lists newest first, as many as the limit', async () => {
      const { viewer, id } = await mine(h);
      for (let i = 0; i < 5; i++) await h.make.update(viewer, id, { contentMarkdown: `Version ${i + 2}.` });
      assert.deepEqual(numbers(await h.store.listRevisions(viewer, id, 1)), [6]);
      assert.deepEqual(numbers(await h.store.listRevisions(viewer, id, 3)), [6, 5, 4]);
      assert.deepEqual(numbers(await h.store.listRevisions(viewer, id, 6)), [6, 5, 4, 3, 2, 1]);
      assert.deepEqual((await h.store.listRevisions(viewer, id, ALL))?.map(summary), expected(h, id));
    });

    it('answers null and no_document for a document the viewer does not see, no_revision for a number it lacks', async () => {
      const { viewer: owner, id } = await mine(h);
      const stranger = { userId: (await h.make.user()).id, orgId: null };
      const team = await h.make.org();
      await h.make.member(team.id, stranger.userId);
      const inTeam = { ...stranger, orgId: team.id };
      const teamDoc = await h.make.doc(inTeam, { contentMarkdown: 'Team text.' });
      const tries: [Viewer, string, string][] = [
        [owner, '00000000-0000-4000-8000-000000000000', 'an unknown id'],
        [stranger, id, "another user's document"],
        [{ ...owner, orgId: team.id }, teamDoc.id, 'a team the user is not in'],
        [stranger, teamDoc.id, 'a team document from the personal scope'],
        [{ ...owner, orgId: team.id }, id, 'a personal document from a team scope'],
      ];
      const hidden = async (viewer: Viewer, docId: string, what: string) => {
        assert.equal(await h.store.listRevisions(viewer, docId, ALL), null, what);
        for (const number of [1, 2]) assert.equal(await h.store.getRevision(viewer, docId, number), 'no_document', `${what}, revision ${number}`);
      };
      for (const [viewer, docId, what] of tries) await hidden(viewer, docId, what);

      for (const [viewer, docId] of [[owner, id], [inTeam, teamDoc.id]] as const) {
        assert.deepEqual(numbers(await h.store.listRevisions(viewer, docId, ALL)), [1]);
        for (const number of [0, 2, 3, 2_147_483_647]) assert.equal(await h.store.getRevision(viewer, docId, number), 'no_revision', `revision ${number}`);
      }
      await h.make.leave(team.id, stranger.userId);
      await hidden(inTeam, teamDoc.id, 'after leaving the team');
    });
  });

  describe('pruning history', () => {
    const h = useStore(open);
    const revisionCount = async (store: Store, docs: { viewer: Viewer; id: string }[]) =>
      Promise.all(docs.map(async ({ viewer, id }) => numbers(await store.listRevisions(viewer, id, ALL))));

    it('keeps the newest `keep` revisions of every document, answering how many it removed; numbering goes on after them', async () => {
      const docs = [await mine(h), await mine(h), await mine(h)];
      for (let i = 0; i < 4; i++) await h.make.update(docs[0]!.viewer, docs[0]!.id);
      for (let i = 0; i < 2; i++) await h.make.update(docs[2]!.viewer, docs[2]!.id);
      assert.deepEqual(await revisionCount(h.store, docs), [[5, 4, 3, 2, 1], [1], [3, 2, 1]]);

      assert.equal(await h.store.pruneRevisions(2), 3 + 0 + 1);
      assert.deepEqual(await revisionCount(h.store, docs), [[5, 4], [1], [3, 2]]);
      // What is kept is kept whole.
      assert.deepEqual((await h.store.listRevisions(docs[0]!.viewer, docs[0]!.id, ALL))?.map(summary), expected(h, docs[0]!.id).slice(0, 2));
      assert.deepEqual(whole(await h.store.getRevision(docs[0]!.viewer, docs[0]!.id, 4)), h.model.revisionsOf(docs[0]!.id)[1]);
      for (const number of [1, 2, 3]) assert.equal(await h.store.getRevision(docs[0]!.viewer, docs[0]!.id, number), 'no_revision', `pruned revision ${number}`);
      assert.equal(await h.store.pruneRevisions(2), 0, 'nothing more to prune');

      await h.make.update(docs[0]!.viewer, docs[0]!.id, { contentMarkdown: 'After pruning.' });
      await h.make.update(docs[1]!.viewer, docs[1]!.id, { contentMarkdown: 'After pruning.' });
      assert.deepEqual(await revisionCount(h.store, docs), [[6, 5, 4], [2, 1], [3, 2]]);
      assert.equal((await h.store.getRevision(docs[0]!.viewer, docs[0]!.id, 6) as RevisionRow).contentMarkdown, 'After pruning.');

      assert.equal(await h.store.pruneRevisions(1), 2 + 1 + 1);
      assert.deepEqual(await revisionCount(h.store, docs), [[6], [2], [3]]);
      // The document itself is untouched.
      assert.equal((await h.store.getDocument(docs[0]!.viewer, docs[0]!.id))?.contentMarkdown, 'After pruning.');
    });

    it('refuses to keep fewer than one revision, removing nothing', async () => {
      const doc = await mine(h);
      await h.make.update(doc.viewer, doc.id);
      for (const keep of [0, -1, 1.5, Number.NaN]) await assert.rejects(h.store.pruneRevisions(keep), `keep ${keep}`);
      assert.deepEqual(numbers(await h.store.listRevisions(doc.viewer, doc.id, ALL)), [2, 1]);
    });
  });
}
