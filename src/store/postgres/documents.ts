import { newUuid } from '../../domain/ids.js';
import { canonicalInstant } from '../../domain/time.js';
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
import type { Session } from './database.js';
import { documentRow, type DocumentColumns } from '../rows.js';
import { DOCUMENTS_WITH_CONTENT } from './migrations.js';
import { contentLexemes, outsideProjectsWordSql, projectWordSql, scopeQuerySql, searchVectorSql, termsQuery, titleLexemes, workspaceWordSql } from './search.js';
import {
  contentVisible,
  namesNothing,
  NEW_CONTENT_WORKSPACE,
  outsideProjectsVisible,
  VISIBLE_PROJECT_IDS,
  viewerParams as params,
  visiblePlaces,
} from './visibility.js';

const SUMMARY = 'd.id, d.title, d.created_at AS "createdAt", d.updated_at AS "updatedAt", d.thread_id AS "threadId"';
/** DESIGN §3: coalesce(updatedAt, createdAt) newest first (sort_at), ties by id descending. */
const NEWEST_FIRST = 'ORDER BY d.sort_at DESC, d.id DESC';

/**
 * A page of every document the viewer sees: the two halves of
 * contentVisible, each read newest first from its own index and stopped at
 * the page's length (outside projects; then each visible project in turn),
 * then merged. A page reads at most `limit` rows per place, however many
 * documents the viewer sees.
 */
const LIST = `SELECT d.id, d.title, d."createdAt", d."updatedAt", d."threadId" FROM (
    (SELECT ${SUMMARY}, d.sort_at FROM documents d WHERE ${outsideProjectsVisible('d')} ${NEWEST_FIRST} LIMIT $3)
    UNION ALL
    (SELECT page.* FROM (${VISIBLE_PROJECT_IDS}) p CROSS JOIN LATERAL
       (SELECT ${SUMMARY}, d.sort_at FROM documents d WHERE d.project_id = p.id ${NEWEST_FIRST} LIMIT $3) page)
  ) d ${NEWEST_FIRST} LIMIT $3`;

/** A page of one project's documents, read newest first from the project's index. */
const LIST_PROJECT = `SELECT ${SUMMARY} FROM documents d WHERE d.project_id = $3::text AND ${contentVisible('d')} ${NEWEST_FIRST} LIMIT $4`;

/**
 * A search: the GIN index gives every document that holds the terms ($3,
 * termsQuery) and carries the scope word of one of the viewer's places
 * (visiblePlaces, scopeQuerySql), read by
 * folio_documents_matching (migration 2), and only those are sorted;
 * PostgreSQL never walks the documents newest first testing each one's
 * words, which reads every document of the place for a rare word. The rows
 * found are checked by the visibility rule as any other read. Parameters:
 * the viewer's ($1, $2), the terms ($3), the page's length ($4) and, in a
 * project, its id ($5), the one place searched.
 */
const search = (inProject: boolean) => {
  const places = inProject ? `SELECT ${projectWordSql('$5::text')} AS word` : visiblePlaces({ workspace: workspaceWordSql, outside: outsideProjectsWordSql, project: projectWordSql });
  return `SELECT ${SUMMARY} FROM folio_documents_matching($3::tsquery && ${scopeQuerySql(places)}) d
  WHERE ${contentVisible('d')}${inProject ? ' AND d.project_id = $5::text' : ''}
  ${NEWEST_FIRST} LIMIT $4`;
};
export const SEARCH = search(false);
const SEARCH_PROJECT = search(true);

const GET = `SELECT ${SUMMARY}, c.content AS "contentMarkdown", d.project_id AS "projectId", p.name AS "projectName"
  ${DOCUMENTS_WITH_CONTENT} LEFT JOIN projects p ON p.id = d.project_id
  WHERE d.id = $3 AND ${contentVisible('d')}`;

/** A creation and its revision 1, in one statement; no row when the scope or the project is not open to the viewer. */
const CREATE = `WITH doc AS (
    INSERT INTO documents (id, workspace_id, creator_id, project_id, thread_id, title, revision, created_at, title_words, search)
    SELECT $4, w.workspace, $1, $3::text, $5, $6, 1, $8, $12::text[], ${searchVectorSql('$12::text[]', '$9::text[]', 'w.workspace', '$3::text')}
    FROM (${NEW_CONTENT_WORKSPACE}) AS w (workspace) WHERE w.workspace IS NOT NULL
    RETURNING id
  ), revision AS (
    INSERT INTO document_revisions (document_id, number, created_at, title, content, user_id, key_name)
    SELECT doc.id, 1, $8, $6, $7, $10, $11 FROM doc
  )
  SELECT id FROM doc`;

/** The document's updatedAt as the viewer sees it: what an update that changed nothing found. */
const CURRENT = `SELECT d.updated_at FROM documents d WHERE d.id = $3 AND ${contentVisible('d')}`;

/**
 * Compare and replace, and the revision, in one statement: the row changes
 * only if its updatedAt is still the one expected ($8). Of two such updates
 * at once, the second waits for the first's row lock, then finds the row
 * changed (PostgreSQL checks the condition again on the row as the first
 * left it) and changes nothing. A title not given ($4, $11 null) is kept
 * with its words. The revision is numbered after the document's newest,
 * whose number the row holds and the update moves on while the row is
 * locked, so numbers never collide.
 */
const REPLACE = `WITH doc AS (
    UPDATE documents d SET title = coalesce($4::text, d.title), title_words = coalesce($11::text[], d.title_words), revision = d.revision + 1, updated_at = $6,
      search = ${searchVectorSql('coalesce($11::text[], d.title_words)', '$7::text[]', 'd.workspace_id', 'd.project_id')}
    WHERE d.id = $3 AND d.updated_at IS NOT DISTINCT FROM $8::timestamptz AND ${contentVisible('d')}
    RETURNING d.id, d.title, d.thread_id, d.updated_at, d.revision
  ), revision AS (
    INSERT INTO document_revisions (document_id, number, created_at, title, content, user_id, key_name)
    SELECT doc.id, doc.revision, $6, doc.title, $5, $9, $10 FROM doc
  )
  SELECT id, title, thread_id AS "threadId", updated_at AS "updatedAt" FROM doc`;

/** Documents: list and search, read, create, and atomic compare-and-replace. */
export function documentQueries(db: Session) {
  async function list(viewer: Viewer, query: ListDocumentsQuery): Promise<DocumentSummaryRow[]> {
    const terms = query.terms ?? [];
    const { projectId, limit } = query;
    if (namesNothing(projectId)) return [];
    if (terms.length === 0) {
      const [text, values] = projectId === undefined ? [LIST, params(viewer, limit)] : [LIST_PROJECT, params(viewer, projectId, limit)];
      return (await db.query<DocumentSummaryRow>(text, values)).rows;
    }
    const [text, values] =
      projectId === undefined ? [SEARCH, params(viewer, termsQuery(terms), limit)] : [SEARCH_PROJECT, params(viewer, termsQuery(terms), limit, projectId)];
    return (await db.query<DocumentSummaryRow>(text, values)).rows;
  }

  async function update(viewer: Viewer, id: string, change: DocumentReplacement, next: (previous: string | null) => string): Promise<UpdateOutcome> {
    const expected = change.expectedUpdatedAt;
    // An expectedUpdatedAt that is no instant as Folio writes them matches no document, and is no timestamptz to send.
    if (expected === null || canonicalInstant(expected) === expected) {
      const { title, contentMarkdown } = change;
      const author = change.author ?? null;
      // Written only where the document's updatedAt is still `expected`: the next one follows it.
      const updatedAt = next(expected);
      const titleWords = title === undefined ? null : titleLexemes(title);
      const { rows } = await db.query<DocumentMutationRow>(
        REPLACE,
        params(viewer, id, title ?? null, contentMarkdown, updatedAt, contentLexemes(contentMarkdown), expected, author?.userId ?? null, author?.keyName ?? null, titleWords),
      );
      if (rows[0] !== undefined) return { status: 'updated', document: rows[0] };
    }
    const now = (await db.query<{ updated_at: string | null }>(CURRENT, params(viewer, id))).rows[0];
    return now === undefined ? { status: 'not_found' } : { status: 'conflict', currentUpdatedAt: now.updated_at };
  }

  return {
    listDocuments: list,

    async getDocument(viewer: Viewer, id: string): Promise<DocumentRow | null> {
      const r = (await db.query<DocumentColumns>(GET, params(viewer, id))).rows[0];
      return r === undefined ? null : documentRow(r);
    },

    async createDocument(viewer: Viewer, doc: NewDocument, now: string): Promise<DocumentMutationRow | null> {
      const id = newUuid();
      const author = doc.author ?? null;
      const { rowCount } = await db.query(
        CREATE,
        params(viewer, doc.projectId, id, doc.threadId, doc.title, doc.contentMarkdown, now, contentLexemes(doc.contentMarkdown), author?.userId ?? null, author?.keyName ?? null,
          titleLexemes(doc.title)),
      );
      return rowCount === 0 ? null : { id, title: doc.title, threadId: doc.threadId, updatedAt: null };
    },

    updateDocument: update,
  };
}
