import { Type } from '@sinclair/typebox';
import { DateTime, Limit, NullableDateTime, OrganizationId, ProjectId, ProjectRef, responses, SearchQuery, Url, Uuid } from '../common.js';

export const Chat = Type.Object(
  {
    id: Uuid,
    title: Type.Union([Type.String(), Type.Null()]),
    createdAt: DateTime,
    updatedAt: NullableDateTime,
    messageCount: Type.Integer(),
    project: Type.Union([ProjectRef, Type.Null()]),
    url: Url,
  },
  { title: 'Chat' },
);

export const ChatList = Type.Object({ chats: Type.Array(Chat), count: Type.Integer() }, { title: 'ChatList' });

export const listChatsSchema = {
  querystring: Type.Object({
    q: Type.Optional(SearchQuery('Case-insensitive search in chat titles.')),
    organizationId: Type.Optional(OrganizationId),
    projectId: Type.Optional(ProjectId),
    limit: Limit(20),
  }),
  response: responses({ 200: ChatList }, [400, 401, 402, 429, 500]),
};
