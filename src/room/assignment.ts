/** Reads and writes for auto-assignment inside a room operation: candidates, waiting tasks, and the set-based assignment. */
import { sql } from "drizzle-orm";
import type { Assignable, Assignment } from "../domain/cascade";
import { candidatesJson, parseCandidates } from "../db/server-candidates";
import type { Candidate } from "../domain/matching";
import type { Requirements } from "../protocol/orchestratia-v1";
import type { EventDraft, VersionGuard } from "./statements";
import { guardHolds, statement } from "./statements";
import type { OpContext } from "./task-operations";

const PRIORITY_ORDER = sql`CASE priority WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END`;

/**
 * What auto-assignment needs, in one query: pending, unblocked tasks with
 * requirements (most urgent and oldest first), and the servers serving the
 * project with their load. `alsoUnblocking` are tasks this very operation
 * unblocks: their last dependency is not resolved in D1 yet.
 */
export async function assignmentContext(ctx: OpContext, limit: number, alsoUnblocking: string[] = []): Promise<{ waiting: Assignable[]; candidates: Candidate[] }> {
  const [row] = await ctx.db.all<{ waiting: string; candidates: string }>(sql`
    SELECT (SELECT json_group_array(json_object('id', w.id, 'requirements', json(w.requirements), 'require_plan', w.require_plan)) FROM (
        SELECT id, requirements, require_plan FROM tasks t
        WHERE project_id = ${ctx.projectId} AND status = 'pending' AND requirements IS NOT NULL
          AND (t.id IN (SELECT value FROM json_each(${JSON.stringify(alsoUnblocking)}))
            OR NOT EXISTS (SELECT 1 FROM task_dependencies d WHERE d.task_id = t.id AND d.dependency_type != 'related' AND d.resolved = 0))
        ORDER BY ${PRIORITY_ORDER}, created_at, id
        LIMIT ${limit}) w) AS waiting,
      ${candidatesJson} AS candidates`);
  const waiting = (JSON.parse(row!.waiting) as { id: string; requirements: Requirements; require_plan: number }[]).map((w) => ({
    id: w.id,
    requirements: w.requirements,
    requirePlan: Boolean(w.require_plan),
  }));
  return { waiting, candidates: parseCandidates(row!.candidates, ctx.projectId) };
}

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
