import { Type, type TSchema } from '@sinclair/typebox';
import { DateTime, DocumentIdParams, NullableDateTime, OrganizationId, SearchQuery } from '../api/common.js';
import { ChatList, listChatsSchema } from '../api/chats/schemas.js';
import { createDocumentBody, Document, DocumentList, DocumentMutationResult, listDocumentsSchema, updateDocumentSchema } from '../api/documents/schemas.js';
import { Me } from '../api/me/schemas.js';
import { OrganizationList } from '../api/organizations/schemas.js';
import { listProjectsSchema, ProjectList } from '../api/projects/schemas.js';
import { listTemplatesSchema, TemplateList } from '../api/templates/schemas.js';
import { listRevisionsSchema, restoreRevisionSchema, Revision, RevisionList, RevisionParams } from '../api/revisions/schemas.js';

/**
 * The MCP tools' arguments and results, built from the REST API's schemas
 * (DESIGN §6): the same fields carry the same bounds, and a result has the
 * shape of the REST response it stands for. A field with a default is
 * optional; validation fills the default in before a tool runs.
 */

const documentQuery = listDocumentsSchema.querystring.properties;
const chatQuery = listChatsSchema.querystring.properties;
const replacement = updateDocumentSchema.body.properties;
const documentId = DocumentIdParams.properties.id;
const optionalOrganization = Type.Optional(OrganizationId);
const lineNumber = (description: string) => Type.Optional(Type.Integer({ minimum: 1, description }));

export const noArguments = Type.Object({});

export const searchDocumentsArgs = Type.Object({
  query: Type.Optional(
    SearchQuery(
      'Words to find in titles and content: every word must appear, as a word or the start of one, regardless of case and accents. Without it, the newest documents.',
    ),
  ),
  organizationId: documentQuery.organizationId,
  projectId: documentQuery.projectId,
  limit: Type.Optional(documentQuery.limit),
});

export const getDocumentArgs = Type.Object({
  id: documentId,
  organizationId: optionalOrganization,
  startLine: lineNumber('First line to read (1-based). With endLine, reads part of a long document; see lineCount and headings.'),
  endLine: lineNumber('Last line to read (1-based, inclusive); past the end reads to the last line.'),
});

export const listProjectsArgs = Type.Object({
  organizationId: listProjectsSchema.querystring.properties.organizationId,
  limit: Type.Optional(listProjectsSchema.querystring.properties.limit),
});

export const listTemplatesArgs = Type.Object({
  organizationId: listTemplatesSchema.querystring.properties.organizationId,
  includeSystem: Type.Optional(Type.Boolean({ default: true, description: 'Include the built-in templates (listed first); default true.' })),
  limit: Type.Optional(listTemplatesSchema.querystring.properties.limit),
});

export const listChatsArgs = Type.Object({
  query: chatQuery.q,
  organizationId: chatQuery.organizationId,
  projectId: chatQuery.projectId,
  limit: Type.Optional(chatQuery.limit),
});

export const listRevisionsArgs = Type.Object({
  id: documentId,
  organizationId: optionalOrganization,
  limit: Type.Optional(listRevisionsSchema.querystring.properties.limit),
});

export const getRevisionArgs = Type.Object({ id: documentId, number: RevisionParams.properties.number, organizationId: optionalOrganization });

export const restoreRevisionArgs = Type.Object({
  id: documentId,
  number: RevisionParams.properties.number,
  expectedUpdatedAt: restoreRevisionSchema.body.properties.expectedUpdatedAt,
  organizationId: optionalOrganization,
});

export const createDocumentArgs = createDocumentBody;

export const updateDocumentArgs = Type.Object({
  id: documentId,
  contentMarkdown: replacement.contentMarkdown,
  expectedUpdatedAt: replacement.expectedUpdatedAt,
  title: replacement.title,
  organizationId: replacement.organizationId,
});

export const editDocumentArgs = Type.Object({
  id: documentId,
  organizationId: optionalOrganization,
  edits: Type.Array(
    Type.Object({
      oldText: Type.String({ minLength: 1, description: 'Text copied exactly from the document; it must occur there exactly once.' }),
      newText: Type.String({ description: 'What replaces it; empty to delete it.' }),
    }),
    { minItems: 1, maxItems: 100, description: 'Applied in order, each to the text the previous ones left.' },
  ),
  title: Type.Optional(createDocumentBody.properties.title),
  expectedUpdatedAt: Type.Optional(
    Type.Union([DateTime, Type.Null()], {
      description: 'Only if the edit must not apply to a newer version: the updatedAt of your read (null if never updated). Without it, edits are re-applied to the newest version.',
    }),
  ),
});

const Heading = Type.Object({ line: Type.Integer(), level: Type.Integer({ minimum: 1, maximum: 6 }), text: Type.String() });

export const DocumentRead = Type.Object(
  {
    ...Document.properties,
    contentMarkdown: Type.String({ description: 'The whole Markdown, or the lines from startLine to endLine when a range was asked for.' }),
    lineCount: Type.Integer({ description: 'Lines in the whole document.' }),
    headings: Type.Array(Heading, {
      description:
        'The `#` headings that begin a line in the whole document (outside code and HTML blocks), with their line numbers. With more than 1000 headings, only the top levels that fit in 1000 together, or the first 1000 of the top level when it alone has more (headingCount counts them all).',
    }),
    headingCount: Type.Integer({ description: 'Headings in the whole document, listed or not.' }),
    startLine: Type.Integer(),
    endLine: Type.Integer(),
  },
  { title: 'DocumentRead' },
);

export const DocumentWritten = Type.Object(
  {
    ...DocumentMutationResult.properties,
    updatedAt: Type.Unsafe<string | null>({ ...strip(NullableDateTime), description: 'Pass as expectedUpdatedAt to change it again.' }),
  },
  { title: 'DocumentWritten' },
);

export { ChatList, DocumentList, Me, OrganizationList, ProjectList, Revision, RevisionList, TemplateList };

/** A schema's JSON Schema keywords, without TypeBox's own symbol keys. */
export function strip(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}
