/** The agent surface's view of servers and sessions (`/api/v1/server/...`, API key). */
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectFor, scopesOverlap } from "../auth/access";
import { agent, currentServer } from "../auth/middleware";
import type { SessionRow } from "../db/client";
import { projects, servers, sessions } from "../db/schema";
import { listSessions } from "../db/session-queries";
import { listTasks } from "../db/task-queries";
import { UNFINISHED } from "./tasks";
import { readJson, readQuery } from "../http/body";
import type { HubEnv } from "../http/context";
import { label, text, uuid } from "../http/fields";
import { forbidden, notFound } from "../http/problem";
import { runInRoom } from "../room/client";
import { serverView, sessionView } from "../views/agents";

export const agentSessionRoutes = new Hono<HubEnv>();

agentSessionRoutes.get("/servers", agent, async (c) => {
  const me = currentServer(c);
  const rows = await c.var.db.select().from(servers).orderBy(servers.name);
  const now = Date.now();
  const visible = rows.filter((s) => !s.revokedAt && scopesOverlap(me.projectIds ?? null, s.projectIds ?? null));
  return c.json({ servers: visible.map((s) => serverView(s, now)) });
});

agentSessionRoutes.post("/sessions", agent, async (c) => {
  const me = currentServer(c);
  const body = await readJson(
    c,
    z.object({
      name: label(),
      project_id: uuid,
      working_directory: text(4096).nullish(),
      agent_type: text(100).nullish(),
    }),
  );
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
});

agentSessionRoutes.get("/sessions", agent, async (c) => {
  const me = currentServer(c);
  // `active` (the default) is every open session, starting or running.
  const query = readQuery(c, z.object({ project_id: uuid.optional(), status: z.enum(["active", "closed", "all"]).default("active") }));
  const projectIds = query.project_id ? [(await projectFor(c, query.project_id)).id] : (me.projectIds ?? null);
  return c.json({ sessions: await listSessions(c.var.db, projectIds, query.status === "active" ? "open" : query.status === "closed" ? "ended" : "all") });
});

agentSessionRoutes.delete("/sessions/:id", agent, async (c) => {
  const me = currentServer(c);
  const session = await c.var.db.query.sessions.findFirst({ where: eq(sessions.id, c.req.param("id")) });
  if (!session || !scopesOverlap(me.projectIds ?? null, [session.projectId])) throw notFound("Session");
  if (session.serverId !== me.id) throw forbidden("Only the server that hosts a session can close it");
  const { data } = await runInRoom(c, session.projectId, { op: "session_status", sessionId: session.id, serverName: me.name, change: { status: "closed" } });
  return c.json(sessionView(data!.session as SessionRow, me.name));
});

/** What `orchestratia status` shows: who the caller is and the work assigned to its session (or server). */
agentSessionRoutes.get("/status", agent, async (c) => {
  const me = currentServer(c);
  const { session_id } = readQuery(c, z.object({ session_id: uuid.optional() }));
  const session = session_id ? await c.var.db.query.sessions.findFirst({ where: eq(sessions.id, session_id) }) : undefined;
  if (session_id && (!session || !scopesOverlap(me.projectIds ?? null, [session.projectId]))) throw notFound("Session");
  const project = session ? await c.var.db.query.projects.findFirst({ where: eq(projects.id, session.projectId) }) : undefined;
  const { tasks } = await listTasks(c.var.db, {
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
});
