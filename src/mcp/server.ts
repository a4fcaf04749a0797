import type { FastifyBaseLogger } from 'fastify';
import type { StaticDecode, TSchema } from '@sinclair/typebox';
import {
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  ResourceTemplate,
  type CallToolResult,
  type StandardSchemaWithJSON,
} from '@modelcontextprotocol/server';
import type { Services } from '../api/services.js';
import { WRITE_SCOPE } from '../domain/keys.js';
import { ApiError, InternalError, InvalidRequest, NotFound, PlanRequired, RateLimited } from '../errors.js';
import { describeInvalid } from '../http/errors.js';
import { validatorCompiler } from '../http/validation.js';
import type { KeyHolder } from '../http/auth.js';
import type { RateDecision } from '../rate-limit/limiter.js';
import type { Caller } from '../services/context.js';
import { folioTools, type Tool } from './tools.js';
import { strip } from './schemas.js';

/** What one MCP request knows of its caller (src/mcp/endpoint.ts). */
export interface McpCall {
  holder: KeyHolder;
  /** This request's count against the key's limit; null when no plan grants the key API access (then it is not counted). */
  rate: RateDecision | null;
  log: FastifyBaseLogger;
}

const INSTRUCTIONS =
  'Folio holds the user\'s Markdown documents, in a personal workspace and in team workspaces (organizations). ' +
  'Find documents with search_documents, read them with get_document (by line range for long ones), ' +
  'change part of one with edit_document, and create one with create_document. ' +
  'Pass organizationId (from get_me) to work in a team workspace.';

/**
 * A schema as the SDK takes it: its JSON Schema is what `tools/list`
 * shows, and the SDK's own check lets every value through, because Folio
 * validates arguments itself (below) to answer a bad one in the error
 * shape of DESIGN §6 rather than as plain text.
 */
function advertised(schema: TSchema): StandardSchemaWithJSON {
  const json = strip(schema);
  return {
    '~standard': {
      version: 1,
      vendor: 'folio',
      validate: (value: unknown) => ({ value }),
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

/** Validators of tool arguments: the REST bodies' (src/http/validation.ts), so that input is held to the same rules. */
const compile = validatorCompiler();

/** The tools and their validators, built once: a server per request only registers them. */
export function mcpServers(services: Services, version: string, onToolCall: (tool: string, outcome: string) => void = () => {}) {
  const tools = folioTools(services).map((t) => ({ ...t, validate: compile({ schema: t.input, httpPart: 'body' }) }));
  const writeTools = new Set(tools.filter((t) => t.write).map((t) => t.name));

  /** A failed call as a tool result: the spec's error code and message, and when to retry for `rate_limited`. */
  function failure(error: ApiError): CallToolResult {
    const retryAfter = error.headers['retry-after'];
    const body = { error: { ...error.toBody().error, ...(retryAfter === undefined ? {} : { retryAfterSeconds: Number(retryAfter) }) } };
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
  }

  /** The checks a REST request passes, in the same order, then the tool's service call (DESIGN §6). */
  async function callTool(t: (typeof tools)[number], call: McpCall, args: unknown): Promise<CallToolResult> {
    const refusal = call.holder.plan === null ? new PlanRequired() : call.rate?.allowed === false ? new RateLimited(call.rate.resetSeconds, {}) : null;
    if (refusal) return failure(refusal);
    // A copy for validation to fill defaults into, which the tools' schemas
    // have at the top level only: a shallow one, since a deep copy walks
    // unknown arguments too, which DESIGN §3 ignores however deeply they
    // nest, and runs out of stack on one nested a few thousand levels deep.
    const input = { ...(args ?? {}) };
    if (!t.validate(input)) return failure(new InvalidRequest(describeInvalid(t.validate.errors ?? [], 'arguments')));
    const result = await t.run({ ...call.holder, plan: call.holder.plan } as Caller, input as StaticDecode<TSchema>);
    const { json, extra } = t.text?.(result) ?? { json: result };
    const content: CallToolResult['content'] = [{ type: 'text', text: JSON.stringify(json) }];
    if (extra !== undefined) content.push({ type: 'text', text: extra });
    return { content, structuredContent: result as Record<string, unknown> };
  }

  /** A tool call, with its one log line: tool name, key id and outcome, never its arguments. */
  async function logged(t: (typeof tools)[number], call: McpCall, args: unknown): Promise<CallToolResult> {
    let result: CallToolResult;
    try {
      result = await callTool(t, call, args);
    } catch (err) {
      if (!(err instanceof ApiError) || err instanceof InternalError) call.log.error({ err, tool: t.name }, 'tool call failed');
      result = failure(err instanceof ApiError ? err : new InternalError());
    }
    const outcome = result.isError ? (result.structuredContent as { error: { code: string } }).error.code : 'ok';
    call.log.info({ tool: t.name, keyId: call.holder.keyId, outcome }, 'tool call');
    onToolCall(t.name, outcome);
    return result;
  }

  /** A document resource's Markdown, read as `get_document` reads it. */
  async function readDocument(call: McpCall, uri: URL, id: unknown, organizationId: unknown) {
    if (typeof id !== 'string' || (organizationId !== undefined && typeof organizationId !== 'string')) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'The resource URI names one document id, and at most one organization id.');
    }
    try {
      if (call.holder.plan === null) throw new PlanRequired();
      const document = await services.documents.get({ ...call.holder, plan: call.holder.plan }, id, organizationId);
      return { contents: [{ uri: uri.href, mimeType: 'text/markdown', text: document.contentMarkdown }] };
    } catch (err) {
      if (err instanceof NotFound) throw new ResourceNotFoundError(uri.href, 'No document with this id is accessible with this key.');
      if (err instanceof ApiError && !(err instanceof InternalError)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, err.message);
      // A failure is logged in full, and answered as a tool's is: with a
      // message that says nothing of it (the SDK would send the error's own
      // message, a database's included, and log nothing).
      call.log.error({ err }, 'resource read failed');
      throw new ProtocolError(ProtocolErrorCode.InternalError, new InternalError().message);
    }
  }

  return {
    /**
     * Whether a call of the tool `name` by a key of `scopes` counts as a
     * write (DESIGN §6). A read key's call of a write tool is refused by its
     * scope, which DESIGN §2 checks before the rate limit: it counts as the
     * read any other refused request is, and spends none of the key's writes.
     */
    countsAsWrite: (name: unknown, scopes: readonly string[]) => typeof name === 'string' && writeTools.has(name) && scopes.includes(WRITE_SCOPE),

    /** The MCP server for one request: the tools the key's scopes allow, and the document resources. */
    build(call: McpCall): McpServer {
      // Stateless: no stream to tell a client of changes on, so none is promised.
      const capabilities = { tools: { listChanged: false }, resources: { listChanged: false } };
      const server = new McpServer({ name: 'folio', version }, { instructions: INSTRUCTIONS, capabilities });
      const canWrite = call.holder.scopes.includes(WRITE_SCOPE);
      for (const t of tools) {
        if (t.write && !canWrite) continue;
        const config = {
          title: t.title,
          description: t.description,
          inputSchema: advertised(t.input),
          outputSchema: advertised(t.output),
          annotations: t.annotations,
        };
        server.registerTool(t.name, config, (args: unknown) => logged(t, call, args));
      }
      server.registerResource(
        'team-document',
        new ResourceTemplate('folio://organizations/{organizationId}/documents/{id}', { list: undefined }),
        { title: 'A document of a team workspace', mimeType: 'text/markdown' },
        (uri, { organizationId, id }) => readDocument(call, uri, id, organizationId),
      );
      server.registerResource(
        'document',
        new ResourceTemplate('folio://documents/{id}', { list: undefined }),
        { title: 'A document of the personal workspace', mimeType: 'text/markdown' },
        (uri, { id }) => readDocument(call, uri, id, undefined),
      );
      return server;
    },
  };
}

export type McpServers = ReturnType<typeof mcpServers>;
