import type { RevisionRow, RevisionSummaryRow, Viewer } from '../store.js';
import type { Session } from './database.js';
import { contentVisible, viewerParams as params } from './visibility.js';

/**
 * Document history (DESIGN §7): the reads of a document's revisions, as
 * visible as the document itself, and pruning. documents.ts records each
 * revision in the statement of the change itself.
 */

const SUMMARY = 'r.number, r.created_at AS "createdAt", r.title, r.user_id AS "userId", r.key_name AS "keyName"';

/** The document's visibility and its newest revisions in one read: no row, no document; one row of nulls, no revision. */
const LIST = `SELECT ${SUMMARY} FROM documents d
  LEFT JOIN LATERAL (SELECT * FROM document_revisions r WHERE r.document_id = d.id ORDER BY r.number DESC LIMIT $4) r ON true
  WHERE d.id = $3 AND ${contentVisible('d')}
  ORDER BY r.number DESC`;

/** The same for one revision. The number is compared as a bigint: any whole number the caller sends is no revision, not an error. */
const ONE = `SELECT ${SUMMARY}, r.content AS "contentMarkdown"
  FROM documents d LEFT JOIN document_revisions r ON r.document_id = d.id AND r.number = $4::bigint
  WHERE d.id = $3 AND ${contentVisible('d')}`;

/** Every revision but the newest `keep` of its document. */
const PRUNE = `DELETE FROM document_revisions r USING (
    SELECT document_id, number, row_number() OVER (PARTITION BY document_id ORDER BY number DESC) AS place FROM document_revisions
  ) old
  WHERE r.document_id = old.document_id AND r.number = old.number AND old.place > $1`;

type Nullable<T> = { [K in keyof T]: T[K] | null };

export function revisionQueries(db: Session) {
  return {
    async listRevisions(viewer: Viewer, documentId: string, limit: number): Promise<RevisionSummaryRow[] | null> {
      const { rows } = await db.query<Nullable<RevisionSummaryRow>>(LIST, params(viewer, documentId, limit));
      if (rows.length === 0) return null;
      return rows.filter((r): r is RevisionSummaryRow => r.number !== null);
    },

    async getRevision(viewer: Viewer, documentId: string, number: number): Promise<RevisionRow | 'no_document' | 'no_revision'> {
      const row = (await db.query<Nullable<RevisionRow>>(ONE, params(viewer, documentId, number))).rows[0];
      if (row === undefined) return 'no_document';
      if (row.number === null) return 'no_revision';
      return row as RevisionRow;
    },

    async pruneRevisions(keep: number): Promise<number> {
      if (!Number.isSafeInteger(keep) || keep < 1) throw new RangeError('keep must be a whole number of at least 1');
      return (await db.query(PRUNE, [keep])).rowCount ?? 0;
    },
  };
}
