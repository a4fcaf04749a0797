import { ConfigError, type Config } from '../config.js';
import { NewerSchema } from './newer-schema.js';
import { openPostgresStore } from './postgres/store.js';
import { existsSync } from 'node:fs';
import { isLockTimeout, postgresName, ReadOnly, Unreachable } from './postgres/database.js';
import { NoSchema } from './postgres/migrate.js';
import { FULL_DISK, isBusy, isDiskFull, isOpenRefusal, unwritable } from './sqlite/database.js';
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
export type OpenOptions = SqliteStoreOptions & {
  answerWithinMs?: number;
  /**
   * Whether a database Folio has not set up is set up (true unless false):
   * with false, a missing SQLite file or a PostgreSQL database (or schema)
   * without Folio's tables is refused, naming it, so that a mistyped
   * DATABASE_URL creates nothing (DESIGN §5).
   */
  create?: boolean;
};

/** How to set up a database that is not one yet. */
const SET_UP = 'create it with "folio migrate" (or "folio demo"), or point DATABASE_URL at an existing one';

/** Opens the store named by the configuration, its schema brought up to date. */
export async function openStore(config: Pick<Config, 'database'>, options: OpenOptions = {}): Promise<Store> {
  const { database } = config;
  const { create = true, answerWithinMs, ...sqliteOptions } = options;
  if (database.kind === 'postgres') {
    try {
      return await openPostgresStore(database.url, {
        poolMax: database.poolMax,
        onMigrate: options.onMigrate,
        onReindex: options.onReindex,
        answerWithinMs,
        create,
      });
    } catch (err) {
      if (err instanceof NoSchema) throw new ConfigError('DATABASE_URL', `the database ${postgresName(database.url)} holds no Folio schema; ${SET_UP}`);
      throw unreachable(err) ?? newerSchema(err) ?? err;
    }
  }
  if (!create && database.file !== ':memory:' && !existsSync(database.file)) {
    throw new ConfigError('DATABASE_URL', `the database file "${database.file}" does not exist; ${SET_UP}`);
  }
  // Opened all the same, a file Folio may only read would serve reads and fail every write.
  const cannotWrite = database.file === ':memory:' ? null : unwritable(database.file);
  if (cannotWrite !== null) throw new ConfigError('DATABASE_URL', `cannot write the database file "${database.file}": ${cannotWrite}`);
  try {
    return openSqliteStore(database.file, sqliteOptions);
  } catch (err) {
    // Another process's write lock held too long is no fault of the URL's (the command line says so: program.ts).
    if (isOpenRefusal(err)) {
      const full = isDiskFull(err, database.file) ? `; ${FULL_DISK}` : '';
      throw new ConfigError('DATABASE_URL', `cannot open the database file "${database.file}": ${(err as Error).message}${full}`);
    }
    throw newerSchema(err) ?? err;
  }
}

/** A PostgreSQL server that cannot be reached, refuses the connection, or takes no writes, as the operator's to fix. */
function unreachable(err: unknown): ConfigError | null {
  return err instanceof Unreachable || err instanceof ReadOnly ? new ConfigError('DATABASE_URL', err.message) : null;
}

/** A database a newer Folio upgraded, as the operator's to fix: DATABASE_URL names one this Folio cannot serve. */
function newerSchema(err: unknown): ConfigError | null {
  return err instanceof NewerSchema ? new ConfigError('DATABASE_URL', err.message) : null;
}
