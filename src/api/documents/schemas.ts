import { Type } from '@sinclair/typebox';
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
} from '../common.js';

const Title = Type.String({ minLength: 1, maxLength: 200, description: '1 to 200 characters.' });
const Markdown = Type.String({
  minLength: 1,
  pattern: '\\S',
  description: 'The whole document as Markdown; must contain a non-whitespace character.',
});

const summaryFields = {
  id: Uuid,
  title: Type.String(),
  createdAt: DateTime,
  updatedAt: NullableDateTime,
  threadId: Type.Union([Type.String(), Type.Null()], { description: 'Chat thread the document was created in, if any.' }),
  url: Url,
};

export const DocumentSummary = Type.Object(summaryFields, { title: 'DocumentSummary' });

export const Document = Type.Object(
  { ...summaryFields, contentMarkdown: Type.String(), project: Type.Union([ProjectRef, Type.Null()]) },
  { title: 'Document' },
);

export const DocumentMutationResult = Type.Object(
  { id: Uuid, title: Type.String(), threadId: Type.Union([Type.String(), Type.Null()]), url: Url },
  { title: 'DocumentMutationResult' },
);

export const DocumentList = Type.Object(
  { documents: Type.Array(DocumentSummary), count: Type.Integer() },
  { title: 'DocumentList' },
);

export const listDocumentsSchema = {
  querystring: Type.Object({
    q: Type.Optional(SearchQuery('Full-text search over titles and content: every word must appear, as a word or word prefix.')),
    organizationId: Type.Optional(OrganizationId),
    projectId: Type.Optional(ProjectId),
    limit: Limit(20),
  }),
  response: responses({ 200: DocumentList }, [400, 401, 402, 429, 500]),
};

export const createDocumentBody = Type.Object({
  title: Title,
  contentMarkdown: Markdown,
  projectId: Type.Optional(ProjectId),
  organizationId: Type.Optional(OrganizationId),
});

export const createDocumentSchema = {
  body: createDocumentBody,
  response: responses({ 201: DocumentMutationResult }, [400, 401, 402, 404, 429, 500]),
};

export const getDocumentSchema = {
  params: DocumentIdParams,
  querystring: Type.Object({ organizationId: Type.Optional(OrganizationId) }),
  response: responses({ 200: Document }, [400, 401, 402, 404, 429, 500]),
};

export const updateDocumentSchema = {
  params: DocumentIdParams,
  body: Type.Object({
    contentMarkdown: Markdown,
    expectedUpdatedAt: Type.Union([DateTime, Type.Null()], {
      description: 'The `updatedAt` of the read the replacement was prepared from; `null` for a never-updated document.',
    }),
    title: Type.Optional(Title),
    organizationId: Type.Optional(OrganizationId),
  }),
  response: responses({ 200: DocumentMutationResult }, [400, 401, 402, 404, 409, 429, 500]),
};
