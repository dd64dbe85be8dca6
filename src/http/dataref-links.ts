/**
 * Gives every DataRef pointer in a JSON answer a fresh download URL, whatever
 * the endpoint (task detail, lists, check, poll, status, replays): the caller
 * already sees the pointer, and the URL lets it fetch the bytes with no other
 * credential. Answers without a pointer pass untouched.
 */
import { createMiddleware } from "hono/factory";
import { withDownloadUrls } from "../offload";
import { hubBaseUrl } from "./base-url";
import type { HubEnv } from "./context";

export const datarefLinks = createMiddleware<HubEnv>(async (c, next) => {
  await next();
  // A DataRef's own bytes are served as they were uploaded, even JSON that holds pointers (and a range of it is no JSON at all).
  if (c.req.path.startsWith("/api/v1/blobs/")) return;
  if (!c.res.headers.get("Content-Type")?.includes("json")) return;
  const text = await c.res.clone().text();
  if (!text.includes('"$dataref"')) return;
  const body = await withDownloadUrls(c.env, hubBaseUrl(c), JSON.parse(text));
  const headers = new Headers(c.res.headers);
  headers.delete("Content-Length");
  c.res = new Response(JSON.stringify(body), { status: c.res.status, headers });
});
