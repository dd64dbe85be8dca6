/**
 * The task-format dialect (seeds/task-format.md), as the hub maps it (pure).
 * Its statuses name the hub's in the seed's words; a status the hub has and
 * the seed does not is mapped to the nearest of the seed's.
 */
import type { TaskStatus } from "../domain/lifecycle";

export const TASK_FORMAT_STATUSES = ["pending", "in_progress", "completed", "failed", "cancelled", "input_required"] as const;
export type TaskFormatStatus = (typeof TASK_FORMAT_STATUSES)[number];

/** Each hub status in the seed's words: assigned is still "received, not started"; a plan awaiting review needs a person. */
export const TASK_FORMAT_STATUS: Record<TaskStatus, TaskFormatStatus> = {
  pending: "pending",
  assigned: "pending",
  planning: "in_progress",
  plan_review: "input_required",
  running: "in_progress",
  needs_human: "input_required",
  done: "completed",
  failed: "failed",
  cancelled: "cancelled",
};

/** The seed's error block (§Error Block) as the hub keeps it on a failed task; a failure without a code is TASK_FAILED. */
export function errorBlock(message: string, code: string | null, details?: unknown, recoverable?: boolean) {
  return { code: code ?? "TASK_FAILED", message, ...(details === undefined ? {} : { details }), recoverable: recoverable ?? false };
}

/** The seed's names that are not also hub statuses, as filters: the hub statuses each stands for. */
export const STATUS_ALIASES: Record<string, TaskStatus[]> = Object.fromEntries(
  TASK_FORMAT_STATUSES.filter((name) => !(name in TASK_FORMAT_STATUS)).map((name) => [
    name,
    (Object.keys(TASK_FORMAT_STATUS) as TaskStatus[]).filter((hub) => TASK_FORMAT_STATUS[hub] === name),
  ]),
);
