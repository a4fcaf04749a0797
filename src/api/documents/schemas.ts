import { Type } from '@sinclair/typebox';
import { NON_WHITESPACE } from '../../domain/content.js';
import {
  DateTime,
  DocumentIdParams,
  Limit,
  NullableDateTime,
  OrganizationId,
  ProjectId,
  ProjectRef,
  responses,
  SearchQuery,
  Url,
  Uuid,
  NullableString,
} from '../common.js';
import { documentUrlExample, ex } from '../examples.js';

const Title = Type.String({ minLength: 1, maxLength: 200, description: '1 to 200 characters.' });
const Markdown = Type.String({
  minLength: 1,
  pattern: NON_WHITESPACE,
  description: 'The whole document as Markdown; must contain a non-whitespace character.',
});

const summaryFields = {
  id: Uuid,
  title: Type.String(),
  createdAt: DateTime,
  updatedAt: NullableDateTime,
  threadId: NullableString(Type.String(), { description: 'Chat thread the document was created in, if any.' }),
  url: Url,
};

export const DocumentSummary = Type.Object(summaryFields, { title: 'DocumentSummary' });

const summaryExample = {
  id: ex.documentId,
  title: 'Launch plan',
  createdAt: ex.createdAt,
  updatedAt: ex.updatedAt,
  threadId: null,
  url: documentUrlExample,
};

export const Document = Type.Object(
  { ...summaryFields, contentMarkdown: Type.String(), project: Type.Union([ProjectRef, Type.Null()]) },
  {
    title: 'Document',
    examples: [
      {
        ...summaryExample,
        contentMarkdown: '# Launch plan\n\n- Freeze the API\n- Write the docs\n',
        project: { id: ex.projectId, name: 'Product launch' },
      },
    ],
  },
);

export const DocumentMutationResult = Type.Object(
  { id: Uuid, title: Type.String(), threadId: NullableString(), url: Url },
  {
    title: 'DocumentMutationResult',
    examples: [{ id: ex.documentId, title: 'Launch plan', threadId: null, url: documentUrlExample }],
  },
);

export const DocumentList = Type.Object(
  { documents: Type.Array(DocumentSummary), count: Type.Integer() },
  { title: 'DocumentList', examples: [{ documents: [summaryExample], count: 1 }] },
);

export const listDocumentsSchema = {
  operationId: 'listDocuments',
  summary: 'List or search documents',
  description:
    'The most recently updated documents the user can access, newest first, or a full-text search of titles and content when `q` is given. Summaries only, without the Markdown body.',
  tags: ['Documents'],
  querystring: Type.Object({
    q: Type.Optional(SearchQuery('Full-text search over titles and content: every word must appear, as a word or word prefix, regardless of case and accents.')),
    organizationId: Type.Optional(OrganizationId),
    projectId: Type.Optional(ProjectId),
    limit: Limit(20),
  }),
  response: responses({ 200: DocumentList }, [400, 401, 402, 429, 500]),
};

export const createDocumentBody = Type.Object(
  {
    title: Title,
    contentMarkdown: Markdown,
    projectId: Type.Optional(ProjectId),
    organizationId: Type.Optional(OrganizationId),
  },
  {
    title: 'CreateDocumentRequest',
    examples: [{ title: 'Meeting notes', contentMarkdown: '# Meeting notes\n\n- Decided to ship on Monday\n', projectId: ex.projectId }],
  },
);

export const createDocumentSchema = {
  operationId: 'createDocument',
  summary: 'Create a document',
  description:
    'Creates a document from complete Markdown, in the personal workspace, or in the given organization or project (the document then belongs to the project\'s workspace).',
  tags: ['Documents'],
  body: createDocumentBody,
  response: responses({ 201: DocumentMutationResult }, [400, 401, 402, 404, 429, 500]),
};

export const getDocumentSchema = {
  operationId: 'getDocument',
  summary: 'Read a document',
  description: 'The document with its full Markdown content. Pass `organizationId` for a document in a team workspace.',
  tags: ['Documents'],
  params: DocumentIdParams,
  querystring: Type.Object({ organizationId: Type.Optional(OrganizationId) }),
  response: responses({ 200: Document }, [400, 401, 402, 404, 429, 500]),
};

export const updateDocumentSchema = {
  operationId: 'updateDocument',
  summary: 'Replace a document\'s content',
  description:
    'Full replacement, not a diff: send the whole edited Markdown with the `updatedAt` of your read as `expectedUpdatedAt`. If the document changed since, the answer is 409 `conflict`: read it again, reapply the edit and retry.',
  tags: ['Documents'],
  params: DocumentIdParams,
  body: Type.Object({
    contentMarkdown: Markdown,
    expectedUpdatedAt: Type.Union([DateTime, Type.Null()], {
      description: 'The `updatedAt` of the read the replacement was prepared from; `null` for a never-updated document.',
    }),
    title: Type.Optional(Title),
    organizationId: Type.Optional(OrganizationId),
  }, { title: 'UpdateDocumentRequest', examples: [{ contentMarkdown: '# Launch plan\n\n- Freeze the API\n- Write the docs\n- Ship\n', expectedUpdatedAt: ex.updatedAt }] }),
  response: responses({ 200: DocumentMutationResult }, [400, 401, 402, 404, 409, 429, 500]),
};
