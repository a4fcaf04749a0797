/**
 * Every read and write Folio needs, as one interface that each database
 * implements (src/store/sqlite/, test/store-contract/ for what every
 * implementation must do). Every method is asynchronous and answers with
 * rows or domain records; the API's schemas turn them into responses.
 *
 * Each read of user content takes a `Viewer` and returns only what that
 * viewer may see (src/domain/visibility.ts), filtered in the query itself:
 * no implementation loads a row and checks access afterwards.
 */
import type { Viewer } from '../domain/visibility.js';

export type { Viewer };

/** A live key and the user it acts as, read together. */
export interface Principal {
  keyId: string;
  keyName: string | null;
  canWrite: boolean;
  lastUsedAt: string | null;
  user: { id: string; name: string | null; email: string; plan: string | null };
  /** Plans of the user's organizations, in the order the user joined them. */
  orgPlans: (string | null)[];
  /** The user's organizations, by name (as people sort names), then id. */
  organizations: OrganizationRow[];
}

export interface UserRecord {
  id: string;
  email: string;
  name: string | null;
  plan: string | null;
  createdAt: string;
}

export interface OrgRecord {
  id: string;
  name: string;
  plan: string | null;
  createdAt: string;
}

export interface MemberRecord {
  id: string;
  email: string;
  name: string | null;
  joinedAt: string;
}

export interface OrganizationRow {
  id: string;
  name: string;
  createdAt: string;
}

export interface ProjectRef {
  id: string;
  name: string;
}

export interface DocumentSummaryRow {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string | null;
  threadId: string | null;
}

export interface DocumentRow extends DocumentSummaryRow {
  contentMarkdown: string;
  project: ProjectRef | null;
}

export interface DocumentMutationRow {
  id: string;
  title: string;
  threadId: string | null;
  updatedAt: string | null;
}

export interface ProjectRow {
  id: string;
  name: string;
  description: string | null;
  createdAt: string;
  isSharedWithYou: boolean;
}

export interface TemplateRow {
  id: number;
  title: string;
  description: string | null;
  isSystem: boolean;
  isDefault: boolean;
}

export interface ChatRow {
  id: string;
  title: string | null;
  createdAt: string;
  updatedAt: string | null;
  messageCount: number;
  project: ProjectRef | null;
}

export interface KeyRecord {
  id: string;
  userId: string;
  name: string | null;
  canWrite: boolean;
  last4: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface ListDocumentsQuery {
  /** Search terms, as searchTerms (src/domain/search.ts) splits a query; empty or absent lists without searching. */
  terms?: string[];
  projectId?: string;
  limit: number;
}

export interface ListChatsQuery {
  /** Folded (foldTitle) text that titles must contain. */
  titleContains?: string;
  projectId?: string;
  limit: number;
}

/** Who made a change, as its revision records it: the user whose key made it, and the key's name. */
export interface RevisionAuthor {
  userId: string;
  keyName: string | null;
}

export interface NewDocument {
  title: string;
  contentMarkdown: string;
  projectId: string | null;
  threadId: string | null;
  /** Left out (or null) for the command line's writes. */
  author?: RevisionAuthor | null;
}

export interface DocumentReplacement {
  title?: string;
  contentMarkdown: string;
  /** The canonical instant the caller read (toIso), null for a never-updated document. */
  expectedUpdatedAt: string | null;
  /** Left out (or null) for the command line's writes. */
  author?: RevisionAuthor | null;
}

/** One recorded state of a document (DESIGN §7). */
export interface RevisionSummaryRow {
  /** 1 for the creation, then 2, 3, … */
  number: number;
  /** The createdAt or updatedAt the change set. */
  createdAt: string;
  title: string;
  userId: string | null;
  keyName: string | null;
}

export interface RevisionRow extends RevisionSummaryRow {
  contentMarkdown: string;
}

export type UpdateOutcome =
  | { status: 'updated'; document: DocumentMutationRow }
  | { status: 'not_found' }
  | { status: 'conflict'; currentUpdatedAt: string | null };

export interface NewKey {
  userId: string;
  name: string | null;
  canWrite: boolean;
  /** SHA-256 of the secret, base64 (hashKey in src/domain/keys.ts). */
  hash: string;
  last4: string;
  now: string;
}

export interface NewProject {
  creatorId: string;
  /** Null for a personal project (in the creator's workspace). */
  orgId: string | null;
  name: string;
  description: string | null;
  now: string;
}

export interface NewTemplate {
  title: string;
  description: string | null;
  /** Null for a system template. */
  workspaceId: string | null;
  creatorId: string | null;
  /** Makes it the only default template of its workspace. */
  isDefault: boolean;
  now: string;
}

export interface NewChat {
  creatorId: string;
  /** The workspace the chat belongs to: its project's, or the creator's personal one, or a team's. */
  workspaceId: string;
  projectId: string | null;
  title: string | null;
  messageCount: number;
  now: string;
}

/** A pool's connections at one moment. */
export interface ConnectionPoolUse {
  /** The most it opens (DATABASE_POOL_MAX). */
  max: number;
  /** Open connections, idle or running a statement. */
  open: number;
  idle: number;
  /** Statements and transactions waiting for a connection. */
  waiting: number;
}

export interface Store {
  /** Which database: 'sqlite' (or, later, 'postgres'). */
  readonly dialect: string;
  /** Brings the schema up to date; running it again changes nothing. */
  migrate(): Promise<void>;
  close(): Promise<void>;
  /** A cheap round trip, for health checks. */
  ping(): Promise<void>;
  /**
   * How the store's pool of connections is used, for /metrics; absent where
   * there is no pool (SQLite's store has one connection, used in turn).
   */
  connectionPool?(): ConnectionPoolUse;
  /**
   * Runs `work` as one transaction, through the store it is handed: every
   * write made through `tx` is kept, or none is if `work` throws. Others
   * see nothing of it until it is done.
   */
  atomically<T>(work: (tx: Store) => Promise<T>): Promise<T>;

  // --- The caller ----------------------------------------------------------
  /** The unrevoked key whose hash this is (hashKey), with its user and the user's organizations; null if there is none. */
  findPrincipal(keyHash: string): Promise<Principal | null>;
  /** Records a key's last use. */
  touchKey(keyId: string, at: string): Promise<void>;
  isMember(orgId: string, userId: string): Promise<boolean>;
  isProjectVisible(viewer: Viewer, projectId: string): Promise<boolean>;
  /** Whether the viewer sees the chat; with `projectId`, and the chat is in that project (null: outside projects). */
  isChatVisible(viewer: Viewer, chatId: string, projectId?: string | null): Promise<boolean>;

  // --- Content, always as the viewer sees it --------------------------------
  /**
   * Newest first (coalesce(updatedAt, createdAt), ties by id descending):
   * every visible document, or those of one project, or those holding every
   * term as a word or word prefix in title or content, case and accents
   * aside (DESIGN §3).
   */
  listDocuments(viewer: Viewer, query: ListDocumentsQuery): Promise<DocumentSummaryRow[]>;
  /** Null when there is no such document or the viewer does not see it. */
  getDocument(viewer: Viewer, id: string): Promise<DocumentRow | null>;
  /** Null when the scope or the project is not open to the viewer. */
  createDocument(viewer: Viewer, doc: NewDocument, now: string): Promise<DocumentMutationRow | null>;
  /**
   * Replaces title (if given) and content when the document's updatedAt is
   * still `expectedUpdatedAt`, comparing and writing in one atomic step; the
   * new updatedAt is `nextUpdatedAt` of the current one.
   */
  updateDocument(
    viewer: Viewer,
    id: string,
    change: DocumentReplacement,
    nextUpdatedAt: (previous: string | null) => string,
  ): Promise<UpdateOutcome>;
  /**
   * A document's revisions, newest first; null when there is no such
   * document or the viewer does not see it. Creating and updating a
   * document record a revision in the same transaction.
   */
  listRevisions(viewer: Viewer, documentId: string, limit: number): Promise<RevisionSummaryRow[] | null>;
  /** One revision, when the viewer sees its document: `no_document` otherwise, `no_revision` when the document has no such revision (or it was pruned). */
  getRevision(viewer: Viewer, documentId: string, number: number): Promise<RevisionRow | 'no_document' | 'no_revision'>;
  /** Newest first, ties by id descending. */
  listProjects(viewer: Viewer, limit: number): Promise<ProjectRow[]>;
  /** System templates first, then newest first, ties by id descending. */
  listTemplates(viewer: Viewer, includeSystem: boolean, limit: number): Promise<TemplateRow[]>;
  /** Newest first (coalesce(updatedAt, createdAt)), ties by id descending. */
  listChats(viewer: Viewer, query: ListChatsQuery): Promise<ChatRow[]>;

  // --- Administration (the `folio` command line) ------------------------------
  /** Throws UsageError when the e-mail is taken (compared with the ASCII letters' case set aside, as SQLite's NOCASE does). */
  createUser(input: { email: string; name: string | null; plan: string | null; now: string }): Promise<UserRecord>;
  getUser(id: string): Promise<UserRecord | null>;
  findUserByEmail(email: string): Promise<UserRecord | null>;
  setUserPlan(id: string, plan: string | null): Promise<void>;
  createOrg(input: { name: string; plan: string | null; now: string }): Promise<OrgRecord>;
  getOrg(id: string): Promise<OrgRecord | null>;
  setOrgPlan(id: string, plan: string | null): Promise<void>;
  /** False when the user already was a member. */
  addMember(orgId: string, userId: string, now: string): Promise<boolean>;
  /** False when the user was not a member. */
  removeMember(orgId: string, userId: string): Promise<boolean>;
  createKey(input: NewKey): Promise<KeyRecord>;
  /** Oldest first. */
  listKeys(userId: string): Promise<KeyRecord[]>;
  /** Null when there is no such key; an already revoked key keeps its time. */
  revokeKey(keyId: string, now: string): Promise<KeyRecord | null>;
  createProject(input: NewProject): Promise<{ id: string }>;
  getProject(id: string): Promise<{ id: string; name: string; workspaceId: string; creatorId: string } | null>;
  /** False when already shared with that user. */
  shareProject(projectId: string, userId: string): Promise<boolean>;
  createTemplate(input: NewTemplate): Promise<{ id: number }>;
  createChat(input: NewChat): Promise<{ id: string }>;
  /** Every user, oldest first (ties by id). */
  listUsers(): Promise<UserRecord[]>;
  /** Every organization, oldest first (ties by id). */
  listOrgs(): Promise<OrgRecord[]>;
  /** An organization's members in the order they joined; null when there is no such organization. */
  listMembers(orgId: string): Promise<MemberRecord[] | null>;
  /** Deletes all but the newest `keep` (at least 1) revisions of every document; answers how many it deleted. */
  pruneRevisions(keep: number): Promise<number>;
}
