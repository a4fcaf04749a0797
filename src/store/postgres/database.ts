import { createHash } from 'node:crypto';
import pg from 'pg';
import { InvalidRequest } from '../../errors.js';
import { LOCK_WAIT_MS } from '../lock-wait.js';

/** What a statement answers: its rows as node-postgres reads them (times as `toIso` writes them: openPool), how many it touched, and its command. */
export interface Result<R> {
  rows: R[];
  rowCount: number | null;
  command: string;
}

/**
 * Where the store's statements run: the pool, where each statement is a
 * transaction of its own on whichever connection is free, or one connection
 * inside a transaction (Store.atomically). Every query and every
 * transaction goes through one of these, so that driver errors are
 * translated in one place (translated()).
 */
export interface Session {
  query<R = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<Result<R>>;
  /**
   * Runs `work` as one transaction, through the session it is handed: a
   * new transaction on a connection of the pool, or a savepoint inside the
   * transaction this session is already in, so that a step that fails
   * inside `atomically` is undone alone, as SQLite's savepoints do.
   */
  transaction<T>(work: (tx: Session) => Promise<T>): Promise<T>;
}

const TIMESTAMPTZ = pg.types.builtins.TIMESTAMPTZ;
const parseTimestamptz = pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (text: string) => Date;

/**
 * Every `timestamptz(3)` column reads as the text SQLite stores and the API
 * sends (`toIso`): a JavaScript Date holds milliseconds, as the columns do,
 * so nothing is lost on the way. Set on this pool only, not on pg's global
 * parsers, which other code in the process may rely on.
 */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMPTZ ? (text: string) => parseTimestamptz(text).toISOString() : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/** The database a postgres:// URL names, for messages: host, port and database, never the password. */
export function postgresName(url: string): string {
  const u = new URL(url);
  return `${u.hostname || u.searchParams.get('host') || 'localhost'}:${u.port || '5432'}${u.pathname}`;
}

/**
 * A pool of `max` connections to the database `url` names (pg reads
 * `sslmode` and the rest of it). A statement waits LOCK_WAIT_MS at most for
 * a lock another session holds (a row another write is changing, a table an
 * operator locked), and a request as long for a connection of the pool (all
 * busy, or PostgreSQL not answering); the migrations lift the first for
 * their own session (migrate.ts). Its first connection is made here, so
 * that a database that cannot be used at all is told apart (Unreachable,
 * ReadOnly) from any later failure.
 */
export async function openPool(url: string, max: number): Promise<pg.Pool> {
  // Idle connections do not keep the process running (allowExitOnIdle): a
  // connection is closed by a goodbye to PostgreSQL, and one that does not
  // answer it (stalled, or cut off by the network) would otherwise hold a
  // server that is shutting down, or a finished command, for as long as
  // it stays silent.
  const pool = new pg.Pool({ connectionString: url, max, types, lock_timeout: LOCK_WAIT_MS, connectionTimeoutMillis: LOCK_WAIT_MS, allowExitOnIdle: true });
  // A connection that breaks while idle (the server restarted, a proxy cut
  // it) is dropped by the pool, which opens another when one is needed;
  // without a listener the 'error' event would end the process.
  pool.on('error', () => {});
  // One that breaks while taken from the pool, in a transaction or a
  // migration, fails the statement sent on it, or the next one; its
  // 'error' event, with no listener while it is taken, would end the process.
  pool.on('connect', (client) => client.on('error', () => {}));
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    await pool.end();
    throw new Unreachable(postgresName(url), err);
  }
  // A standby server, or default_transaction_read_only set for the database
  // or the role, would serve Folio's reads and fail every write.
  let readOnly: boolean;
  try {
    readOnly = (await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only')).rows[0]!.transaction_read_only === 'on';
  } catch (err) {
    client.release(err as Error);
    await pool.end();
    throw err;
  }
  client.release();
  if (readOnly) {
    await pool.end();
    throw new ReadOnly(postgresName(url));
  }
  return pool;
}

/** The database takes read-only transactions only: named by host, port and database, as Unreachable names it. */
export class ReadOnly extends Error {
  constructor(database: string) {
    super(`PostgreSQL at ${database} takes read-only transactions only (a standby server, or default_transaction_read_only set), and Folio writes to its database`);
  }
}

/**
 * The first connection to PostgreSQL failed: whatever the reason (no server
 * there, one that is not PostgreSQL or does not answer in time, a refused
 * user, password or database, SSL settings that do not match), it is the
 * URL's to fix. Named by host, port and database, never with the password.
 */
export class Unreachable extends Error {
  /** The driver's words for what went wrong. */
  readonly reason: string;
  constructor(database: string, override readonly cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`cannot connect to PostgreSQL at ${database}: ${reason}`);
    this.reason = reason;
  }
}

/** PostgreSQL's SQLSTATE of a failed statement, if it is one. */
const sqlState = (err: unknown): string | undefined =>
  err instanceof pg.DatabaseError ? err.code : undefined;

/** True for a statement that waited LOCK_WAIT_MS (lock_timeout) for a lock another session holds, and gave up (lock_not_available). */
export const isLockTimeout = (err: unknown): boolean => sqlState(err) === '55P03';

/** True for a unique-constraint failure of the named constraint or unique index. */
export const isUniqueViolation = (err: unknown, constraint: string): boolean =>
  sqlState(err) === '23505' && (err as pg.DatabaseError).constraint === constraint;

/**
 * The driver's refusals that are the input's fault, as domain errors; any
 * other error goes on as it is (the API answers it as an internal error,
 * showing nothing of it). PostgreSQL's text cannot hold U+0000, which
 * SQLite stores: 22021 is its refusal of the byte.
 */
function translated(err: unknown): unknown {
  if (sqlState(err) === '22021') return new InvalidRequest('Text holding the character U+0000 cannot be stored.');
  return err;
}

/**
 * Statements with parameters (all of the store's reads and writes) are
 * prepared once per connection, under a name of their text, and their
 * plans kept: PostgreSQL would otherwise plan each one at every request,
 * which takes longer than a list runs.
 */
const names = new Map<string, string>();
function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) names.set(text, (name = createHash('sha1').update(text).digest('base64')));
  return name;
}

/**
 * How long a statement of a session made with `answerWithinMs` may go
 * unanswered: past it, the statement fails, and the connection it was sent
 * on, which may be stalled (a network cut off, a server that stopped
 * answering), is closed by the pool rather than given back (release(error)).
 * Without it a statement waits as long as PostgreSQL takes, as the command
 * line's long work (migrations, copies, pruning) must.
 */
export type AnswerWithin = number | undefined;

/** A statement as node-postgres takes it, with its own `query_timeout` (which pg reads per query too). */
type Statement = pg.QueryConfig<unknown[]> & { query_timeout?: number };

async function run<R>(on: pg.Pool | pg.PoolClient, text: string, values: readonly unknown[] | undefined, within: AnswerWithin): Promise<Result<R>> {
  try {
    const name = values === undefined ? undefined : statementName(text);
    const statement: Statement = { name, text, values: values as unknown[] | undefined, query_timeout: within };
    return (await on.query(statement)) as unknown as Result<R>;
  } catch (err) {
    throw translated(err);
  }
}

/**
 * Runs `work` as one transaction on `client`, which is in none. If it
 * fails, the connection is best closed (release(error)): a ROLLBACK that
 * failed too would leave it in a transaction.
 */
export async function transactionOn<T>(client: pg.PoolClient, work: (tx: Session) => Promise<T>, within?: AnswerWithin): Promise<T> {
  await run(client, 'BEGIN', undefined, within);
  try {
    const result = await work(clientSession(client, 0, within));
    // PostgreSQL ends a transaction whose statement failed; a COMMIT then
    // rolls it back, without an error, even if `work` went on (SQLite's
    // transaction would have gone on with it).
    if ((await run(client, 'COMMIT', undefined, within)).command === 'ROLLBACK') {
      throw new Error('the transaction was rolled back by a statement that failed in it; nothing of it was written');
    }
    return result;
  } catch (err) {
    const rollback: Statement = { text: 'ROLLBACK', query_timeout: within };
    await client.query(rollback).catch(() => {});
    throw err;
  }
}

/** Statements straight on the pool; a transaction takes a connection of its own for its duration. */
export function poolSession(pool: pg.Pool, within?: AnswerWithin): Session {
  return {
    query: (text, values) => run(pool, text, values, within),
    async transaction(work) {
      const client = await pool.connect();
      let failure: Error | undefined;
      try {
        return await transactionOn(client, work, within);
      } catch (err) {
        failure = err instanceof Error ? err : new Error(String(err));
        throw err;
      } finally {
        client.release(failure);
      }
    },
  };
}

/**
 * One connection inside a transaction, `depth` savepoints deep. Its nested
 * transactions are savepoints, one at a time at each depth: savepoints nest
 * as a stack, so two run side by side (work that calls store methods in
 * parallel) would release or roll back each other's. The work of each gets
 * a session one level deeper, whose own nested transactions do not wait for it.
 */
export function clientSession(client: pg.PoolClient, depth = 0, within?: AnswerWithin): Session {
  let turn: Promise<unknown> = Promise.resolve();
  return {
    query: (text, values) => run(client, text, values, within),
    transaction<T>(work: (tx: Session) => Promise<T>): Promise<T> {
      const name = `folio_${depth + 1}`;
      const next = turn.then(async () => {
        await run(client, `SAVEPOINT ${name}`, undefined, within);
        try {
          const result = await work(clientSession(client, depth + 1, within));
          await run(client, `RELEASE SAVEPOINT ${name}`, undefined, within);
          return result;
        } catch (err) {
          await run(client, `ROLLBACK TO SAVEPOINT ${name}`, undefined, within);
          throw err;
        }
      });
      turn = next.catch(() => {});
      return next;
    },
  };
}
