/**
 * The one place the archive reads and deletes the events of tasks. The log has no index by task: a task's events are
 * read from the stretches of the log that hold them (db/task-events.ts), so a change of how the log stores a task's
 * events changes only this file and that one.
 */
import { eventsOfTasksIn, tasksIn, taskWithId } from "../db/task-events";
import type { EventView } from "./records";

/** SQL text: the events (alias e) of the tasks whose ids are the JSON list ?2, in project ?1. */
const EVENTS_OF_TASKS = eventsOfTasksIn(tasksIn("?2"), "?1");

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
  const statement = d1.prepare(`SELECT e.* FROM ${EVENTS_OF_TASKS} ORDER BY e.seq`).bind(projectId, JSON.stringify(taskIds));
  return { statement, read: (result: D1Result) => (result.results as EventRow[]).map(ofRow) };
}

/** SQL text of a scalar that changes when these tasks' events do (for a fingerprint): ?1 is the project, ?2 the ids. */
export const TASK_EVENTS_FINGERPRINT = `(SELECT count(*) || ':' || ifnull(max(e.seq), 0) FROM ${EVENTS_OF_TASKS})`;

/** SQL text: a WITH clause's table `event_weights` (task_id, n, bytes): how many events each task of ?2 has, and their data's length. */
export const EVENT_WEIGHTS = `event_weights AS (SELECT e.task_id, count(*) AS n, sum(length(e.data)) AS bytes FROM ${EVENTS_OF_TASKS} GROUP BY e.task_id)`;

/**
 * SQL text: task `t` holds the project's last event (?1 is the project). A new event's seq follows the last one in D1,
 * so that event stays there: a task holding it is not archived until the log moves on.
 */
export const holdsLogHead = (t: string) =>
  `EXISTS (SELECT 1 FROM events e WHERE e.project_id = ?1 AND e.seq = (SELECT max(seq) FROM events WHERE project_id = ?1) AND e.task_id = ${t}.id)`;

/** Deletes these tasks' events while `guard` (SQL text) holds, found in the stretches of the log that hold them. */
export const deleteTaskEvents = (d1: D1Database, projectId: string, taskIds: readonly string[], guard: string) =>
  d1
    .prepare(`DELETE FROM events WHERE project_id = ?1 AND seq IN (SELECT e.seq FROM ${EVENTS_OF_TASKS}) AND ${guard}`)
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
      `SELECT e.* FROM ${eventsOfTasksIn(taskWithId("?2"), "?1")}
       ORDER BY e.seq LIMIT ?3`,
    )
    .bind(projectId, taskId, limit)
    .all<EventRow>();
  return results.map(ofRow);
}
