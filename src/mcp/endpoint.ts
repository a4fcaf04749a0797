import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import {
  createMcpHandler,
  isLegacyRequest,
  ProtocolError,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import { InvalidRequest, PlanRequired, RateLimited, Unauthorized } from '../errors.js';
import type { KeyHolder, keyChecks } from '../http/auth.js';
import type { RateDecision } from '../rate-limit/limiter.js';
import type { McpCall, McpServers } from './server.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The key holder of an MCP request, once its key is known. */
    mcpHolder?: KeyHolder;
    /** Whether the request has been counted against the key's rate limit. */
    mcpCounted?: boolean;
  }
}

/**
 * `POST /mcp`: the Model Context Protocol as stateless Streamable HTTP
 * (DESIGN §6), answering each request with JSON. Requests of the
 * 2026-07-28 revision go to the SDK's per-request handler; those of the
 * 2025 revisions (an `initialize`, then requests without a session) to a
 * server and transport made for the request.
 *
 * The key is checked before the body is read (401 with
 * `WWW-Authenticate: Bearer`). Every POST counts once against the key's
 * REST rate limits: a write key's call of a write tool as a write, anything
 * else as a read. A refused tool call is a tool result (src/mcp/server.ts);
 * a refused request of any other kind is the HTTP status, in the error
 * envelope.
 */
export const mcpEndpoint: FastifyPluginAsync<{ servers: McpServers; checks: ReturnType<typeof keyChecks> }> = async (app, { servers, checks }) => {
  const modern = createMcpHandler((context) => servers.build(callOf(context.authInfo)), {
    legacy: 'reject',
    // 'auto' answers with JSON unless a tool sends a message before its result, which Folio's never do.
    onerror: (err) => {
      const reason = refusalOf(err);
      if (reason !== null) app.log.debug({ reason }, 'MCP request refused');
      else app.log.error({ err }, 'MCP request failed');
    },
  });
  app.addHook('onClose', () => modern.close());

  /**
   * Counts a request against the key's limit as `cls`, and refuses it
   * over HTTP, in DESIGN §2's order, unless it is a tool call: a missing
   * plan (402, not counted), then a spent limit (429). For a tool call it
   * answers what the tool is to report instead (src/mcp/server.ts).
   */
  async function admit(request: FastifyRequest, reply: FastifyReply, cls: 'read' | 'write', toolCall: boolean): Promise<RateDecision | null> {
    const holder = request.mcpHolder!;
    request.mcpCounted = true;
    if (holder.plan === null) {
      if (!toolCall) throw new PlanRequired();
      return null;
    }
    const { decision, headers } = await checks.count(holder.keyId, cls);
    reply.headers(headers);
    if (!decision.allowed && !toolCall) throw new RateLimited(decision.resetSeconds, headers);
    return decision;
  }

  // A body that cannot be read (not JSON, not UTF-8, too large) is refused
  // after the key's plan and rate limit, and counts as a read, as any request does.
  app.setErrorHandler(async (err, request, reply) => {
    if (request.mcpHolder !== undefined && !request.mcpCounted) await admit(request, reply, 'read', false);
    throw err;
  });

  app.post('/mcp', {
    schema: { hide: true },
    onRequest: async (request) => {
      try {
        request.mcpHolder = await checks.identify(request);
      } catch (err) {
        if (err instanceof Unauthorized) throw new Unauthorized(err.message, { 'www-authenticate': 'Bearer' });
        throw err;
      }
    },
    handler: async (request, reply) => {
      const holder = request.mcpHolder!;
      // JSON-RPC batches left MCP with its 2025-06-18 revision; one message per POST is also one count per message.
      const batch = Array.isArray(request.body);
      const toolCall = batch ? undefined : toolCallIn(request.body);
      const rate = await admit(request, reply, servers.countsAsWrite(toolCall, holder.scopes) ? 'write' : 'read', toolCall !== undefined);
      if (batch) throw new InvalidRequest('Send one JSON-RPC message per request: batches are not accepted (MCP 2025-06-18 and later have none).');
      const uri = resourceUriIn(request.body);
      if (uri !== undefined && uri.length > MAX_RESOURCE_URI) {
        throw new InvalidRequest(`params.uri: a resource URI is at most ${MAX_RESOURCE_URI} characters; this one has ${uri.length}.`);
      }
      const call: McpCall = { holder, rate, log: request.log };
      const webRequest = asWebRequest(request);
      const authInfo = authInfoOf(call);
      const response = (await isLegacyRequest(webRequest, request.body))
        ? await servedAlone(servers, call, webRequest, request.body, authInfo)
        : await modern.fetch(webRequest, { parsedBody: request.body, authInfo });
      return sendResponse(reply, response);
    },
  });

  app.route({
    method: ['GET', 'DELETE'],
    url: '/mcp',
    schema: { hide: true },
    handler: async (_request, reply) => {
      const error = new InvalidRequest('The MCP endpoint is stateless: send each JSON-RPC message with POST; there is no stream to open or session to end.');
      return reply.code(405).header('allow', 'POST').send(error.toBody());
    },
  });
};

/**
 * The kind of a refusal the SDK reports (a protocol revision, a header that
 * disagrees with the body, a content type), or null for a failure. Only the
 * kind is logged: the SDK's messages quote the request's headers and body
 * (`params.name`, `params.uri`), which the log never holds.
 */
function refusalOf(err: Error): string | null {
  if (err instanceof ProtocolError) return `protocol error ${err.code}`;
  const rejected = /^Rejected [^(]*\(([^)]*)\)/.exec(err.message);
  if (rejected !== null) return rejected[1]!;
  if (err.message.startsWith('Unsupported Media Type')) return 'unsupported-media-type';
  return null;
}

/**
 * The longest resource URI read. Folio's are under 100 characters; the
 * SDK fails to match a URI of over a million against its templates, and
 * answers 500.
 */
const MAX_RESOURCE_URI = 2048;

/** The params of a JSON-RPC message if it is a request of `method` (null when it has none), otherwise undefined. */
function paramsOf(message: unknown, method: string): Record<string, unknown> | null | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const { method: its, params } = message as { method?: unknown; params?: Record<string, unknown> | null };
  return its === method ? (params ?? null) : undefined;
}

/** The URI a JSON-RPC message reads, if it is a `resources/read` that names one. */
function resourceUriIn(message: unknown): string | undefined {
  const uri = paramsOf(message, 'resources/read')?.uri;
  return typeof uri === 'string' ? uri : undefined;
}

/** The name of the tool a JSON-RPC message calls, if it is a `tools/call` ('' when it names none). */
function toolCallIn(message: unknown): string | undefined {
  const params = paramsOf(message, 'tools/call');
  if (params === undefined) return undefined;
  return typeof params?.name === 'string' ? params.name : '';
}

/** The request as the SDK reads it: its method, URL and headers (its body goes separately, already parsed). */
function asWebRequest(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return new Request(new URL(request.url, 'http://folio.invalid'), { method: request.method, headers });
}

/** The caller travels to the per-request server factory in the SDK's AuthInfo; the key itself never does. */
function authInfoOf(call: McpCall): AuthInfo {
  return { token: '', clientId: call.holder.keyId, scopes: call.holder.scopes, extra: { call } };
}

function callOf(info: AuthInfo | undefined): McpCall {
  const call = info?.extra?.call as McpCall | undefined;
  if (call === undefined) throw new Error('An MCP request reached the server without its caller.');
  return call;
}

/** A 2025-revision request, served by a server and transport of its own, answering with JSON. */
async function servedAlone(servers: McpServers, call: McpCall, request: Request, parsedBody: unknown, authInfo: AuthInfo): Promise<Response> {
  const server = servers.build(call);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, { parsedBody, authInfo });
  } finally {
    await server.close();
  }
}

/** The SDK's answer, sent as the bytes it encoded: decoded to a string, a long answer would be encoded again, and held twice meanwhile. */
async function sendResponse(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  reply.code(response.status);
  response.headers.forEach((value, name) => {
    if (name !== 'content-length') reply.header(name, value);
  });
  return reply.send(Buffer.from(await response.arrayBuffer()));
}
