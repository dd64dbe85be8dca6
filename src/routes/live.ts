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
import { personOfUpgrade, requireUpgrade } from "../http/upgrade";
import { hubBaseUrl } from "../http/base-url";
import { notFound, unauthorized } from "../http/problem";
import { apiKeyOf, serverForApiKey } from "../auth/middleware";
import { roomStub } from "../room/client";

export const liveRoutes = new Hono<HubEnv>();

liveRoutes.get("/:id/ws", async (c) => {
  const { user, expiresAt, subprotocolHeaders } = await personOfUpgrade(c);
  const project = await projectFor(c, c.req.param("id"));
  const since = parseWith(seqQuery.optional(), c.req.query("since"), "query.since");
  return roomStub(c.env, project.id).fetch("https://room/dashboard", {
    headers: {
      Upgrade: "websocket",
      "X-User-Id": user.id,
      "X-Token-Expires": String(expiresAt),
      ...subprotocolHeaders,
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
