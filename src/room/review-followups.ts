/**
 * What committed review events ask of the room next, each as its own operation queued after the batch that caused
 * it: a new attempt is handed to its reviewer, and an attempt whose review task ended is settled. Both are no-ops when
 * repeated; a model attempt whose wake was lost with the object is handed to its reviewer by the hourly sweep
 * (cron/maintenance.ts wakeStrandedModelReviews).
 */
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
 * Runs a follow-up after everything queued before it. A review task it created is offered to the servers at once,
 * as a created task routed by its requirements is; with none matching it waits, and is offered again as servers come.
 * An attempt for a model reviewer is handed to the project's reviewer object, which keeps it until it is settled.
 */
export async function followUp(writer: RoomWriter, projectId: string, command: RoomCommand, wakeModel: (job: ReviewJob) => Promise<void>): Promise<void> {
  const result = await run(writer, projectId, command);
  if (command.op !== "start_review" || !result?.ok) return;
  const reviewTaskId = result.data?.review_task_id;
  if (typeof reviewTaskId === "string") await run(writer, projectId, { op: "auto_assign", taskId: reviewTaskId });
  if (result.data?.reviewer === "model") {
    const job = { projectId, taskId: command.taskId, attempt: command.attempt };
    await wakeModel(job).catch((e) =>
      logError("waking the model reviewer failed", { project_id: projectId, task_id: command.taskId, operation: "start_review" }, e),
    );
  }
}
