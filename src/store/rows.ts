import type { ChatRow, DocumentRow, DocumentSummaryRow } from './store.js';

/*
 * Rows both stores read, made into what the Store interface returns. Each
 * is built field by field: V8 copies an object with rest and spread far
 * more slowly, and lists make one for every row.
 */

/** A row's project, read as two columns: its id (null outside projects) and its name. */
const projectOf = (r: { projectId: string | null; projectName: string | null }) =>
  r.projectId === null ? null : { id: r.projectId, name: r.projectName ?? '' };

/** A document as both stores read it: its project as two columns. */
export interface DocumentColumns extends DocumentSummaryRow {
  contentMarkdown: string;
  projectId: string | null;
  projectName: string | null;
}

/** The document of its columns. */
export function documentRow(r: DocumentColumns): DocumentRow {
  return {
    id: r.id,
    title: r.title,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    threadId: r.threadId,
    contentMarkdown: r.contentMarkdown,
    project: projectOf(r),
  };
}

/** A chat as both stores read it: its project as two columns. */
export interface ChatColumns extends Omit<ChatRow, 'project'> {
  projectId: string | null;
  projectName: string | null;
}

/** The chat of its columns. */
export function chatRow(r: ChatColumns): ChatRow {
  return {
    id: r.id,
    title: r.title,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    messageCount: r.messageCount,
    project: projectOf(r),
  };
}
