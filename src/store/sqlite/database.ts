import Database from 'better-sqlite3';
import { accessSync, constants, mkdirSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { foldTitle, searchText } from '../../domain/search.js';
import { LOCK_WAIT_MS } from '../lock-wait.js';
import { refuseNewerSchema } from '../newer-schema.js';
import { INDEX_UNICODE_FACT, LAST_FULL_REINDEX, migrations, REINDEX_EVERY_DOCUMENT } from './migrations.js';

export type Db = Database.Database;

/** True for SQLite's refusal after waiting LOCK_WAIT_MS for another connection's lock. */
export function isBusy(err: unknown): boolean {
  // Not SQLITE_BUSY_RECOVERY or _SNAPSHOT, which no waiting answers.
  return (err as { code?: unknown } | null)?.code === 'SQLITE_BUSY';
}

/**
 * True for SQLite's refusals to open a database file (not a database,
 * cannot open) and the file system's (no permission, a folder): the
 * operator's to fix, in DATABASE_URL or on the disk. Another process's
 * lock held too long is not one of them.
 */
export function isOpenRefusal(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(SQLITE_|E[A-Z]+$)/.test(code) && !isBusy(err);
}

/** What to do about a full disk, as the command line and the server's start say it. */
export const FULL_DISK = 'its disk is full: free space on it, then try again';

/** An SQLite error's primary code (SQLITE_IOERR for SQLITE_IOERR_SHMSIZE), or null. */
function primaryCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code.replace(/^(SQLITE_[A-Z]+)_.*$/, '$1') : null;
}

/** True for an error SQLite raised. */
export function isSqliteError(err: unknown): err is Error {
  return err instanceof Error && primaryCode(err) !== null;
}

/**
 * Whether SQLite failed for want of room on the disk of `file`: SQLITE_FULL,
 * or an I/O error where less than a megabyte is left (SQLite says only
 * "disk I/O error" when it cannot make the -shm file at open).
 */
export function isDiskFull(err: unknown, file: string): boolean {
  const code = primaryCode(err);
  if (code === 'SQLITE_FULL') return true;
  if (code !== 'SQLITE_IOERR' || file === ':memory:') return false;
  try {
    const disk = statfsSync(dirname(file));
    return disk.bavail * disk.bsize < 1024 * 1024;
  } catch {
    return false;
  }
}

/**
 * Why this process cannot write the database `file` or, beside it, the
 * -wal and -shm files SQLite makes there: the file or its folder is on a
 * read-only file system, or this user may not write it. SQLite opens a file
 * it may only read without a word, and only the writes fail after. Null when
 * both may be written, or when the folder does not exist yet (it is made).
 */
export function unwritable(file: string): string | null {
  const folder = dirname(file);
  const user = process.getuid === undefined ? 'this user' : `this user (uid ${process.getuid()})`;
  const places = [
    { path: file, readOnly: 'it is on a read-only file system', denied: `${user} may not write it` },
    {
      path: folder,
      readOnly: `its folder "${folder}" is on a read-only file system`,
      denied: `${user} may not write its folder "${folder}", where SQLite makes the -wal and -shm files beside it`,
    },
  ];
  for (const { path, readOnly, denied } of places) {
    try {
      accessSync(path, constants.W_OK);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === 'EROFS') return readOnly;
      if (code === 'EACCES' || code === 'EPERM') return denied;
    }
  }
  return null;
}

/**
 * Whether an error's code only means "not now": a lock held by another
 * connection (SQLITE_BUSY), or one of its extended codes, which
 * better-sqlite3 reports as they are: SQLITE_BUSY_RECOVERY while another
 * process recovers the log after a crash, SQLITE_BUSY_SNAPSHOT,
 * SQLITE_BUSY_TIMEOUT. Written without anything from outside itself: the
 * background checkpointer's thread (checkpointer.ts) holds its text.
 */
export function onlyBusy(code: unknown): boolean {
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'));
}

/**
 * Runs a function with the connection's busy timeout set aside: a lock held
 * by another process fails it at once (onlyBusy) instead of stopping the
 * thread, and every request with it, while SQLite waits.
 */
export function withoutWaiting(db: Db): <T>(fn: () => T) => T {
  // Not prepared once: SQLite sets the timeout when it compiles the pragma
  // (and again whenever it recompiles it), not when it runs it.
  return (fn) => {
    const timeout = db.pragma('busy_timeout', { simple: true }) as number;
    db.pragma('busy_timeout = 0');
    try {
      return fn();
    } finally {
      db.pragma(`busy_timeout = ${timeout}`);
    }
  };
}

/** Opens (creating it if needed) a SQLite database in WAL mode. */
export function openDatabase(file: string): Db {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  // First, so that switching to WAL waits for another process's lock too.
  db.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('cache_size = -32000');
  // Each write of a group commit runs in its own savepoint (group-commit.ts),
  // whose undo journal SQLite would spill to a temporary file past 64 KiB,
  // a large share of a batch's time. In memory it is bounded by the pages
  // one transaction changes.
  db.pragma('temp_store = MEMORY');
  return db;
}

/** Told before migrating, from which schema version to which. */
export type MigrationNotice = (from: number, to: number) => void;

/**
 * Told before the search index is rebuilt because the Unicode version of
 * its folding changed: the version it was built with (null: not recorded,
 * as before migration 15) and the running Node.js's.
 */
export type ReindexNotice = (from: string | null, to: string) => void;

/**
 * The Unicode version of searchText's folding (src/domain/search.ts):
 * Node.js's own, from its ICU data. A Node.js of another Unicode version
 * may fold a character otherwise (a script's capitals it learnt to lower,
 * a new compatibility form), and an edit would then remove a document's
 * old words from the index under other spellings than they were written
 * with, leaving entries that no search returns but every search reads past.
 */
export const SEARCH_UNICODE: string = process.versions.unicode ?? 'unknown';

/**
 * Brings the schema up to date in one transaction; in the same one, if the
 * search index was built with another Unicode version than this Node.js's
 * (SEARCH_UNICODE), rebuilds it and folds the stored chat titles again.
 * `onStart` and `onReindex` hear of it first when there is anything to do
 * (both take a while on a large database). Two processes of different
 * Node.js versions on one database would rebuild the index in turns, each
 * time one of them opens it.
 */
export function migrate(db: Db, onStart?: MigrationNotice, onReindex?: ReindexNotice): void {
  // What a migration computes as the store does (migrations.ts).
  db.function('folio_fold_title', { deterministic: true }, (title) => foldTitle(String(title)));
  db.function('folio_search_text', { deterministic: true }, (text) => searchText(String(text)));
  // A schema a newer Folio upgraded is refused, not served (newer-schema.ts).
  const current = () => {
    const version = db.pragma('user_version', { simple: true }) as number;
    refuseNewerSchema(version, migrations.length);
    return version;
  };
  const indexedUnder = () =>
    db.prepare('SELECT value FROM search_index_facts WHERE name = ?').pluck().get(INDEX_UNICODE_FACT) as string | undefined;
  // Up to date, as almost always: no write lock is taken, so that opening
  // the database never waits for another process's write.
  if (current() === migrations.length && indexedUnder() === SEARCH_UNICODE) return;
  const run = db.transaction(() => {
    const version = current();
    if (version < migrations.length) onStart?.(version, migrations.length);
    for (let i = version; i < migrations.length; i++) {
      db.exec(migrations[i]!);
      db.pragma(`user_version = ${i + 1}`);
    }
    const built = indexedUnder() ?? null;
    if (built === SEARCH_UNICODE) return;
    // A new database has nothing indexed yet; one whose migrations have just
    // rebuilt the index (the last to do so: LAST_FULL_REINDEX) is indexed
    // with this Node.js's folding already.
    if (version > 0 && version >= LAST_FULL_REINDEX) {
      onReindex?.(built, SEARCH_UNICODE);
      db.exec(REINDEX_EVERY_DOCUMENT);
    }
    // Chat titles are stored folded (foldTitle, by the same Unicode data) and matched against queries folded now.
    db.exec('UPDATE chats SET title_folded = folio_fold_title(title) WHERE title IS NOT NULL');
    db.prepare('INSERT OR REPLACE INTO search_index_facts (name, value) VALUES (?, ?)').run(INDEX_UNICODE_FACT, SEARCH_UNICODE);
  });
  run.immediate();
}

/** True for a SQLite unique-constraint failure. */
export function isUniqueViolation(err: unknown): boolean {
  return (
    err instanceof Error &&
    'code' in err &&
    ((err as { code: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' ||
      (err as { code: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
  );
}
