import type { Store } from '../store.js';
import { accessCache, type AccessCache } from './access-cache.js';
import { walIndexHeader } from './wal-index-header.js';
import { adminQueries } from './admin.js';
import { migrate, openDatabase, type Db, type MigrationNotice, type ReindexNotice } from './database.js';
import { startCheckpointer, type BackgroundOptions } from './checkpointer.js';
import { documentQueries } from './documents.js';
import { NO_SNAPSHOT, readSnapshot, type ReadSnapshot } from './read-snapshot.js';
import { workspaceQueries } from './workspace.js';

/**
 * Opens the embedded store, bringing its schema up to date first (statements
 * are prepared against it). better-sqlite3 is synchronous, so each method
 * completes within one turn of the event loop and each transaction is atomic.
 */
export interface SqliteStoreOptions {
  /** Told when the schema is created or upgraded, before the work starts. */
  onMigrate?: MigrationNotice;
  /** Told when the search index is rebuilt for another Unicode version, before the work starts. */
  onReindex?: ReindexNotice;
  /**
   * Checkpoints the write-ahead log, and merges the search index while the
   * database is quiet, from a thread of its own (checkpointer.ts): for the server.
   */
  background?: boolean | BackgroundOptions;
}

export function openSqliteStore(file: string, options: SqliteStoreOptions = {}): Store {
  const db = openDatabase(file);
  migrate(db, options.onMigrate, options.onReindex);
  if (!options.background || file === ':memory:') return sqliteStoreOn(db, { readSnapshots: true });
  const checkpointer = startCheckpointer(db, file, options.background === true ? {} : options.background);
  return sqliteStoreOn(db, { readSnapshots: true, beforeClose: () => checkpointer.stop() });
}

/**
 * The store over an open, migrated database. With `readSnapshots`, the
 * reads of a turn of the event loop share one read transaction
 * (read-snapshot.ts); not for a caller that begins transactions of its own
 * on the same connection (the bulk loader).
 */
export function sqliteStoreOn(db: Db, options: { beforeClose?: () => Promise<void>; readSnapshots?: boolean } = {}): Store {
  // Read by both caches (the access cache, the search's vocabulary): one open file.
  const header = walIndexHeader(db);
  const snapshot = options.readSnapshots && header !== null ? readSnapshot(db) : NO_SNAPSHOT;
  const cache = accessCache(db, { header, snapshot });
  const { closeWrites, ...documents } = documentQueries(db, cache, header, snapshot);
  return {
    dialect: 'sqlite',
    async migrate() {
      snapshot.release();
      migrate(db);
    },
    async close() {
      closeWrites();
      snapshot.release();
      await options.beforeClose?.();
      if (db.open) db.close();
      header?.close();
    },
    async ping() {
      db.prepare('SELECT 1').get();
    },
    async atomically<T>(work: () => Promise<T>): Promise<T> {
      snapshot.release();
      // The writes' own transactions (the group commit's) become savepoints inside it.
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = await work();
        // A failure SQLite ends the whole transaction for (a full disk) would have let later writes commit alone.
        if (!db.inTransaction) throw new Error('the transaction was ended by a failed write; what came after it may have been written');
        db.exec('COMMIT');
        return result;
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw error;
      } finally {
        cache.invalidate();
      }
    },
    ...documents,
    ...workspaceQueries(db, cache, snapshot),
    ...invalidating(adminQueries(db), cache, snapshot),
  };
}

/**
 * The operator's writes (users, keys, organizations, memberships, plans,
 * projects, …) end the turn's read transaction first, and drop the access
 * cache once they have run, whether they succeeded or not, so that the next
 * request reads what they changed.
 */
function invalidating<T extends Record<string, (...args: never[]) => Promise<unknown>>>(
  queries: T,
  cache: AccessCache,
  snapshot: ReadSnapshot,
): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, query] of Object.entries(queries)) {
    wrapped[name] = async (...args: never[]) => {
      // They write (and read what they write): not inside the turn's read transaction.
      snapshot.release();
      try {
        return await query(...args);
      } finally {
        cache.invalidate();
      }
    };
  }
  return wrapped as T;
}
