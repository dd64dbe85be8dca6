/**
 * A tool call (or a resource read) made as the REST request it stands for: sent to the hub's own app with the
 * caller's credentials, so the route's schema, access checks, lifecycle rules and problems are exactly the REST API's.
 */
import type { Hono } from "hono";
import type { HubContext, HubEnv } from "../http/context";
import type { Audience } from "./catalogue";
import type { SessionPort } from "./session-client";
import type { ToolRoute } from "./tool-schemas";

/** What an internal request answers: its status and its JSON body (a problem document when it refused), parsed and as sent. */
export interface RouteAnswer {
  status: number;
  body: unknown;
  text: string;
}

/** The headers that make an internal request the caller's own: its credentials. */
export type CallerHeaders = Record<string, string>;

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

/** Sends `method path` (with its query and JSON body) to the app as the caller, from inside the request `c`. */
export async function requestAs(
  app: Hono<HubEnv>,
  c: HubContext,
  caller: CallerHeaders,
  method: string,
  path: string,
  query?: URLSearchParams,
  body?: unknown,
): Promise<RouteAnswer> {
  const url = new URL(path, c.req.url);
  if (query) url.search = query.toString();
  const headers = new Headers(caller);
  const ip = c.req.header("CF-Connecting-IP");
  if (ip) headers.set("CF-Connecting-IP", ip);
  headers.set("X-Request-Id", c.var.requestId);
  if (body !== undefined) headers.set("Content-Type", "application/json");
  const res = await app.fetch(new Request(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }), c.env, c.executionCtx);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, text };
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
