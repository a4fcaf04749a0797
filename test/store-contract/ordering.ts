import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Viewer } from '../../src/domain/visibility.js';
import { ALL } from './check-view.js';
import { at } from './fixtures.js';
import { useStore, type Harness, type OpenStore } from './harness.js';
import type { DocumentModel } from './model.js';

/**
 * DESIGN §3's order of documents and chats: coalesce(updatedAt, createdAt)
 * newest first, ties by id descending, whatever order the writes came in
 * (a clock that went back included), and a limited page is the start of
 * the whole order.
 */

const ids = (rows: readonly { id: string }[]) => rows.map((r) => r.id);
/** The word in every document this file writes. */
const WORD = 'orderword';

/** The viewer's documents, listed and searched, whole and in pages of each limit, against the model's order. */
async function assertDocumentPages(h: Harness, viewer: Viewer, limits: readonly number[]): Promise<string[]> {
  const expected = ids(h.model.visibleDocuments(viewer));
  for (const terms of [undefined, [WORD]]) {
    const how = terms ? 'searched' : 'listed';
    assert.deepEqual(ids(h.model.visibleDocuments(viewer, { terms })), expected, 'every document holds the word');
    assert.deepEqual(ids(await h.store.listDocuments(viewer, { limit: ALL, terms })), expected, `all documents ${how}`);
    for (const limit of limits) {
      assert.deepEqual(ids(await h.store.listDocuments(viewer, { limit, terms })), expected.slice(0, limit), `the first ${limit} ${how}`);
    }
  }
  return expected;
}

/** A user of their own, with `count` documents created at `times(i)`, in the order of i. */
async function userWithDocuments(h: Harness, count: number, times: (i: number) => string) {
  const viewer = { userId: (await h.make.user()).id, orgId: null };
  const docs: DocumentModel[] = [];
  for (let i = 0; i < count; i++) docs.push(await h.make.doc(viewer, { title: `Doc ${i}`, contentMarkdown: `${WORD} ${i}`, now: times(i) }));
  /** Updates document i to `time`, its text still holding the word. */
  const move = async (i: number, time: string) => {
    const outcome = await h.make.update(viewer, docs[i]!.id, { contentMarkdown: `${WORD} moved` }, () => time);
    assert.equal(outcome.status, 'updated');
  };
  return { viewer, docs, move };
}

export function orderingContract(open: OpenStore): void {
  describe('the order of documents and chats', () => {
    const h = useStore(open);

    it('puts an old document that was just updated first', async () => {
      const { viewer, docs, move } = await userWithDocuments(h, 5, (i) => at(i));
      await move(0, at(10));
      const order = await assertDocumentPages(h, viewer, [1, 3]);
      assert.deepEqual(order, [docs[0], docs[4], docs[3], docs[2], docs[1]].map((d) => d!.id));
    });

    it('breaks ties of one timestamp by id, descending', async () => {
      const { viewer, docs } = await userWithDocuments(h, 14, (i) => at(i === 0 ? 0 : i === 13 ? 2 : 1));
      const order = await assertDocumentPages(h, viewer, [1, 5, 13]);
      const tied = docs.slice(1, 13).map((d) => d.id);
      assert.deepEqual(order, [docs[13]!.id, ...[...tied].sort().reverse(), docs[0]!.id]);
    });

    it('gives exactly the first N of the whole order, past a limit of 20', async () => {
      // Creation times out of order, with ties; some documents updated later.
      const { viewer, move } = await userWithDocuments(h, 34, (i) => at((i * 7) % 13));
      for (const i of [2, 9, 30]) await move(i, at(5 + i / 10));
      await assertDocumentPages(h, viewer, [1, 7, 19, 20, 21, 33, 34]);
    });

    it('orders by sort time, not by the order of writes, when the clock went back', async () => {
      const { viewer, docs, move } = await userWithDocuments(h, 30, (i) => at(100 + i));
      // Created after the others, with a time earlier than all of them.
      const late = await h.make.doc(viewer, { contentMarkdown: `${WORD} late`, now: at(50) });
      // Updated to a time earlier than most documents', and than its own creation.
      await move(27, at(110.5));
      await move(3, at(101.25));
      const order = await assertDocumentPages(h, viewer, [1, 5, 10, 19, 20, 25, 30, 31]);
      assert.equal(order.at(-1), late.id);
      assert.ok(order.indexOf(docs[27]!.id) > order.indexOf(docs[11]!.id), 'an update to an earlier time does not move a document up');
      assert.ok(order.indexOf(docs[27]!.id) < order.indexOf(docs[10]!.id));
    });

    it('keeps the order of a clock that went back, then moved on', async () => {
      const { viewer, docs, move } = await userWithDocuments(h, 25, (i) => at(300 - i));
      await move(24, at(400));
      await move(0, at(250));
      const order = await assertDocumentPages(h, viewer, [1, 2, 20, 24]);
      assert.deepEqual([order[0], order.at(-1)], [docs[24]!.id, docs[0]!.id]);
    });

    it('lists chats newest first, ties by id descending, in pages', async () => {
      const viewer = { userId: (await h.make.user()).id, orgId: null };
      for (let i = 0; i < 24; i++) await h.make.chat(viewer.userId, { title: `Chat ${i % 3 === 0 ? 'Weekly' : 'Daily'} ${i}`, now: at((i * 5) % 7) });
      const expected = ids(h.model.visibleChats(viewer));
      assert.equal(expected.length, 24);
      for (const limit of [1, 6, 20, 23, 24, ALL]) {
        assert.deepEqual(ids(await h.store.listChats(viewer, { limit })), expected.slice(0, limit), `the first ${limit} chats`);
      }
      const weekly = ids(h.model.visibleChats(viewer, { titleContains: 'weekly' }));
      assert.equal(weekly.length, 8);
      assert.deepEqual(ids(await h.store.listChats(viewer, { limit: ALL, titleContains: 'weekly' })), weekly);
      assert.deepEqual(ids(await h.store.listChats(viewer, { limit: 3, titleContains: 'weekly' })), weekly.slice(0, 3));
    });
  });
}
