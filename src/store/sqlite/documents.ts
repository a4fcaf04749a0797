import { newUuid } from '../../domain/ids.js';
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
import { documentRow, type DocumentColumns } from '../rows.js';
import { fewMatches, ftsMatch, outsideProjectsToken, projectToken, scopeTokens, wholeWords, withinScope, workspaceToken } from './search.js';
import { contentVisible, NEW_CONTENT_WORKSPACE, VISIBLE_PROJECT_IDS, viewerParams as params } from './visibility.js';
import { DOCUMENTS_WITH_CONTENT } from './migrations.js';
import { revisionWriter } from './revisions.js';
import type { StoreWrites } from './writes.js';

/**
 * A row of the walk, as an array in the column order of its SELECT (better-sqlite3's
 * raw mode, which makes no object of each row): the summary, then its sort
 * time and high-water time (see migrations.ts).
 */
type WalkedRow = [id: string, title: string, createdAt: string, updatedAt: string | null, threadId: string | null, sortAt: string, highWaterAt: string];
const SORT_AT = 5;
const HIGH_WATER_AT = 6;

const SUMMARY = 'd.id, d.title, d.created_at AS createdAt, d.updated_at AS updatedAt, d.thread_id AS threadId';

/** DESIGN §3: coalesce(updatedAt, createdAt) newest first, ties by id (descending). */
const newestFirst = (a: WalkedRow, b: WalkedRow) =>
  a[SORT_AT] !== b[SORT_AT] ? (a[SORT_AT] < b[SORT_AT] ? 1 : -1) : a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0;

const summary = ([id, title, createdAt, updatedAt, threadId]: WalkedRow): DocumentSummaryRow => ({ id, title, createdAt, updatedAt, threadId });

/** Documents: list and search, read, create, and atomic compare-and-replace. */
export function documentQueries(db: Db, writes: StoreWrites) {
  const { index, write } = writes;
  const whole = wholeWords(db);
  const few = fewMatches(db);

  /**
   * Lists and searches walk the search index newest write first: its rowid
   * is -seq, and every write gives its document the next seq. The match is
   * restricted to the viewer's scope tokens (where the content it may see
   * lives), with the search terms if any, and every row is checked against
   * the visibility rule. A search whose words are in few documents
   * (fewMatches) walks their matches alone: the visibility rule, checked on
   * every row either way, is then all that decides what the viewer gets.
   */
  const walkStatement = (project: boolean) =>
    db.prepare(
      `SELECT ${SUMMARY}, d.sort_at, d.high_water_at
       FROM documents_fts f JOIN documents d ON d.seq = -f.rowid
       WHERE f.documents_fts MATCH @match AND ${contentVisible('d')}${project ? ' AND d.project_id = @pid' : ''}
       ORDER BY f.rowid`,
    ).raw();
  const walk = { all: walkStatement(false), project: walkStatement(true) };
  // The projects the viewer sees beyond the personal workspace's own (which its workspace token covers).
  const visibleProjects = db.prepare(`${VISIBLE_PROJECT_IDS} AND vp.workspace_id <> @uid`).pluck();
  const getStmt = db.prepare(
    `SELECT ${SUMMARY}, c.content AS contentMarkdown, d.project_id AS projectId, p.name AS projectName
     ${DOCUMENTS_WITH_CONTENT} LEFT JOIN projects p ON p.id = d.project_id
     WHERE d.id = @id AND ${contentVisible('d')}`,
  );
  const lockStmt = db.prepare(
    `SELECT d.seq, d.updated_at, d.title, d.workspace_id, d.project_id, d.revision FROM documents d
     WHERE d.id = @id AND ${contentVisible('d')}`,
  );
  const newContentWorkspace = db.prepare(NEW_CONTENT_WORKSPACE).pluck();
  const lastWritten = db.prepare('SELECT seq, high_water_at FROM documents ORDER BY seq DESC LIMIT 1');
  const insertStmt = db.prepare(
    `INSERT INTO documents (seq, id, workspace_id, creator_id, project_id, thread_id, title, created_at, sort_at, high_water_at, revision)
     VALUES (@seq, @id, @workspace, @uid, @pid, @thread, @title, @now, @now, @highWater, 1)`,
  );
  // A document's Markdown is its newest revision's (migration 19).
  const contentOf = db.prepare('SELECT content FROM document_revisions WHERE document_id = ? AND number = ?').pluck();
  const moveStmt = db.prepare(
    `UPDATE documents SET seq = @next, title = @title, updated_at = @updatedAt, sort_at = @updatedAt, high_water_at = @highWater, revision = @revision
     WHERE seq = @seq RETURNING id, title, thread_id AS threadId, updated_at AS updatedAt`,
  );
  const revisions = revisionWriter(db);

  /**
   * Where the viewer's content may be, as scope tokens: in the personal
   * scope the user's whole workspace and the projects shared from others';
   * in a team's, its content outside projects and the projects the viewer sees.
   */
  function viewerTokens(viewer: Viewer): string[] {
    const own = viewer.orgId === null ? workspaceToken(viewer.userId) : outsideProjectsToken(viewer.orgId);
    const projects = visibleProjects.all(params(viewer, {})) as string[];
    return [own, ...projects.map(projectToken)];
  }

  /** The scope tokens of a list: the viewer's, or the project's. */
  const scopeOf = (viewer: Viewer, query: ListDocumentsQuery): string[] =>
    query.projectId === undefined ? viewerTokens(viewer) : [projectToken(query.projectId)];

  /** The seq and high-water time of a document written now with this sort time (see migrations.ts). */
  function nextPlace(sortAt: string): { seq: number; highWater: string } {
    const last = lastWritten.get() as { seq: number; high_water_at: string } | undefined;
    if (!last) return { seq: 1, highWater: sortAt };
    return { seq: last.seq + 1, highWater: last.high_water_at > sortAt ? last.high_water_at : sortAt };
  }

  /**
   * The walk keeps every row until no row still to come can be among the
   * first `limit`: once `limit` rows are in, it stops at a row whose
   * high-water time is older than the limit-th newest sort time seen. Ties
   * and a clock that went back are then put right by sorting exactly as
   * DESIGN §3 says. One read transaction: the vocabulary wholeWords reads is
   * the index searched.
   */
  const list = db.transaction((viewer: Viewer, query: ListDocumentsQuery): DocumentSummaryRow[] => {
    const terms = query.terms ?? [];
    let match: string;
    if (terms.length === 0) match = withinScope(null, scopeOf(viewer, query));
    else {
      const wholeTerms = whole(terms);
      const termsMatch = ftsMatch(terms, wholeTerms);
      match = few(terms, wholeTerms) ? termsMatch : withinScope(termsMatch, scopeOf(viewer, query));
    }
    const statement = query.projectId === undefined ? walk.all : walk.project;
    const rows: WalkedRow[] = [];
    // The `limit` newest sort times seen, newest first.
    const newest: string[] = [];
    const limit = query.limit;
    for (const r of statement.iterate(params(viewer, { match, pid: query.projectId ?? null })) as Iterable<WalkedRow>) {
      rows.push(r);
      const sortAt = r[SORT_AT];
      if (newest.length < limit || sortAt > newest[limit - 1]!) {
        let i = Math.min(newest.length, limit - 1);
        while (i > 0 && newest[i - 1]! < sortAt) i--;
        newest.splice(i, 0, sortAt);
        if (newest.length > limit) newest.pop();
      }
      if (newest.length === limit && r[HIGH_WATER_AT] < newest[limit - 1]!) break;
    }
    return rows.sort(newestFirst).slice(0, limit).map(summary);
  });

  const create = (viewer: Viewer, doc: NewDocument, now: string): DocumentMutationRow | null => {
    const workspace = newContentWorkspace.get(params(viewer, { pid: doc.projectId })) as string | null;
    if (workspace === null) return null;
    const id = newUuid();
    const { seq, highWater } = nextPlace(now);
    insertStmt.run({ seq, highWater, id, workspace, uid: viewer.userId, pid: doc.projectId, thread: doc.threadId, title: doc.title, now });
    index.insert({ seq, title: doc.title, content: doc.contentMarkdown, scope: scopeTokens(workspace, doc.projectId) });
    revisions.record(id, 1, now, doc.title, doc.contentMarkdown, doc.author);
    return { id, title: doc.title, threadId: doc.threadId, updatedAt: null };
  };

  const update = (viewer: Viewer, id: string, change: DocumentReplacement, next: (previous: string | null) => string): UpdateOutcome => {
    const row = lockStmt.get(params(viewer, { id })) as
      | { seq: number; updated_at: string | null; title: string; workspace_id: string; project_id: string | null; revision: number }
      | undefined;
    if (!row) return { status: 'not_found' };
    if (row.updated_at !== change.expectedUpdatedAt) return { status: 'conflict', currentUpdatedAt: row.updated_at };
    const updatedAt = next(row.updated_at);
    const title = change.title ?? row.title;
    // A new seq puts the document first in the walk (see migrations.ts).
    const { seq, highWater } = nextPlace(updatedAt);
    const revision = row.revision + 1;
    const document = moveStmt.get({ seq: row.seq, next: seq, title, updatedAt, highWater, revision }) as DocumentMutationRow;
    const scope = scopeTokens(row.workspace_id, row.project_id);
    index.remove({ seq: row.seq, title: row.title, content: contentOf.get(id, row.revision) as string, scope });
    index.insert({ seq, title, content: change.contentMarkdown, scope });
    revisions.record(id, revision, updatedAt, title, change.contentMarkdown, change.author);
    return { status: 'updated', document };
  };

  return {
    async listDocuments(viewer: Viewer, query: ListDocumentsQuery): Promise<DocumentSummaryRow[]> {
      return list(viewer, query);
    },

    async getDocument(viewer: Viewer, id: string): Promise<DocumentRow | null> {
      const r = getStmt.get(params(viewer, { id })) as DocumentColumns | undefined;
      return r === undefined ? null : documentRow(r);
    },

    createDocument(viewer: Viewer, doc: NewDocument, now: string): Promise<DocumentMutationRow | null> {
      return write(() => create(viewer, doc, now));
    },

    updateDocument(viewer: Viewer, id: string, change: DocumentReplacement, next: (previous: string | null) => string): Promise<UpdateOutcome> {
      return write(() => update(viewer, id, change, next));
    },
  };
}
