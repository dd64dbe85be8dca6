/**
 * A task's events, read from its project's log. The log is keyed by (project_id, seq) alone: an index of each task's
 * events would cost D1 a row written per event, about a fifth of what a task writes. Instead the log is read in blocks
 * of LOG_BLOCK seqs: a task records where the log stood when it was created (tasks.log_from), and each further block
 * that receives one of its events gets a row in task_log_blocks, written by a trigger on the log's insert (migration
 * 0040, in the same transaction; only for the task's first event there). A task's events are read from those stretches of the log by its key, so a
 * read walks at most a block per stretch however long the log has grown.
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
 * SQL text for FROM: the events (alias `e`) of the tasks `tasks` selects (a table, or a parenthesised SELECT with id,
 * project_id and log_from), beside the stretch of the log each lies in (alias `r`: task_id, project_id, lo, hi: seqs
 * above lo and below hi). A task's stretches are the rest of the block where it was created and each block
 * task_log_blocks lists for it; CROSS JOIN keeps them the outer loop, so each is one walk of the log's key.
 */
export const eventsInStretches = (tasks: string) =>
  `(SELECT id AS task_id, project_id, log_from AS lo, ((log_from + 1) / ${LOG_BLOCK} + 1) * ${LOG_BLOCK} AS hi FROM ${tasks}
    UNION ALL
    SELECT b.task_id, s.project_id, b.block * ${LOG_BLOCK} - 1, (b.block + 1) * ${LOG_BLOCK} FROM ${tasks} s JOIN task_log_blocks b ON b.task_id = s.id) r
   CROSS JOIN events e ON e.project_id = r.project_id AND e.seq > r.lo AND e.seq < r.hi AND e.task_id = r.task_id`;

/** SQL text: the tasks whose ids are the JSON list bound at `param` (e.g. "?2"), as logStretches takes them. */
export const tasksIn = (param: string) => `(SELECT id, project_id, log_from FROM tasks WHERE id IN (SELECT value FROM json_each(${param})))`;

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
