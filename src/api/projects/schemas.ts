import { Type } from '@sinclair/typebox';
import { DateTime, Limit, OrganizationId, responses, NullableString } from '../common.js';
import { ex } from '../examples.js';

export const Project = Type.Object(
  {
    id: Type.String({ description: 'Usable as `projectId`.' }),
    name: Type.String(),
    description: NullableString(),
    createdAt: DateTime,
    isSharedWithYou: Type.Boolean({ description: 'True when another member shared the project with the user.' }),
  },
  { title: 'Project' },
);

export const ProjectList = Type.Object(
  { projects: Type.Array(Project), count: Type.Integer() },
  {
    title: 'ProjectList',
    examples: [
      {
        projects: [{ id: ex.projectId, name: 'Product launch', description: 'Everything for 1.0', createdAt: ex.createdAt, isSharedWithYou: false }],
        count: 1,
      },
    ],
  },
);

export const listProjectsSchema = {
  operationId: 'listProjects',
  summary: 'List projects',
  description:
    'The user\'s projects, newest first: personal ones and those shared with the user by default, or the organization\'s when `organizationId` is given. A project\'s `id` is used as `projectId` elsewhere.',
  tags: ['Workspace'],
  querystring: Type.Object({ organizationId: Type.Optional(OrganizationId), limit: Limit(50) }),
  response: responses({ 200: ProjectList }, [400, 401, 402, 429, 500]),
};
