/** How the Worker talks to a project's room: every write to a project's tasks goes through here. */
import type { ShutdownReason } from "../protocol/agent-orchestrator-messages";
import type { WorkerEnv as Env } from "../runtime/worker-env";
import { Problem, validationFailed } from "../http/problem";
import { logError } from "../runtime/log";
import { pointerErrors } from "../datarefs/pointers";
import { sql } from "drizzle-orm";
import { dbOf } from "../db/client";
import { READY_TO_OFFER } from "../db/schema";
import { taskView1 } from "../views/task-queries";
import type { HubContext } from "../http/context";
import { linkStub } from "../server-link/client";
import { rememberProjectOf } from "../db/task-projects";
import { MOVE_RETRY_AFTER_SECONDS } from "./room-move";
import { DIRECTORY, onEveryShard, rememberShard, shardDb } from "../db/shards";
import { countedStub } from "../db/round-trips";
import { type RoomActor, type RoomCommand, type RoomResult } from "./commands";
import { HUB_ACTOR } from "../runtime/room-rpc";

export function roomActor(c: HubContext): RoomActor {
  const p = c.var.principal!;
  return p.kind === "user"
    ? { kind: "person", userId: p.user.id, label: p.user.email }
    : {
        kind: "agent",
        serverId: p.server.id,
        serverName: p.server.name,
        label: `agent:${p.server.name}`,
        // The server row was found by this key's digest: the room refuses the write if it knows the key is revoked.
        ...(p.server.apiKeyHash ? { keyHash: p.server.apiKeyHash } : {}),
      };
}

/** Each call on it is one billed Durable Object request, counted against the request running. */
export const roomStub = (env: Env, projectId: string) => countedStub(env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(projectId)));

/**
 * Runs a command in the project's room; a refusal becomes the problem the client sees. Every DataRef pointer the
 * request's body holds must name a DataRef of this project: 422 naming each one that does not, before anything is written.
 * `actor` is the caller, unless the hub acts for a caller without a session (a trigger's door).
 */
export async function runInRoom(c: HubContext, projectId: string, command: RoomCommand, withView = false, actor: RoomActor = roomActor(c)) {
  if (c.var.pointingBody !== undefined) {
    const foreign = await pointerErrors(c.var.db, projectId, c.var.pointingBody, [], c.env);
    if (foreign.length > 0) throw validationFailed(foreign);
  }
  c.set("roomOutcome", "asked");
  c.set("logProject", projectId);
  // The room logs the operation under the request's id, so the request's line and the room's are found together.
  const options = { view: withView, requestId: c.var.requestId };
  // RPC's type mapping cannot express `unknown` payloads; the value is exactly a RoomResult.
  const result = (await roomStub(c.env, projectId).execute(actor, command, options)) as unknown as RoomResult;
  c.set("roomOutcome", result.ok ? "committed" : "refused");
  // The room wrote on the primary: the request's later reads, and the caller's next request, see that write.
  c.var.d1Session?.caughtUpTo(result.bookmark);
  // The rest of the request reads the project's rows on the shard its room names: another shard, or the directory's
  // (when this request had read an old shard from a memory the project's move left stale).
  c.set("db", result.shard ? shardDb(c.env, result.shard) : dbOf(c.env.DB));
  rememberShard(projectId, result.shard ?? DIRECTORY);
  if (result.ok && result.taskId) {
    c.set("logTask", result.taskId);
    // The room found the task in its project: the next write to it goes straight there.
    rememberProjectOf(result.taskId, projectId);
  }
  // Operators (and the benchmark) see what the write cost inside the room, with the operations it was committed with.
  const { ms, d1Queries, operations, rowsRead, rowsWritten, uncounted, doRequests } = result.metrics;
  c.header("Server-Timing", `room;dur=${ms.toFixed(2)};desc="d1 queries=${d1Queries}, operations=${operations}"`);
  // What the bill is made of, in entries of their own so the one above keeps its exact form.
  c.header("Server-Timing", `room-d1;desc="rows read=${rowsRead}, rows written=${rowsWritten}, calls uncounted=${uncounted}"`, { append: true });
  c.header("Server-Timing", `room-do;desc="requests=${doRequests}"`, { append: true });
  // How long its batches waited on their database (the shard's queue and its work): what `npm run bench -- shards` reads.
  c.header("Server-Timing", `room-batch;dur=${result.metrics.batchMs.toFixed(2)}`, { append: true });
  if (!result.ok) {
    const { status, code, detail, errors, extensions } = result.problem;
    // A project on the move takes writes again once it has moved.
    throw new Problem(status, code, detail, errors, status === 503 ? { "Retry-After": String(MOVE_RETRY_AFTER_SECONDS) } : {}, extensions);
  }
  return result;
}

/**
 * Runs a command and answers the task as it is afterwards: read in the
 * room's commit batch, or from D1 when the operation wrote nothing.
 */
export async function runInRoomForView(c: HubContext, projectId: string, command: RoomCommand) {
  const result = await runInRoom(c, projectId, command, true);
  return { result, view: result.view ?? (await taskView1(c.var.db, result.taskId)) };
}

/** Projects with tasks ready for auto-assignment: read from the index of those tasks (tasks_waiting), not from every task. */
export const PROJECTS_WITH_WAITING_TASKS = sql`SELECT DISTINCT project_id FROM tasks WHERE ${READY_TO_OFFER}`;

/**
 * Offers waiting tasks (pending, unblocked, with requirements) in the
 * server's projects to auto-assignment: run when a server comes online or
 * gains capacity.
 */
export async function offerWaitingTasks(env: Env, projectIds: string[] | null) {
  // One project's room is asked directly: its sweep finds whether anything waits.
  if (projectIds?.length === 1) return void (await roomStub(env, projectIds[0]!).execute(HUB_ACTOR, { op: "sweep" }));
  // Each shard's tasks, asked at once: a server may serve projects on any of them.
  const results = (await onEveryShard(env, (d1) => dbOf(d1).all<{ project_id: string }>(PROJECTS_WITH_WAITING_TASKS))).flat();
  const projects = [...new Set(results.map((r) => r.project_id))].filter((id) => projectIds === null || projectIds.includes(id));
  await Promise.all(projects.map((projectId) => roomStub(env, projectId).execute(HUB_ACTOR, { op: "sweep" })));
}

/** The projects of a scope: the listed ones, or every project for null. */
export async function projectsIn(env: Env, scope: string[] | null): Promise<string[]> {
  return scope ?? (await env.DB.prepare("SELECT id FROM projects").all<{ id: string }>()).results.map((r) => r.id);
}

/**
 * Closes a person's dashboards and terminals in these projects (null: every project), after their access changed.
 * Links of servers serving one of them are told too: typing on a server's sessions needs every project it serves.
 * The change's route awaits this, so the person's next keystroke after the answer is already refused; it never
 * throws, since the change has committed (a link that missed it checks again within a second, terminal-access.ts).
 */
export async function disconnectUser(env: Env, userId: string, projectIds: string[] | null) {
  try {
    const ids = await projectsIn(env, projectIds);
    const servers = await serversWithSessionsIn(env, projectIds, true);
    const told = await Promise.allSettled([
      ...ids.map((id) => roomStub(env, id).disconnectUser(userId)),
      ...servers.map((id) => linkStub(env, id).disconnectUser(userId, projectIds)),
    ]);
    for (const t of told) if (t.status === "rejected") logError("telling a room or link of an access change failed", { user_id: userId }, t.reason);
  } catch (e) {
    logError("telling rooms and links of an access change failed", { user_id: userId }, e);
  }
}

/**
 * Servers that have (or had) sessions in these projects (null: any): their links may hold terminals on them. With
 * `serving`, also servers with sessions anywhere that serve one of these projects (or every project).
 */
export async function serversWithSessionsIn(env: Env, projectIds: string[] | null, serving = false): Promise<string[]> {
  // Sessions live on their projects' shards (each with its copy of the servers): every shard is asked at once.
  const found = await onEveryShard(env, (d1) =>
    d1
      .prepare(
        `SELECT DISTINCT s.server_id FROM sessions s LEFT JOIN servers v ON v.id = s.server_id
         WHERE ?1 IS NULL OR s.project_id IN (SELECT value FROM json_each(?1))
            OR (?2 AND (v.project_ids IS NULL OR EXISTS (SELECT 1 FROM json_each(v.project_ids) p WHERE p.value IN (SELECT value FROM json_each(?1)))))`,
      )
      .bind(projectIds === null ? null : JSON.stringify(projectIds), serving ? 1 : 0)
      .all<{ server_id: string }>(),
  );
  return [...new Set(found.flatMap(({ results }) => results.map((r) => r.server_id)))];
}

/**
 * Makes every room the server could write in refuse its key, before D1 revokes or replaces it: the Worker may still
 * answer the key from a recent lookup, and once this returns no write by it commits.
 */
export async function refuseKeyInRooms(env: Env, server: { projectIds: string[] | null; keyHash: string | null }) {
  if (!server.keyHash) return;
  const ids = await projectsIn(env, server.projectIds);
  await Promise.all(ids.map((id) => roomStub(env, id).refuseKey(server.keyHash!)));
}

/**
 * Tells the agents using a server's old key to shut down (revoked or replaced), in every project it could be in,
 * and closes its daemon's socket on that key.
 */
export async function shutdownServer(
  env: Env,
  server: { id: string; projectIds: string[] | null; keyHash: string | null },
  reason: string,
  why: Exclude<ShutdownReason, "project-deleted">,
) {
  if (!server.keyHash) return;
  const ids = await projectsIn(env, server.projectIds);
  await Promise.all([
    ...ids.map((id) => roomStub(env, id).shutdownServer(server.id, server.keyHash!, reason, why)),
    linkStub(env, server.id).revokeKey(server.keyHash, reason),
  ]);
}

/** A heartbeat brought a server online: it becomes present in every project it serves. */
export async function announceOnline(env: Env, server: { id: string; name: string; projectIds: string[] | null }) {
  const ids = await projectsIn(env, server.projectIds);
  await Promise.all(ids.map((id) => roomStub(env, id).serverHeartbeat(server.id, server.name)));
}
