import type pg from 'pg';
import { clientSession, transactionOn, type Session } from './database.js';
import { migrations } from './migrations.js';
import { refuseNewerSchema } from '../newer-schema.js';
import { refoldIfStale, refuseNewerWords, searchWordsCurrent, searchWordsMadeWith, type ReindexNotice } from './reindex.js';

/** Told before migrating, from which schema version to which. */
export type MigrationNotice = (from: number, to: number) => void;

/**
 * The advisory lock that serializes migrations: one number, so that any
 * two processes migrating one database take the same lock (PostgreSQL's
 * advisory locks are per database). A session lock held over the whole run
 * rather than one per transaction: of ten instances starting at once, one
 * runs every migration, and the others find the schema up to date.
 */
export const MIGRATION_LOCK = 0x666f6c696f; // "folio"

const VERSIONS = `CREATE TABLE IF NOT EXISTS folio_schema_versions (
  version     integer PRIMARY KEY,
  applied_at  timestamptz NOT NULL DEFAULT now()
)`;

/**
 * The schema version, 0 before the first migration; and whether the search
 * words are made as this Folio and Node.js make them. A schema or words
 * that a newer Folio made are refused (newer-schema.ts).
 */
async function state(db: Session): Promise<{ version: number; current: boolean }> {
  const { rows } = await db.query<{ exists: boolean }>(`SELECT to_regclass('folio_schema_versions') IS NOT NULL AS exists`);
  if (!rows[0]!.exists) return { version: 0, current: false };
  const version = (await db.query<{ version: number }>('SELECT coalesce(max(version), 0) AS version FROM folio_schema_versions')).rows[0]!.version;
  refuseNewerSchema(version, migrations.length);
  // Migration 1 makes search_index_facts.
  if (version === 0) return { version, current: false };
  const made = await searchWordsMadeWith(db);
  refuseNewerWords(made);
  return { version, current: searchWordsCurrent(made) };
}

/** Folio's text is Unicode: a database of another encoding would refuse or mangle it, request by request. */
async function requireUtf8(db: Session): Promise<void> {
  const encoding = (await db.query<{ server_encoding: string }>('SHOW server_encoding')).rows[0]!.server_encoding;
  if (encoding !== 'UTF8') throw new Error(`the database's encoding is ${encoding}; Folio needs a database created with ENCODING 'UTF8'`);
}

/** A database (or schema) that Folio has not set up, opened by one that may not set it up (`create` false). */
export class NoSchema extends Error {
  constructor() {
    super('holds no Folio schema');
  }
}

/**
 * Brings the schema up to date (or, with `create` false, refuses a
 * database that Folio has not set up: NoSchema), each migration in a transaction of its
 * own, recorded in folio_schema_versions; then makes the search words and
 * folded chat titles again if they were made with another Unicode version
 * than this Node.js's or by another design (reindex.ts). Up to date, as
 * almost always, it takes no lock.
 */
export async function migrate(pool: pg.Pool, onMigrate?: MigrationNotice, onReindex?: ReindexNotice, create = true): Promise<void> {
  const client = await pool.connect();
  // On failure the connection is closed, not given back: that also releases the lock.
  let failure: Error | undefined;
  try {
    // Another instance's migrations may hold the migration lock, and the
    // tables read here, longer than a request may wait (LOCK_WAIT_MS).
    await client.query('SET lock_timeout = 0');
    const db = clientSession(client);
    const quick = await state(db);
    if (quick.version === 0 && !create) throw new NoSchema();
    if (quick.version !== migrations.length || !quick.current) await upgrade(client, db, onMigrate, onReindex);
    await client.query('RESET lock_timeout');
  } catch (err) {
    failure = err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    client.release(failure);
  }
}

/** The migrations and the rebuild of the search words, under the migration lock; they find what another instance left. */
async function upgrade(client: pg.PoolClient, db: Session, onMigrate?: MigrationNotice, onReindex?: ReindexNotice): Promise<void> {
  await db.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  await db.query(VERSIONS);
  const { version } = await state(db);
  if (version === 0) await requireUtf8(db);
  if (version < migrations.length) onMigrate?.(version, migrations.length);
  for (let i = version; i < migrations.length; i++) {
    await transactionOn(client, async (tx) => {
      await tx.query(migrations[i]!);
      await tx.query('INSERT INTO folio_schema_versions (version) VALUES ($1)', [i + 1]);
    });
  }
  await transactionOn(client, (tx) => refoldIfStale(tx, version > 0, onReindex));
  await db.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
}
