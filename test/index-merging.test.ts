import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { setTimeout as sleep } from 'node:timers/promises';
import { tidySearchIndex } from '../src/store/sqlite/index-tidying.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import type { Store, Viewer } from '../src/store/store.js';
import { indexedWords, segments } from './helpers.js';

/** A store on a new database file in a temporary folder, with one user, removed after `body`. */
async function withUserStore(body: (ctx: { file: string; dir: string; store: Store; viewer: Viewer; now: string }) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'folio-merge-'));
  const file = join(dir, 'folio.db');
  try {
    const store = openSqliteStore(file);
    const now = new Date().toISOString();
    const user = await store.createUser({ email: 'merge@example.com', name: null, plan: 'pro', now });
    await body({ file, dir, store, viewer: { userId: user.id, orgId: null }, now });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Document i: a word of its own (`only<i>q`) and sixty of a shared vocabulary (`w<n>x`). Awaited alone, it commits alone. */
function writeNote(store: Store, viewer: Viewer, i: number, now: string) {
  const words = `only${i}q ` + Array.from({ length: 60 }, (_, k) => `w${(i * 61 + k * 7) % 997}x`).join(' ');
  return store.createDocument(viewer, { title: `Note ${i}`, contentMarkdown: words, projectId: null, threadId: null }, now);
}

describe('search index merging', () => {
  it('writes the changes of a group commit as one segment, creations and edits together', () =>
    withUserStore(async ({ file, store, viewer, now }) => {
      // Writes started in one turn share a transaction (group-commit.ts).
      const created = await Promise.all(Array.from({ length: 24 }, (_, i) => writeNote(store, viewer, i, now)));
      assert.equal(segments(file), 1);
      // FTS5 holds a transaction's changes in memory only while their rowids
      // go up: given out of order, it would write a segment for each.
      const edit = (i: number) =>
        store.updateDocument(viewer, created[i]!.id, { contentMarkdown: `edited ${i} newword`, expectedUpdatedAt: null }, () => new Date().toISOString());
      await Promise.all([edit(0), writeNote(store, viewer, 100, now), edit(5), edit(1), writeNote(store, viewer, 101, now), edit(23)]);
      assert.equal(segments(file), 2);
      const found = await store.listDocuments(viewer, { limit: 20, terms: ['newword'] });
      assert.deepEqual(found.map((d) => d.id).sort(), [0, 1, 5, 23].map((i) => created[i]!.id).sort());
      assert.deepEqual(await store.listDocuments(viewer, { limit: 20, terms: ['only5q'] }), []);
      // Not only unmatched (its old entries would name a place no row holds): gone from the index.
      const words = indexedWords(file).split(' ');
      assert.ok(!words.includes('only5q') && words.includes('only6q'));
      await store.close();
    }));

  it('merges as it writes: a run of single writes leaves a few segments, not one per commit', () =>
    withUserStore(async ({ file, store, viewer, now }) => {
      // Each write awaited alone commits alone, and each commit writes a segment.
      const ids: string[] = [];
      for (let i = 0; i < 900; i++) ids.push((await writeNote(store, viewer, i, now))!.id);
      for (let i = 0; i < 100; i++) {
        await store.updateDocument(viewer, ids[i]!, { contentMarkdown: `edited ${i} w1x`, expectedUpdatedAt: null }, () => new Date().toISOString());
      }
      await store.close();
      // FTS5 would keep up to 16 segments on a level before merging it at once;
      // merging in steps keeps at most seven a level (migration 8): 13 here, 25 without the steps.
      const n = segments(file);
      assert.ok(n <= 16, `${n} segments after 1000 commits`);
      const db = new Database(file);
      try {
        // FTS5's own check of the index's structure, tombstones included; it throws on a fault.
        db.prepare("INSERT INTO documents_fts (documents_fts, rank) VALUES ('integrity-check', 0)").run();
      } finally {
        db.close();
      }
      const reopened = openSqliteStore(file);
      const found = await reopened.listDocuments(viewer, { limit: 200, terms: ['w1x'] });
      assert.ok(found.length >= 100, 'every edited document is found under its new words');
      // The old words of an edited document are gone from the index; those of the others remain.
      for (const i of [0, 42, 99]) assert.deepEqual(await reopened.listDocuments(viewer, { limit: 20, terms: [`only${i}q`] }), []);
      for (const i of [100, 899]) assert.deepEqual((await reopened.listDocuments(viewer, { limit: 20, terms: [`only${i}q`] })).map((d) => d.id), [ids[i]]);
      const words = new Set(indexedWords(file).split(' '));
      for (const i of [0, 42, 99]) assert.ok(!words.has(`only${i}q`), `only${i}q left in the index`);
      for (const i of [100, 899]) assert.ok(words.has(`only${i}q`));
      await reopened.close();
    }));

  it('paces the background merging apart from the checkpoints: at most one step every everyMs', () =>
    withUserStore(async ({ file, store, viewer, now }) => {
      for (let i = 0; i < 1000 && (i < 200 || segments(file) < 6); i++) await writeNote(store, viewer, i, now);
      await store.close();
      // Steps of one page, checkpoints every 5 ms: unpaced, a step would run every 5 ms.
      const server = openSqliteStore(file, { background: { intervalMs: 5, tidying: { idleMs: 50, pages: 1, everyMs: 400 } } });
      const watcher = new Database(file, { readonly: true });
      try {
        // Each step commits on the thread's connection, which another connection sees as a new
        // data_version: one or two changes a step in trials.
        const version = watcher.prepare('PRAGMA data_version').pluck();
        let last = version.get();
        // The thread starts in its own time (under tsx it compiles its module first): counted from its first step.
        for (const started = Date.now(); version.get() === last && Date.now() - started < 15_000; ) await sleep(2);
        // A thread that never stepped would make "at most one step every everyMs" hold of nothing.
        assert.notEqual(version.get(), last, 'the thread merged: its first step committed within 15 s');
        last = version.get();
        let changes = 1;
        const start = Date.now();
        while (Date.now() - start < 800) {
          await sleep(2);
          const v = version.get();
          if (v !== last) changes++;
          last = v;
        }
        // The first step and two more at most, 400 ms apart, one or two changes each; unpaced, a step would run every 5 ms.
        assert.ok(changes <= 5, `${changes} changes in 800 ms after the first`);
      } finally {
        watcher.close();
        await server.close();
      }
    }));

  it('merges further in the background once writes stop, leaving nothing to merge and the same results', () =>
    withUserStore(async ({ file, dir, store, viewer, now }) => {
      // Single commits until the writes' own merging has left several segments.
      for (let i = 0; i < 1000 && (i < 50 || segments(file) < 4); i++) await writeNote(store, viewer, i, now);
      const terms = [['w1x'], ['only7q'], ['w5'], ['only1']];
      const before = await Promise.all(terms.map((t) => store.listDocuments(viewer, { limit: 100, terms: t })));
      await store.close();
      const untidy = segments(file);
      assert.ok(untidy >= 4, `${untidy} segments to start from`);
      // The same index, merged by the step the background thread runs: there is work to do.
      copyFileSync(file, join(dir, 'copy.db'));
      const copy = new Database(join(dir, 'copy.db'));
      assert.ok(tidySearchIndex(copy) > 0, 'the writes left merging to do');
      copy.close();

      const server = openSqliteStore(file, { background: { intervalMs: 10, tidying: { idleMs: 100, pages: 20, everyMs: 10 } } });
      try {
        // A write while the thread may be merging waits for it or goes first; either way it is written.
        await sleep(150);
        // Written later than the rest, so it comes first in the newest-first order.
        const later = new Date(Date.parse(now) + 1000).toISOString();
        const late = await server.createDocument(viewer, { title: 'Late', contentMarkdown: 'lateword w1x', projectId: null, threadId: null }, later);
        assert.ok(late);
        let last = segments(file);
        // Once the thread has begun (it starts in its own time), until the index stays as it is.
        for (let waited = 0; segments(file) === last && waited < 15_000; waited += 20) await sleep(20);
        for (let stable = 0, waited = 0; stable < 30 && waited < 15_000; waited += 20) {
          await sleep(20);
          const n = segments(file);
          stable = n === last ? stable + 1 : 0;
          last = n;
        }
        assert.ok(last < untidy, `${last} segments after merging, from ${untidy}`);
        const after = await Promise.all(terms.map((t) => server.listDocuments(viewer, { limit: 100, terms: t })));
        assert.deepEqual(after[0]!.slice(1), before[0], 'the same documents, after the new one');
        assert.equal(after[0]![0]!.id, late!.id);
        assert.deepEqual(after.slice(1), before.slice(1));
      } finally {
        await server.close();
      }

      const db = new Database(file);
      try {
        assert.equal(tidySearchIndex(db), 0, 'the background thread left nothing to merge');
        db.prepare("INSERT INTO documents_fts (documents_fts, rank) VALUES ('integrity-check', 0)").run();
        // The writes' own merging is as configured: only the thread's steps used a lower threshold.
        const usermerge = db.prepare("SELECT v FROM documents_fts_config WHERE k = 'usermerge'").pluck().get();
        assert.equal(usermerge, 8);
      } finally {
        db.close();
      }
    }));
});
