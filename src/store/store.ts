/**
 * Every read and write Folio needs, as one dialect-free interface: async,
 * but for the API's reads, which a store may answer at once (MaybePromise).
 * Each query that returns user content takes a `Viewer` and filters in SQL:
 * no implementation loads a row and checks access afterwards.
 */
import type { MaybePromise } from '../maybe-promise.js';

/** Who is asking and in which workspace: the personal one (orgId null) or a team's. */
export interface Viewer {
  userId: string;
  orgId: string | null;
}

export interface Principal {
  keyId: string;
  keyName: string | null;
  canWrite: boolean;
  lastUsedAt: string | null;
  user: { id: string; name: string | null; email: string; plan: string | null };
  /** Plans of the user's organizations, ordered by the time the user joined. */
  orgPlans: (string | null)[];
  /** The user's organizations, by name then id: read with the key, so that a request sees one state of them. */
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
  /** Search terms already split into words; empty means no search. */
  terms?: string[];
  projectId?: string;
  limit: number;
}

/** A page of documents without search: `ListDocumentsQuery` without terms. */
export type DocumentPageQuery = Omit<ListDocumentsQuery, 'terms'>;

export interface ListChatsQuery {
  /** Case-folded substring to find in titles. */
  titleContains?: string;
  projectId?: string;
  limit: number;
}

export interface NewDocument {
  title: string;
  contentMarkdown: string;
  projectId: string | null;
  threadId: string | null;
}

export interface DocumentReplacement {
  title?: string;
  contentMarkdown: string;
  /** Canonical instant the caller read, null for a never-updated document. */
  expectedUpdatedAt: string | null;
}

export type UpdateOutcome =
  | { status: 'updated'; document: DocumentMutationRow }
  | { status: 'not_found' }
  | { status: 'conflict'; currentUpdatedAt: string | null };

export interface Store {
  readonly dialect: string;
  migrate(): Promise<void>;
  close(): Promise<void>;
  /** A cheap round trip, for health checks. */
  ping(): Promise<void>;
  /**
   * Runs `work` as one transaction: every write it makes through this store
   * is kept, or none is, if it throws or the process stops before it has
   * returned. Other processes wait for the database meanwhile, and see
   * nothing of it until it is done. For the command line, which makes one
   * call at a time: a request served meanwhile would join the transaction.
   */
  atomically<T>(work: () => Promise<T>): Promise<T>;

  // --- API: authentication and the caller -------------------------------
  /**
   * The live key whose SHA-256 (base64, keys.ts's hashKey) this is, with its
   * user. The database is read only when the answer is not already known and
   * `worthLooking()` says so: the guard passes its format check there, which a
   * key found before has passed.
   */
  findPrincipal(keyHash: string, worthLooking?: () => boolean): Promise<Principal | null>;
  /**
   * What findPrincipal would answer, when the store holds it in memory and it
   * is still current (no commit has changed what it was read from), without
   * waiting; undefined when it must be asked with findPrincipal. The guard
   * of most requests is answered this way without a promise.
   */
  knownPrincipal(keyHash: string): Principal | undefined;
  /**
   * Records a key's last use. Best effort: false, and nothing written, when
   * another process holds the database's write lock (a later request tries
   * again), so that a request never waits for another process's write.
   */
  touchKey(keyId: string, at: string): Promise<boolean>;
  isMember(orgId: string, userId: string): Promise<boolean>;
  isProjectVisible(viewer: Viewer, projectId: string): Promise<boolean>;
  isChatVisible(viewer: Viewer, chatId: string): Promise<boolean>;

  // --- API: content, always scoped to the viewer ----------------------
  // The reads of documents, pages, searches, projects, templates and chats
  // may answer at once (src/maybe-promise.ts); callers that await them need
  // not care.
  listDocuments(viewer: Viewer, query: ListDocumentsQuery): MaybePromise<DocumentSummaryRow[]>;
  /**
   * The same page as `listDocuments` without terms, as the JSON body of
   * `GET /v1/documents` (`{documents, count}`), each document's `url` being
   * `urls` followed by its id. The store writes the JSON: see
   * sqlite/documents.ts.
   */
  renderDocumentPage(viewer: Viewer, query: DocumentPageQuery, urls: string): MaybePromise<Buffer>;
  /** A document as the JSON body of `GET /v1/documents/{id}` (UTF-8), or null when the viewer does not see it. */
  renderDocument(viewer: Viewer, id: string, urls: string): MaybePromise<Buffer | null>;
  /** Null when the project is not visible to the viewer in its scope. */
  createDocument(viewer: Viewer, doc: NewDocument, now: string): Promise<DocumentMutationRow | null>;
  /** Compares `expectedUpdatedAt` and writes in one atomic step. */
  updateDocument(
    viewer: Viewer,
    id: string,
    change: DocumentReplacement,
    nextUpdatedAt: (previous: string | null) => string,
  ): Promise<UpdateOutcome>;
  listProjects(viewer: Viewer, limit: number): MaybePromise<ProjectRow[]>;
  listTemplates(viewer: Viewer, includeSystem: boolean, limit: number): MaybePromise<TemplateRow[]>;
  listChats(viewer: Viewer, query: ListChatsQuery): MaybePromise<ChatRow[]>;

  // --- Administration (the `folio` command line) -----------------------
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
  createKey(input: {
    userId: string;
    name: string | null;
    canWrite: boolean;
    /** SHA-256 of the secret, base64 (keys.ts's hashKey). */
    hash: string;
    last4: string;
    now: string;
  }): Promise<KeyRecord>;
  listKeys(userId: string): Promise<KeyRecord[]>;
  /** Null when there is no such key; an already revoked key keeps its time. */
  revokeKey(keyId: string, now: string): Promise<KeyRecord | null>;
  createProject(input: {
    creatorId: string;
    orgId: string | null;
    name: string;
    description: string | null;
    now: string;
  }): Promise<{ id: string }>;
  getProject(id: string): Promise<{ id: string; name: string; workspaceId: string; creatorId: string } | null>;
  /** False when already shared with that user. */
  shareProject(projectId: string, userId: string): Promise<boolean>;
  createTemplate(input: {
    title: string;
    description: string | null;
    /** Null for a system template. */
    workspaceId: string | null;
    creatorId: string | null;
    isDefault: boolean;
    now: string;
  }): Promise<{ id: number }>;
  createChat(input: {
    creatorId: string;
    /** The workspace the chat belongs to: its project's, or the creator's personal one, or a team's. */
    workspaceId: string;
    projectId: string | null;
    title: string | null;
    messageCount: number;
    now: string;
  }): Promise<{ id: string }>;
}
