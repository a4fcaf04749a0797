import { Type } from '@sinclair/typebox';
import { DateTime, Limit, OrganizationId, responses } from '../common.js';

export const Project = Type.Object(
  {
    id: Type.String({ description: 'Usable as `projectId`.' }),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    createdAt: DateTime,
    isSharedWithYou: Type.Boolean({ description: 'True when another member shared the project with the user.' }),
  },
  { title: 'Project' },
);

export const ProjectList = Type.Object({ projects: Type.Array(Project), count: Type.Integer() }, { title: 'ProjectList' });

export const listProjectsSchema = {
  querystring: Type.Object({ organizationId: Type.Optional(OrganizationId), limit: Limit(50) }),
  response: responses({ 200: ProjectList }, [400, 401, 402, 429, 500]),
};
