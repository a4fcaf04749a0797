import type { Store } from '../store.js';
import { adminQueries } from './admin.js';
import { migrate, openDatabase, type Db } from './database.js';
import { documentQueries } from './documents.js';
import { workspaceQueries } from './workspace.js';

/**
 * Opens the embedded store, bringing its schema up to date first (statements
 * are prepared against it). better-sqlite3 is synchronous, so each method
 * completes within one turn of the event loop and each transaction is atomic.
 */
export function openSqliteStore(file: string): Store {
  const db = openDatabase(file);
  migrate(db);
  return sqliteStoreOn(db);
}

/** The store over an open, migrated database. */
export function sqliteStoreOn(db: Db): Store {
  return {
    dialect: 'sqlite',
    async migrate() {
      migrate(db);
    },
    async close() {
      if (db.open) db.close();
    },
    async ping() {
      db.prepare('SELECT 1').get();
    },
    ...documentQueries(db),
    ...workspaceQueries(db),
    ...adminQueries(db),
  };
}
