/**
 * A task's events, read from its project's log. The log is keyed by (project_id, seq) alone: an index of each task's
 * events would cost D1 a row written per event, about a fifth of what a task writes. A task instead records where the
 * log stood when it was created (tasks.log_from), and its events are read from there on, by the log's own key: rows
 * read, which D1 prices at a thousandth of rows written.
 */
import { sql, type SQL } from "drizzle-orm";

/** Where the project's log ends now, as a task's insert records it (tasks.log_from): every event of the task follows it. */
export const logHead = (projectId: string): SQL => sql`(SELECT COALESCE(MAX(seq), 0) FROM events WHERE project_id = ${projectId})`;

/**
 * SQL text: event alias `e` is one of the events of task alias `t` (of tasks), for a subquery or join that reads a task's
 * events; it walks the log from the task's creation by its key.
 */
export const eventOfTask = (e: string, t: string) => `${e}.project_id = ${t}.project_id AND ${e}.seq > ${t}.log_from AND ${e}.task_id = ${t}.id`;

/**
 * SQL text: event alias `e` is an event of one of the tasks in table `tasks` (of tasks' columns, e.g. a WITH clause's),
 * all of the project `tasks` holds: one walk of the log from the earliest of their creations, however many they are.
 */
export const eventsOfTaskSet = (e: string, tasks: string) =>
  `${e}.project_id = (SELECT project_id FROM ${tasks} LIMIT 1) AND ${e}.seq > (SELECT COALESCE(MIN(log_from), 0) FROM ${tasks}) AND ${e}.task_id IN (SELECT id FROM ${tasks})`;

/** An event as stored, its data parsed. */
export interface StoredEvent {
  project_id: string;
  seq: number;
  type: string;
  task_id: string | null;
  actor: string;
  data: Record<string, unknown>;
  traceparent: string | null;
  created_at: string;
}

/**
 * The events of a project's tasks `taskIds`, in seq order (at most `limit`): one walk of the log from the earliest of
 * their creations. What a task's timeline, its span and an archive of finished tasks read.
 */
export async function eventsOfTasks(d1: D1Database, projectId: string, taskIds: readonly string[], limit = -1): Promise<StoredEvent[]> {
  if (taskIds.length === 0) return [];
  const { results } = await d1
    .prepare(
      `SELECT project_id, seq, type, task_id, actor, data, traceparent, created_at FROM events
       WHERE project_id = ?1 AND seq > (SELECT COALESCE(MIN(log_from), 0) FROM tasks WHERE id IN (SELECT value FROM json_each(?2)))
         AND task_id IN (SELECT value FROM json_each(?2))
       ORDER BY seq LIMIT ?3`,
    )
    .bind(projectId, JSON.stringify(taskIds), limit)
    .all<Omit<StoredEvent, "data"> & { data: string }>();
  return results.map((r) => ({ ...r, data: JSON.parse(r.data) as Record<string, unknown> }));
}
