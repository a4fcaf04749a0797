import { Conflict, InvalidRequest, NotFound } from '../errors.js';
import { hasNonWhitespace } from '../domain/content.js';
import { applyEdits, COUNT_LIMIT, type TextEdit } from '../domain/markdown.js';
import { searchTerms } from '../domain/search.js';
import { canonicalInstant, nextUpdatedAt, toIso } from '../domain/time.js';
import type { DocumentMutationRow, DocumentRow, DocumentSummaryRow, RevisionAuthor } from '../store/store.js';
import { documentUrl, requireVisibleProject, resolveViewer, type Caller, type ServiceDeps } from './context.js';

/** An `expectedUpdatedAt` finer than a millisecond names no stored instant and matches nothing. */
const NEVER_STORED = 'unmatchable';

/**
 * How many times an edit is read, applied and written before a document
 * that keeps changing under it is reported as a conflict (DESIGN §6).
 */
export const EDIT_ATTEMPTS = 5;

/**
 * Room kept in a request, beside a document's Markdown, for the other
 * fields of a whole replacement: PATCH's expectedUpdatedAt and
 * organizationId, or update_document's JSON-RPC message around them.
 */
export const REPLACEMENT_FIELDS_BYTES = 1024;

/** The bytes a text takes in a JSON body: quoted, with `"`, `\` and control characters escaped. */
const jsonBytes = (text: string) => Buffer.byteLength(JSON.stringify(text));

/** Document ids are stored as randomUUID writes them, in lower case; a client may send one in either. */
const storedId = (id: string) => id.toLowerCase();

export function documentService(deps: ServiceDeps) {
  const { config, store, clock } = deps;
  // Responses are built field by field: V8 copies `{ ...row, url }` far more
  // slowly, and a page has up to 100 rows.
  const summaryWithUrl = ({ id, title, createdAt, updatedAt, threadId }: DocumentSummaryRow) => ({
    id,
    title,
    createdAt,
    updatedAt,
    threadId,
    url: documentUrl(config, id),
  });
  const documentWithUrl = ({ id, title, createdAt, updatedAt, threadId, contentMarkdown, project }: DocumentRow) => ({
    id,
    title,
    createdAt,
    updatedAt,
    threadId,
    contentMarkdown,
    project,
    url: documentUrl(config, id),
  });
  // `updatedAt` is for MCP's results (DESIGN §6); the REST response schemas leave it out.
  const mutationResult = ({ id, title, threadId, updatedAt }: DocumentMutationRow) => ({ id, title, threadId, updatedAt, url: documentUrl(config, id) });
  /** The author a change's revision records (DESIGN §7). */
  const authorOf = (caller: Caller): RevisionAuthor => ({ userId: caller.user.id, keyName: caller.keyName });
  const conflict = (currentUpdatedAt: string | null) =>
    new Conflict(
      `The document changed after it was read (its updatedAt is now ${currentUpdatedAt ?? 'null'}). Read it again, reapply the edit and retry.`,
    );

  const service = {
    /** The newest documents, or those matching `q`. */
    async list(caller: Caller, q: { q?: string; organizationId?: string; projectId?: string; limit: number }) {
      const viewer = resolveViewer(caller, q.organizationId, 'invalid');
      if (q.projectId !== undefined) await requireVisibleProject(deps, viewer, q.projectId);
      const terms = q.q === undefined ? [] : searchTerms(q.q);
      // A query with no word in it (only punctuation or emoji) can match nothing.
      const rows: DocumentSummaryRow[] =
        q.q !== undefined && terms.length === 0 ? [] : await store.listDocuments(viewer, { terms, projectId: q.projectId, limit: q.limit });
      const documents = rows.map(summaryWithUrl);
      return { documents, count: documents.length };
    },

    async get(caller: Caller, id: string, organizationId: string | undefined) {
      const viewer = resolveViewer(caller, organizationId, 'not_found');
      const document = await store.getDocument(viewer, storedId(id));
      if (!document) throw new NotFound('Document not found.');
      return documentWithUrl(document);
    },

    async create(caller: Caller, body: { title: string; contentMarkdown: string; projectId?: string; organizationId?: string }) {
      const viewer = resolveViewer(caller, body.organizationId, 'not_found');
      const created = await store.createDocument(
        viewer,
        { title: body.title, contentMarkdown: body.contentMarkdown, projectId: body.projectId ?? null, threadId: null, author: authorOf(caller) },
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
        { title: body.title, contentMarkdown: body.contentMarkdown, expectedUpdatedAt: expected, author: authorOf(caller) },
        (previous) => nextUpdatedAt(clock(), previous),
      );
      if (outcome.status === 'not_found') throw new NotFound('Document not found.');
      if (outcome.status === 'conflict') throw conflict(outcome.currentUpdatedAt);
      return mutationResult(outcome.document);
    },

    /**
     * Changes parts of a document: `edits` applied in order to its current
     * Markdown, then written with the optimistic check against the read
     * they were applied to. When another write lands in between, the
     * document is read again and the edits re-applied, up to EDIT_ATTEMPTS
     * times; with `expectedUpdatedAt` a changed document is a conflict at
     * once. Either way no write is ever lost.
     */
    async edit(
      caller: Caller,
      id: string,
      body: { edits: TextEdit[]; title?: string; expectedUpdatedAt?: string | null; organizationId?: string },
    ) {
      const viewer = resolveViewer(caller, body.organizationId, 'not_found');
      const pinned = body.expectedUpdatedAt === undefined ? undefined : body.expectedUpdatedAt === null ? null : (canonicalInstant(body.expectedUpdatedAt) ?? NEVER_STORED);
      for (let attempt = 1; ; attempt++) {
        const current = await store.getDocument(viewer, storedId(id));
        if (!current) throw new NotFound('Document not found.');
        if (pinned !== undefined && pinned !== current.updatedAt) throw conflict(current.updatedAt);
        const edited = applyEdits(current.contentMarkdown, body.edits);
        if (!edited.ok) {
          const where = `edits[${edited.edit}].oldText`;
          throw new InvalidRequest(
            edited.occurrences === 0
              ? `${where}: does not occur in the document; read it again and copy the text exactly.`
              : `${where}: occurs ${edited.occurrences}${edited.occurrences >= COUNT_LIMIT ? ' or more' : ''} times in the document; it must occur exactly once, so include more of the surrounding text.`,
          );
        }
        if (!hasNonWhitespace(edited.markdown)) throw new InvalidRequest('edits: they would leave the document without any non-whitespace character.');
        // No larger than a whole replacement could send back: edits alone must
        // not grow a document past what PATCH or update_document could carry,
        // where the Markdown is a JSON string (a `"` or a line break takes two bytes).
        const room = config.maxBodyBytes - REPLACEMENT_FIELDS_BYTES;
        const bytes = jsonBytes(edited.markdown);
        if (bytes > room && bytes > jsonBytes(current.contentMarkdown)) {
          throw new InvalidRequest(
            `edits: they would make the document too large to replace whole: its Markdown would take ${bytes} bytes as a JSON string, more than the ${room} a request of at most ${config.maxBodyBytes} bytes has for it.`,
          );
        }
        const outcome = await store.updateDocument(
          viewer,
          storedId(id),
          { title: body.title, contentMarkdown: edited.markdown, expectedUpdatedAt: current.updatedAt, author: authorOf(caller) },
          (previous) => nextUpdatedAt(clock(), previous),
        );
        if (outcome.status === 'updated') return mutationResult(outcome.document);
        if (outcome.status === 'not_found') throw new NotFound('Document not found.');
        if (pinned !== undefined || attempt >= EDIT_ATTEMPTS) throw conflict(outcome.currentUpdatedAt);
      }
    },

    /** A document's revisions, newest first (DESIGN §7). */
    async revisions(caller: Caller, id: string, q: { organizationId?: string; limit: number }) {
      const viewer = resolveViewer(caller, q.organizationId, 'not_found');
      const revisions = await store.listRevisions(viewer, storedId(id), q.limit);
      if (revisions === null) throw new NotFound('Document not found.');
      return { revisions, count: revisions.length };
    },

    async revision(caller: Caller, id: string, number: number, organizationId: string | undefined) {
      const viewer = resolveViewer(caller, organizationId, 'not_found');
      const revision = await store.getRevision(viewer, storedId(id), number);
      if (revision === 'no_document') throw new NotFound('Document not found.');
      if (revision === 'no_revision') throw new NotFound(`The document has no revision ${number}.`);
      return revision;
    },

    /**
     * Makes a revision's title and content current again, as a new
     * revision, with the optimistic check of `update` (DESIGN §7).
     */
    async restore(caller: Caller, id: string, number: number, body: { expectedUpdatedAt: string | null; organizationId?: string }) {
      const revision = await service.revision(caller, id, number, body.organizationId);
      return service.update(caller, id, { ...body, title: revision.title, contentMarkdown: revision.contentMarkdown });
    },
  };
  return service;
}
