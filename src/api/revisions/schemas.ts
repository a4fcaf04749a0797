import { Type } from '@sinclair/typebox';
import { DateTime, DocumentIdParams, Limit, NullableString, OrganizationId, responses } from '../common.js';
import { DocumentMutationResult } from '../documents/schemas.js';
import { ex } from '../examples.js';

/** Document history (DESIGN §7): a document's revisions, one of them, and a restore. */

const summaryFields = {
  number: Type.Integer({ minimum: 1, description: '1 for the creation, then 2, 3, … for each change.' }),
  createdAt: Type.String({ ...DateTime, description: 'When the change was made: the createdAt or updatedAt it set.' }),
  title: Type.String(),
  userId: NullableString(Type.String(), { description: 'The user whose key made the change; null for the command line\'s changes and for the state history began with.' }),
  keyName: NullableString(Type.String(), { description: 'The name of that key, if it had one.' }),
};

const summaryExample = { number: 3, createdAt: ex.updatedAt, title: 'Launch plan', userId: ex.userId, keyName: 'Claude' };

export const RevisionSummary = Type.Object(summaryFields, { title: 'RevisionSummary' });

export const Revision = Type.Object(
  { ...summaryFields, contentMarkdown: Type.String({ description: 'The whole document as it was.' }) },
  { title: 'Revision', examples: [{ ...summaryExample, contentMarkdown: '# Launch plan\n\n- Freeze the API\n- Write the docs\n' }] },
);

export const RevisionList = Type.Object(
  { revisions: Type.Array(RevisionSummary), count: Type.Integer() },
  { title: 'RevisionList', examples: [{ revisions: [summaryExample, { ...summaryExample, number: 2, createdAt: '2026-05-05T08:00:00.000Z', keyName: null }], count: 2 }] },
);

export const RevisionParams = Type.Object({
  id: DocumentIdParams.properties.id,
  number: Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Revision number, as listed by `GET /documents/{id}/revisions`.', examples: [2] }),
});

const workspaceQuery = Type.Object({ organizationId: Type.Optional(OrganizationId) });

export const listRevisionsSchema = {
  operationId: 'listRevisions',
  summary: 'List a document\'s revisions',
  description:
    'Every recorded state of the document, newest first: one for its creation and one for each update, edit or restore, with who made it. Without the Markdown; read one with `GET /documents/{id}/revisions/{number}`.',
  tags: ['History'],
  params: DocumentIdParams,
  querystring: Type.Object({ organizationId: Type.Optional(OrganizationId), limit: Limit(20) }),
  response: responses({ 200: RevisionList }, [400, 401, 402, 404, 429, 500]),
};

export const getRevisionSchema = {
  operationId: 'getRevision',
  summary: 'Read a revision',
  description: 'One recorded state of the document, with its whole Markdown.',
  tags: ['History'],
  params: RevisionParams,
  querystring: workspaceQuery,
  response: responses({ 200: Revision }, [400, 401, 402, 404, 429, 500]),
};

export const restoreRevisionSchema = {
  operationId: 'restoreRevision',
  summary: 'Restore a revision',
  description:
    'Makes the revision\'s title and content the document\'s current ones, as a new revision; nothing is lost. Send the `updatedAt` of your read of the document as `expectedUpdatedAt`: if the document changed since, the answer is 409 `conflict`.',
  tags: ['History'],
  params: RevisionParams,
  body: Type.Object(
    {
      expectedUpdatedAt: Type.Union([DateTime, Type.Null()], {
        description: 'The document\'s `updatedAt` as you last read it; `null` for a never-updated document.',
      }),
      organizationId: Type.Optional(OrganizationId),
    },
    { title: 'RestoreRevisionRequest', examples: [{ expectedUpdatedAt: ex.updatedAt }] },
  ),
  response: responses({ 200: DocumentMutationResult }, [400, 401, 402, 404, 409, 429, 500]),
};
