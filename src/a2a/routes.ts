/**
 * The A2A front door (API.md "A2A front door"): each project is an A2A agent with its own card and JSON-RPC endpoint.
 * The SDK's transport handlers parse JSON-RPC, dispatch methods and word errors (A2A 1.0, and 0.3 by method name through
 * its compatibility layer); src/a2a/project-agent.ts answers them with the hub's tasks. Credentials are the REST API's.
 */
import { A2A_VERSION_HEADER, AgentCard, SSE_HEADERS, formatSSEErrorEvent, formatSSEEvent } from "@a2a-js/sdk";
import { isLegacyJsonRpcMethod, isV1JsonRpcMethod } from "@a2a-js/sdk/compat/v0_3";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { ContentTypeNotSupportedError, RequestMalformedError } from "@a2a-js/sdk/errors";
import { JsonRpcTransportHandler, defaultServerCallContextBuilder, validateVersion, type User } from "@a2a-js/sdk/server";
import { Hono } from "hono";
import { projectDataFor, projectFor } from "../auth/access";
import { apiKeyOf, bearerToken, serverForApiKey, signInWithToken } from "../middleware/guards";
import { sha256Hex } from "../auth/secrets";
import { hubBaseUrl } from "../http/base-url";
import type { HubContext, HubEnv } from "../http/context";
import { Problem, unauthorized } from "../http/problem";
import { documented, type Operation } from "../openapi/operation";
import { TOO_DEEP, tooDeepUnder } from "../domain/json-depth";
import { logError } from "../runtime/log";
import { legacyCardOf } from "./card";
import { ProjectAgent, type A2ACaller } from "./project-agent";

/** The most a JSON-RPC request may hold: a message (64 KiB of JSON) and room for its envelope. */
export const A2A_MAX_BODY_BYTES = 256 * 1024;
/** A stream says something at least this often, so that proxies keep a quiet one open. */
const KEEP_ALIVE_MS = 20_000;
/**
 * How long a stream opened with an agent's key runs before the client subscribes again, its key checked anew (a
 * person's ends with their token, which lasts as long).
 */
const AGENT_STREAM_MS = 15 * 60 * 1000;
/** Methods that change tasks: a viewer may only read. */
const WRITES = new Set(["SendMessage", "SendStreamingMessage", "CancelTask", "message/send", "message/stream", "tasks/cancel"]);

const unauthenticated = () =>
  new Problem(401, "UNAUTHORIZED", "Send `Authorization: Bearer <access token or API key>`", undefined, { "WWW-Authenticate": 'Bearer realm="orchestratia"' });

/** The caller, by the REST API's credentials: an agent's API key, or a person's access token. */
async function callerOf(c: HubContext): Promise<A2ACaller> {
  const apiKey = apiKeyOf(c);
  if (apiKey) {
    const server = await serverForApiKey(c, apiKey);
    if (!server) throw unauthorized("The API key is invalid or has been revoked", "INVALID_API_KEY");
    c.set("principal", { kind: "server", server });
    return { audience: "agent", headers: { "X-API-Key": apiKey }, listener: { roomUserId: `server:${server.id}`, expiresAt: Date.now() + AGENT_STREAM_MS } };
  }
  const token = bearerToken(c);
  if (!token) throw unauthenticated();
  const { user, expiresAt } = await signInWithToken(c, token);
  return { audience: "person", headers: { Authorization: `Bearer ${token}` }, listener: { roomUserId: user.id, expiresAt: expiresAt * 1000 } };
}

const endpointOf = (c: HubContext, projectId: string) => `${hubBaseUrl(c)}/a2a/${projectId}/`;

class Caller implements User {
  constructor(private readonly name: string) {}
  get isAuthenticated() {
    return true;
  }
  get userName() {
    return this.name;
  }
}

type JsonRpcError = { code: number; message: string };
const INTERNAL_ERROR = -32603;

/**
 * The SDK words any failure that is not an A2A error as -32603 with the failure's own message: that message is logged
 * with the request, and the caller is told only the request's id to quote, as a REST 500 tells it.
 */
function withoutInternals(c: HubContext, error: JsonRpcError): JsonRpcError {
  if (error.code !== INTERNAL_ERROR) return error;
  logError("an A2A call failed", { request_id: c.var.requestId, operation: c.var.operation, project_id: c.req.param("projectId") }, new Error(error.message));
  return { code: INTERNAL_ERROR, message: `Internal error; quote request id ${c.var.requestId} when reporting it` };
}
const rpcError = (id: unknown, error: JsonRpcError, status = 200) =>
  Response.json({ jsonrpc: "2.0", id: typeof id === "string" || typeof id === "number" ? id : null, error }, { status });

const isRequestId = (id: unknown) => id === null || typeof id === "string" || (typeof id === "number" && Number.isInteger(id));

/** Why a body is not a JSON-RPC 2.0 request (-32600), and the id to answer with (null when its own is not one). */
function invalidEnvelope(body: unknown): { why: string; id: unknown } | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { why: "a request is a JSON object", id: null };
  const { jsonrpc, method, id } = body as { jsonrpc?: unknown; method?: unknown; id?: unknown };
  if ("id" in body && !isRequestId(id)) return { why: "id must be a string, an integer or null", id: null };
  if (jsonrpc !== "2.0") return { why: 'jsonrpc must be "2.0"', id };
  if (typeof method !== "string" || method === "") return { why: "method must be a non-empty string", id };
  return null;
}

/** The body, read up to the limit: a larger one is answered before it is all read. */
async function boundedText(req: Request): Promise<string | null> {
  const declared = Number(req.headers.get("Content-Length") ?? NaN);
  if (declared > A2A_MAX_BODY_BYTES) return null;
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > A2A_MAX_BODY_BYTES) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  return new Blob(chunks).text();
}

/** Server-sent events from the transport's answers: the first is awaited before the stream opens, so an early refusal is plain JSON. */
async function sse(
  id: unknown,
  stream: AsyncGenerator<unknown>,
  mapError: (e: unknown) => JsonRpcError,
  alwaysStream: boolean,
  onCancel: () => void,
): Promise<Response> {
  let first: IteratorResult<unknown> | undefined;
  if (!alwaysStream) {
    try {
      first = await stream.next();
    } catch (e) {
      return rpcError(id, mapError(e));
    }
  }
  const encoder = new TextEncoder();
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  // Set when the client went: nothing more is written, and the stream is not closed twice.
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const write = (text: string) => {
        if (!cancelled) controller.enqueue(encoder.encode(text));
      };
      keepAlive = setInterval(() => write(": keep-alive\n\n"), KEEP_ALIVE_MS);
      try {
        if (first && !first.done) write(formatSSEEvent(first.value));
        if (!first?.done) for await (const event of { [Symbol.asyncIterator]: () => stream }) write(formatSSEEvent(event));
      } catch (e) {
        write(formatSSEErrorEvent({ jsonrpc: "2.0", id: id ?? null, error: mapError(e) }));
      } finally {
        clearInterval(keepAlive);
        if (!cancelled) controller.close();
      }
    },
    async cancel() {
      cancelled = true;
      clearInterval(keepAlive);
      onCancel();
      await stream.return(undefined);
    },
  });
  return new Response(body, { headers: SSE_HEADERS });
}

export function a2aRoutes(app: Hono<HubEnv>) {
  const r = new Hono<HubEnv>();

  /** The project's agent as this caller may use it (404 when they cannot see the project). */
  async function agentFor(c: HubContext) {
    const caller = await callerOf(c);
    // The project's rows are read on its shard from here on.
    const project = await projectDataFor(c, c.req.param("projectId")!);
    return { caller, project, agent: new ProjectAgent(app, c, project, endpointOf(c, project.id), caller) };
  }

  r.get(
    "/a2a/:projectId/.well-known/agent-card.json",
    documented({
      id: "getA2AAgentCard",
      tag: "A2A",
      summary: "Read a project's agent card",
      description:
        "The project as an A2A agent: one skill per capability its online servers offer, its JSON-RPC interface, push notifications unsupported. " +
        "With `A2A-Version: 1.0` the A2A 1.0 card; without it (or with 0.3), the 0.3 fields beside 1.0's `supportedInterfaces`. 404 for a project the caller cannot see.",
      caller: ["person", "agent"],
      headers: { "A2A-Version": "`1.0` for the A2A 1.0 card; absent or `0.3` for the 0.3 card" },
      responses: {
        200: { description: "The agent card (`ETag`, `Cache-Control: private, no-cache`)", contentType: "application/json" },
        304: { description: "Not modified: the card under `If-None-Match` is still the card" },
      },
    }),
    async (c) => {
      const { agent } = await agentFor(c);
      const card = await agent.getAgentCard();
      const version = c.req.header(A2A_VERSION_HEADER) || "0.3";
      const body = version.startsWith("0.") ? legacyCardOf(card) : AgentCard.toJSON(card);
      // The skills follow the servers coming and going: a cached card is checked every time (its ETag), never reused blind.
      const text = JSON.stringify(body);
      const etag = `W/"${(await sha256Hex(text)).slice(0, 32)}"`;
      const headers = { Vary: `${A2A_VERSION_HEADER}, Authorization`, "Cache-Control": "private, no-cache", ETag: etag };
      if (c.req.header("If-None-Match") === etag) return c.body(null, 304, headers);
      return c.body(text, 200, { ...headers, "Content-Type": "application/json" });
    },
  );

  const rpc = {
    id: "callA2A",
    tag: "A2A",
    summary: "Call a project's A2A agent",
    description:
      "A2A's JSON-RPC binding: `SendMessage`, `SendStreamingMessage`, `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask` (A2A 1.0, with `A2A-Version: 1.0`), " +
      "and their 0.3 names (`message/send`, `tasks/get`, ...). A message becomes a task of the project, auto-assigned by capability; a message naming a task " +
      "answers its open question, reviews its plan (`approve`, or what to change) or leaves a note. Errors are JSON-RPC errors (HTTP 200; 400 for a body " +
      `that is not JSON, 413 for one over ${A2A_MAX_BODY_BYTES} bytes); a viewer may only read (403). Push notification methods answer -32003: the project's webhooks deliver its events.`,
    caller: ["person", "agent"],
    headers: { "A2A-Version": "`1.0` for A2A 1.0 methods; absent means 0.3" },
    responses: {
      200: { description: "The JSON-RPC answer, or server-sent events for the streaming methods", contentType: "application/json" },
    },
  } satisfies Operation;

  const answer = async (c: HubContext) => {
    const { caller, project, agent } = await agentFor(c);
    const type = c.req.header("Content-Type");
    const media = type?.split(";", 1)[0]!.trim().toLowerCase();
    if (media && media !== "application/json" && media !== "application/a2a+json")
      return rpcError(null, JsonRpcTransportHandler.mapToJSONRPCError(new ContentTypeNotSupportedError(`Content-Type ${type} is not JSON`)), 400);
    const text = await boundedText(c.req.raw);
    if (text === null)
      return rpcError(
        null,
        JsonRpcTransportHandler.mapToJSONRPCError(new RequestMalformedError(`The request is larger than ${A2A_MAX_BODY_BYTES} bytes`)),
        413,
      );
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return rpcError(null, { code: -32700, message: "Parse error: the body is not JSON" }, 400);
    }
    const invalid = invalidEnvelope(body);
    if (invalid) return rpcError(invalid.id, { code: -32600, message: `Invalid request: ${invalid.why}` });
    const { method, id } = body as { method: string; id?: string | number | null };
    // A method neither binding knows is not found, whatever its params: the SDK's 0.3 handler checks params first.
    if (!isLegacyJsonRpcMethod(method) && !isV1JsonRpcMethod(method)) return rpcError(id, { code: -32601, message: `Method not found: ${method}` });
    // Held to the depth every REST body is, so nothing stored from here is too deep for the hub to walk.
    const deep = tooDeepUnder(body);
    if (deep) return rpcError(id, { code: -32602, message: `Invalid params: ${deep} ${TOO_DEEP}` });
    if (WRITES.has(method)) await projectFor(c, project.id, "write");
    // A 0.3 method name, or none the 1.0 binding knows, goes to the 0.3 handler, whose errors are worded as 0.3's.
    const legacy = isLegacyJsonRpcMethod(method) || !isV1JsonRpcMethod(method);
    const mapError = legacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError : JsonRpcTransportHandler.mapToJSONRPCError;
    const context = defaultServerCallContextBuilder({
      extensions: undefined,
      user: new Caller(caller.audience === "person" ? "person" : "agent"),
      headers: Object.fromEntries(c.req.raw.headers),
      requestedVersion: c.req.header(A2A_VERSION_HEADER) || undefined,
    });
    try {
      validateVersion(context.requestedVersion, await agent.getAgentCard(), "JSONRPC");
    } catch (e) {
      return rpcError(id, mapError(e));
    }
    const handler = legacy ? new LegacyJsonRpcTransportHandler(agent) : new JsonRpcTransportHandler(agent);
    const result = await handler.handle(body as Record<string, unknown>, context);
    if (typeof (result as AsyncGenerator)[Symbol.asyncIterator] === "function")
      return sse(
        id,
        result as AsyncGenerator<unknown>,
        (e) => withoutInternals(c, mapError(e)),
        legacy && method === "tasks/resubscribe",
        () => agent.stop(),
      );
    const answered = result as { error?: JsonRpcError };
    return c.json(answered.error ? { ...answered, error: withoutInternals(c, answered.error) } : answered);
  };

  // The SDK's clients post to the card's URL without its trailing slash; API.md names it with one.
  r.post("/a2a/:projectId", documented(rpc), answer);
  r.post("/a2a/:projectId/", documented({ ...rpc, id: "callA2AAtSlash", summary: "Call a project's A2A agent (at its card's URL)" }), answer);
  return r;
}
