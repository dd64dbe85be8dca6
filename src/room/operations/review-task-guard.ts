/** What no one may do to a review task (operations/reviews.ts makes them): checked by assign, cancel and update. */
import type { TaskRow } from "../statements";
import type { OpContext } from "./kernel";
import { notAllowed } from "./refusals";

/**
 * What no one may do to a review task, so that a worker never reviews, cancels or rewrites the review of its own
 * change: give it to the server whose change it reviews (kept in its `rejected_by`), and, for agents, cancel or change
 * it (its reviewer may still fail it, which people see as a review that could not be made).
 */
export function reviewTaskRefusal(ctx: OpContext, task: TaskRow, action: "assign" | "cancel" | "update", serverId?: string) {
  if (!task.reviewOf) return null;
  if (action === "assign" && serverId !== undefined && task.rejectedBy.includes(serverId))
    return notAllowed("A review task is never given to the server whose change it reviews");
  if (action !== "assign" && ctx.actor.kind === "agent") return notAllowed(`Only people ${action} a review task`);
  return null;
}
