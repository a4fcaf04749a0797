import { Type } from '@sinclair/typebox';
import { responses, NullableString } from '../common.js';
import { ex } from '../examples.js';

export const OrganizationRef = Type.Object(
  { id: Type.String({ description: 'Organization identifier (prefix `org_`).' }), name: Type.String() },
  { title: 'OrganizationRef' },
);

export const Me = Type.Object(
  {
    id: Type.String({ description: 'User identifier (prefix `user_`).' }),
    name: NullableString(),
    email: Type.String({ format: 'email' }),
    plan: NullableString(Type.String(), {
      description: 'Price lookup key of the subscription that grants API access (the user’s own or a team’s).',
    }),
    key: Type.Object({
      name: NullableString(),
      scopes: Type.Array(Type.Union([Type.Literal('connector:read'), Type.Literal('connector:write')])),
    }),
    organizations: Type.Array(OrganizationRef),
  },
  {
    title: 'Me',
    examples: [
      {
        id: ex.userId,
        name: 'Ada Lovelace',
        email: 'ada@example.com',
        plan: 'pro_monthly',
        key: { name: 'Claude', scopes: ['connector:read', 'connector:write'] },
        organizations: [{ id: ex.orgId, name: 'Acme Research' }],
      },
    ],
  },
);

export const getMeSchema = {
  operationId: 'getMe',
  summary: 'Get the current user',
  description: 'The user the key acts as: profile, plan, the key\'s name and scopes, and the user\'s organizations. Call it first to discover organizations.',
  tags: ['Me'],
  response: responses({ 200: Me }, [400, 401, 402, 404, 429, 500]),
};
