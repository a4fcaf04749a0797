import { Conflict, NotFound } from '../errors.js';
import { searchTerms } from '../domain/search.js';
import { canonicalInstant, nextUpdatedAt } from '../domain/time.js';
import type { DocumentMutationRow, Viewer } from '../store/store.js';
import { mapMaybe, type MaybePromise } from '../maybe-promise.js';
import { RenderedJson } from './rendered-json.js';
import { documentUrlPrefix, requireVisibleProject, resolveViewer, type Caller, type ServiceDeps } from './context.js';

/** An `expectedUpdatedAt` finer than a millisecond names no stored instant and matches nothing. */
const NEVER_STORED = 'unmatchable';

/** A document of a search's page, as the API lists it. */
interface ListedDocument {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string | null;
  threadId: string | null;
  url: string;
}

/** Document ids are stored as randomUUID writes them, in lower case; a client may send one in either. */
const storedId = (id: string) => id.toLowerCase();

export function documentService(deps: ServiceDeps) {
  const { config, store, clock } = deps;
  // What documentUrl makes, the prefix made once: each url is it and the id.
  const urls = documentUrlPrefix(config);
  const mutationResult = (d: DocumentMutationRow) => ({
    id: d.id,
    title: d.title,
    threadId: d.threadId,
    url: urls + d.id,
  });

  function listIn(viewer: Viewer, q: { q?: string; projectId?: string; limit: number }): MaybePromise<RenderedJson | { documents: ListedDocument[]; count: number }> {
    if (q.q === undefined) {
      return mapMaybe(store.renderDocumentPage(viewer, { projectId: q.projectId, limit: q.limit }, urls), (body) => new RenderedJson(body));
    }
    const terms = searchTerms(q.q);
    // A query with no word in it (only punctuation or emoji) can match nothing.
    if (terms.length === 0) return { documents: [], count: 0 };
    return mapMaybe(store.listDocuments(viewer, { terms, projectId: q.projectId, limit: q.limit }), (rows) => {
      // Written out rather than spread: a spread of each row was 4 % of a list request's time.
      const documents = rows.map((d) => ({
        id: d.id,
        title: d.title,
        createdAt: d.createdAt,
        updatedAt: d.updatedAt,
        threadId: d.threadId,
        url: urls + d.id,
      }));
      return { documents, count: documents.length };
    });
  }

  return {
    /** A page of documents, or of those matching `q`; answered at once when the store answers at once. */
    list(
      caller: Caller,
      q: { q?: string; organizationId?: string; projectId?: string; limit: number },
    ): MaybePromise<RenderedJson | { documents: ListedDocument[]; count: number }> {
      const viewer = resolveViewer(caller, q.organizationId, 'invalid');
      if (q.projectId === undefined) return listIn(viewer, q);
      return requireVisibleProject(deps, viewer, q.projectId).then(() => listIn(viewer, q));
    },

    /** A document as the API shows it; answered at once when the store answers at once. */
    get(caller: Caller, id: string, organizationId: string | undefined): MaybePromise<RenderedJson> {
      const viewer = resolveViewer(caller, organizationId, 'not_found');
      return mapMaybe(store.renderDocument(viewer, storedId(id), urls), (doc) => {
        if (!doc) throw new NotFound('Document not found.');
        return new RenderedJson(doc);
      });
    },

    async create(
      caller: Caller,
      body: { title: string; contentMarkdown: string; projectId?: string; organizationId?: string },
    ) {
      const viewer = resolveViewer(caller, body.organizationId, 'not_found');
      const created = await store.createDocument(
        viewer,
        { title: body.title, contentMarkdown: body.contentMarkdown, projectId: body.projectId ?? null, threadId: null },
        new Date(clock()).toISOString(),
      );
      if (!created) throw new NotFound('Project not found in this workspace.');
      return mutationResult(created);
    },

    async update(
      caller: Caller,
      id: string,
      body: { contentMarkdown: string; expectedUpdatedAt: string | null; title?: string; organizationId?: string },
    ) {
      const viewer = resolveViewer(caller, body.organizationId, 'not_found');
      const expected =
        body.expectedUpdatedAt === null ? null : (canonicalInstant(body.expectedUpdatedAt) ?? NEVER_STORED);
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
