import { Type } from '@sinclair/typebox';
import { DateTime, responses } from '../common.js';
import { ex } from '../examples.js';

export const Organization = Type.Object(
  { id: Type.String({ description: 'Usable as `organizationId`.' }), name: Type.String(), createdAt: DateTime },
  { title: 'Organization' },
);

export const OrganizationList = Type.Object(
  { organizations: Type.Array(Organization), count: Type.Integer() },
  { title: 'OrganizationList', examples: [{ organizations: [{ id: ex.orgId, name: 'Acme Research', createdAt: ex.createdAt }], count: 1 }] },
);

export const listOrganizationsSchema = {
  operationId: 'listOrganizations',
  summary: 'List organizations',
  description: 'The organizations (teams) the user belongs to, by name. An organization\'s `id` is used as `organizationId` elsewhere.',
  tags: ['Workspace'],
  response: responses({ 200: OrganizationList }, [400, 401, 402, 429, 500]),
};
