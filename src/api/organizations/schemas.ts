import { Type } from '@sinclair/typebox';
import { DateTime, responses } from '../common.js';

export const Organization = Type.Object(
  { id: Type.String({ description: 'Usable as `organizationId`.' }), name: Type.String(), createdAt: DateTime },
  { title: 'Organization' },
);

export const OrganizationList = Type.Object(
  { organizations: Type.Array(Organization), count: Type.Integer() },
  { title: 'OrganizationList' },
);

export const listOrganizationsSchema = {
  response: responses({ 200: OrganizationList }, [400, 401, 402, 429, 500]),
};
