import type { Store } from '../store.js';
import { adminQueries } from './admin.js';
import { startCheckpointer, type BackgroundOptions } from './checkpointer.js';
import { migrate, openDatabase, type Db, type MigrationNotice, type ReindexNotice } from './database.js';
import { documentQueries } from './documents.js';
import { revisionQueries } from './revisions.js';
import { workspaceQueries } from './workspace.js';
import { storeWrites } from './writes.js';

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

/**
 * The embedded store: one better-sqlite3 connection, its schema brought up
 * to date first. better-sqlite3 answers synchronously, so each statement
 * and each transaction completes within one turn of the event loop; the
 * methods answer through promises all the same, as every store does.
 */
export function openSqliteStore(file: string, options: SqliteStoreOptions = {}): Store {
  const db = openDatabase(file);
  migrate(db, options.onMigrate, options.onReindex);
  if (!options.background || file === ':memory:') return sqliteStoreOn(db);
  const checkpointer = startCheckpointer(db, file, options.background === true ? {} : options.background);
  return sqliteStoreOn(db, () => checkpointer.stop());
}

/** The store over an open, migrated database. */
export function sqliteStoreOn(db: Db, beforeClose?: () => Promise<void>): Store {
  const writes = storeWrites(db);
  const store: Store = {
    dialect: 'sqlite',
    async migrate() {
      migrate(db);
    },
    async close() {
      writes.close();
      await beforeClose?.();
      if (db.open) db.close();
    },
    async ping() {
      db.prepare('SELECT 1').get();
    },
    /**
     * One connection serves everything, so the transaction is the
     * connection's: for the command line, which makes one call at a time (a
     * request served meanwhile would join it). The writes' own group
     * transactions become savepoints inside it.
     */
    async atomically<T>(work: (tx: Store) => Promise<T>): Promise<T> {
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = await work(store);
        // A failure that SQLite ends the whole transaction for (a full disk) would have let later writes commit alone.
        if (!db.inTransaction) throw new Error('the transaction was ended by a failed write; what came after it may have been written');
        db.exec('COMMIT');
        return result;
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw error;
      }
    },
    ...documentQueries(db, writes),
    ...revisionQueries(db, writes),
    ...workspaceQueries(db, writes),
    ...adminQueries(db),
  };
  return store;
}
