import type { RevisionAuthor, RevisionRow, RevisionSummaryRow, Viewer } from '../store.js';
import type { Db } from './database.js';
import { contentVisible, viewerParams as params } from './visibility.js';
import type { StoreWrites } from './writes.js';

const SUMMARY = 'r.number, r.created_at AS createdAt, r.title, r.user_id AS userId, r.key_name AS keyName';

/**
 * Document history (DESIGN §7): the revision a change records, written by
 * documents.ts inside the change's own transaction, and the reads of a
 * document's revisions, as visible as the document itself.
 */
export function revisionWriter(db: Db) {
  const insert = db.prepare(
    `INSERT INTO document_revisions (document_id, number, created_at, title, content, user_id, key_name)
     VALUES (@documentId, @number, @createdAt, @title, @content, @userId, @keyName)`,
  );
  return {
    /**
     * Records the state a change of the document set at `createdAt`, as
     * revision `number`: the one the document's row now names (its
     * `revision`), whose Markdown is the document's (migration 19).
     */
    record(documentId: string, number: number, createdAt: string, title: string, content: string, author: RevisionAuthor | null | undefined): void {
      insert.run({ documentId, number, createdAt, title, content, userId: author?.userId ?? null, keyName: author?.keyName ?? null });
    },
  };
}

export function revisionQueries(db: Db, writes: StoreWrites) {
  const visible = db.prepare(`SELECT 1 FROM documents d WHERE d.id = @id AND ${contentVisible('d')}`).pluck();
  const list = db.prepare(`SELECT ${SUMMARY} FROM document_revisions r WHERE r.document_id = @id ORDER BY r.number DESC LIMIT @limit`);
  // The document's visibility and the revision in one read: no row, no document; a row of nulls, no such revision.
  const one = db.prepare(
    `SELECT ${SUMMARY}, r.content AS contentMarkdown
     FROM documents d LEFT JOIN document_revisions r ON r.document_id = d.id AND r.number = @number
     WHERE d.id = @id AND ${contentVisible('d')}`,
  );
  const listVisible = db.transaction((viewer: Viewer, id: string, limit: number) =>
    visible.get(params(viewer, { id })) === undefined ? null : (list.all({ id, limit }) as RevisionSummaryRow[]),
  );
  // Every revision but the newest `keep` of its document.
  const prune = db.prepare(
    `DELETE FROM document_revisions WHERE rowid IN (
       SELECT rowid FROM (
         SELECT rowid, row_number() OVER (PARTITION BY document_id ORDER BY number DESC) AS place FROM document_revisions
       ) WHERE place > @keep
     )`,
  );

  return {
    async listRevisions(viewer: Viewer, documentId: string, limit: number): Promise<RevisionSummaryRow[] | null> {
      return listVisible(viewer, documentId, limit);
    },

    async getRevision(viewer: Viewer, documentId: string, number: number): Promise<RevisionRow | 'no_document' | 'no_revision'> {
      const row = one.get(params(viewer, { id: documentId, number })) as (Omit<RevisionRow, 'number'> & { number: number | null }) | undefined;
      if (row === undefined) return 'no_document';
      if (row.number === null) return 'no_revision';
      return row as RevisionRow;
    },

    async pruneRevisions(keep: number): Promise<number> {
      if (!Number.isSafeInteger(keep) || keep < 1) throw new RangeError('keep must be a whole number of at least 1');
      return writes.write(() => prune.run({ keep }).changes);
    },
  };
}
