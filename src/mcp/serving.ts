/**
 * Serving a request to /mcp in the era its client speaks. 2026-07-28 requests (the envelope in `_meta`, the
 * Mcp-Method header) go to the SDK's stateless handler, one per isolate; 2025-era ones (`initialize`, then requests
 * under a session id) to a stateless transport per request, answered as JSON, whose session the hub keeps (session.ts).
 */
import type { Hono } from "hono";
import { createMcpHandler, isLegacyRequest, WebStandardStreamableHTTPServerTransport, type McpHttpHandler } from "@modelcontextprotocol/server";
import type { HubEnv } from "../http/context";
import { log } from "../runtime/log";
import type { McpRequest } from "./dispatch";
import { mcpServer } from "./server";

export { isLegacyRequest };

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
