/**
 * What the liveness rules read of a project's tasks: running tasks with their
 * signs of life, and waiting tasks with when their wait began. One query each,
 * for every task of the kind or for one (an operation deciding again).
 */

import { eventsOfTasksIn } from "../db/task-events";
import type { StallFacts } from "../domain/liveness";

/** A `latest` table for a WITH clause: when each task of `tasks` (a table of the clause) last had an event of the types in JSON list `types`. */
const latestEvents = (tasks: string, types: string) =>
  `latest AS (SELECT e.task_id, MAX(e.created_at) AS at FROM ${eventsOfTasksIn(tasks, "?1")}
     WHERE e.type IN (SELECT value FROM json_each(${types})) GROUP BY e.task_id)`;

/** Events that show a running task's work going on: its (re)start, and its notes and progress. */
const SIGNS_OF_LIFE = ["task_started", "plan_approved", "intervention_responded", "task_progress", "note_added"];
/** Events after which a waiting task waits anew: it came back to pending, was unblocked, approved or edited. */
const NEW_WAIT = ["task_rejected", "task_requeued", "task_retried", "task_approved", "task_unblocked", "task_updated"];

export interface RunningTask {
  id: string;
  started_at: string | null;
  stalled_at: string | null;
  server_id: string | null;
  server_name: string | null;
  last_heartbeat: string | null;
  session_id: string | null;
  last_output: string | null;
  /** The latest of its SIGNS_OF_LIFE events. */
  last_report: string | null;
}

export interface WaitingTask {
  id: string;
  created_at: string;
  requirements: string;
  rejected_by: string;
  unassignable_at: string | null;
  /** The latest of its NEW_WAIT events. */
  last_wait_event: string | null;
}

/** The project's running tasks (or the one named), each with its server's last heartbeat, its session's last output and its last report. */
export async function runningTasks(d1: D1Database, projectId: string, taskId: string | null = null): Promise<RunningTask[]> {
  const { results } = await d1
    .prepare(
      `WITH t AS (SELECT * FROM tasks WHERE project_id = ?1 AND status = 'running' AND (?2 IS NULL OR id = ?2)), ${latestEvents("t", "?3")}
       SELECT t.id, t.started_at, t.stalled_at, t.assigned_server_id AS server_id, s.name AS server_name, s.last_heartbeat,
              t.target_session_id AS session_id, ss.last_output_at AS last_output, latest.at AS last_report
       FROM t LEFT JOIN latest ON latest.task_id = t.id LEFT JOIN servers s ON s.id = t.assigned_server_id LEFT JOIN sessions ss ON ss.id = t.target_session_id`,
    )
    .bind(projectId, taskId, JSON.stringify(SIGNS_OF_LIFE))
    .all<RunningTask>();
  return results;
}

/** What the stall rule reads of a running task. */
export const stallFacts = (t: RunningTask, startedAt: string | null, stalledAt: string | null): StallFacts => ({
  startedAt,
  lastHeartbeat: t.last_heartbeat,
  onSession: t.session_id !== null,
  lastOutput: t.last_output,
  lastReport: t.last_report,
  stalledAt,
});

/** The project's waiting tasks that auto-assignment would offer (or the one named): pending, unblocked, approved, with requirements. */
export async function waitingTasks(d1: D1Database, projectId: string, taskId: string | null = null): Promise<WaitingTask[]> {
  const { results } = await d1
    .prepare(
      `WITH t AS (SELECT * FROM tasks WHERE project_id = ?1 AND status = 'pending' AND blocked = 0 AND awaiting_approval = 0
                    AND requirements IS NOT NULL AND requirements != '{}' AND (?2 IS NULL OR id = ?2)), ${latestEvents("t", "?3")}
       SELECT t.id, t.created_at, t.requirements, t.rejected_by, t.unassignable_at, latest.at AS last_wait_event
       FROM t LEFT JOIN latest ON latest.task_id = t.id`,
    )
    .bind(projectId, taskId, JSON.stringify(NEW_WAIT))
    .all<WaitingTask>();
  return results;
}
