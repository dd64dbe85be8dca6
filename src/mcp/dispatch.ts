/**
 * A tool call made as the REST request it stands for (http/internal-request.ts), and who makes it: the route's schema,
 * access checks, lifecycle rules and problems are exactly the REST API's.
 */
import type { Hono } from "hono";
import type { HubContext, HubEnv } from "../http/context";
import { requestAs, type CallerHeaders } from "../http/internal-request";
import type { Audience } from "./catalogue";
import type { SessionPort } from "./session-client";
import type { ToolRoute } from "./tool-schemas";

/** Who is calling, as the MCP endpoint authenticated them. */
export interface McpCaller {
  audience: Audience;
  /** The credentials its internal REST requests carry. */
  headers: CallerHeaders;
}

/** What one request's MCP server needs: the request, who is calling, and (2025 revisions) the client's session. */
export interface McpRequest {
  c: HubContext;
  caller: McpCaller;
  session?: SessionPort;
}

const asString = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

/** Splits a tool's arguments into its route's path, query and body, and makes the request. */
export function callRoute(
  app: Hono<HubEnv>,
  c: HubContext,
  caller: CallerHeaders,
  method: string,
  path: string,
  route: ToolRoute,
  args: Record<string, unknown>,
) {
  const rest = { ...args };
  let filled = path;
  for (const name of route.pathParams) {
    const value = rest[name];
    delete rest[name];
    // A missing path argument is sent as an empty segment, which the route refuses as it would any bad id.
    filled = filled.replace(`{${name}}`, encodeURIComponent(value === undefined ? "" : asString(value)));
  }
  const query = new URLSearchParams();
  for (const name of route.queryParams) {
    if (rest[name] !== undefined && rest[name] !== null) query.set(name, asString(rest[name]));
    delete rest[name];
  }
  const body = route.body === "fields" ? rest : route.body === "whole" ? rest.body : undefined;
  return requestAs(app, c, caller, method.toUpperCase(), filled, query, body);
}
