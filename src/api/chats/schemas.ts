import { Type } from '@sinclair/typebox';
import { DateTime, Limit, NullableDateTime, OrganizationId, ProjectId, ProjectRef, responses, SearchQuery, Url, Uuid, NullableString } from '../common.js';
import { chatUrlExample, ex } from '../examples.js';

export const Chat = Type.Object(
  {
    id: Uuid,
    title: NullableString(),
    createdAt: DateTime,
    updatedAt: NullableDateTime,
    messageCount: Type.Integer(),
    project: Type.Union([ProjectRef, Type.Null()]),
    url: Url,
  },
  { title: 'Chat' },
);

export const ChatList = Type.Object(
  { chats: Type.Array(Chat), count: Type.Integer() },
  {
    title: 'ChatList',
    examples: [
      {
        chats: [
          {
            id: ex.chatId,
            title: 'Planning the launch',
            createdAt: ex.createdAt,
            updatedAt: ex.updatedAt,
            messageCount: 24,
            project: { id: ex.projectId, name: 'Product launch' },
            url: chatUrlExample,
          },
        ],
        count: 1,
      },
    ],
  },
);

export const listChatsSchema = {
  operationId: 'listChats',
  summary: 'List or search chats',
  description: 'The user\'s chat threads, newest first, or those whose title contains `q` (case-insensitive).',
  tags: ['Workspace'],
  querystring: Type.Object({
    q: Type.Optional(SearchQuery('Case-insensitive search in chat titles.')),
    organizationId: Type.Optional(OrganizationId),
    projectId: Type.Optional(ProjectId),
    limit: Limit(20),
  }),
  response: responses({ 200: ChatList }, [400, 401, 402, 429, 500]),
};
