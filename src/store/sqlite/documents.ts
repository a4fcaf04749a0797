import type {
  DocumentMutationRow,
  DocumentReplacement,
  DocumentRow,
  DocumentSummaryRow,
  ListDocumentsQuery,
  NewDocument,
  UpdateOutcome,
  Viewer,
} from '../store.js';
import type { Db } from './database.js';
import { ftsMatch } from './search.js';
import { contentBranches, contentVisible, projectVisible, type ScopeKind } from './visibility.js';
import { newUuid } from '../../domain/ids.js';

interface SummaryDbRow {
  id: string;
  title: string;
  created_at: string;
  updated_at: string | null;
  thread_id: string | null;
}

const kindOf = (v: Viewer): ScopeKind => (v.orgId === null ? 'personal' : 'org');
const params = (v: Viewer) => ({ uid: v.userId, oid: v.orgId });

function toSummary(r: SummaryDbRow): DocumentSummaryRow {
  return { id: r.id, title: r.title, createdAt: r.created_at, updatedAt: r.updated_at, threadId: r.thread_id };
}

/** Documents: list and search, read, create, and atomic compare-and-replace. */
export function documentQueries(db: Db) {
  const listCache = new Map<string, ReturnType<Db['prepare']>>();

  // Each visibility branch is ordered and limited on its own index, then merged.
  function listStatement(kind: ScopeKind, search: boolean, project: boolean) {
    const key = `${kind}:${search}:${project}`;
    let stmt = listCache.get(key);
    if (!stmt) {
      const extra = [
        project ? 'd.project_id = @pid' : null,
        search ? 'd.seq IN (SELECT rowid FROM documents_fts WHERE documents_fts MATCH @match)' : null,
      ].filter(Boolean);
      const branches = contentBranches[kind]('d').map(
        (cond) => `SELECT * FROM (SELECT d.id, d.title, d.created_at, d.updated_at, d.thread_id, d.sort_at
          FROM documents d WHERE ${[cond, ...extra].join(' AND ')}
          ORDER BY d.sort_at DESC, d.id DESC LIMIT @limit)`,
      );
      stmt = db.prepare(
        `SELECT id, title, created_at, updated_at, thread_id FROM (${branches.join(' UNION ALL ')})
         ORDER BY sort_at DESC, id DESC LIMIT @limit`,
      );
      listCache.set(key, stmt);
    }
    return stmt;
  }

  const getStmt = {
    personal: db.prepare(docSelect(contentVisible.personal('d'))),
    org: db.prepare(docSelect(contentVisible.org('d'))),
  };
  const lockStmt = {
    personal: db.prepare(`SELECT d.seq, d.updated_at FROM documents d WHERE d.id = @id AND ${contentVisible.personal('d')}`),
    org: db.prepare(`SELECT d.seq, d.updated_at FROM documents d WHERE d.id = @id AND ${contentVisible.org('d')}`),
  };
  const projectWorkspace = {
    personal: db.prepare(`SELECT p.workspace_id FROM projects p WHERE p.id = @pid AND ${projectVisible.personal('p')}`),
    org: db.prepare(`SELECT p.workspace_id FROM projects p WHERE p.id = @pid AND ${projectVisible.org('p')}`),
  };
  const memberStmt = db.prepare('SELECT 1 FROM memberships WHERE org_id = @oid AND user_id = @uid');
  const insertStmt = db.prepare(
    `INSERT INTO documents (id, workspace_id, creator_id, project_id, thread_id, title, content, created_at)
     VALUES (@id, @workspace, @uid, @pid, @thread, @title, @content, @now)`,
  );
  const updateStmt = db.prepare(
    `UPDATE documents SET title = coalesce(@title, title), content = @content, updated_at = @updatedAt
     WHERE seq = @seq RETURNING id, title, thread_id, updated_at`,
  );

  const create = db.transaction((viewer: Viewer, doc: NewDocument, now: string): DocumentMutationRow | null => {
    const kind = kindOf(viewer);
    let workspace: string;
    if (doc.projectId !== null) {
      const row = projectWorkspace[kind].get({ ...params(viewer), pid: doc.projectId }) as
        | { workspace_id: string }
        | undefined;
      if (!row) return null;
      workspace = row.workspace_id;
    } else if (viewer.orgId !== null) {
      if (!memberStmt.get(params(viewer))) return null;
      workspace = viewer.orgId;
    } else {
      workspace = viewer.userId;
    }
    const id = newUuid();
    insertStmt.run({
      id,
      workspace,
      uid: viewer.userId,
      pid: doc.projectId,
      thread: doc.threadId,
      title: doc.title,
      content: doc.contentMarkdown,
      now,
    });
    return { id, title: doc.title, threadId: doc.threadId, updatedAt: null };
  });

  const update = db.transaction(
    (
      viewer: Viewer,
      id: string,
      change: DocumentReplacement,
      next: (previous: string | null) => string,
    ): UpdateOutcome => {
      const row = lockStmt[kindOf(viewer)].get({ ...params(viewer), id }) as
        | { seq: number; updated_at: string | null }
        | undefined;
      if (!row) return { status: 'not_found' };
      if (row.updated_at !== change.expectedUpdatedAt) return { status: 'conflict', currentUpdatedAt: row.updated_at };
      const updated = updateStmt.get({
        seq: row.seq,
        title: change.title ?? null,
        content: change.contentMarkdown,
        updatedAt: next(row.updated_at),
      }) as { id: string; title: string; thread_id: string | null; updated_at: string };
      return {
        status: 'updated',
        document: { id: updated.id, title: updated.title, threadId: updated.thread_id, updatedAt: updated.updated_at },
      };
    },
  );

  return {
    async listDocuments(viewer: Viewer, query: ListDocumentsQuery): Promise<DocumentSummaryRow[]> {
      const terms = query.terms ?? [];
      const search = terms.length > 0;
      const stmt = listStatement(kindOf(viewer), search, query.projectId !== undefined);
      const rows = stmt.all({
        ...params(viewer),
        pid: query.projectId ?? null,
        match: search ? ftsMatch(terms) : null,
        limit: query.limit,
      }) as SummaryDbRow[];
      return rows.map(toSummary);
    },

    async getDocument(viewer: Viewer, id: string): Promise<DocumentRow | null> {
      const r = getStmt[kindOf(viewer)].get({ ...params(viewer), id }) as
        | (SummaryDbRow & { content: string; project_id: string | null; project_name: string | null })
        | undefined;
      if (!r) return null;
      return {
        ...toSummary(r),
        contentMarkdown: r.content,
        project: r.project_id !== null ? { id: r.project_id, name: r.project_name ?? '' } : null,
      };
    },

    async createDocument(viewer: Viewer, doc: NewDocument, now: string) {
      return create.immediate(viewer, doc, now);
    },

    async updateDocument(
      viewer: Viewer,
      id: string,
      change: DocumentReplacement,
      next: (previous: string | null) => string,
    ) {
      return update.immediate(viewer, id, change, next);
    },
  };
}

function docSelect(visible: string): string {
  return `SELECT d.id, d.title, d.created_at, d.updated_at, d.thread_id, d.content,
            d.project_id, p.name AS project_name
     FROM documents d LEFT JOIN projects p ON p.id = d.project_id
     WHERE d.id = @id AND ${visible}`;
}
