import { Conflict, NotFound } from '../errors.js';
import { searchTerms } from '../domain/search.js';
import { canonicalInstant, nextUpdatedAt, toIso } from '../domain/time.js';
import type { DocumentMutationRow, DocumentSummaryRow } from '../store/store.js';
import { documentUrl, requireVisibleProject, resolveViewer, type Caller, type ServiceDeps } from './context.js';

/** An `expectedUpdatedAt` finer than a millisecond names no stored instant and matches nothing. */
const NEVER_STORED = 'unmatchable';

/** Document ids are stored as randomUUID writes them, in lower case; a client may send one in either. */
const storedId = (id: string) => id.toLowerCase();

export function documentService(deps: ServiceDeps) {
  const { config, store, clock } = deps;
  const withUrl = <T extends { id: string }>(d: T) => ({ ...d, url: documentUrl(config, d.id) });
  const mutationResult = ({ id, title, threadId }: DocumentMutationRow) => withUrl({ id, title, threadId });

  return {
    /** The newest documents, or those matching `q`. */
    async list(caller: Caller, q: { q?: string; organizationId?: string; projectId?: string; limit: number }) {
      const viewer = resolveViewer(caller, q.organizationId, 'invalid');
      if (q.projectId !== undefined) await requireVisibleProject(deps, viewer, q.projectId);
      const terms = q.q === undefined ? [] : searchTerms(q.q);
      // A query with no word in it (only punctuation or emoji) can match nothing.
      const rows: DocumentSummaryRow[] =
        q.q !== undefined && terms.length === 0 ? [] : await store.listDocuments(viewer, { terms, projectId: q.projectId, limit: q.limit });
      const documents = rows.map(withUrl);
      return { documents, count: documents.length };
    },

    async get(caller: Caller, id: string, organizationId: string | undefined) {
      const viewer = resolveViewer(caller, organizationId, 'not_found');
      const document = await store.getDocument(viewer, storedId(id));
      if (!document) throw new NotFound('Document not found.');
      return withUrl(document);
    },

    async create(caller: Caller, body: { title: string; contentMarkdown: string; projectId?: string; organizationId?: string }) {
      const viewer = resolveViewer(caller, body.organizationId, 'not_found');
      const created = await store.createDocument(
        viewer,
        { title: body.title, contentMarkdown: body.contentMarkdown, projectId: body.projectId ?? null, threadId: null },
        toIso(clock()),
      );
      if (!created) throw new NotFound('Project not found in this workspace.');
      return mutationResult(created);
    },

    async update(caller: Caller, id: string, body: { contentMarkdown: string; expectedUpdatedAt: string | null; title?: string; organizationId?: string }) {
      const viewer = resolveViewer(caller, body.organizationId, 'not_found');
      const expected = body.expectedUpdatedAt === null ? null : (canonicalInstant(body.expectedUpdatedAt) ?? NEVER_STORED);
      const outcome = await store.updateDocument(
        viewer,
        storedId(id),
        { title: body.title, contentMarkdown: body.contentMarkdown, expectedUpdatedAt: expected },
        (previous) => nextUpdatedAt(clock(), previous),
      );
      if (outcome.status === 'not_found') throw new NotFound('Document not found.');
      if (outcome.status === 'conflict') {
        throw new Conflict(
          `The document changed after it was read (its updatedAt is now ${outcome.currentUpdatedAt ?? 'null'}). Read it again, reapply the edit and retry.`,
        );
      }
      return mutationResult(outcome.document);
    },
  };
}
