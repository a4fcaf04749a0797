import { Type } from '@sinclair/typebox';
import { Limit, OrganizationId, responses, NullableString } from '../common.js';

export const Template = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    description: NullableString(),
    isSystem: Type.Boolean({ description: 'True for built-in templates.' }),
    isDefault: Type.Boolean(),
  },
  { title: 'Template' },
);

export const TemplateList = Type.Object(
  { templates: Type.Array(Template), count: Type.Integer() },
  {
    title: 'TemplateList',
    examples: [
      {
        templates: [
          { id: 1, title: 'Meeting notes', description: 'Attendees, agenda, decisions', isSystem: true, isDefault: true },
          { id: 42, title: 'Weekly review', description: null, isSystem: false, isDefault: false },
        ],
        count: 2,
      },
    ],
  },
);

export const listTemplatesSchema = {
  operationId: 'listTemplates',
  summary: 'List document templates',
  description: 'Templates available in the workspace, built-in ones first unless `includeSystem` is `false`, then newest first.',
  tags: ['Workspace'],
  querystring: Type.Object({
    organizationId: Type.Optional(OrganizationId),
    includeSystem: Type.Union([Type.Literal('true'), Type.Literal('false')], {
      default: 'true',
      description: '`true` or `false`; default `true`.',
    }),
    limit: Limit(50),
  }),
  response: responses({ 200: TemplateList }, [400, 401, 402, 429, 500]),
};
