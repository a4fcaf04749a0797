import type { Store } from '../store.js';
import { migrate, openDatabase } from './database.js';
import { tidySearchIndex } from './index-tidying.js';
import { sqliteStoreOn } from './store.js';

export interface BulkLoader {
  /** The ordinary store: every row is written by its own methods. */
  store: Store;
  /**
   * Runs `fn` in one transaction: store methods called inside it become
   * savepoints of that transaction instead of committing one by one. Nothing
   * else may use the store until it settles.
   */
  batch(fn: () => Promise<void>): Promise<void>;
  /**
   * Merges the search index as a quiet server does (index-tidying.ts),
   * checkpoints the log into the database file and closes it.
   */
  close(): Promise<void>;
}

/**
 * For loading large data sets into a fresh database (the load benchmark's
 * generator), not for serving: commits are not synced until `close`, so a
 * crash in the middle leaves a database to throw away.
 */
export function openSqliteBulkLoader(file: string): BulkLoader {
  const db = openDatabase(file);
  migrate(db);
  db.pragma('synchronous = OFF');
  const store = sqliteStoreOn(db);
  return {
    store,
    async batch(fn) {
      db.exec('BEGIN IMMEDIATE');
      try {
        await fn();
        db.exec('COMMIT');
      } catch (err) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw err;
      }
    },
    async close() {
      tidySearchIndex(db);
      db.pragma('synchronous = FULL');
      db.pragma('wal_checkpoint(TRUNCATE)');
      await store.close();
    },
  };
}
