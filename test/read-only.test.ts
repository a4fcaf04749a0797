import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../src/store/sqlite/store.js';

/**
 * A database Folio may not write: a file restored by root into the folder of
 * a server that runs as another user, one copied read-only from an archive,
 * a folder the server's user does not own. SQLite opens a file it may only
 * read without a word, and then every write fails; the server must refuse
 * it at start instead, saying why (docs/operations.md, DATABASE_URL).
 *
 * Root may write any file: as root, the commands run as user 1000 of a user
 * namespace of their own, where the test's files are theirs but their
 * permissions hold.
 */
const AS_ANOTHER_USER = process.getuid?.() === 0 ? ['unshare', '--user', '--map-user=1000', '--map-group=1000'] : [];

/** Runs `folio …` in a process of its own, as a user the permissions apply to. */
function folio(database: string, ...argv: string[]) {
  const command = [...AS_ANOTHER_USER, process.execPath, '--import', 'tsx', 'src/cli/index.ts', ...argv];
  const run = spawnSync(command[0]!, command.slice(1), {
    env: { ...process.env, DATABASE_URL: `sqlite:${database}`, PORT: '0', LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: run.status, stderr: `${run.error?.message ?? ''}${run.stderr}`.trim() };
}

/** `text` as a regular expression that matches it alone. */
const literally = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('a database file or folder Folio may not write', () => {
  let dir: string;
  let unavailable: string | false = false;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'folio-read-only-'));
    if (AS_ANOTHER_USER.length > 0) {
      const probe = spawnSync(AS_ANOTHER_USER[0]!, [...AS_ANOTHER_USER.slice(1), 'true'], { encoding: 'utf8' });
      if (probe.error || probe.status !== 0) unavailable = `no user but root to run Folio as: unshare failed (${probe.error?.message ?? probe.stderr.trim()})`;
    }
    const store = openSqliteStore(join(dir, 'folio.db'));
    await store.createUser({ email: 'ada@example.com', name: null, plan: 'pro', now: new Date().toISOString() });
    await store.close();
  });
  after(() => {
    chmodSync(dir, 0o755);
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops the server and every command, naming the file and saying why, rather than serving reads and failing every write', (t) => {
    if (unavailable) return t.skip(unavailable);
    const file = join(dir, 'folio.db');
    chmodSync(file, 0o444);
    const said = new RegExp(`^folio: DATABASE_URL: cannot write the database file "${literally(file)}": this user \\(uid \\d+\\) may not write it$`);
    const served = folio(file, 'serve');
    assert.equal(served.code, 1, `the server did not stop: ${served.stderr}`);
    assert.match(served.stderr, said);
    const created = folio(file, 'user', 'create', '--email', 'bob@example.com');
    assert.equal(created.code, 1, created.stderr);
    assert.match(created.stderr, said);
    assert.deepEqual(readdirSync(dir), ['folio.db'], 'no -wal or -shm file was made');
    chmodSync(file, 0o644);
  });

  it('says so of a folder it may not write, where SQLite makes the -wal and -shm files', (t) => {
    if (unavailable) return t.skip(unavailable);
    const folder = join(dir, 'locked');
    mkdirSync(folder);
    chmodSync(folder, 0o555);
    const file = join(folder, 'folio.db');
    const migrated = folio(file, 'migrate');
    assert.equal(migrated.code, 1, migrated.stderr);
    assert.match(
      migrated.stderr,
      new RegExp(`^folio: DATABASE_URL: cannot write the database file "${literally(file)}": this user \\(uid \\d+\\) may not write its folder "${literally(folder)}", where SQLite makes the -wal and -shm files beside it$`),
    );
    chmodSync(folder, 0o755);
  });
});
