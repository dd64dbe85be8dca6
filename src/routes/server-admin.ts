/**
 * What admins change about a server: its name and the capabilities declared for it in the hub, revoking its key, and
 * removing it (its tasks handed back as a lost agent's are).
 */
import { mirrorServer } from "../db/shard-mirrors";
import { and, eq, inArray, isNull } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { person } from "../middleware/guards";
import { nowIso } from "../db/client";
import { isUniqueViolation } from "../db/errors";
import { OPEN_SESSION_STATUSES, servers, sessions, tasks, UNFINISHED_TASK } from "../db/schema";
import { liveGrantsOf } from "../grants/grant-store";
import { readJson } from "../http/body";
import { isUuid, label, serverJson } from "../http/fields";
import type { HubContext, HubEnv } from "../http/context";
import { conflict, notFound } from "../http/problem";
import { capabilitiesSchema } from "../protocol/orchestratia-v1";
import { offerWaitingTasks, projectsIn, refuseKeyInRooms, roomStub, runInRoom, shutdownServer } from "../room/client";
import { linkStub } from "../server-link/client";
import { documented } from "../openapi/operation";
import { id } from "../views/fields";
import { serverDetailsSchema, serverDetailsView } from "../views/agents";

export const serverAdminRoutes = new Hono<HubEnv>();

const serverId = (c: HubContext) => {
  const value = c.req.param("id") ?? "";
  if (!isUuid(value)) throw notFound("Server");
  return value;
};

const patchBody = z
  .object({
    name: label().optional().meta({ description: "Unique among servers: 409 `SERVER_NAME_TAKEN` for a name another server has" }),
    declared: serverJson(capabilitiesSchema)
      .nullable()
      .optional()
      .meta({
        description:
          "An orchestratia/capabilities/v1 object (repos, languages, tools, environments, tags, max_concurrent_tasks) replacing what was declared " +
          "before; null forgets it. Kept beside what the daemon sends, which it never overwrites",
      }),
  })
  .refine((b) => b.name !== undefined || b.declared !== undefined, { message: "must name `name` or `declared`", path: ["name"] });

serverAdminRoutes.patch(
  "/:id",
  documented({
    id: "updateServer",
    tag: "Servers",
    summary: "Rename a server, or declare its capabilities (admins)",
    description:
      "Changes a server's name or the capabilities declared for it in the hub.\n\n" +
      "Matching uses what the daemon sends and what is declared here together: lists are joined, repos merged, and the declared " +
      "`max_concurrent_tasks` wins. Declaring makes the server a candidate for the tasks waiting for one. A renamed server keeps its key; " +
      "the daemon registering again under the old name makes a new server.",
    caller: "person",
    body: patchBody,
    responses: { 200: serverDetailsSchema },
  }),
  person("admin"),
  async (c) => {
    const id = serverId(c);
    const body = await readJson(c, patchBody);
    const before = await c.var.db.query.servers.findFirst({ where: eq(servers.id, id) });
    if (!before) throw notFound("Server");
    const changes = {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.declared !== undefined ? { declaredCapabilities: body.declared } : {}),
    };
    const updated = await c.var.db
      .update(servers)
      .set({ ...changes, updatedAt: nowIso() })
      .where(eq(servers.id, id))
      .returning()
      .catch((e: unknown) => {
        if (isUniqueViolation(e)) throw conflict(`A server named "${body.name}" exists already`, "SERVER_NAME_TAKEN");
        throw e;
      });
    if (!updated[0]) throw notFound("Server");
    await mirrorServer(c.env, id);
    if (body.declared && !before.revokedAt) c.executionCtx.waitUntil(offerWaitingTasks(c.env, before.projectIds ?? null));
    return c.json(serverDetailsView(updated[0]));
  },
);

/**
 * Revokes the server's key: its rooms refuse it first, then D1 forgets it, only if it is still the key the rooms
 * were told of (a registration may have replaced it meanwhile: then the new one is told and revoked).
 */
async function revokeKey(c: HubContext, id: string) {
  for (let attempt = 1; ; attempt++) {
    const before = await c.var.db.query.servers.findFirst({ where: eq(servers.id, id) });
    if (!before) throw notFound("Server");
    await refuseKeyInRooms(c.env, { projectIds: before.projectIds ?? null, keyHash: before.apiKeyHash });
    const now = nowIso();
    const [updated] = await c.var.db
      .update(servers)
      .set({ apiKeyHash: null, revokedAt: before.revokedAt ?? now, updatedAt: now })
      .where(and(eq(servers.id, id), before.apiKeyHash === null ? isNull(servers.apiKeyHash) : eq(servers.apiKeyHash, before.apiKeyHash)))
      .returning();
    if (updated) {
      await mirrorServer(c.env, id);
      return { before, updated };
    }
    if (attempt === 3) throw conflict("The server registered again while it was being revoked; revoke it again", "CONCURRENT_CHANGE");
  }
}

/** Revokes the key, tells its agents and daemon to stop (closing its socket), and closes its open sessions, each with its event. */
async function revoke(c: HubContext, id: string) {
  const { before, updated } = await revokeKey(c, id);
  const stopped = shutdownServer(
    c.env,
    { id, projectIds: updated.projectIds ?? null, keyHash: before.apiKeyHash },
    "the server's API key was revoked",
    "revoked",
  );
  // Its sessions end through their projects' rooms; the agents are stopped if the machine comes back.
  const open = await c.var.db
    .select({ id: sessions.id, projectId: sessions.projectId })
    .from(sessions)
    .where(and(eq(sessions.serverId, id), inArray(sessions.status, OPEN_SESSION_STATUSES)));
  for (const s of open) {
    await linkStub(c.env, id).endSession(s.id, "kill");
    await runInRoom(c, s.projectId, { op: "session_status", sessionId: s.id, serverName: updated.name, change: { status: "closed" } });
  }
  return { updated, stopped };
}

serverAdminRoutes.post(
  "/:id/revoke",
  documented({
    id: "revokeServer",
    tag: "Servers",
    summary: "Revoke a server's key (admins)",
    description:
      "Revoke a server's API key and close its sessions.\n\n" +
      "Its connected agents and daemon are told to stop; its open sessions close (each with its event). Its tasks stay as they are (the lease " +
      "hands them back if its agents do not come back). The server stays listed as `revoked` and can register again with a new registration " +
      "token. Revoking again answers the server as it is.",
    caller: "person",
    responses: { 200: serverDetailsSchema },
  }),
  person("admin"),
  async (c) => {
    const { updated, stopped } = await revoke(c, serverId(c));
    c.executionCtx.waitUntil(stopped);
    return c.json(serverDetailsView(updated));
  },
);

const removed = z.object({
  id,
  name: z.string(),
  removed: z.literal(true),
  tasks_handed_back: z.int().meta({ description: "Its unfinished tasks: requeued if no work had begun, otherwise failed with `AGENT_LOST` (recoverable)" }),
});

serverAdminRoutes.delete(
  "/:id",
  documented({
    id: "removeServer",
    tag: "Servers",
    summary: "Remove a server (admins)",
    description:
      "Revokes the server's key and removes it from the hub.\n\n" +
      "Its daemon's socket is closed and its agents told to stop; its open sessions close; its unfinished tasks are handed back as a lost " +
      "agent's are (`task_requeued` with `reason: server_removed` when no work had begun, otherwise `task_failed` with `AGENT_LOST`); every " +
      "project it served records `server_removed`. Its session history goes with it. 409 `SERVER_HAS_ACCESS_GRANTS` while it takes part in a live " +
      "SSH access grant (revoke those first).",
    caller: "person",
    responses: { 200: removed },
  }),
  person("admin"),
  async (c) => {
    const id = serverId(c);
    const existing = await c.var.db.query.servers.findFirst({ where: eq(servers.id, id), columns: { id: true } });
    if (!existing) throw notFound("Server");
    const grants = await liveGrantsOf(c.env.DB, id);
    if (grants.length) {
      throw conflict(`The server takes part in ${grants.length} live SSH access grant(s): revoke them first`, "SERVER_HAS_ACCESS_GRANTS", {
        grant_ids: grants.map((g) => g.id),
      });
    }
    const { updated, stopped } = await revoke(c, id);
    await stopped;
    // Revoked first, so no room offers these tasks to it again.
    const held = await c.var.db
      .select({ id: tasks.id, projectId: tasks.projectId })
      .from(tasks)
      .where(and(eq(tasks.assignedServerId, id), UNFINISHED_TASK));
    for (const t of held) await runInRoom(c, t.projectId, { op: "release_task", taskId: t.id, serverId: id, serverName: updated.name });
    for (const projectId of await projectsIn(c.env, updated.projectIds ?? null)) {
      await runInRoom(c, projectId, { op: "server_removed", serverId: id, serverName: updated.name });
      await roomStub(c.env, projectId).forgetServer(id);
    }
    await c.var.db.delete(servers).where(eq(servers.id, id));
    // Its copies go too, and with them its sessions on every shard (their cascades).
    await mirrorServer(c.env, id);
    return c.json({ id, name: updated.name, removed: true, tasks_handed_back: held.length } satisfies z.infer<typeof removed>);
  },
);
