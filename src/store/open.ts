import { ConfigError, type Config } from '../config.js';
import { BUSY_TIMEOUT_MS, isBusy } from './sqlite/database.js';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite/store.js';
import type { Store } from './store.js';

/** The database's refusal of a write that waited `BUSY_TIMEOUT_MS` for another process's (for the command line to say so). */
export { BUSY_TIMEOUT_MS, isBusy as isStoreBusy };

/** Opens the store named by the configuration, its schema brought up to date. */
export async function openStore(config: Pick<Config, 'database'>, options: SqliteStoreOptions = {}): Promise<Store> {
  const { database } = config;
  if (database.kind === 'postgres') throw new ConfigError('DATABASE_URL', 'PostgreSQL is not supported by this build of Folio yet; use a sqlite: URL');
  try {
    return openSqliteStore(database.file, options);
  } catch (err) {
    // SQLite's refusals (not a database, cannot open) and the file system's
    // (no permission, not a directory) are the operator's to fix.
    const code = (err as { code?: unknown }).code;
    // Another process's write lock held too long is no fault of the URL's (the command line says so: program.ts).
    if (typeof code === 'string' && /^(SQLITE_|E[A-Z]+$)/.test(code) && !isBusy(err)) {
      throw new ConfigError('DATABASE_URL', `cannot open the database file "${database.file}": ${(err as Error).message}`);
    }
    throw err;
  }
}
