import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { onlyBusy } from '../src/store/sqlite/database.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import { segments, walState } from './helpers.js';
import type { Store } from '../src/store/store.js';

/** Writes n documents for a new user, whose id it returns. */
async function writeSome(store: Store, n: number): Promise<string> {
  const now = new Date().toISOString();
  const user = await store.createUser({ email: 'writer@example.com', name: 'W', plan: 'pro', now });
  const viewer = { userId: user.id, orgId: null };
  for (let i = 0; i < n; i++) {
    await store.createDocument(viewer, { title: `Note ${i}`, contentMarkdown: `Body ${i} `.repeat(200), projectId: null, threadId: null }, now);
  }
  return user.id;
}

describe('background checkpoints (the server store)', () => {
  it('copy the write-ahead log into the database file from a thread of their own, and stop with the store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'folio-checkpoint-'));
    const file = join(dir, 'folio.db');
    try {
      const store = openSqliteStore(file, { background: true });
      const userId = await writeSome(store, 30);
      let state = walState(file);
      assert.ok(state.frames > 0, 'the writes are in the log');
      for (let waited = 0; state.copied < state.frames && waited < 5000; waited += 20) {
        await sleep(20);
        state = walState(file);
      }
      assert.equal(state.copied, state.frames, 'every frame was copied without a write or a checkpoint on this thread');
      await store.close();
      // The last connection to close removes the log: the checkpointer's is closed too.
      assert.equal(existsSync(`${file}-wal`), false);
      const reopened = openSqliteStore(file);
      assert.equal((await reopened.listDocuments({ userId, orgId: null }, { limit: 50 })).length, 30);
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are not run by other stores (the command line), which leave the log to SQLite below 1000 pages', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'folio-checkpoint-'));
    const file = join(dir, 'folio.db');
    try {
      const store = openSqliteStore(file);
      await writeSome(store, 30);
      await sleep(300);
      const state = walState(file);
      assert.ok(state.frames > 0 && state.copied < state.frames, `frames ${state.frames}, copied ${state.copied}`);
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('wait out a write lock held by another process, and merge the index once it is let go', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'folio-checkpoint-'));
    const file = join(dir, 'folio.db');
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const writer = openSqliteStore(file);
      const now = new Date().toISOString();
      const user = await writer.createUser({ email: 'writer@example.com', name: null, plan: 'pro', now });
      const viewer = { userId: user.id, orgId: null };
      for (let i = 0; i < 1000 && (i < 20 || segments(file) < 4); i++) {
        await writer.createDocument(viewer, { title: `Note ${i}`, contentMarkdown: `word${i} shared`, projectId: null, threadId: null }, now);
      }
      await writer.close();
      const untidy = segments(file);
      assert.ok(untidy >= 4, `${untidy} segments to start from`);

      const other = new Database(file);
      other.exec('BEGIN IMMEDIATE');
      const server = openSqliteStore(file, { background: { intervalMs: 5, tidying: { idleMs: 0, pages: 20, everyMs: 5 } } });
      try {
        // Every step the thread tries meanwhile finds the database locked.
        await sleep(300);
        assert.equal(segments(file), untidy);
        other.exec('COMMIT');
        other.close();
        let n = untidy;
        for (let waited = 0; n >= untidy && waited < 10_000; waited += 20) {
          await sleep(20);
          n = segments(file);
        }
        assert.ok(n < untidy, `${n} segments after the lock was let go, from ${untidy}`);
      } finally {
        await server.close();
      }
      assert.deepEqual(warnings.map((w) => w.message), [], 'the thread did not stop');
    } finally {
      process.off('warning', onWarning);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('read every code of a lock held elsewhere as "not now", and nothing else', () => {
    for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_RECOVERY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_TIMEOUT']) assert.equal(onlyBusy(code), true, code);
    for (const code of ['SQLITE_IOERR', 'SQLITE_FULL', 'SQLITE_CORRUPT', 'SQLITE_BUSYX', undefined, 5]) assert.equal(onlyBusy(code), false, String(code));
  });
});
