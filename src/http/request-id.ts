/**
 * Every request gets an id: Cloudflare's ray id when there is one (so the
 * hub's logs meet Cloudflare's), else a random UUID. It is answered in
 * `X-Request-Id` on every response, quoted in 5xx problems and logged with
 * every failure.
 */
import { every } from "hono/combine";
import { createMiddleware } from "hono/factory";
import { requestId } from "hono/request-id";
import type { Context } from "hono";
import type { HubEnv } from "./context";
import { setHeader } from "./response-headers";

export const REQUEST_ID_HEADER = "X-Request-Id";

/** Anything else in `cf-ray` did not come from Cloudflare and is not worth logging. */
const RAY_ID = /^[\w-]{1,255}$/;

const rayOrUuid = (c: Context) => {
  const ray = c.req.header("cf-ray");
  return ray && RAY_ID.test(ray) ? ray : crypto.randomUUID();
};

/**
 * hono's `requestId` would take a client's own `X-Request-Id`, and sets the
 * header before the handler runs, which responses built as a `Response` (problems,
 * downloads, replays) do not keep; so it reads no header here and the header
 * is set once the response is final. A WebSocket upgrade (101) is passed on
 * as the room answered it.
 */
export const withRequestId = every(
  requestId({ headerName: "", generator: rayOrUuid }),
  createMiddleware<HubEnv>(async (c, next) => {
    await next();
    if (c.res.status !== 101) setHeader(c, REQUEST_ID_HEADER, c.var.requestId);
  }),
);
