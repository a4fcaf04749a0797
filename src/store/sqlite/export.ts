import { existsSync } from 'node:fs';
import { UsageError } from '../../errors.js';
import { COPIED_TABLES, type CopiedTable, type CopyRows, type CopySource, type TableCounts } from '../copy.js';
import { isOpenRefusal, migrate, openDatabase, type Db } from './database.js';
import { DOCUMENTS_WITH_CONTENT } from './migrations.js';

/**
 * Each table's rows as src/store/copy.ts shapes them. Documents are read
 * with their Markdown; sort times, folded chat titles, the search index and
 * high-water marks are SQLite's own and stay behind.
 */
const SELECTS: { [T in CopiedTable]: string } = {
  users: 'SELECT id, email, name, plan, created_at AS createdAt FROM users ORDER BY created_at, id',
  organizations: 'SELECT id, name, plan, created_at AS createdAt FROM organizations ORDER BY created_at, id',
  memberships: 'SELECT org_id AS orgId, user_id AS userId, joined_at AS joinedAt, joined_seq AS joinedSeq FROM memberships ORDER BY joined_seq',
  api_keys: `SELECT id, user_id AS userId, name, hash, last4, can_write AS canWrite, created_at AS createdAt,
      last_used_at AS lastUsedAt, revoked_at AS revokedAt FROM api_keys ORDER BY created_at, id`,
  projects: `SELECT id, workspace_id AS workspaceId, is_org AS isOrg, creator_id AS creatorId, name, description, created_at AS createdAt
      FROM projects ORDER BY created_at, id`,
  project_shares: 'SELECT project_id AS projectId, user_id AS userId FROM project_shares',
  templates: `SELECT id, workspace_id AS workspaceId, creator_id AS creatorId, title, description, is_default AS isDefault, created_at AS createdAt
      FROM templates ORDER BY id`,
  chats: `SELECT id, workspace_id AS workspaceId, creator_id AS creatorId, project_id AS projectId, title, message_count AS messageCount,
      created_at AS createdAt, updated_at AS updatedAt FROM chats ORDER BY sort_at, id`,
  documents: `SELECT d.id, d.workspace_id AS workspaceId, d.creator_id AS creatorId, d.project_id AS projectId, d.thread_id AS threadId,
      d.title, c.content, d.revision, d.created_at AS createdAt, d.updated_at AS updatedAt
      ${DOCUMENTS_WITH_CONTENT} ORDER BY d.seq`,
  document_revisions: `SELECT document_id AS documentId, number, created_at AS createdAt, title, content, user_id AS userId, key_name AS keyName
      FROM document_revisions ORDER BY rowid`,
};

/** SQLite's integers and blobs as the copy's booleans and base64 (CopyRows). */
const CONVERT: { [T in CopiedTable]?: (row: Record<string, unknown>) => CopyRows[T] } = {
  api_keys: (r) => ({ ...r, hash: (r.hash as Buffer).toString('base64'), canWrite: r.canWrite === 1 }) as CopyRows['api_keys'],
  projects: (r) => ({ ...r, isOrg: r.isOrg === 1 }) as CopyRows['projects'],
  templates: (r) => ({ ...r, isDefault: r.isDefault === 1 }) as CopyRows['templates'],
};

export interface SqliteExport extends CopySource {
  /** Ends the read and closes the database. */
  close(): void;
}

/**
 * Opens the SQLite database `file` to be copied, which must exist (it is
 * never created), brings its schema up to date as every command does, and
 * begins one read: every count and every row comes from the same state of
 * the database while servers go on writing to it (WAL keeps that state for
 * this reader). Rows are read as they are iterated, one table at a time.
 */
export function openSqliteExport(file: string): SqliteExport {
  if (file === ':memory:' || !existsSync(file)) {
    throw new UsageError(`the SQLite database "${file}" (DATABASE_URL) does not exist; set DATABASE_URL to the database to copy`);
  }
  let db: Db;
  try {
    db = openDatabase(file);
    migrate(db);
  } catch (err) {
    if (isOpenRefusal(err)) {
      throw new UsageError(`cannot open the SQLite database "${file}" (DATABASE_URL): ${(err as Error).message}`);
    }
    throw err;
  }
  db.exec('BEGIN');
  return {
    name: file,
    counts() {
      const counts = {} as TableCounts;
      for (const table of COPIED_TABLES) counts[table] = db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
      return counts;
    },
    *rows<T extends CopiedTable>(table: T): Iterable<CopyRows[T]> {
      const convert = CONVERT[table] as ((row: Record<string, unknown>) => CopyRows[T]) | undefined;
      for (const row of db.prepare(SELECTS[table]).iterate() as Iterable<Record<string, unknown>>) {
        yield convert === undefined ? (row as CopyRows[T]) : convert(row);
      }
    },
    close() {
      if (db.inTransaction) db.exec('COMMIT');
      db.close();
    },
  };
}
