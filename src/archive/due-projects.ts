/** Which projects have rows due for the archive, for the hourly housekeeping to wake their rooms. */
import { DEFAULT_PROJECT_SETTINGS } from "../domain/project-settings";
import { DELIVERY_KEEP_DAYS } from "./archiver";
import { FAILED_RETRY_DAYS } from "./plan";

/** SQL text: project `p` archives (its archive_after_days is not null; absent is the default, 30). */
export const archivingOn = (p: string) => `json_type(${p}.settings, '$.archive_after_days') IS NOT 'null'`;

const cutoffSql = (days: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ?1, '-' || (${days}) || ' days')`;

/**
 * Projects with a batch open (or set aside long enough to be tried again), or a finished task free to go (none that
 * stays whatever the time: one a budget, a live dependent, a review under way or the log's last event holds, or one
 * in a batch set aside), permission log entry or delivery older than its cutoff.
 */
export async function projectsDueForArchive(d1: D1Database, now: number, permissionLogDays: number): Promise<string[]> {
  const days = `coalesce(json_extract(p.settings, '$.archive_after_days'), ${DEFAULT_PROJECT_SETTINGS.archive_after_days})`;
  const { results } = await d1
    .prepare(
      `SELECT p.id FROM projects p WHERE ${archivingOn("p")} AND (
         EXISTS (SELECT 1 FROM archive_batches b WHERE b.project_id = p.id AND (b.step NOT IN ('done', 'failed')
           OR (b.step = 'failed' AND b.updated_at < ${cutoffSql(String(FAILED_RETRY_DAYS))})))
         OR EXISTS (SELECT 1 FROM tasks t WHERE t.project_id = p.id AND t.status IN ('done', 'failed', 'cancelled') AND t.completed_at < ${cutoffSql(days)}
           AND NOT EXISTS (SELECT 1 FROM budgets g WHERE g.task_id = t.id)
           AND NOT EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks down ON down.id = d.task_id WHERE d.depends_on_task_id = t.id AND down.completed_at IS NULL)
           AND NOT EXISTS (SELECT 1 FROM tasks r WHERE r.project_id = p.id AND r.review_of = t.id AND r.completed_at IS NULL)
           AND NOT EXISTS (SELECT 1 FROM events e WHERE e.project_id = p.id AND e.task_id = t.id AND e.seq = (SELECT max(seq) FROM events WHERE project_id = p.id))
           AND t.id NOT IN (SELECT j.value FROM archive_batches b, json_each(b.ids) j WHERE b.project_id = p.id AND b.kind = 'tasks' AND b.step != 'done'))
         OR EXISTS (SELECT 1 FROM permission_log l WHERE l.project_id = p.id AND l.created_at < ${cutoffSql(`min(${days}, ?2)`)})
         OR EXISTS (SELECT 1 FROM outbox o WHERE o.project_id = p.id AND o.status != 'pending' AND o.created_at < ${cutoffSql(`min(${days}, ?3)`)}))`,
    )
    .bind(new Date(now).toISOString(), permissionLogDays, DELIVERY_KEEP_DAYS)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}
