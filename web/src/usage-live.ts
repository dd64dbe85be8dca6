/**
 * Usage as it arrives on a project's feed: each `usage_recorded` event lists what its batch ADDED to each task, so a
 * task's cost grows at once by that much; the task is read again after, so what is shown ends as the hub counts it.
 */
import type { HubEvent, Task } from "./types";
import { addUsage, type Usage } from "./usage-format";

export const USAGE_RECORDED = "usage_recorded";
export const BUDGET_EVENTS: ReadonlySet<string> = new Set(["budget_warned", "budget_held", "budget_released", "budget_stopped"]);

/** What one `usage_recorded` event added to each task it names. */
export function usageAddedByTask(e: HubEvent): Map<string, Partial<Usage>> {
  const added = new Map<string, Partial<Usage>>();
  if (e.event_type !== USAGE_RECORDED || !Array.isArray(e.data.tasks)) return added;
  for (const entry of e.data.tasks as unknown[]) {
    if (!entry || typeof entry !== "object") continue;
    const { task_id, ...amounts } = entry as Partial<Usage> & { task_id?: unknown };
    if (typeof task_id === "string") added.set(task_id, addUsage(added.get(task_id) as Usage | undefined, amounts));
  }
  return added;
}

/** The task with what the event added to it (the task itself when the event added nothing to it). */
export function withUsageOf(task: Task, e: HubEvent): Task {
  const added = usageAddedByTask(e).get(task.id);
  return added ? { ...task, usage: addUsage(task.usage, added) } : task;
}

/** The ids of the tasks a batch of events added usage to. */
export const tasksWithUsageIn = (events: readonly HubEvent[]) => events.flatMap((e) => [...usageAddedByTask(e).keys()]);

/** The seq of the newest event of `events` (newest first) that added usage to one of `taskIds`, 0 when none did. */
export function lastUsageSeq(events: readonly HubEvent[], taskIds: ReadonlySet<string>): number {
  for (const e of events) if (e.event_type === USAGE_RECORDED && [...usageAddedByTask(e).keys()].some((id) => taskIds.has(id))) return e.seq;
  return 0;
}
