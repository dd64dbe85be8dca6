/** Writes of auto-assignment inside a room operation: the set-based assignment, its capacity check and its events. */
import { sql } from "drizzle-orm";
import type { Assignment } from "../domain/cascade";
import { errorMentions } from "../db/errors";
import { activeTasksOfServer } from "../db/server-candidates";
import { DEFAULT_MAX_CONCURRENT_TASKS } from "../domain/matching";
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

/** What the capacity check's error says: the batch rolled back because a server would have had too many tasks. */
const OVER_CAPACITY = "server over capacity: ";

/**
 * Fails the batch if a server the plan assigned to now has more active tasks
 * than it can take. A server's load is shared by every project it serves, and
 * another project's room may have assigned to it since this plan read it; the
 * room then plans again from fresh reads. (SQLite raises no error on its own
 * outside triggers: a JSON path that names the server is the error.)
 */
export function capacityCheck(ctx: OpContext, plan: Assignment[], guard: VersionGuard) {
  const serverIds = JSON.stringify([...new Set(plan.map((p) => p.match.server_id))]);
  return statement(
    ctx.d1,
    sql`SELECT json_extract('{}', ${OVER_CAPACITY} || s.name) FROM servers s
        WHERE s.id IN (SELECT value FROM json_each(${serverIds})) AND ${guardHolds(guard)}
          AND ${activeTasksOfServer} > CAST(COALESCE(s.capabilities ->> '$.max_concurrent_tasks', ${DEFAULT_MAX_CONCURRENT_TASKS}) AS INTEGER)`,
  );
}

/** Whether a batch failed its capacity check (and is worth planning again). */
export const overCapacity = (e: unknown) => errorMentions(e, OVER_CAPACITY);

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
