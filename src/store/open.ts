import type { Config } from '../config.js';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite/store.js';
import type { Store } from './store.js';

/** Opens the store named by the configuration, its schema brought up to date. */
export async function openStore(config: Pick<Config, 'database'>, options: SqliteStoreOptions = {}): Promise<Store> {
  return openSqliteStore(config.database.file, options);
}
