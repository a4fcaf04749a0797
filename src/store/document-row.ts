import type { DocumentRow, DocumentSummaryRow } from './store.js';

/** A document as both stores read it: its project as two columns. */
export interface DocumentColumns extends DocumentSummaryRow {
  contentMarkdown: string;
  projectId: string | null;
  projectName: string | null;
}

/** The document of its columns, built field by field (V8 copies an object with rest and spread far more slowly). */
export function documentRow(r: DocumentColumns): DocumentRow {
  return {
    id: r.id,
    title: r.title,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    threadId: r.threadId,
    contentMarkdown: r.contentMarkdown,
    project: r.projectId === null ? null : { id: r.projectId, name: r.projectName ?? '' },
  };
}
