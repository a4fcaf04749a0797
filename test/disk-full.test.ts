import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { run } from '../src/cli/program.js';
import { openSqliteStore } from '../src/store/sqlite/store.js';
import type { Store, Viewer } from '../src/store/store.js';
import { segments, walState } from './helpers.js';

/** Set when this file runs again in a user namespace of its own, where it may mount file systems. */
const IN_NAMESPACE = 'FOLIO_TEST_DISK_FULL_NAMESPACE';
const UNSHARE = ['--user', '--map-root-user', '--mount'];

/** Mounts a small tmpfs on `dir` (as root, or as the root of a user namespace); false if not allowed. */
function mountTmpfs(dir: string): boolean {
  return spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir]).status === 0;
}

/** Waits for `done`, up to 15 s (the thread starts in its own time, and this machine may be busy). */
async function until(done: () => boolean, what: string): Promise<void> {
  for (const start = Date.now(); !done(); await sleep(20)) {
    if (Date.now() - start > 15_000) assert.fail(`timed out waiting until ${what}`);
  }
}

/** Document i, awaited alone: a commit (and an index segment) of its own. */
function writeNote(store: Store, viewer: Viewer, i: number, now: string) {
  return store.createDocument(viewer, { title: `Note ${i}`, contentMarkdown: `only${i}q ` + `body ${i} `.repeat(100), projectId: null, threadId: null }, now);
}

/** Fills the file system of `file` to the last byte. */
function fill(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (let n = chunk.length; n > 0; ) {
      try {
        writeSync(fd, chunk, 0, n);
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'ENOSPC') throw error;
        n >>= 1;
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** The scenario, in `dir` on a small file system of its own. */
async function fillAndFree(dir: string): Promise<void> {
  const file = join(dir, 'folio.db');
  const filler = join(dir, 'filler');
  const reports: string[] = [];
  const store = openSqliteStore(file, {
    background: { intervalMs: 5, tidying: { idleMs: 500, pages: 20, everyMs: 5 }, report: (level, message) => reports.push(`${level}: ${message}`) },
  });
  const copiedAll = () => {
    const { frames, copied } = walState(file);
    return copied === frames;
  };
  let written = 0;
  try {
    const now = new Date().toISOString();
    const user = await store.createUser({ email: 'full@example.com', name: null, plan: 'pro', now });
    const viewer = { userId: user.id, orgId: null };
    // One commit of many documents makes the log long. Once it is checkpointed,
    // the next commit writes the log again from its start, over frames the file
    // system has already given room to: the commits below need no more room,
    // as long as this one wrote more frames than the ten commits after the
    // fill write together (about a dozen each).
    await Promise.all(Array.from({ length: 400 }, () => writeNote(store, viewer, written++, now)));
    await until(copiedAll, 'the first commit is checkpointed');

    fill(filler);
    // These make the database file longer: copying them into it needs room the disk no longer has.
    for (let i = 0; i < 10; i++) await writeNote(store, viewer, written++, now);
    await until(() => reports.length > 0, 'the thread reports the full disk');
    assert.match(reports[0]!, /^warn: background checkpoints and index merging paused \(database or disk is full \(SQLITE_FULL\)\)/);
    await sleep(100);
    const stuck = walState(file);
    assert.ok(stuck.copied < stuck.frames, `the log is not checkpointed while the disk is full (${stuck.copied} of ${stuck.frames} frames)`);

    // The folio command names the file and says what to do, rather than "unexpected error".
    const many = Array.from({ length: 400_000 }, (_, i) => `w${i}`).join(' ');
    const refused = await folio(file, 'doc', 'create', '--user', user.id, '--title', 'Too big', '--content', many);
    assert.deepEqual(
      [refused.code, refused.stderr],
      [1, `folio: the database file "${file}" could not be written (database or disk is full): its disk is full: free space on it, then try again`],
    );

    unlinkSync(filler);
    for (let i = 0; i < 5; i++) await writeNote(store, viewer, written++, now);
    // The thread merges only once no write has come for idleMs: not yet.
    const untidy = segments(file);
    await until(() => reports.length > 1, 'the thread reports that it resumed');
    assert.deepEqual(reports.slice(1), ['info: background checkpoints and index merging resumed']);
    await until(copiedAll, 'the log is checkpointed again');
    await until(() => segments(file) < untidy, `the index is merged again (from ${untidy} segments)`);
    assert.equal(reports.length, 2, reports.join('\n'));
  } finally {
    await store.close();
  }
  const reopened = openSqliteStore(file);
  try {
    const user = await reopened.findUserByEmail('full@example.com');
    assert.ok(user);
    assert.equal((await reopened.listDocuments({ userId: user.id, orgId: null }, { limit: 500 })).length, written);
  } finally {
    await reopened.close();
  }
  // Closed cleanly, the database has no -shm file, which opening it makes: on a
  // full disk SQLite says only "disk I/O error", and Folio says why.
  fill(filler);
  const unopened = await folio(file, 'user', 'list');
  assert.deepEqual(
    [unopened.code, unopened.stderr],
    [1, `folio: DATABASE_URL: cannot open the database file "${file}": disk I/O error; its disk is full: free space on it, then try again`],
  );
  unlinkSync(filler);
}

/** Runs `folio …` in process on the SQLite database `file`. */
async function folio(file: string, ...argv: string[]) {
  const err: string[] = [];
  const code = await run(argv, { out: () => {}, err: (s) => err.push(s), env: { DATABASE_URL: `sqlite:${file}` } });
  return { code, stderr: err.join('\n') };
}

describe('a full disk', () => {
  it('pauses the background checkpoints and index merging, which resume without a restart once space is freed; the folio command says the disk is full', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'folio-disk-full-'));
    try {
      if (mountTmpfs(dir)) {
        try {
          await fillAndFree(dir);
        } finally {
          spawnSync('umount', ['--lazy', dir]);
        }
        return;
      }
      assert.equal(process.env[IN_NAMESPACE], undefined, 'a tmpfs could not be mounted in a user namespace of its own');
      // Not root: this file runs again as the root of a user namespace of its own, which may mount a tmpfs that only it sees.
      const probe = spawnSync('unshare', [...UNSHARE, 'mount', '-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { encoding: 'utf8' });
      if (probe.error || probe.status !== 0) {
        t.skip(`no small file system to fill: mounting a tmpfs needs root, and unshare ${UNSHARE.join(' ')} failed (${probe.error?.message ?? probe.stderr.trim()})`);
        return;
      }
      // Without NODE_TEST_CONTEXT, which the runner sets for the files it runs: a file run by `node --test` with it runs nothing, and passes.
      const { NODE_TEST_CONTEXT: _, ...env } = process.env;
      const run = spawnSync('unshare', [...UNSHARE, process.execPath, '--import', 'tsx', '--test', fileURLToPath(import.meta.url)], {
        env: { ...env, [IN_NAMESPACE]: '1' },
        encoding: 'utf8',
        timeout: 120_000,
      });
      const output = `${run.error?.message ?? ''}${run.stdout}${run.stderr}`;
      assert.equal(run.status, 0, output);
      assert.match(run.stdout, /^# pass 1$/m, output);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
