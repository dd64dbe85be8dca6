/**
 * Gives every DataRef pointer in a JSON answer a fresh download URL, whatever
 * the endpoint (task detail, lists, check, poll, status, replays): the caller
 * already sees the pointer, and the URL lets it fetch the bytes with no other
 * credential. Only a pointer to a DataRef of the project of the object carrying
 * it (the project the request is about, else the object's own `project_id`),
 * one the caller may see, gets one (datarefs/pointers.ts). Answers without a
 * pointer pass untouched.
 */
import { createMiddleware } from "hono/factory";
import { sql } from "drizzle-orm";
import { accessOf, membershipOf } from "../auth/access";
import { linkPointers, pointedTo, type Visibility } from "../datarefs/pointers";
import { hubBaseUrl } from "../http/base-url";
import { dbOf } from "../db/client";
import type { HubContext, HubEnv } from "../http/context";

/** What the caller may see; without a caller, nothing. */
export function visibilityOf(c: HubContext): Visibility {
  const p = c.var.principal;
  if (!p) return { member: () => sql`NULL`, sees: () => false };
  return { member: (column) => membershipOf(p, column), sees: (projectId, membership) => accessOf(p, projectId, membership) !== "none" };
}

export const datarefLinks = createMiddleware<HubEnv>(async (c, next) => {
  // A DataRef's own bytes are served as they were uploaded, even JSON that holds pointers (and a range of it is no JSON at all).
  if (c.req.path.startsWith("/api/v1/blobs/")) return next();
  // An answer made by c.json is looked at as it is made, as an object: reading every answer's text back costs each
  // request a copy of its body. Any other JSON answer (a problem, one built elsewhere) is read back.
  const json = c.json;
  let made: { response: Response; pointers: boolean } | undefined;
  c.json = ((object: unknown, ...rest: unknown[]) => {
    const response = (json as (...args: unknown[]) => Response)(object, ...rest);
    made = { response, pointers: pointedTo(object).size > 0 };
    return response;
  }) as typeof c.json;
  await next();
  if (made?.response === c.res && !made.pointers) return;
  const type = c.res.headers.get("Content-Type") ?? "";
  // A problem is the hub's own words about a refusal: it never carries a pointer.
  if (!type.includes("json") || type.startsWith("application/problem+json")) return;
  const text = await c.res.clone().text();
  if (!text.includes('"$dataref"')) return;
  // The DataRefs are looked for on every shard; the caller's memberships in the directory.
  const scope = { project: c.var.logProject ?? null, visibility: visibilityOf(c), everyShard: true };
  const body = await linkPointers(c.env, dbOf(c.env.DB), hubBaseUrl(c), JSON.parse(text), scope);
  const headers = new Headers(c.res.headers);
  headers.delete("Content-Length");
  c.res = new Response(JSON.stringify(body), { status: c.res.status, headers });
});
