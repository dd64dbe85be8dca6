/**
 * The one place the archive reads and deletes the events of tasks. The log has no index by task: a task's events are
 * walked from where the log stood at its creation (tasks.log_from, db/task-events.ts), so a change of how the log
 * stores a task's events changes only this file and that one.
 */
import type { EventView } from "./records";

interface EventRow {
  seq: number;
  project_id: string;
  type: string;
  task_id: string | null;
  actor: string;
  data: string;
  traceparent: string | null;
  created_at: string;
}

const ofRow = (r: EventRow): EventView => ({ ...r, data: JSON.parse(r.data) as Record<string, unknown> });

/** The statement that reads these tasks' events in seq order (for a D1 batch), and how to read its rows. */
export function taskEventsStatement(d1: D1Database, projectId: string, taskIds: readonly string[]) {
  const statement = d1
    .prepare(
      "SELECT * FROM events WHERE project_id = ?1 AND seq > (SELECT COALESCE(MIN(log_from), 0) FROM tasks WHERE id IN (SELECT value FROM json_each(?2))) AND task_id IN (SELECT value FROM json_each(?2)) ORDER BY seq",
    )
    .bind(projectId, JSON.stringify(taskIds));
  return { statement, read: (result: D1Result) => (result.results as EventRow[]).map(ofRow) };
}

/** SQL text of a scalar that changes when these tasks' events do (for a fingerprint): ?1 is the project, ?2 the ids. */
export const TASK_EVENTS_FINGERPRINT =
  "(SELECT count(*) || ':' || ifnull(max(seq), 0) FROM events WHERE project_id = ?1 AND seq > (SELECT COALESCE(MIN(log_from), 0) FROM tasks WHERE id IN (SELECT value FROM json_each(?2))) AND task_id IN (SELECT value FROM json_each(?2)))";

/**
 * SQL text: task `t` holds the project's last event (?1 is the project). A new event's seq follows the last one in D1,
 * so that event stays there: a task holding it is not archived until the log moves on.
 */
export const holdsLogHead = (t: string) =>
  `EXISTS (SELECT 1 FROM events e WHERE e.project_id = ?1 AND e.seq = (SELECT max(seq) FROM events WHERE project_id = ?1) AND e.task_id = ${t}.id)`;

/** Deletes these tasks' events while `guard` (SQL text) holds, walking the log from the tasks' creation. */
export const deleteTaskEvents = (d1: D1Database, projectId: string, taskIds: readonly string[], guard: string) =>
  d1
    .prepare(
      `DELETE FROM events WHERE project_id = ?1 AND seq > (SELECT COALESCE(MIN(log_from), 0) FROM tasks WHERE id IN (SELECT value FROM json_each(?2))) AND task_id IN (SELECT value FROM json_each(?2)) AND ${guard}`,
    )
    .bind(projectId, JSON.stringify(taskIds));

/** The project's events after `since` still in D1, in seq order, at most `limit`. */
export async function liveEventsSince(d1: D1Database, projectId: string, since: number, limit: number): Promise<EventView[]> {
  const { results } = await d1
    .prepare("SELECT * FROM events WHERE project_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3")
    .bind(projectId, since, limit)
    .all<EventRow>();
  return results.map(ofRow);
}

/** One task's events still in D1, in seq order, at most `limit`. */
export async function liveTaskEvents(d1: D1Database, projectId: string, taskId: string, limit: number): Promise<EventView[]> {
  const { results } = await d1
    .prepare(
      "SELECT * FROM events WHERE project_id = ?1 AND seq > COALESCE((SELECT log_from FROM tasks WHERE id = ?2), 0) AND task_id = ?2 ORDER BY seq LIMIT ?3",
    )
    .bind(projectId, taskId, limit)
    .all<EventRow>();
  return results.map(ofRow);
}
