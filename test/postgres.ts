import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import pg from 'pg';
import { openPostgresStore, type PostgresStoreOptions } from '../src/store/postgres/store.js';
import type { Store } from '../src/store/store.js';

/** The machine's own PostgreSQL, tried when TEST_DATABASE_URL is not set. */
const LOCAL_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The PostgreSQL server the tests use: TEST_DATABASE_URL (which must then
 * answer), else the machine's at 127.0.0.1:5432 if it answers; null when
 * there is none.
 */
export async function postgresUrl(): Promise<string | null> {
  const given = process.env.TEST_DATABASE_URL;
  if (given !== undefined && given !== '') return given;
  return (await reachable(LOCAL_URL)) ? LOCAL_URL : null;
}

/** Why the PostgreSQL tests did not run, for node:test's `skip`. */
export const POSTGRES_SKIPPED = `PostgreSQL is not reachable at ${LOCAL_URL} and TEST_DATABASE_URL is not set: the PostgreSQL tests are skipped`;

/**
 * `describe(name, body)`, or, when `skip` gives a reason (no PostgreSQL, no
 * Redis), one skipped test of that name saying it. node:test leaves a
 * skipped describe block out of the run's closing counts ("# tests 0",
 * "# skipped 0"), where a skipped test is counted, so that a run without
 * the servers says how much it skipped.
 */
export function describeOrSkip(name: string, skip: string | false | undefined, body: () => void): void {
  if (skip) it(name, { skip }, () => {});
  else describe(name, body);
}

/** `url` with another database, and optionally connections that use `schema` first. */
export function withDatabase(url: string, database: string, schema?: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  if (schema !== undefined) u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

/** Runs one statement on a connection of its own; its rows. */
export async function sql(url: string, text: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  /** The fresh database's URL. */
  readonly url: string;
  /** The URL of connections that use a fresh schema of their own in the database (search_path). */
  schemaUrl(): Promise<string>;
  /**
   * A fresh, migrated store in a schema of its own in the database: as
   * isolated as a database of its own, and made in milliseconds rather
   * than the tenths of a second CREATE DATABASE takes.
   */
  openStore(options?: PostgresStoreOptions): Promise<{ store: Store; close(): Promise<void> }>;
  /** Drops the database, closing any connection still open to it. */
  drop(): Promise<void>;
}

/** A database of its own for one test run, on the server `serverUrl` names (whose own database is left alone). */
export async function createTestDatabase(serverUrl: string): Promise<TestDatabase> {
  const name = `folio_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await sql(serverUrl, `CREATE DATABASE ${name}`);
  const url = withDatabase(serverUrl, name);
  let schemas = 0;
  const schemaUrl = async () => {
    const schema = `store_${++schemas}`;
    await sql(url, `CREATE SCHEMA ${schema}`);
    return withDatabase(serverUrl, name, schema);
  };
  return {
    url,
    schemaUrl,
    async openStore(options = {}) {
      const store = await openPostgresStore(await schemaUrl(), options);
      return { store, close: () => store.close() };
    },
    drop: async () => void (await sql(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}
