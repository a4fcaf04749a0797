import { Type } from '@sinclair/typebox';
import { Limit, OrganizationId, responses } from '../common.js';

export const Template = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    isSystem: Type.Boolean({ description: 'True for built-in templates.' }),
    isDefault: Type.Boolean(),
  },
  { title: 'Template' },
);

export const TemplateList = Type.Object({ templates: Type.Array(Template), count: Type.Integer() }, { title: 'TemplateList' });

export const listTemplatesSchema = {
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
