import { ConfigError, type Config } from '../config.js';
import { NewerSchema } from './newer-schema.js';
import { openPostgresStore } from './postgres/store.js';
import { isLockTimeout, Unreachable } from './postgres/database.js';
import { isBusy, isOpenRefusal } from './sqlite/database.js';
import { openSqliteStore, type SqliteStoreOptions } from './sqlite/store.js';
import type { Store } from './store.js';

/**
 * The database's refusal of a statement that waited `LOCK_WAIT_MS`
 * (lock-wait.ts) for a lock held elsewhere: SQLite's write lock, held by
 * another process, or a PostgreSQL lock another session holds (for the
 * command line to say so).
 */
export function isStoreBusy(err: unknown): boolean {
  return isBusy(err) || isLockTimeout(err);
}

/**
 * How to open a store; `background` is SQLite's own (its checkpointer
 * thread), which PostgreSQL does not need, and `answerWithinMs`
 * PostgreSQL's (a statement unanswered that long fails, and its connection
 * is closed), which SQLite, in the process, does not need.
 */
export type OpenOptions = SqliteStoreOptions & { answerWithinMs?: number };

/** Opens the store named by the configuration, its schema brought up to date. */
export async function openStore(config: Pick<Config, 'database'>, options: OpenOptions = {}): Promise<Store> {
  const { database } = config;
  if (database.kind === 'postgres') {
    try {
      return await openPostgresStore(database.url, {
        poolMax: database.poolMax,
        onMigrate: options.onMigrate,
        onReindex: options.onReindex,
        answerWithinMs: options.answerWithinMs,
      });
    } catch (err) {
      throw unreachable(err) ?? newerSchema(err) ?? err;
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

/** A PostgreSQL server that cannot be reached, or refuses the connection, as the operator's to fix. */
function unreachable(err: unknown): ConfigError | null {
  return err instanceof Unreachable ? new ConfigError('DATABASE_URL', err.message) : null;
}

/** A database a newer Folio upgraded, as the operator's to fix: DATABASE_URL names one this Folio cannot serve. */
function newerSchema(err: unknown): ConfigError | null {
  return err instanceof NewerSchema ? new ConfigError('DATABASE_URL', err.message) : null;
}
