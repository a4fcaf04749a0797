/**
 * What `folio copy` moves from one database to another: every table's rows
 * as the two dialects agree on them (times as `toIso` writes them, flags as
 * booleans, key hashes as base64). Only what cannot be computed again is
 * carried: each store derives the rest (sort times, folded chat titles,
 * search words) as its own writes do. The reading side is
 * src/store/sqlite/export.ts, the writing side src/store/postgres/import.ts.
 */

export interface CopyRows {
  users: { id: string; email: string; name: string | null; plan: string | null; createdAt: string };
  organizations: { id: string; name: string; plan: string | null; createdAt: string };
  /** joinedSeq orders the memberships joined in the same millisecond (Me.plan takes the earliest-joined team's). */
  memberships: { orgId: string; userId: string; joinedAt: string; joinedSeq: number };
  api_keys: {
    id: string;
    userId: string;
    name: string | null;
    hash: string;
    last4: string;
    canWrite: boolean;
    createdAt: string;
    lastUsedAt: string | null;
    revokedAt: string | null;
  };
  projects: { id: string; workspaceId: string; isOrg: boolean; creatorId: string; name: string; description: string | null; createdAt: string };
  project_shares: { projectId: string; userId: string };
  templates: {
    id: number;
    workspaceId: string | null;
    creatorId: string | null;
    title: string;
    description: string | null;
    isDefault: boolean;
    createdAt: string;
  };
  chats: {
    id: string;
    workspaceId: string;
    creatorId: string;
    projectId: string | null;
    title: string | null;
    messageCount: number;
    createdAt: string;
    updatedAt: string | null;
  };
  documents: {
    id: string;
    workspaceId: string;
    creatorId: string;
    projectId: string | null;
    threadId: string | null;
    title: string;
    /** The Markdown, which the writing side makes the search words of; it is revision `revision`'s. */
    content: string;
    /** The number of the document's newest revision. */
    revision: number;
    createdAt: string;
    updatedAt: string | null;
  };
  document_revisions: {
    documentId: string;
    number: number;
    createdAt: string;
    title: string;
    content: string;
    userId: string | null;
    keyName: string | null;
  };
}

export type CopiedTable = keyof CopyRows;

/** Every table copied, in an order in which each row's references are already there. */
export const COPIED_TABLES: readonly CopiedTable[] = [
  'users',
  'organizations',
  'memberships',
  'api_keys',
  'projects',
  'project_shares',
  'templates',
  'chats',
  'documents',
  'document_revisions',
];

export type TableCounts = Record<CopiedTable, number>;

/** The source of a copy: one consistent state of a database, read table by table. */
export interface CopySource {
  /** What the source database is, for messages (never with a password). */
  readonly name: string;
  counts(): TableCounts;
  /** The table's rows, read as they are iterated: never the whole table at once. */
  rows<T extends CopiedTable>(table: T): Iterable<CopyRows[T]>;
}
