import { ConfigError, type Config } from '../config.js';
import { NewerSchema } from './newer-schema.js';
import { openPostgresStore } from './postgres/store.js';
import { postgresName } from './postgres/database.js';
import { isBusy, isOpenRefusal } from './sqlite/database.js';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite/store.js';
import type { Store } from './store.js';

/** The database's refusal of a write that waited `LOCK_WAIT_MS` (lock-wait.ts) for another process's (for the command line to say so). */
export { isBusy as isStoreBusy };

/** How to open a store; `background` is SQLite's own (its checkpointer thread), which PostgreSQL does not need. */
export type OpenOptions = SqliteStoreOptions;

/** Opens the store named by the configuration, its schema brought up to date. */
export async function openStore(config: Pick<Config, 'database'>, options: OpenOptions = {}): Promise<Store> {
  const { database } = config;
  if (database.kind === 'postgres') {
    try {
      return await openPostgresStore(database.url, { poolMax: database.poolMax, onMigrate: options.onMigrate, onReindex: options.onReindex });
    } catch (err) {
      throw unreachable(err, database.url) ?? newerSchema(err) ?? err;
    }
  }
  try {
    return openSqliteStore(database.file, options);
  } catch (err) {
    // Another process's write lock held too long is no fault of the URL's (the command line says so: program.ts).
    if (isOpenRefusal(err)) throw new ConfigError('DATABASE_URL', `cannot open the database file "${database.file}": ${(err as Error).message}`);
    throw newerSchema(err) ?? err;
  }
}

/**
 * A PostgreSQL server that cannot be reached, or refuses the connection
 * (no such database, user or password), as the operator's to fix; named by
 * host, port and database, never with the URL's password.
 */
function unreachable(err: unknown, url: string): ConfigError | null {
  const code = (err as { code?: unknown }).code;
  // Network failures (ECONNREFUSED, ENOTFOUND, ETIMEDOUT, …) and the server's refusals of the connection: invalid authorization (28…) or catalog name (3D000).
  if (typeof code !== 'string' || !/^(E[A-Z]+$|28|3D000)/.test(code)) return null;
  return new ConfigError('DATABASE_URL', `cannot connect to PostgreSQL at ${postgresName(url)}: ${(err as Error).message}`);
}

/** A database a newer Folio upgraded, as the operator's to fix: DATABASE_URL names one this Folio cannot serve. */
function newerSchema(err: unknown): ConfigError | null {
  return err instanceof NewerSchema ? new ConfigError('DATABASE_URL', err.message) : null;
}
