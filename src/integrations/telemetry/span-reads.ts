/**
 * What a finished task's span is built from, read from D1 when the span is
 * sent (never in the room's turn): the task with its server's and session's
 * names, the events that changed its status, the tasks it depends on, and its
 * usage. One round trip.
 */
import { eventsOfTasksIn } from "../../db/task-events";
import { SPAN_ENDING_EVENTS, type StatusChange, type TaskRecord, type Upstream, type UsageTotals } from "./task-span";

const ENDING = SPAN_ENDING_EVENTS.map((type) => `'${type}'`).join(", ");

export interface TaskReads {
  task: TaskRecord;
  /** The seq of the latest event that finished the task: a span owed by an earlier one is superseded. */
  lastEndingSeq: number | null;
  cancelReason: string | null;
  changes: StatusChange[];
  upstream: Upstream[];
  usage: UsageTotals | null;
}

/** The events of task ?1 of project ?2. */
const EVENTS = eventsOfTasksIn("(SELECT id, log_from FROM tasks WHERE id = ?1 AND project_id = ?2)", "?2");

export async function readTaskForSpan(db: D1Database, projectId: string, taskId: string): Promise<TaskReads | null> {
  const [task, changes, upstream, usage] = await db.batch([
    db
      .prepare(
        `SELECT t.id, t.project_id, t.title, t.spec, t.type, t.priority, t.status, t.result, t.error, t.error_code, t.trace_id, t.traceparent,
                t.retry_count, t.context, t.created_at, t.completed_at, t.updated_at,
                t.assigned_server_id AS server_id, s.name AS server_name, t.target_session_id AS session_id, ss.name AS session_name, ss.agent_type,
                (SELECT MAX(e.seq) FROM ${EVENTS} WHERE e.type IN (${ENDING})) AS last_ending_seq,
                (SELECT e.data ->> '$.reason' FROM ${EVENTS} WHERE e.type = 'task_cancelled'
                 ORDER BY e.seq DESC LIMIT 1) AS cancel_reason
         FROM tasks t LEFT JOIN servers s ON s.id = t.assigned_server_id LEFT JOIN sessions ss ON ss.id = t.target_session_id
         WHERE t.id = ?1 AND t.project_id = ?2`,
      )
      .bind(taskId, projectId),
    // Status changes only: every such event says the status it left the task in.
    db
      .prepare(
        `SELECT e.seq, e.type, e.data ->> '$.status' AS status, e.data ->> '$.previous_status' AS previous_status, e.created_at
         FROM ${EVENTS} WHERE e.data ->> '$.status' IS NOT NULL ORDER BY e.seq`,
      )
      .bind(taskId, projectId),
    db
      .prepare(
        `SELECT d.depends_on_task_id AS task_id, d.dependency_type, d.contract_key, u.trace_id, u.traceparent, u.retry_count
         FROM task_dependencies d JOIN tasks u ON u.id = d.depends_on_task_id WHERE d.task_id = ?1 ORDER BY d.created_at, d.depends_on_task_id`,
      )
      .bind(taskId),
    db.prepare("SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, api_ms FROM task_usage WHERE task_id = ?1").bind(taskId),
  ]);
  const row = (task!.results as (TaskRecord & { last_ending_seq: number | null; cancel_reason: string | null })[])[0];
  if (!row) return null;
  const { last_ending_seq, cancel_reason, ...record } = row;
  return {
    task: record,
    lastEndingSeq: last_ending_seq,
    cancelReason: typeof cancel_reason === "string" ? cancel_reason : null,
    changes: changes!.results as StatusChange[],
    upstream: upstream!.results as Upstream[],
    usage: (usage!.results as UsageTotals[])[0] ?? null,
  };
}
