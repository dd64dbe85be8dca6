/**
 * What committed review events ask of the room next, each as its own operation queued after the batch that caused
 * it: a new attempt is handed to its reviewer, and an attempt whose review task ended is settled. Both are no-ops when
 * repeated, so a follow-up lost with the object is made again by the hourly sweep (review-sweep.ts).
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { ACTIVE } from "../domain/lifecycle";
import type { ReviewJob } from "../integrations/code-review/wake";
import { HUB_ACTOR } from "../runtime/room-rpc";
import { log, logError } from "../runtime/log";
import type { RoomCommand, RoomResult } from "./commands";
import type { RoomWriter } from "./room-writer";
import type { CommittedEvent } from "./statements";

const REVIEW_TASK_ENDS = new Set(["task_completed", "task_failed", "task_cancelled"]);

export function reviewFollowUps(events: readonly CommittedEvent[]): RoomCommand[] {
  const commands: RoomCommand[] = [];
  for (const e of events) {
    if (!e.task_id) continue;
    if (e.type === "review_requested" && typeof e.data.attempt === "number") {
      commands.push({ op: "start_review", taskId: e.task_id, attempt: e.data.attempt });
    } else if (REVIEW_TASK_ENDS.has(e.type) && typeof e.data.review_of === "string" && typeof e.data.review_attempt === "number") {
      commands.push({ op: "settle_review", taskId: e.data.review_of, attempt: e.data.review_attempt, source: { kind: "agent", reviewTaskId: e.task_id } });
    }
  }
  return commands;
}

/** Runs one operation as the hub; a refusal is logged (an offer no server takes is not one), a failure logged, never thrown. */
async function run(writer: RoomWriter, projectId: string, command: RoomCommand): Promise<RoomResult | null> {
  try {
    const result = await writer.execute({ actor: HUB_ACTOR, command, withView: false });
    if (!result.ok && command.op !== "auto_assign")
      log("warn", "a review step was refused", { project_id: projectId, operation: command.op, code: result.problem.code });
    return result;
  } catch (e) {
    logError("a review step failed", { project_id: projectId, operation: command.op }, e);
    return null;
  }
}

/**
 * The session of the reviewer's server a review task is given to, so that its daemon starts the agent in it on the
 * task: a running worker session of the project with no task of its own under way (the daemon would type the new task
 * into an agent at work), never the worker's, the most recently heard first. None: the task stays with the server.
 */
async function reviewerSession(db: Db, projectId: string, serverId: string, notSession: string | null) {
  const [row] = await db.all<{ id: string; name: string }>(sql`
    SELECT s.id, s.name FROM sessions s
    WHERE s.project_id = ${projectId} AND s.server_id = ${serverId} AND s.status = 'running' AND s.role = 'worker' AND s.id IS NOT ${notSession}
      AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.target_session_id = s.id AND t.status IN (SELECT value FROM json_each(${JSON.stringify(ACTIVE)})))
    ORDER BY COALESCE(s.last_output_at, s.updated_at) DESC
    LIMIT 1`);
  return row;
}

/**
 * Runs a follow-up after everything queued before it. A review task it created is offered to the servers at once,
 * as a created task routed by its requirements is, and given to an open session of the server that takes it; with no
 * server matching it waits, and is offered again as servers come (then its agent finds it with `orchestratia task check`).
 * An attempt for a model reviewer is handed to the project's reviewer object, which keeps it until it is settled.
 */
export async function followUp(writer: RoomWriter, projectId: string, command: RoomCommand, wakeModel: (job: ReviewJob) => Promise<void>): Promise<void> {
  const result = await run(writer, projectId, command);
  const started = command.op === "start_review" && result?.ok ? result.data : undefined;
  if (command.op === "start_review" && started?.reviewer === "model") {
    const job = { projectId, taskId: command.taskId, attempt: command.attempt };
    await wakeModel(job).catch((e) =>
      logError("waking the model reviewer failed", { project_id: projectId, task_id: command.taskId, operation: "start_review" }, e),
    );
  }
  // A review of a change its worker has since replaced is of no use: its reviewer is told by the cancellation.
  for (const stale of Array.isArray(started?.stale_review_tasks) ? (started.stale_review_tasks as string[]) : []) {
    await run(writer, projectId, { op: "cancel", taskId: stale, reason: "The change it reviews was completed again: a newer review replaces it" });
  }
  const reviewTaskId = started?.review_task_id;
  if (typeof reviewTaskId !== "string") return;
  const offered = await run(writer, projectId, { op: "auto_assign", taskId: reviewTaskId });
  const data = offered?.ok ? offered.data : undefined;
  if (data?.status !== "assigned" || typeof data.server_id !== "string") return;
  const workerSession = typeof started?.worker_session === "string" ? started.worker_session : null;
  const session = await reviewerSession(writer.db, projectId, data.server_id, workerSession);
  if (!session) return;
  const target = { serverId: data.server_id, serverName: String(data.server_name), sessionId: session.id, sessionName: session.name };
  await run(writer, projectId, { op: "assign", taskId: reviewTaskId, target, requirePlan: false });
}
