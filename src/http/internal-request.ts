/**
 * A request made from inside another to the hub's own app, with the caller's credentials, so the route's schema, access
 * checks, lifecycle rules and problems are exactly the REST API's (MCP's tools and tasks, A2A's front door).
 */
import type { Hono } from "hono";
import type { HubContext, HubEnv } from "./context";

/** What an internal request answers: its status and its JSON body (a problem document when it refused), parsed and as sent. */
export interface RouteAnswer {
  status: number;
  body: unknown;
  text: string;
}

/** The headers that make an internal request the caller's own: its credentials. */
export type CallerHeaders = Record<string, string>;

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
