/**
 * Who a task goes to: a session or server named by a person, a task-format
 * request's routing.target, or the best-scoring server (seed §5).
 */
import { and, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { scopesOverlap } from "../auth/access";
import { OPEN_SESSION_STATUSES, servers, sessions, tasks } from "../db/schema";
import { readJson } from "../http/body";
import type { HubContext } from "../http/context";
import { conflict, fieldError, notFound, Problem } from "../http/problem";
import { assignBody } from "../protocol/hub-api";
import { type AssignTarget } from "../room/commands";
import { runInRoom, runInRoomForView } from "../room/client";
import { id } from "../views/fields";
import { taskSchema } from "../views/tasks";
import { rankServers } from "../domain/matching";
import { type Requirements } from "../protocol/orchestratia-v1";
import { serverCandidates } from "../db/server-candidates";
import type { TaskSurface } from "./task-surface";
import { taskFor } from "./task-access";

/** Finds who a task goes to: an open session by name (optionally on a named server), a session id, or a server by name. */
export async function assignTarget(
  c: HubContext,
  projectId: string,
  body: Pick<z.output<typeof assignBody>, "session_name" | "server_name" | "session_id">,
): Promise<AssignTarget> {
  const { db } = c.var;
  if (body.session_name || body.session_id) {
    const rows = await db
      .select({ session: sessions, server: servers })
      .from(sessions)
      .innerJoin(servers, eq(servers.id, sessions.serverId))
      .where(
        and(
          eq(sessions.projectId, projectId),
          inArray(sessions.status, OPEN_SESSION_STATUSES),
          body.session_id ? eq(sessions.id, body.session_id) : eq(sessions.name, body.session_name!),
          body.server_name ? eq(servers.name, body.server_name) : undefined,
        ),
      );
    const live = rows.filter((r) => !r.server.revokedAt);
    const named = body.session_name ? `named "${body.session_name}"` : body.session_id!;
    if (live.length === 0) throw notFound(`Open session ${named} in this project`);
    if (live.length > 1) {
      throw conflict(`${live.length} open sessions are ${named}; add server_name to choose one`, "AMBIGUOUS_SESSION", {
        servers: live.map((r) => r.server.name),
      });
    }
    const { session, server } = live[0]!;
    return { serverId: server.id, serverName: server.name, sessionId: session.id, sessionName: session.name };
  }
  const server = await db.query.servers.findFirst({ where: eq(servers.name, body.server_name!) });
  if (!server || server.revokedAt || !scopesOverlap(server.projectIds ?? null, [projectId])) {
    throw notFound(`Server "${body.server_name}" serving this project`);
  }
  return { serverId: server.id, serverName: server.name, sessionId: null, sessionName: null };
}

/** A task-format routing.target: an open session of that name in the project, else a server of that name serving it. */
export async function routingTarget(c: HubContext, projectId: string, name: string): Promise<AssignTarget> {
  for (const by of [{ session_name: name }, { server_name: name }]) {
    try {
      return await assignTarget(c, projectId, by);
    } catch (e) {
      if (!(e instanceof Problem && e.status === 404)) throw e;
    }
  }
  throw fieldError("routing.target", `names no open session in the project and no server serving it: ${JSON.stringify(name)}`);
}

async function assignTask(c: HubContext, taskId: string) {
  const task = await taskFor(c, taskId, "write");
  const body = await readJson(c, assignBody);
  const target = await assignTarget(c, task.projectId, body);
  return (await runInRoomForView(c, task.projectId, { op: "assign", taskId: task.id, target, requirePlan: body.require_plan })).view;
}

/** Every server that could take the task, scored as seed §5 says, best first. */
async function matchingAgents(c: HubContext, taskId: string) {
  const task = await taskFor(c, taskId);
  const row = await c.var.db.query.tasks.findFirst({ where: eq(tasks.id, task.id), columns: { requirements: true, rejectedBy: true } });
  const candidates = await serverCandidates(c.var.db, task.projectId);
  const servers = rankServers((row!.requirements ?? {}) as Requirements, candidates, row!.rejectedBy).map(({ active_tasks: _, ...match }) => match);
  return { servers, total: servers.length };
}

const serverMatch = z.object({
  server_id: id,
  server_name: z.string(),
  score: z.int().meta({ description: "-1: disqualified (the first reason says why)" }),
  status: z.enum(["online", "offline"]),
  reasons: z.array(z.string()).meta({ description: "The seed §5 strings, e.g. `repo match: api (+100)`" }),
});
const matches = z.object({ servers: z.array(serverMatch).meta({ description: "Best first; disqualified servers last" }), total: z.int() });
const autoAssigned = z.union([
  z.object({ status: z.literal("assigned"), server_id: id, server_name: z.string(), match_score: z.int() }),
  z.object({ status: z.literal("no_match").meta({ description: "No server qualifies: the task stays pending" }) }),
]);

/** POST /:id/assign : to a named session or server. */
export function assignRoute({ r, describe, write, taskId }: TaskSurface) {
  r.post(
    "/:id/assign",
    describe({
      id: "assignTask",
      summary: "Assign a task",
      description:
        "Give a task to a session or a server (→ `assigned`, or `planning` with `require_plan`).\n\n" +
        "From `pending`, `assigned` or `planning`. `session_name` or `session_id` names an open session in the task's project (add `server_name` " +
        "when the name is open on several servers: otherwise 409 `AMBIGUOUS_SESSION`); `server_name` alone names a server serving the project. " +
        "An unknown target is 404.",
      body: assignBody,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await assignTask(c, taskId(c))),
  );
}

/** GET /:id/matching-agents : every server that could take the task, scored. */
export function matchingRoute({ r, describe, read, taskId }: TaskSurface) {
  r.get(
    "/:id/matching-agents",
    describe({
      id: "matchingAgents",
      summary: "Match servers to a task",
      description: "Every server that could take the task, scored (seed §5), best first.",
      responses: { 200: matches },
    }),
    read,
    async (c) => c.json(await matchingAgents(c, taskId(c))),
  );
}

/** POST /:id/auto-assign : to the best-scoring server. */
export function autoAssignRoute({ r, describe, write, taskId }: TaskSurface) {
  r.post(
    "/:id/auto-assign",
    describe({
      id: "autoAssignTask",
      summary: "Auto-assign a task",
      description:
        "Assign a pending task to the best-scoring server (seed §5).\n\n" +
        "Only a `pending` task (409 `INVALID_TRANSITION` otherwise), not waiting for a person's approval (409 `TASK_AWAITING_APPROVAL`). " +
        "A task without requirements is matched as requiring nothing: any server serving the project with room for it, online first. " +
        "`no_match` when no server qualifies; the task then stays pending.",
      responses: { 200: autoAssigned },
    }),
    write,
    async (c) => {
      const task = await taskFor(c, taskId(c), "write");
      const { data } = await runInRoom(c, task.projectId, { op: "auto_assign", taskId: task.id });
      return c.json(data as z.infer<typeof autoAssigned>);
    },
  );
}
