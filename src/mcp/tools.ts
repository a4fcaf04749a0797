import type { Static, TSchema } from '@sinclair/typebox';
import type { ToolAnnotations } from '@modelcontextprotocol/server';
import type { Services } from '../api/services.js';
import { readLines } from '../domain/markdown.js';
import { InvalidRequest } from '../errors.js';
import type { Caller } from '../services/context.js';
import * as S from './schemas.js';

/** One MCP tool: what an agent is told about it, and the service call it stands for. */
export interface Tool<I extends TSchema = TSchema, O extends TSchema = TSchema> {
  name: string;
  title: string;
  description: string;
  /** Write tools are listed to, counted for and callable by write keys only. */
  write: boolean;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /** Runs with arguments that passed `input`, its defaults filled in (so a `limit` is always there). */
  run(caller: Caller, args: Static<I>): Promise<Static<O>>;
  /** Text that goes with the JSON result, for agents that read text blocks only. */
  text?(result: Static<O>): { json: unknown; extra?: string };
}

const tool = <I extends TSchema, O extends TSchema>(t: Tool<I, O>) => t as unknown as Tool;

const READ: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
const CHANGE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

/** Folio's tools (DESIGN §6), in the order they are listed. */
export function folioTools(services: Services): Tool[] {
  const { documents, workspace } = services;
  return [
    tool({
      name: 'get_me',
      title: 'Who am I',
      description:
        'The user this key acts for: name, e-mail, plan, the key\'s scopes, and the organizations (team workspaces) the user belongs to. Call it first to learn the organization ids that other tools take as organizationId.',
      write: false,
      input: S.noArguments,
      output: S.Me,
      annotations: READ,
      run: async (caller) => workspace.me(caller),
    }),
    tool({
      name: 'search_documents',
      title: 'Search documents',
      description:
        'Finds documents by words in their title or content, newest first, or lists the newest documents when query is left out. Returns summaries (id, title, dates, url) without content; read one with get_document. Searches the personal workspace, or a team workspace with organizationId.',
      write: false,
      input: S.searchDocumentsArgs,
      output: S.DocumentList,
      annotations: READ,
      run: (caller, { query, ...rest }) => documents.list(caller, { ...rest, q: query, limit: rest.limit! }),
    }),
    tool({
      name: 'get_document',
      title: 'Read a document',
      description:
        'A document with its Markdown, its lineCount and its headings (with line numbers). For a long document, read the headings first and then only the section you need with startLine and endLine. Pass organizationId for a document in a team workspace.',
      write: false,
      input: S.getDocumentArgs,
      output: S.DocumentRead,
      annotations: READ,
      run: async (caller, { id, organizationId, startLine, endLine }) => {
        const document = await documents.get(caller, id, organizationId);
        const read = readLines(document.contentMarkdown, { startLine, endLine });
        if (!read.ok) throw new InvalidRequest(read.message);
        return { ...document, contentMarkdown: read.text, lineCount: read.lineCount, headings: read.headings, headingCount: read.headingCount, startLine: read.startLine, endLine: read.endLine };
      },
      // The Markdown goes once, as a block of its own, rather than again inside the JSON.
      text: ({ contentMarkdown, ...rest }) => ({ json: rest, extra: contentMarkdown }),
    }),
    tool({
      name: 'list_projects',
      title: 'List projects',
      description: 'The projects of the personal workspace, or of a team workspace with organizationId, newest first. A project id narrows search_documents and list_chats, and places a new document.',
      write: false,
      input: S.listProjectsArgs,
      output: S.ProjectList,
      annotations: READ,
      run: (caller, args) => workspace.projects(caller, { ...args, limit: args.limit! }),
    }),
    tool({
      name: 'list_templates',
      title: 'List templates',
      description: 'Document templates available in the workspace, the built-in ones first unless includeSystem is false.',
      write: false,
      input: S.listTemplatesArgs,
      output: S.TemplateList,
      annotations: READ,
      run: (caller, { includeSystem, ...rest }) =>
        workspace.templates(caller, { ...rest, includeSystem: includeSystem! ? 'true' : 'false', limit: rest.limit! }),
    }),
    tool({
      name: 'list_organizations',
      title: 'List organizations',
      description: 'The organizations (team workspaces) the user belongs to. Pass an id as organizationId to work in that team\'s workspace.',
      write: false,
      input: S.noArguments,
      output: S.OrganizationList,
      annotations: READ,
      run: async (caller) => workspace.organizations(caller),
    }),
    tool({
      name: 'list_chats',
      title: 'List chats',
      description: 'Chats in the workspace, newest first, optionally those whose title contains query.',
      write: false,
      input: S.listChatsArgs,
      output: S.ChatList,
      annotations: READ,
      run: (caller, { query, ...rest }) => workspace.chats(caller, { ...rest, q: query, limit: rest.limit! }),
    }),
    tool({
      name: 'list_revisions',
      title: 'List a document\'s revisions',
      description:
        'The recorded states of a document, newest first: its creation and every change since, each with its number, time, title and who made it (user id and key name). Read one with get_revision; bring one back with restore_revision.',
      write: false,
      input: S.listRevisionsArgs,
      output: S.RevisionList,
      annotations: READ,
      run: (caller, { id, organizationId, limit }) => documents.revisions(caller, id, { organizationId, limit: limit! }),
    }),
    tool({
      name: 'get_revision',
      title: 'Read a revision',
      description: 'One recorded state of a document, with its whole Markdown: to see what a change removed, or what to restore.',
      write: false,
      input: S.getRevisionArgs,
      output: S.Revision,
      annotations: READ,
      run: (caller, { id, number, organizationId }) => documents.revision(caller, id, number, organizationId),
    }),
    tool({
      name: 'create_document',
      title: 'Create a document',
      description:
        'Creates a document from a title and complete Markdown, in the personal workspace, in a team workspace with organizationId, or in a project with projectId. Returns its id, url and updatedAt.',
      write: true,
      input: S.createDocumentArgs,
      output: S.DocumentWritten,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      run: (caller, args) => documents.create(caller, args),
    }),
    tool({
      name: 'update_document',
      title: 'Replace a document',
      description:
        'Replaces the whole Markdown (and the title, if given) of a document. Send expectedUpdatedAt from your read; if the document changed since, the result is a conflict: read it again and retry. To change part of a document, prefer edit_document, which needs no copy of the rest.',
      write: true,
      input: S.updateDocumentArgs,
      output: S.DocumentWritten,
      annotations: CHANGE,
      run: (caller, { id, ...body }) => documents.update(caller, id, body),
    }),
    tool({
      name: 'edit_document',
      title: 'Edit part of a document',
      description:
        'Changes parts of a document without sending it whole: each edit replaces oldText, which must occur exactly once in the document (copy it exactly, with enough surrounding text to be unique), by newText. The edits apply in order and are written together, or not at all. If someone else changed the document meanwhile, the edits are re-applied to the newest version; pass expectedUpdatedAt to refuse that instead. Prefer this to update_document for any change to part of a document.',
      write: true,
      input: S.editDocumentArgs,
      output: S.DocumentWritten,
      annotations: CHANGE,
      run: (caller, { id, ...body }) => documents.edit(caller, id, body),
    }),
    tool({
      name: 'restore_revision',
      title: 'Restore a revision',
      description:
        'Makes a revision\'s title and content the document\'s current ones again, as a new revision, so that nothing is lost. Send expectedUpdatedAt from your latest read of the document; if it changed since, the result is a conflict.',
      write: true,
      input: S.restoreRevisionArgs,
      output: S.DocumentWritten,
      annotations: CHANGE,
      run: (caller, { id, number, ...body }) => documents.restore(caller, id, number, body),
    }),
  ];
}
