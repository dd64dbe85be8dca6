/** Writes of auto-assignment inside a room operation: the set-based assignment and its events. */
import { sql } from "drizzle-orm";
import type { Assignment } from "../domain/cascade";
import type { EventDraft, VersionGuard } from "./statements";
import { guardHolds, statement } from "./statements";
import type { OpContext } from "./task-operations";

/** Assigns pending tasks to servers in one statement; tasks requiring a plan go to planning. */
export function assignStatement(ctx: OpContext, plan: Assignment[], guard: VersionGuard) {
  const rows = JSON.stringify(plan.map((p) => ({ task_id: p.taskId, server_id: p.match.server_id })));
  return statement(
    ctx.d1,
    sql`UPDATE tasks SET
          status = CASE WHEN require_plan THEN 'planning' ELSE 'assigned' END,
          assigned_server_id = (SELECT a.value ->> 'server_id' FROM json_each(${rows}) a WHERE a.value ->> 'task_id' = tasks.id),
          target_session_id = NULL, version = version + 1, updated_at = ${ctx.now}
        WHERE id IN (SELECT a.value ->> 'task_id' FROM json_each(${rows}) a) AND status = 'pending' AND ${guardHolds(guard)}`,
  );
}

export const assignmentEvents = (plan: Assignment[]): EventDraft[] =>
  plan.map((p) => ({
    type: "task_assigned",
    taskId: p.taskId,
    data: {
      status: p.requirePlan ? "planning" : "assigned",
      previous_status: "pending",
      server_id: p.match.server_id,
      server_name: p.match.server_name,
      session_id: null,
      session_name: null,
      auto: true,
      match_score: p.match.score,
    },
  }));
