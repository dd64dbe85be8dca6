/**
 * Serving a request to /mcp in the era its client speaks. 2026-07-28 requests (the envelope in `_meta`, the
 * Mcp-Method header) go to the SDK's stateless handler, one per isolate; 2025-era ones (`initialize`, then requests
 * under a session id) to a stateless transport per request, answered as JSON, whose session the hub keeps (session.ts).
 */
import type { Hono } from "hono";
import {
  classifyInboundRequest,
  createMcpHandler,
  isJsonContentType,
  isLegacyRequest,
  ProtocolErrorCode,
  WebStandardStreamableHTTPServerTransport,
  type JSONRPCRequest,
  type McpHttpHandler,
} from "@modelcontextprotocol/server";
import type { HubContext, HubEnv } from "../http/context";
import { log } from "../runtime/log";
import type { McpRequest } from "./dispatch";
import { mcpServer, MODERN_PROTOCOL_VERSION } from "./server";

export { isLegacyRequest };

/** The JSON-RPC error of a request whose headers and body disagree (2026-07-28). */
const HEADER_MISMATCH = -32020;

/** The modern handler of an app: built once per isolate, it builds a server per request from the request's `McpRequest`. */
const modernByApp = new WeakMap<Hono<HubEnv>, McpHttpHandler>();

function modernHandler(app: Hono<HubEnv>) {
  let handler = modernByApp.get(app);
  if (!handler) {
    handler = createMcpHandler(({ authInfo }) => mcpServer(app, authInfo!.extra as unknown as McpRequest, "modern"), {
      legacy: "reject",
      responseMode: "json",
      // Refused requests (a missing header, a wrong version) land here too: they are the client's, worth a warning only.
      onerror: (error) => log("warn", "MCP request not answered", { operation: "mcp", error: error.message }),
    });
    modernByApp.set(app, handler);
  }
  return handler;
}

/** Answers a 2026-07-28 request; `parsedBody` is the body the endpoint already read. */
export function answerModern(app: Hono<HubEnv>, request: McpRequest, raw: Request, parsedBody: unknown) {
  const extra = request as unknown as Record<string, unknown>;
  return modernHandler(app).fetch(raw, { parsedBody, authInfo: { token: "", clientId: request.caller.audience, scopes: [], extra } });
}

/** Answers a 2025-era request with a fresh server and stateless transport, as JSON rather than a stream. */
export async function answerLegacy(app: Hono<HubEnv>, request: McpRequest, raw: Request, parsedBody?: unknown) {
  const server = mcpServer(app, request, "legacy");
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  return transport.handleRequest(raw, parsedBody === undefined ? undefined : { parsedBody });
}

/**
 * A modern request that opens a subscription, checked as the SDK checks every modern request (headers, envelope,
 * revision): its message; the refusal as the SDK would answer it; or undefined for any other request.
 */
export function listenRequest(c: HubContext, parsedBody: unknown): JSONRPCRequest | Response | undefined {
  if ((parsedBody as { method?: unknown } | null)?.method !== "subscriptions/listen") return undefined;
  const outcome = classifyInboundRequest({
    httpMethod: "POST",
    protocolVersionHeader: c.req.header("MCP-Protocol-Version"),
    mcpMethodHeader: c.req.header("Mcp-Method"),
    mcpNameHeader: c.req.header("Mcp-Name"),
    body: parsedBody,
  });
  const id = (parsedBody as { id?: unknown }).id ?? null;
  if (outcome.kind === "reject")
    return Response.json({ jsonrpc: "2.0", id, error: { code: outcome.code, message: outcome.message, data: outcome.data } }, { status: outcome.httpStatus });
  // The SDK's transport checks these after classifying every other request; a listen never reaches it.
  const refuse = (status: number, code: number, message: string, data?: unknown) =>
    Response.json({ jsonrpc: "2.0", id, error: { code, message, data } }, { status });
  if (!isJsonContentType(c.req.header("Content-Type"))) return refuse(415, ProtocolErrorCode.InvalidRequest, "Unsupported Media Type: send application/json");
  for (const header of ["MCP-Protocol-Version", "Mcp-Method"])
    if (!c.req.header(header))
      return refuse(400, HEADER_MISMATCH, `Bad Request: the required ${header} header is absent`, { mismatch: { header: "(missing)" } });
  if (outcome.kind === "modern" && outcome.classification.revision !== MODERN_PROTOCOL_VERSION)
    return refuse(200, ProtocolErrorCode.UnsupportedProtocolVersion, `Unsupported protocol version ${outcome.classification.revision}`, {
      supported: [MODERN_PROTOCOL_VERSION],
      requested: outcome.classification.revision,
    });
  return outcome.kind === "modern" && outcome.messageKind === "request" ? outcome.message : undefined;
}
