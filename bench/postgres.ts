/**
 * The benchmark on PostgreSQL (`--database postgres://…/NAME`): the data set
 * is a database of its own, NAME_data_<docs>, kept between runs as the
 * SQLite data set's file is; each run serves a copy of it, NAME, made again
 * from it (CREATE DATABASE … TEMPLATE) before the write scenarios, as the
 * SQLite run copies its file. The benchmark drops and creates only
 * databases it made itself, which it marks with a comment.
 */
import pg from 'pg';
import { openPostgresStore } from '../src/store/postgres/store.js';
import type { Store } from '../src/store/store.js';
import type { BulkLoader } from '../src/store/sqlite/bulk-load.js';

/** The comment on every database the benchmark made; a data set's adds the fingerprint of what generated it. */
const MARK = 'folio load benchmark';

export const isPostgresUrl = (database: string) => /^postgres(ql)?:\/\//.test(database);

/** The same server's database `name`, in the URL `url` names another of. */
export function databaseUrl(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(name)}`;
  return u.toString();
}

/** The database a URL names. */
export function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`--database: name a database of lower-case letters, digits and _ in the URL, not "${name}"`);
  return name;
}

/** The data set's database for `docs` documents, beside the run's `name`. */
export const dataSetName = (name: string, docs: number) => `${name}_data_${docs}`;

/** Runs `work` on a connection to the server's maintenance database (postgres), where databases are created and dropped. */
async function onServer<T>(url: string, work: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl(url, 'postgres') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The comment on database `name`; null if it has none, undefined if there is no such database. */
async function comment(c: pg.Client, name: string): Promise<string | null | undefined> {
  const { rows } = await c.query<{ comment: string | null }>(
    "SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1",
    [name],
  );
  return rows.length === 0 ? undefined : rows[0]!.comment;
}

/** Drops database `name` if it exists, refusing one the benchmark did not make. */
async function dropOurs(c: pg.Client, name: string): Promise<void> {
  const mark = await comment(c, name);
  if (mark === undefined) return;
  if (!mark?.startsWith(MARK)) {
    throw new Error(`the database "${name}" exists and the benchmark did not make it: name another in --database, or drop it yourself`);
  }
  await c.query(`DROP DATABASE ${name} WITH (FORCE)`);
}

/** Creates database `name`, empty or as a copy of `template`, marked as the benchmark's with `note`. */
async function create(c: pg.Client, name: string, note: string, template?: string): Promise<void> {
  await dropOurs(c, name);
  // FILE_COPY copies the template's files and checkpoints: the copy is on disk before the run starts.
  await c.query(template === undefined ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE ${template} STRATEGY FILE_COPY`);
  await c.query(`COMMENT ON DATABASE ${name} IS ${c.escapeLiteral(note)}`);
}

/** True if the data set `name` exists and is the generation the manifest names, generated to its end. */
export function dataSetReady(url: string, name: string, generation: string): Promise<boolean> {
  return onServer(url, async (c) => (await comment(c, name)) === `${MARK}: data set ${generation}`);
}

/** An empty database for a data set; dataSetDone marks it complete. */
export function createDataSet(url: string, name: string): Promise<void> {
  return onServer(url, (c) => create(c, name, `${MARK}: data set being generated`));
}

export function dataSetDone(url: string, name: string, generation: string): Promise<void> {
  return onServer(url, (c) => c.query(`COMMENT ON DATABASE ${name} IS ${c.escapeLiteral(`${MARK}: data set ${generation}`)}`).then(() => {}));
}

/** Database `name` made again as a copy of the data set `template`. */
export function freshDatabase(url: string, template: string, name: string): Promise<void> {
  return onServer(url, (c) => create(c, name, `${MARK}: a run's copy of ${template}`, template));
}

export function dropDatabase(url: string, name: string): Promise<void> {
  return onServer(url, (c) => dropOurs(c, name));
}

export function databaseMb(url: string, name: string): Promise<number> {
  return onServer(url, async (c) => Number((await c.query<{ size: string }>('SELECT pg_database_size($1) AS size', [name])).rows[0]!.size) / 1e6);
}

/**
 * The generator's loader on PostgreSQL: the ordinary store (its own
 * statements write every row), each batch one transaction on one
 * connection. On closing, VACUUM ANALYZE does what autovacuum does on a
 * quiet server: it moves the search index's pending words into the index,
 * marks the pages all-visible and gathers the planner's statistics.
 */
export async function openPostgresBulkLoader(url: string): Promise<BulkLoader> {
  const base = await openPostgresStore(url, { poolMax: 2 });
  let current: Store = base;
  // Inside a batch, every method is the transaction's (Store.atomically).
  const store = new Proxy({} as Store, { get: (_, prop) => Reflect.get(current, prop) as unknown });
  return {
    store,
    async batch(fn) {
      await base.atomically(async (tx) => {
        current = tx;
        try {
          await fn();
        } finally {
          current = base;
        }
      });
    },
    async close() {
      await base.close();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query('VACUUM (ANALYZE)');
        await client.query('CHECKPOINT');
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Each document's current updatedAt, for the load generator's PATCH bodies,
 * which on SQLite it reads from the file as it builds each one: read at
 * once for the documents it will edit, then, for each document an answer
 * names (an edit's answer has its id but not its new updatedAt), read again
 * within `everyMs`, in one statement for all. A document is edited again
 * only after all the others, long after.
 */
export async function updatedAtBook(url: string, ids: string[], everyMs = 20) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const book = new Map<string, string | null>();
  const read = async (which: string[]) => {
    const { rows } = await client.query<{ id: string; updated_at: Date | null }>('SELECT id, updated_at FROM documents WHERE id = ANY($1)', [which]);
    for (const r of rows) book.set(r.id, r.updated_at === null ? null : r.updated_at.toISOString());
  };
  await read(ids);
  let pending = new Set<string>();
  let reading: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    if (pending.size === 0) return;
    const which = [...pending];
    pending = new Set();
    reading = reading.then(() => read(which));
  }, everyMs);
  return {
    get: (id: string) => book.get(id) ?? null,
    learn(status: number, body: string) {
      // Reads and creations answer too, in the mixed scenario.
      if (status !== 200 || !body.startsWith('{"id"')) return;
      const d = JSON.parse(body) as { id?: unknown; updatedAt?: unknown };
      if (typeof d.id !== 'string' || !book.has(d.id)) return;
      if (typeof d.updatedAt === 'string') book.set(d.id, d.updatedAt);
      else pending.add(d.id);
    },
    async close() {
      clearInterval(timer);
      await reading.catch(() => {});
      await client.end();
    },
  };
}
