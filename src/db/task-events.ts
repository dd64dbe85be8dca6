/**
 * A task's events, read from its project's log. The log is keyed by (project_id, seq) alone: an index of each task's
 * events would cost D1 a row written per event, about a fifth of what a task writes. Instead the log is read in blocks
 * of LOG_BLOCK seqs: a task records where the log stood when it was created (tasks.log_from), and each further block
 * that receives one of its events gets a row in task_log_blocks, written by a trigger on the log's insert (migration
 * 0040, in the same transaction; only for the task's first event there). A task's events are read from those blocks
 * by the log's key, so a read walks a few blocks however long the log has grown.
 */
import { type SQL, sql } from "drizzle-orm";

/**
 * Seqs a block of the log holds: a stretch read walks at most this many events; a longer block means fewer rows in
 * task_log_blocks. Migration 0040's trigger and backfill are written with this number.
 */
export const LOG_BLOCK = 4096;

/** Where the project's log ends now, as a task's insert records it (tasks.log_from): every event of the task follows it. */
export const logHead = (projectId: string): SQL => sql`(SELECT COALESCE(MAX(seq), 0) FROM events WHERE project_id = ${projectId})`;

/**
 * SQL text for FROM: the events (alias `e`) of the tasks `tasks` selects (a table of the query, or a parenthesised
 * SELECT with id and log_from) in the log of project `project` (SQL text, e.g. a parameter). Each block that holds
 * any of their events (the one each was created in, and those task_log_blocks lists) is walked once by the log's key,
 * however many of the tasks it holds: CROSS JOIN keeps the blocks (alias `r`) the outer loop.
 */
export const eventsOfTasksIn = (tasks: string, project: string) =>
  `(SELECT (log_from + 1) / ${LOG_BLOCK} AS block FROM ${tasks} UNION SELECT b.block FROM ${tasks} s JOIN task_log_blocks b ON b.task_id = s.id) r
   CROSS JOIN events e ON e.project_id = ${project} AND e.seq >= r.block * ${LOG_BLOCK} AND e.seq < (r.block + 1) * ${LOG_BLOCK}
     AND e.task_id IN (SELECT id FROM ${tasks})`;

/** SQL text: the tasks whose ids are the JSON list bound at `param` (e.g. "?2"), found by their key, as eventsOfTasksIn takes them. */
export const tasksIn = (param: string) => `(SELECT t.id, t.log_from FROM json_each(${param}) j CROSS JOIN tasks t ON t.id = j.value)`;

/** SQL text: the task whose id is bound at `param`, as eventsOfTasksIn takes it. */
export const taskWithId = (param: string) => `(SELECT id, log_from FROM tasks WHERE id = ${param})`;

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
