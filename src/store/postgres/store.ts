import type pg from 'pg';
import type { Store } from '../store.js';
import { adminQueries } from './admin.js';
import { openPool, poolSession, type Session } from './database.js';
import { documentQueries } from './documents.js';
import { migrate, type MigrationNotice } from './migrate.js';
import type { ReindexNotice } from './reindex.js';
import { revisionQueries } from './revisions.js';
import { workspaceQueries } from './workspace.js';

export interface PostgresStoreOptions {
  /** Connections of the pool (DATABASE_POOL_MAX); 10 unless given. */
  poolMax?: number;
  /** Told when this process creates or upgrades the schema, before the work starts. */
  onMigrate?: MigrationNotice;
  /** Told when the search words are made again for another Unicode version, before the work starts. */
  onReindex?: ReindexNotice;
  /** How long the store's statements may go unanswered (AnswerWithin); migrations are not limited. */
  answerWithinMs?: number;
  /** Whether a database without Folio's schema is set up (true unless false) or refused (NoSchema). */
  create?: boolean;
}

/**
 * The PostgreSQL store: a pool of `poolMax` connections to the database
 * `url` names (pg reads the rest of it, `sslmode` included), its schema
 * brought up to date first. Several processes may serve one database; the
 * first to start migrates it, the others wait for it (migrate.ts).
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  const pool = await openPool(url, options.poolMax ?? 10);
  try {
    await migrate(pool, options.onMigrate, options.onReindex, options.create ?? true);
  } catch (err) {
    await pool.end();
    throw err;
  }
  const poolMax = options.poolMax ?? 10;
  return {
    ...storeOn(poolSession(pool, options.answerWithinMs), pool),
    connectionPool: () => ({ max: poolMax, open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
}

/**
 * The store over a session: the pool's, or (atomically) one connection's
 * inside a transaction, whose store has no pool of its own to migrate or
 * close.
 */
function storeOn(db: Session, pool: pg.Pool | null): Store {
  const store: Store = {
    dialect: 'postgres',
    async migrate() {
      if (pool !== null) await migrate(pool);
    },
    async close() {
      if (pool !== null) await pool.end();
    },
    async ping() {
      await db.query('SELECT 1');
    },
    /**
     * A transaction on one connection of the pool, and a store bound to it;
     * inside another atomically, a savepoint of that transaction.
     */
    atomically<T>(work: (tx: Store) => Promise<T>): Promise<T> {
      return db.transaction((tx) => work(storeOn(tx, null)));
    },
    ...documentQueries(db),
    ...revisionQueries(db),
    ...workspaceQueries(db),
    ...adminQueries(db),
  };
  return store;
}
