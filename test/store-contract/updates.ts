import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nextUpdatedAt, toIso } from '../../src/domain/time.js';
import type { Viewer } from '../../src/domain/visibility.js';
import type { UpdateOutcome } from '../../src/store/store.js';
import { useStore, type OpenStore } from './harness.js';
import { at } from './fixtures.js';

/** Optimistic concurrency: updateDocument compares expectedUpdatedAt and writes in one step (DESIGN §3). */
export function updatesContract(open: OpenStore): void {
  describe('updating documents', () => {
    const h = useStore(open);

    async function mine(): Promise<{ viewer: Viewer; id: string }> {
      const viewer = { userId: (await h.make.user()).id, orgId: null };
      return { viewer, id: (await h.make.doc(viewer, { title: 'Original title', contentMarkdown: 'Original text.' })).id };
    }
    const contentOf = async (viewer: Viewer, id: string) => (await h.store.getDocument(viewer, id))?.contentMarkdown;

    it('updates with the right expectedUpdatedAt, giving nextUpdatedAt the previous one', async () => {
      const { viewer, id } = await mine();
      const seen: (string | null)[] = [];
      const next = (time: string) => (previous: string | null) => (seen.push(previous), time);
      const first = await h.store.updateDocument(viewer, id, { contentMarkdown: 'Second text.', expectedUpdatedAt: null }, next(at(1)));
      assert.deepEqual(first, { status: 'updated', document: { id, title: 'Original title', threadId: null, updatedAt: at(1) } });
      const second = await h.store.updateDocument(viewer, id, { title: 'New title', contentMarkdown: 'Third text.', expectedUpdatedAt: at(1) }, next(at(2)));
      assert.deepEqual(second, { status: 'updated', document: { id, title: 'New title', threadId: null, updatedAt: at(2) } });
      assert.deepEqual(seen, [null, at(1)]);
      const row = await h.store.getDocument(viewer, id);
      assert.deepEqual([row?.title, row?.contentMarkdown, row?.updatedAt], ['New title', 'Third text.', at(2)]);
    });

    it('keeps the title when none is given', async () => {
      const { viewer, id } = await mine();
      const outcome = await h.make.update(viewer, id, { contentMarkdown: 'Only the text.' });
      assert.equal(outcome.status === 'updated' && outcome.document.title, 'Original title');
      assert.equal((await h.store.getDocument(viewer, id))?.title, 'Original title');
    });

    it('refuses a stale expectedUpdatedAt, telling the current one, and changes nothing', async () => {
      const { viewer, id } = await mine();
      const attempt = (expectedUpdatedAt: string | null) =>
        h.store.updateDocument(viewer, id, { title: 'Lost', contentMarkdown: 'Lost text.', expectedUpdatedAt }, () => at(99));
      assert.deepEqual(await attempt(at(0)), { status: 'conflict', currentUpdatedAt: null }, 'never updated');
      await h.make.update(viewer, id, { contentMarkdown: 'Kept text.' }, () => at(5));
      assert.deepEqual(await attempt(null), { status: 'conflict', currentUpdatedAt: at(5) });
      assert.deepEqual(await attempt(at(4)), { status: 'conflict', currentUpdatedAt: at(5) });
      assert.deepEqual(await attempt(at(6)), { status: 'conflict', currentUpdatedAt: at(5) });
      const row = await h.store.getDocument(viewer, id);
      assert.deepEqual([row?.title, row?.contentMarkdown, row?.updatedAt], ['Original title', 'Kept text.', at(5)]);
    });

    it('answers not_found for an unknown document and for one the viewer does not see', async () => {
      const { viewer: owner, id } = await mine();
      const stranger = { userId: (await h.make.user()).id, orgId: null };
      const team = await h.make.org();
      await h.make.member(team.id, stranger.userId);
      const teamDoc = await h.make.doc({ ...stranger, orgId: team.id }, { contentMarkdown: 'Team text.' });
      const change = { contentMarkdown: 'Intruder.', expectedUpdatedAt: null };
      const tries: [Viewer, string, string][] = [
        [owner, '00000000-0000-4000-8000-000000000000', 'an unknown id'],
        [stranger, id, "another user's document"],
        [{ ...owner, orgId: team.id }, teamDoc.id, 'a team the user is not in'],
        [stranger, teamDoc.id, 'a team document from the personal scope'],
      ];
      for (const [viewer, docId, what] of tries) assert.deepEqual(await h.store.updateDocument(viewer, docId, change, () => at(1)), { status: 'not_found' }, what);
      assert.equal(await contentOf(owner, id), 'Original text.');
      assert.equal(await contentOf({ ...stranger, orgId: team.id }, teamDoc.id), 'Team text.');
      await h.make.leave(team.id, stranger.userId);
      assert.deepEqual(await h.store.updateDocument({ ...stranger, orgId: team.id }, teamDoc.id, change, () => at(1)), { status: 'not_found' }, 'after leaving the team');
    });

    it('makes each updatedAt strictly later, even with a clock that stands still', async () => {
      const { viewer, id } = await mine();
      const fixedNow = Date.parse('2026-07-01T12:00:00.000Z');
      const times: string[] = [];
      for (let i = 0; i < 6; i++) {
        const outcome = await h.store.updateDocument(viewer, id, { contentMarkdown: `Version ${i}.`, expectedUpdatedAt: times.at(-1) ?? null }, (prev) => nextUpdatedAt(fixedNow, prev));
        assert.equal(outcome.status, 'updated', `update ${i}`);
        times.push((outcome as Extract<UpdateOutcome, { status: 'updated' }>).document.updatedAt!);
      }
      assert.equal(times[0], toIso(fixedNow));
      for (let i = 1; i < times.length; i++) assert.ok(Date.parse(times[i]!) > Date.parse(times[i - 1]!), `${times[i]} after ${times[i - 1]}`);
      assert.equal((await h.store.getDocument(viewer, id))?.updatedAt, times.at(-1));
    });

    it('lets exactly one of concurrent updates with the same expectedUpdatedAt win', async () => {
      const { viewer, id } = await mine();
      for (const expectedUpdatedAt of [null, at(10)]) {
        const outcomes = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            h.store.updateDocument(viewer, id, { contentMarkdown: `Writer ${i}.`, expectedUpdatedAt }, (prev) => nextUpdatedAt(Date.parse(at(10)), prev)),
          ),
        );
        const winners = outcomes.flatMap((o, i) => (o.status === 'updated' ? [{ i, updatedAt: o.document.updatedAt }] : []));
        assert.equal(winners.length, 1, JSON.stringify(outcomes));
        const [winner] = winners;
        for (const o of outcomes) if (o.status !== 'updated') assert.deepEqual(o, { status: 'conflict', currentUpdatedAt: winner!.updatedAt });
        assert.equal(await contentOf(viewer, id), `Writer ${winner!.i}.`);
      }
    });

    it('lets concurrent updates of different documents all through', async () => {
      const docs = await Promise.all(Array.from({ length: 6 }, () => mine()));
      const outcomes = await Promise.all(docs.map(({ viewer, id }) => h.make.update(viewer, id, { contentMarkdown: 'Parallel.' })));
      assert.deepEqual(outcomes.map((o) => o.status), docs.map(() => 'updated'));
    });
  });
}
