/** Example values for the OpenAPI document: one consistent little workspace. */
export const ex = {
  userId: 'user_7Kq2mXp9LrT4vWz1Nc8B',
  orgId: 'org_4fQ2kL9xTz8Wb1Nc7Rv3',
  projectId: 'prj_9sD3fG7hJ2kL5mN8pQ1r',
  documentId: '6f1c1a52-3b0e-4c3e-9a55-2b8f8d1f0c11',
  chatId: 'c2b7e0d4-8a1f-4e6b-9c3d-5f2a1b0e9d87',
  createdAt: '2026-05-04T09:30:00.000Z',
  updatedAt: '2026-05-06T14:12:45.120Z',
  base: 'https://folio.example.com',
};

export const documentUrlExample = `${ex.base}/documents/${ex.documentId}`;
export const chatUrlExample = `${ex.base}/chats/${ex.chatId}`;
