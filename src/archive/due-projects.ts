/** Which projects have rows due for the archive, for the hourly housekeeping to wake their rooms. */
import { DEFAULT_PROJECT_SETTINGS } from "../domain/project-settings";
import { DELIVERY_KEEP_DAYS } from "./archiver";

/** SQL text: project `p` archives (its archive_after_days is not null; absent is the default, 30). */
export const archivingOn = (p: string) => `json_type(${p}.settings, '$.archive_after_days') IS NOT 'null'`;

const cutoffSql = (days: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', ?1, '-' || (${days}) || ' days')`;

/** Projects with a batch open, or a finished task, permission log entry or delivery older than its cutoff. */
export async function projectsDueForArchive(d1: D1Database, now: number, permissionLogDays: number): Promise<string[]> {
  const days = `coalesce(json_extract(p.settings, '$.archive_after_days'), ${DEFAULT_PROJECT_SETTINGS.archive_after_days})`;
  const { results } = await d1
    .prepare(
      `SELECT p.id FROM projects p WHERE ${archivingOn("p")} AND (
         EXISTS (SELECT 1 FROM archive_batches b WHERE b.project_id = p.id AND b.step != 'done')
         OR EXISTS (SELECT 1 FROM tasks t WHERE t.project_id = p.id AND t.completed_at < ${cutoffSql(days)})
         OR EXISTS (SELECT 1 FROM permission_log l WHERE l.project_id = p.id AND l.created_at < ${cutoffSql(`min(${days}, ?2)`)})
         OR EXISTS (SELECT 1 FROM outbox o WHERE o.project_id = p.id AND o.status != 'pending' AND o.created_at < ${cutoffSql(`min(${days}, ?3)`)}))`,
    )
    .bind(new Date(now).toISOString(), permissionLogDays, DELIVERY_KEEP_DAYS)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}
