import type { Config } from '../config.js';
import { openSqliteStore } from './sqlite/store.js';
import type { Store } from './store.js';
import type { MigrationNotice } from './sqlite/database.js';

/** Opens the store named by the configuration, its schema brought up to date. */
export async function openStore(
  config: Pick<Config, 'database'>,
  options: { onMigrate?: MigrationNotice; backgroundCheckpoints?: boolean } = {},
): Promise<Store> {
  return openSqliteStore(config.database.file, options);
}
