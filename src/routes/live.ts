/**
 * Live connections: dashboards' WebSockets on a project's room. The Worker
 * checks the JWT and the project's visibility before the room is touched.
 */
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { projects } from "../db/schema";
import { parseWith } from "../http/body";
import { isUuid, seqQuery } from "../http/fields";
import { projectFor } from "../auth/access";
import type { HubEnv } from "../http/context";
import { requireUpgrade } from "../http/upgrade";
import { hubBaseUrl } from "../http/base-url";
import { notFound, unauthorized } from "../http/problem";
import { apiKeyOf, serverForApiKey, signInWithToken } from "../auth/middleware";
import { roomStub } from "../room/client";

export const liveRoutes = new Hono<HubEnv>();

/** The JWT of a WebSocket upgrade: subprotocols ["bearer", "<jwt>"] (browsers cannot set headers) or ?access_token=. */
function upgradeToken(request: Request): { token: string | null; subprotocol: string | null } {
  const offered = (request.headers.get("Sec-WebSocket-Protocol") ?? "").split(",").map((p) => p.trim());
  const i = offered.indexOf("bearer");
  if (i >= 0 && offered[i + 1]) return { token: offered[i + 1]!, subprotocol: "bearer" };
  return { token: new URL(request.url).searchParams.get("access_token"), subprotocol: null };
}

liveRoutes.get("/:id/ws", async (c) => {
  requireUpgrade(c);
  const { token, subprotocol } = upgradeToken(c.req.raw);
  if (!token) throw unauthorized('Send the access token as subprotocols ["bearer", "<jwt>"] or ?access_token=');
  const { user, expiresAt } = await signInWithToken(c, token);
  const project = await projectFor(c, c.req.param("id"));
  const since = parseWith(seqQuery.optional(), c.req.query("since"), "query.since");
  return roomStub(c.env, project.id).fetch("https://room/dashboard", {
    headers: {
      Upgrade: "websocket",
      "X-User-Id": user.id,
      "X-Token-Expires": String(expiresAt),
      ...(subprotocol ? { "X-Subprotocol": subprotocol } : {}),
      ...(since !== undefined ? { "X-Resume-Since": String(since) } : {}),
    },
  });
});

/**
 * Agents' sockets: the API key in X-API-Key (or Authorization: Bearer orc_...)
 * is checked here; without one, the room expects {"type":"auth","api_key"}
 * as the first message.
 */
liveRoutes.get("/:id/agent-ws", async (c) => {
  requireUpgrade(c);
  const projectId = c.req.param("id");
  const apiKey = apiKeyOf(c);
  const headers: Record<string, string> = { Upgrade: "websocket", "X-Hub-Base": hubBaseUrl(c) };
  if (apiKey) {
    const server = await serverForApiKey(c, apiKey);
    if (!server) throw unauthorized("The API key is invalid or has been revoked", "INVALID_API_KEY");
    c.set("principal", { kind: "server", server });
    await projectFor(c, projectId);
    Object.assign(headers, { "X-Server-Id": server.id, "X-Server-Name": server.name, "X-Key-Hash": server.apiKeyHash! });
  } else if (!isUuid(projectId) || !(await c.var.db.query.projects.findFirst({ columns: { id: true }, where: eq(projects.id, projectId) }))) {
    // Who is asking is learnt only from the first message, but no room is woken for a project that does not exist.
    throw notFound("Project");
  }
  return roomStub(c.env, projectId).fetch("https://room/agent", { headers });
});
