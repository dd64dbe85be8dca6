/** The agent surface's view of servers and sessions (`/api/v1/server/...`, API key). */
import { listSessionsOnShards, listTasksOnShards, sessionOnShards } from "../views/shard-lists";
import { dbOf } from "../db/client";
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { taskSchema } from "../views/tasks";
import { projectFor, scopesOverlap } from "../auth/access";
import { agent, currentServer } from "../middleware/guards";
import type { SessionRow } from "../db/client";
import { MCP_STATUSES, projects, servers } from "../db/schema";
import { UNFINISHED } from "./task-reading";
import { readJson, readQuery } from "../http/body";
import type { HubEnv } from "../http/context";
import { agentType, label, text, uuid } from "../http/fields";
import { forbidden, notFound } from "../http/problem";
import { runInRoom } from "../room/client";
import { documented } from "../openapi/operation";
import { id } from "../views/fields";
import { serverSchema, serverView, sessionSchema, sessionView } from "../views/agents";

export const agentSessionRoutes = new Hono<HubEnv>();

const newSession = z.object({
  name: label(),
  project_id: uuid,
  working_directory: text(4096).nullish(),
  agent_type: agentType.nullish(),
});
const sessionsQuery = z.object({
  project_id: uuid.optional().meta({ description: "Left out: every project the server serves" }),
  status: z.enum(["active", "closed", "all"]).default("active").meta({ description: "`active`: open sessions (starting or running); `closed`: ended ones" }),
});
const statusQuery = z.object({ session_id: uuid.optional().meta({ description: "The caller's session; left out: the work assigned to the server" }) });

const agentStatus = z.object({
  connected: z.literal(true),
  server_id: id,
  server_name: z.string(),
  session_id: id.nullable(),
  session_name: z.string().nullable(),
  project_id: id.nullable().meta({ description: "The session's project (null without `session_id`)" }),
  project_name: z.string().nullable(),
  tasks: z.array(taskSchema).meta({ description: "Unfinished tasks assigned to the session (or the server), at most 200" }),
  task_summary: z.object({
    pending: z.int().meta({ description: "pending, assigned, planning or plan_review" }),
    running: z.int().meta({ description: "running or needs_human" }),
    total: z.int(),
  }),
});

agentSessionRoutes.get(
  "/servers",
  documented({
    id: "listServersForAgent",
    tag: "Servers",
    summary: "List fellow servers",
    description: "The servers sharing a project with the calling server, by name (revoked ones left out).",
    caller: "agent",
    responses: { 200: z.object({ servers: z.array(serverSchema) }) },
  }),
  agent,
  async (c) => {
    const me = currentServer(c);
    const rows = await c.var.db.select().from(servers).orderBy(servers.name);
    const now = Date.now();
    const visible = rows.filter((s) => !s.revokedAt && scopesOverlap(me.projectIds ?? null, s.projectIds ?? null));
    return c.json({ servers: visible.map((s) => serverView(s, now)) });
  },
);

agentSessionRoutes.post(
  "/sessions",
  documented({
    id: "registerSession",
    tag: "Sessions",
    summary: "Register a session",
    description:
      "Record a session the calling server's agent runs in (a worker, `running` at once).\n\n" +
      "The agent calling is the process working in it, so the session starts `running`. The name is unique among the server's open " +
      "sessions (409 `SESSION_NAME_TAKEN` otherwise); tasks are assigned to it by that name.",
    caller: "agent",
    body: newSession,
    responses: { 201: sessionSchema },
  }),
  agent,
  async (c) => {
    const me = currentServer(c);
    const body = await readJson(c, newSession);
    await projectFor(c, body.project_id, "write");
    const { data } = await runInRoom(c, body.project_id, {
      op: "open_session",
      session: {
        id: crypto.randomUUID(),
        serverId: me.id,
        serverName: me.name,
        name: body.name,
        workingDirectory: body.working_directory ?? null,
        agentType: body.agent_type ?? null,
        role: "worker",
        // The agent registering it is the process working in it.
        status: "running",
      },
    });
    return c.json(sessionView(data!.session as SessionRow, me.name), 201);
  },
);

agentSessionRoutes.get(
  "/sessions",
  documented({
    id: "listSessionsForAgent",
    tag: "Sessions",
    summary: "List sessions",
    description: "Sessions in the calling server's projects (any server's), newest first.",
    caller: "agent",
    query: sessionsQuery,
    responses: { 200: z.object({ sessions: z.array(sessionSchema) }) },
  }),
  agent,
  async (c) => {
    const me = currentServer(c);
    // `active` (the default) is every open session, starting or running.
    const query = readQuery(c, sessionsQuery);
    const projectIds = query.project_id ? [(await projectFor(c, query.project_id)).id] : (me.projectIds ?? null);
    const filter = query.status === "active" ? "open" : query.status === "closed" ? "ended" : "all";
    return c.json({ sessions: await listSessionsOnShards(c.env, c.var.db, projectIds, filter) });
  },
);

agentSessionRoutes.delete(
  "/sessions/:id",
  documented({
    id: "closeSessionForAgent",
    tag: "Sessions",
    summary: "Close a session",
    description: "Close a session the calling server hosts.\n\n" + "403 for another server's session.",
    caller: "agent",
    responses: { 200: sessionSchema },
  }),
  agent,
  async (c) => {
    const me = currentServer(c);
    const session = await sessionOnShards(c.env, c.var.db, c.req.param("id"));
    if (!session || !scopesOverlap(me.projectIds ?? null, [session.projectId])) throw notFound("Session");
    if (session.serverId !== me.id) throw forbidden("Only the server that hosts a session can close it");
    const { data } = await runInRoom(c, session.projectId, { op: "session_status", sessionId: session.id, serverName: me.name, change: { status: "closed" } });
    return c.json(sessionView(data!.session as SessionRow, me.name));
  },
);

const mcpReport = z.object({ mcp_status: z.enum(MCP_STATUSES, { error: `must be one of ${MCP_STATUSES.join(", ")}` }) });

/** The daemon reports what it did with the agent's MCP configuration each time it starts a session (hub.py _report_mcp_status). */
agentSessionRoutes.patch(
  "/sessions/:id/mcp-status",
  documented({
    id: "reportSessionMcpStatus",
    tag: "Sessions",
    summary: "Report a session's MCP status",
    description:
      "Record what the daemon did with the agent's MCP configuration when it started the session (the official daemon reports it on each start).\n\n" +
      "Only the server hosting the session may; any other session is 404. A change is a `session_mcp_status` event of the project.",
    caller: "agent",
    body: mcpReport,
    responses: { 200: sessionSchema },
  }),
  agent,
  async (c) => {
    const me = currentServer(c);
    const body = await readJson(c, mcpReport);
    const found = await sessionOnShards(c.env, c.var.db, c.req.param("id"));
    const session = found?.serverId === me.id ? found : undefined;
    if (!session || !scopesOverlap(me.projectIds ?? null, [session.projectId])) throw notFound("Session");
    const { data } = await runInRoom(c, session.projectId, {
      op: "session_mcp_status",
      sessionId: session.id,
      serverName: me.name,
      mcpStatus: body.mcp_status,
    });
    return c.json(sessionView(data!.session as SessionRow, me.name));
  },
);

/** What `orchestratia status` shows: who the caller is and the work assigned to its session (or server). */
agentSessionRoutes.get(
  "/status",
  documented({
    id: "getAgentStatus",
    tag: "Sessions",
    summary: "Get the agent's status",
    description:
      "Who the calling agent is, and the unfinished work assigned to its session (or its server).\n\n" +
      "What `orchestratia status` shows. 404 for a `session_id` outside the server's projects.",
    caller: "agent",
    query: statusQuery,
    responses: { 200: agentStatus },
  }),
  agent,
  async (c) => {
    const me = currentServer(c);
    const { session_id } = readQuery(c, statusQuery);
    const session = session_id ? await sessionOnShards(c.env, c.var.db, session_id) : undefined;
    if (session_id && (!session || !scopesOverlap(me.projectIds ?? null, [session.projectId]))) throw notFound("Session");
    // The project's name from the directory; the work from the shards the server's projects live on.
    const project = session ? await dbOf(c.env.DB).query.projects.findFirst({ where: eq(projects.id, session.projectId) }) : undefined;
    const { tasks } = await listTasksOnShards(c.env, c.var.db, {
      projectIds: me.projectIds ?? null,
      statuses: UNFINISHED,
      ...(session ? { forSession: session.id } : { assignedServerId: me.id }),
      limit: 200,
    });
    const count = (statuses: string[]) => tasks.filter((t) => statuses.includes(t.status)).length;
    return c.json({
      connected: true,
      server_id: me.id,
      server_name: me.name,
      session_id: session?.id ?? null,
      session_name: session?.name ?? null,
      project_id: project?.id ?? null,
      project_name: project?.name ?? null,
      tasks,
      task_summary: {
        pending: count(["pending", "assigned", "planning", "plan_review"]),
        running: count(["running", "needs_human"]),
        total: tasks.length,
      },
    });
  },
);
