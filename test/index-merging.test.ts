import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../src/store/sqlite/store.js';

/** The search index's segments: each has its own rows in the index of leaf pages. */
function segments(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT count(DISTINCT segid) FROM documents_fts_idx').pluck().get() as number;
  } finally {
    db.close();
  }
}

describe('search index merging', () => {
  it('merges as it writes: a run of single writes leaves a few segments, not one per commit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'folio-merge-'));
    const file = join(dir, 'folio.db');
    try {
      const store = openSqliteStore(file);
      const now = new Date().toISOString();
      const user = await store.createUser({ email: 'merge@example.com', name: null, plan: 'pro', now });
      const viewer = { userId: user.id, orgId: null };
      // Each write awaited alone commits alone, and each commit writes a segment.
      const ids: string[] = [];
      for (let i = 0; i < 200; i++) {
        const words = `only${i}q ` + Array.from({ length: 60 }, (_, k) => `w${(i * 61 + k * 7) % 997}x`).join(' ');
        const doc = await store.createDocument(viewer, { title: `Note ${i}`, contentMarkdown: words, projectId: null, threadId: null }, now);
        ids.push(doc!.id);
      }
      for (let i = 0; i < 100; i++) {
        await store.updateDocument(viewer, ids[i]!, { contentMarkdown: `edited ${i} w1x`, expectedUpdatedAt: null }, () => new Date().toISOString());
      }
      await store.close();
      // FTS5 would keep up to 16 segments on a level before merging it at once;
      // merging in steps keeps a few (3 here; 15 without the steps).
      const n = segments(file);
      assert.ok(n <= 8, `${n} segments after 300 commits`);
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
      for (const i of [100, 199]) assert.deepEqual((await reopened.listDocuments(viewer, { limit: 20, terms: [`only${i}q`] })).map((d) => d.id), [ids[i]]);
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
