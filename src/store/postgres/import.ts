import { foldTitle } from '../../domain/search.js';
import { UsageError } from '../../errors.js';
import { COPIED_TABLES, type CopiedTable, type CopyRows, type CopySource, type TableCounts } from '../copy.js';
import { openPool, postgresName, ReadOnly, transactionOn, Unreachable, type Session } from './database.js';
import { migrate } from './migrate.js';
import { contentLexemes, searchVectorSql, titleLexemes } from './search.js';

/**
 * Each table's rows, sent as one JSON array per batch and read back as
 * records (as reindex.ts sends its words): one statement per batch, whose
 * plan is kept (database.ts). The columns the store derives are computed
 * as its own writes compute them: a document's search words and its
 * title's (titleLexemes, contentLexemes, as documents.ts writes them), a
 * chat's folded title (foldTitle, as admin.ts does); sort times are
 * generated columns.
 */
const INSERTS: { [T in CopiedTable]: string } = {
  users: `INSERT INTO users (id, email, name, plan, created_at)
    SELECT id, email, name, plan, "createdAt" FROM jsonb_to_recordset($1::jsonb)
    AS v (id text, email text, name text, plan text, "createdAt" timestamptz)`,
  organizations: `INSERT INTO organizations (id, name, plan, created_at)
    SELECT id, name, plan, "createdAt" FROM jsonb_to_recordset($1::jsonb)
    AS v (id text, name text, plan text, "createdAt" timestamptz)`,
  memberships: `INSERT INTO memberships (org_id, user_id, joined_at, joined_seq)
    SELECT "orgId", "userId", "joinedAt", "joinedSeq" FROM jsonb_to_recordset($1::jsonb)
    AS v ("orgId" text, "userId" text, "joinedAt" timestamptz, "joinedSeq" bigint)`,
  api_keys: `INSERT INTO api_keys (id, user_id, name, hash, last4, can_write, created_at, last_used_at, revoked_at)
    SELECT id, "userId", name, decode(hash, 'base64'), last4, "canWrite", "createdAt", "lastUsedAt", "revokedAt" FROM jsonb_to_recordset($1::jsonb)
    AS v (id text, "userId" text, name text, hash text, last4 text, "canWrite" boolean, "createdAt" timestamptz, "lastUsedAt" timestamptz, "revokedAt" timestamptz)`,
  projects: `INSERT INTO projects (id, workspace_id, is_org, creator_id, name, description, created_at)
    SELECT id, "workspaceId", "isOrg", "creatorId", name, description, "createdAt" FROM jsonb_to_recordset($1::jsonb)
    AS v (id text, "workspaceId" text, "isOrg" boolean, "creatorId" text, name text, description text, "createdAt" timestamptz)`,
  project_shares: `INSERT INTO project_shares (project_id, user_id)
    SELECT "projectId", "userId" FROM jsonb_to_recordset($1::jsonb) AS v ("projectId" text, "userId" text)`,
  templates: `INSERT INTO templates (id, workspace_id, creator_id, title, description, is_default, created_at)
    SELECT id, "workspaceId", "creatorId", title, description, "isDefault", "createdAt" FROM jsonb_to_recordset($1::jsonb)
    AS v (id integer, "workspaceId" text, "creatorId" text, title text, description text, "isDefault" boolean, "createdAt" timestamptz)`,
  chats: `INSERT INTO chats (id, workspace_id, creator_id, project_id, title, title_folded, message_count, created_at, updated_at)
    SELECT id, "workspaceId", "creatorId", "projectId", title, "titleFolded", "messageCount", "createdAt", "updatedAt" FROM jsonb_to_recordset($1::jsonb)
    AS v (id text, "workspaceId" text, "creatorId" text, "projectId" text, title text, "titleFolded" text, "messageCount" integer,
          "createdAt" timestamptz, "updatedAt" timestamptz)`,
  documents: `INSERT INTO documents (id, workspace_id, creator_id, project_id, thread_id, title, revision, created_at, updated_at, title_words, search)
    SELECT id, "workspaceId", "creatorId", "projectId", "threadId", title, revision, "createdAt", "updatedAt", "titleWords",
      ${searchVectorSql('"titleWords"', '"contentWords"', '"workspaceId"', '"projectId"')}
    FROM jsonb_to_recordset($1::jsonb)
    AS v (id text, "workspaceId" text, "creatorId" text, "projectId" text, "threadId" text, title text, revision integer,
          "createdAt" timestamptz, "updatedAt" timestamptz, "titleWords" text[], "contentWords" text[])`,
  document_revisions: `INSERT INTO document_revisions (document_id, number, created_at, title, content, user_id, key_name)
    SELECT "documentId", number, "createdAt", title, content, "userId", "keyName" FROM jsonb_to_recordset($1::jsonb)
    AS v ("documentId" text, number integer, "createdAt" timestamptz, title text, content text, "userId" text, "keyName" text)`,
};

/** What the store derives, beside the copied columns. */
const DERIVE: { [T in CopiedTable]?: (row: CopyRows[T]) => object } = {
  chats: (c) => ({ ...c, titleFolded: c.title === null ? null : foldTitle(c.title) }),
  // The Markdown itself is copied with the document's revisions.
  documents: ({ content, ...d }) => ({ ...d, titleWords: titleLexemes(d.title), contentWords: contentLexemes(content) }),
};

/** A row in a message. */
const ROW_NAME: { [T in CopiedTable]: (row: CopyRows[T]) => string } = {
  users: (r) => `user ${r.id}`,
  organizations: (r) => `organization ${r.id}`,
  memberships: (r) => `the membership of ${r.userId} in ${r.orgId}`,
  api_keys: (r) => `key ${r.id}`,
  projects: (r) => `project ${r.id}`,
  project_shares: (r) => `the share of project ${r.projectId} with ${r.userId}`,
  templates: (r) => `template ${r.id}`,
  chats: (r) => `chat ${r.id}`,
  documents: (r) => `document ${r.id}`,
  document_revisions: (r) => `revision ${r.number} of document ${r.documentId}`,
};

/** A batch is sent once it holds this many rows or this many characters of JSON: documents may be 5 MiB each. */
const BATCH_ROWS = 500;
const BATCH_CHARS = 8 * 1024 * 1024;

/** The identity columns, set past the copied values so that the store's next rows take new ones. */
const IDENTITIES = [
  ['templates', 'id'],
  ['memberships', 'joined_seq'],
] as const;

async function countRows(db: Session): Promise<TableCounts> {
  const text = `SELECT ${COPIED_TABLES.map((t) => `(SELECT count(*) FROM ${t}) AS ${t}`).join(', ')}`;
  const row = (await db.query<Record<CopiedTable, string>>(text)).rows[0]!;
  return Object.fromEntries(COPIED_TABLES.map((t) => [t, Number(row[t])])) as TableCounts;
}

const listed = (counts: TableCounts) =>
  COPIED_TABLES.filter((t) => counts[t] > 0)
    .map((t) => `${t}: ${counts[t]}`)
    .join(', ');

/**
 * Writes one table's rows in batches. The next batch is read and its words
 * computed while PostgreSQL writes the one before: at most two are held.
 */
async function copyTable<T extends CopiedTable>(db: Session, table: T, rows: Iterable<CopyRows[T]>): Promise<void> {
  const derive = DERIVE[table] as ((row: CopyRows[T]) => object) | undefined;
  let batch: string[] = [];
  let chars = 0;
  let inFlight: Promise<unknown> = Promise.resolve();
  const flush = async () => {
    if (batch.length === 0) return;
    const sent = db.query(INSERTS[table], [`[${batch.join(',')}]`]);
    // Awaited at the next flush or at the end; a failure meanwhile ends the transaction all the same.
    sent.catch(() => {});
    batch = [];
    chars = 0;
    await inFlight;
    inFlight = sent;
  };
  for (const row of rows) {
    // PostgreSQL's text cannot hold U+0000, which SQLite stores.
    if (Object.values(row).some((v) => typeof v === 'string' && v.includes('\0'))) {
      throw new UsageError(`${ROW_NAME[table](row)} holds the character U+0000, which PostgreSQL cannot store; remove it from the source and copy again`);
    }
    const json = JSON.stringify(derive === undefined ? row : derive(row));
    batch.push(json);
    chars += json.length;
    if (batch.length >= BATCH_ROWS || chars >= BATCH_CHARS) await flush();
  }
  await flush();
  await inFlight;
}

/**
 * Copies everything `source` holds into the PostgreSQL database `url`
 * names, which must hold no Folio data: its schema brought up to date
 * first (as opening the store does), then every table in one transaction,
 * whose counts are checked against the source's before it commits. All of
 * it is copied, or nothing. Returns the counts of the tables written.
 */
export async function copyIntoPostgres(url: string, source: CopySource): Promise<TableCounts> {
  const target = postgresName(url);
  const pool = await openPool(url, 2).catch((err: unknown) => {
    if (err instanceof Unreachable) throw new UsageError(`cannot connect to PostgreSQL at ${target} (--to): ${err.reason}`);
    throw err instanceof ReadOnly ? new UsageError(`--to: ${err.message}`) : err;
  });
  try {
    await migrate(pool);
    const client = await pool.connect();
    let failure: Error | undefined;
    try {
      return await transactionOn(client, async (tx) => {
        // No other process writes to these tables until the copy commits or is undone.
        await tx.query(`LOCK TABLE ${COPIED_TABLES.join(', ')} IN EXCLUSIVE MODE`);
        const held = await countRows(tx);
        if (COPIED_TABLES.some((t) => held[t] > 0)) {
          throw new UsageError(
            `the PostgreSQL database ${target} already holds Folio data (${listed(held)}); folio copy copies only into an empty database. Nothing was copied.`,
          );
        }
        const expected = source.counts();
        for (const table of COPIED_TABLES) await copyTable(tx, table, source.rows(table));
        for (const [table, column] of IDENTITIES) {
          await tx.query(`SELECT setval(pg_get_serial_sequence('${table}', '${column}'), coalesce((SELECT max(${column}) FROM ${table}), 0) + 1, false)`);
        }
        const copied = await countRows(tx);
        const differ = COPIED_TABLES.filter((t) => copied[t] !== expected[t]);
        if (differ.length > 0) {
          const what = differ.map((t) => `${t}: ${expected[t]} in ${source.name}, ${copied[t]} in ${target}`).join('; ');
          throw new Error(`the counts of the copy differ from the source's (${what}); nothing was copied`);
        }
        return copied;
      });
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
      throw err;
    } finally {
      client.release(failure);
    }
  } finally {
    await pool.end();
  }
}
