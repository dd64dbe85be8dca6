/** Agents' servers: the daemon's heartbeat, and the people's view of servers (admins' changes: server-admin.ts). */
import { heartbeatToMirror, mirrorServer } from "../db/shard-mirrors";
import { logError } from "../runtime/log";
import { and, desc, eq, inArray } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { scopesOverlap, visibleProjectIds } from "../auth/access";
import { isHubAdmin } from "../auth/token-limits";
import { agent, currentServer, person } from "../middleware/guards";
import { nowIso, type ServerRow } from "../db/client";
import { inJsonList, qualified } from "../db/sql";
import { OPEN_SESSION_STATUSES, servers, sessions, tasks, UNFINISHED_TASK } from "../db/schema";
import { HUB_PROTOCOL_VERSIONS, protocolRefusal } from "../domain/protocol-version";
import { readJson } from "../http/body";
import { serverJson } from "../http/fields";
import type { HubContext, HubEnv } from "../http/context";
import { notFound, Problem } from "../http/problem";
import { capabilitiesSchema } from "../protocol/orchestratia-v1";
import { effectiveCapabilities } from "../domain/capability-union";
import { capabilitiesWarnings, withWarnings } from "../protocol/schema-id";
import { maxConcurrentTasks } from "../domain/matching";
import { activeTasksOf } from "../db/server-candidates";
import { isOnline } from "../domain/presence";
import { announceOnline, offerWaitingTasks } from "../room/client";
import { linkStub } from "../server-link/client";
import { documented } from "../openapi/operation";
import { id, timestamp } from "../views/fields";
import { serverCapabilities, serverDetailsView, serverView, serverWithLoadSchema, warnings } from "../views/agents";
import { TASK_STATUSES } from "../domain/lifecycle";
import { serverAdminRoutes } from "./server-admin";

export const serverRoutes = new Hono<HubEnv>();

const heartbeatBody = z.looseObject({
  system_info: serverJson(z.record(z.string(), z.unknown())).nullish(),
  capabilities: serverJson(capabilitiesSchema).nullish(),
  protocol_versions: z.array(z.string().max(64)).max(20).nullish(),
});

const heartbeatAnswer = z.object({ status: z.literal("ok"), server_time: timestamp, warnings });

serverRoutes.post(
  "/heartbeat",
  documented({
    id: "heartbeat",
    tag: "Servers",
    summary: "Send a heartbeat",
    description:
      "The daemon's heartbeat: keeps its server online, and updates what it declares.\n\n" +
      "A server is online while its last heartbeat is under 90 s old (the daemon beats every 30 s). Fields left out keep their value. " +
      "Coming online, or declaring more capacity, offers the server the tasks waiting for one. 422 `INCOMPATIBLE_PROTOCOL` when none of " +
      "`protocol_versions` is spoken here (`[]` included); 422 naming a DataRef pointer in `system_info` or `capabilities` (a server belongs to no project).",
    caller: "agent",
    body: heartbeatBody,
    bodyRequired: false,
    responses: { 200: heartbeatAnswer },
  }),
  agent,
  async (c) => {
    const server = currentServer(c);
    const body = await readJson(c, heartbeatBody);
    // Left out, the versions it registered with stand.
    const refusal = protocolRefusal(body.protocol_versions ?? undefined);
    if (refusal)
      throw new Problem(422, "INCOMPATIBLE_PROTOCOL", `The hub speaks ${HUB_PROTOCOL_VERSIONS.join(", ")}`, [{ path: "protocol_versions", message: refusal }]);
    const now = nowIso();
    // Coming online, or declaring more capacity, makes the server a candidate for waiting tasks.
    const maxBefore = maxConcurrentTasks(serverCapabilities(server));
    const maxNow = body.capabilities ? maxConcurrentTasks(effectiveCapabilities(body.capabilities, server.declaredCapabilities)) : maxBefore;
    const cameOnline = !isOnline(server.lastHeartbeat);
    const offer = cameOnline || maxNow > maxBefore || (body.capabilities && !server.capabilities);
    await c.var.db
      .update(servers)
      .set({
        lastHeartbeat: now,
        ...(body.system_info ? { systemInfo: body.system_info } : {}),
        ...(body.capabilities ? { capabilities: body.capabilities } : {}),
        ...(body.protocol_versions ? { protocolVersions: body.protocol_versions } : {}),
      })
      .where(eq(servers.id, server.id));
    // The rooms on other shards read the server (its heartbeat, capabilities) from their shard's copy: copied when a
    // column changed, and the heartbeat once per HEARTBEAT_MIRROR_MS. The directory holds the truth: a copy that fails
    // is logged and made again by the next change or the hourly sweep, never failing the heartbeat.
    const differs = (sent: unknown, stored: unknown) => !!sent && JSON.stringify(sent) !== JSON.stringify(stored);
    const changed =
      differs(body.system_info, server.systemInfo) ||
      differs(body.capabilities, server.capabilities) ||
      differs(body.protocol_versions, server.protocolVersions);
    const mirrored =
      changed || heartbeatToMirror(server.lastHeartbeat, now)
        ? mirrorServer(c.env, server.id).catch((e: unknown) =>
            logError("copying a server's row to the shards failed", { server_id: server.id, operation: "heartbeat" }, e),
          )
        : Promise.resolve();
    c.executionCtx.waitUntil(mirrored);
    // Offered once the shards' copies hold what it now declares: a room matches waiting tasks against its shard's copy.
    if (offer) c.executionCtx.waitUntil(mirrored.then(() => offerWaitingTasks(c.env, server.projectIds ?? null)));
    if (cameOnline) c.executionCtx.waitUntil(announceOnline(c.env, { id: server.id, name: server.name, projectIds: server.projectIds ?? null }));
    return c.json({ status: "ok", server_time: now, ...withWarnings(capabilitiesWarnings(body.capabilities)) } satisfies z.infer<typeof heartbeatAnswer>);
  },
);

/** Servers a person may see: all for admins, otherwise those serving one of their projects. */
async function serversVisibleToPerson(c: HubContext) {
  const visible = await visibleProjectIds(c);
  const rows = await c.var.db
    .select({ server: servers, activeTasks: activeTasksOf(qualified(servers.id)) })
    .from(servers)
    .orderBy(servers.name);
  return rows.filter((r) => scopesOverlap(visible, r.server.projectIds ?? null));
}

/** A server as people see it: with its load (active tasks across projects) against its capacity. */
const withLoad = (r: { server: ServerRow; activeTasks: number }, now: number, full: boolean): z.infer<typeof serverWithLoadSchema> => ({
  ...(full ? serverDetailsView(r.server, now) : serverView(r.server, now)),
  active_tasks: r.activeTasks,
  max_concurrent_tasks: maxConcurrentTasks(serverCapabilities(r.server)),
});

const isAdmin = (c: HubContext) => isHubAdmin(c.var.principal);

const openSession = z.object({
  id,
  name: z.string(),
  server_id: id,
  project_id: id,
  status: z.enum(OPEN_SESSION_STATUSES),
  created_at: timestamp,
});

const listedServer = serverWithLoadSchema
  .extend({
    daemon_connected: z.boolean().meta({ description: "Whether its daemon holds its socket now: sessions can be started only where it does" }),
    sessions: z.array(openSession).meta({ description: "Its open sessions in the projects the caller can see" }),
  })
  .meta({ id: "ServerListing", description: "A server as the list shows it: with its load, its daemon's socket and its open sessions" });

serverRoutes.get(
  "/",
  documented({
    id: "listServers",
    tag: "Servers",
    summary: "List servers",
    description:
      "The servers the caller can see, by name, with their load and open sessions.\n\n" +
      "Admins see every server, with its address, machine details and scope; others the servers serving one of their projects.",
    caller: "person",
    responses: { 200: z.object({ servers: z.array(listedServer) }) },
  }),
  person(),
  async (c) => {
    const now = Date.now();
    const visible = await serversVisibleToPerson(c);
    const open = await openSessionsIn(c, await visibleProjectIds(c));
    // Whether each live server's daemon holds its socket now: sessions can only be started where it does.
    const connected = await Promise.all(visible.map((r) => (r.server.revokedAt ? false : linkStub(c.env, r.server.id).connected())));
    return c.json({
      servers: visible.map((r, i): z.infer<typeof listedServer> => ({
        ...withLoad(r, now, isAdmin(c)),
        daemon_connected: connected[i]!,
        sessions: open.filter((s) => s.server_id === r.server.id),
      })),
    });
  },
);

/** The open agent sessions in these projects (null: every project). */
async function openSessionsIn(c: HubContext, projectIds: string[] | null, serverId?: string): Promise<z.infer<typeof openSession>[]> {
  if (projectIds?.length === 0) return [];
  const rows = await c.var.db
    .select({
      id: sessions.id,
      name: sessions.name,
      server_id: sessions.serverId,
      project_id: sessions.projectId,
      status: sessions.status,
      created_at: sessions.createdAt,
    })
    .from(sessions)
    .where(
      and(
        inArray(sessions.status, OPEN_SESSION_STATUSES),
        projectIds ? inJsonList(sessions.projectId, projectIds) : undefined,
        serverId ? eq(sessions.serverId, serverId) : undefined,
      ),
    )
    .orderBy(sessions.name);
  // Filtered to the open statuses above.
  return rows as z.infer<typeof openSession>[];
}

const currentTask = z.object({ id, title: z.string(), status: z.enum(TASK_STATUSES), project_id: id, updated_at: timestamp });

const serverPage = listedServer
  .extend({ tasks: z.array(currentTask).meta({ description: "Its unfinished tasks in the projects the caller can see, most recently changed first" }) })
  .meta({ id: "ServerPage", description: "A server with its load, its daemon's socket, its open sessions and its current tasks" });

serverRoutes.get(
  "/:id",
  documented({
    id: "getServer",
    tag: "Servers",
    summary: "Get a server",
    description:
      "A server the caller can see: its status and load, its open sessions and current tasks, and its capabilities as the daemon sent them " +
      "(`capabilities`), as declared in the hub (`declared`) and as matching uses them (`effective`).\n\n" +
      "Admins see its address, machine details and scope too. 404 for a server serving none of the caller's projects.",
    caller: "person",
    responses: { 200: serverPage },
  }),
  person(),
  async (c) => {
    const server = (await serversVisibleToPerson(c)).find((r) => r.server.id === c.req.param("id"));
    if (!server) throw notFound("Server");
    const visible = await visibleProjectIds(c);
    const current =
      visible?.length === 0
        ? []
        : await c.var.db
            .select({ id: tasks.id, title: tasks.title, status: tasks.status, project_id: tasks.projectId, updated_at: tasks.updatedAt })
            .from(tasks)
            .where(and(eq(tasks.assignedServerId, server.server.id), UNFINISHED_TASK, visible ? inJsonList(tasks.projectId, visible) : undefined))
            .orderBy(desc(tasks.updatedAt))
            .limit(100);
    return c.json({
      ...withLoad(server, Date.now(), isAdmin(c)),
      daemon_connected: server.server.revokedAt ? false : await linkStub(c.env, server.server.id).connected(),
      sessions: await openSessionsIn(c, visible, server.server.id),
      tasks: current,
    } satisfies z.infer<typeof serverPage>);
  },
);

serverRoutes.route("/", serverAdminRoutes);
