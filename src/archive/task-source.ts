/**
 * Finished tasks as an archive source: a task with its events, dependencies, notes, questions, usage and reviews.
 * A task leaves D1 only with or after every task still there that depends on it (plan.ts chooseTaskBatch), and a task
 * a budget is anchored on stays (the budget would go with it), as do one a review still under way reviews and one
 * holding the log's last event (task-events.ts).
 */
import { dbOf } from "../db/client";
import { taskViewsInBatch } from "../views/task-queries";
import { BATCH_LIMIT, chooseTaskBatch, type TaskCandidate } from "./plan";
import { TASK_CHILDREN, type ArchiveRecord, type Row } from "./records";
import { inOpenBatch, type ArchiveSource, type Gathered } from "./sources";
import { deleteTaskEvents, holdsLogHead, TASK_EVENTS_FINGERPRINT, taskEventsStatement } from "./task-events";

const FINISHED_SQL = "status IN ('done', 'failed', 'cancelled') AND completed_at IS NOT NULL";

/** Finished before the cutoff, not in an open batch, no budget on it, and every task depending on it also archivable. */
const CANDIDATES = `SELECT t.id, t.completed_at,
    (SELECT json_group_array(d.task_id) FROM task_dependencies d WHERE d.depends_on_task_id = t.id) AS dependents
  FROM tasks t
  WHERE t.project_id = ?1 AND t.${FINISHED_SQL.replaceAll(" AND ", " AND t.")} AND t.completed_at < ?2
    AND t.id NOT IN ${inOpenBatch("tasks")}
    AND NOT EXISTS (SELECT 1 FROM budgets b WHERE b.task_id = t.id) AND NOT ${holdsLogHead("t")}
    AND t.id NOT IN (SELECT r.review_of FROM tasks r WHERE r.project_id = ?1 AND r.review_of IS NOT NULL AND r.completed_at IS NULL)
    AND NOT EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks down ON down.id = d.task_id
      WHERE d.depends_on_task_id = t.id AND NOT (down.${FINISHED_SQL.replaceAll(" AND ", " AND down.")} AND down.completed_at < ?2))`;

/** Newest first (a dependent usually finished after its upstream, so it comes first); `LEAVES` when that window holds none free to go. */
const WINDOW = `${CANDIDATES} ORDER BY t.completed_at DESC, t.id LIMIT ?3`;
const LEAVES = `${CANDIDATES} AND NOT EXISTS (SELECT 1 FROM task_dependencies d WHERE d.depends_on_task_id = t.id) ORDER BY t.completed_at DESC, t.id LIMIT ?3`;

const ids = (taskIds: readonly string[]) => JSON.stringify(taskIds);

export function taskSource(d1: D1Database, projectId: string): ArchiveSource {
  const candidates = async (sql: string, cutoff: string): Promise<TaskCandidate[]> => {
    const { results } = await d1
      .prepare(sql)
      .bind(projectId, cutoff, BATCH_LIMIT * 2)
      .all<{ id: string; completed_at: string; dependents: string }>();
    return results.map((r) => ({ id: r.id, completed_at: r.completed_at, dependents: JSON.parse(r.dependents) as string[] }));
  };
  const fingerprintSql = `SELECT (SELECT group_concat(id || ':' || version || ':' || status) FROM (SELECT id, version, status FROM tasks WHERE id IN (SELECT value FROM json_each(?2)) ORDER BY id))
      || '|' || ${TASK_EVENTS_FINGERPRINT}
      || '|' || (SELECT count(*) FROM task_dependencies WHERE task_id IN (SELECT value FROM json_each(?2)) OR depends_on_task_id IN (SELECT value FROM json_each(?2)))
      || '|' || (SELECT count(*) FROM task_notes WHERE task_id IN (SELECT value FROM json_each(?2)))
      || '|' || (SELECT count(*) || ':' || ifnull(group_concat(status), '') FROM interventions WHERE task_id IN (SELECT value FROM json_each(?2)))
      || '|' || (SELECT count(*) || ':' || ifnull(max(updated_at), '') FROM task_usage WHERE task_id IN (SELECT value FROM json_each(?2)))
      || '|' || (SELECT count(*) || ':' || ifnull(group_concat(status), '') FROM code_reviews WHERE task_id IN (SELECT value FROM json_each(?2)))
      || '|' || (SELECT count(*) FROM budgets WHERE task_id IN (SELECT value FROM json_each(?2))) AS fingerprint`;
  const fingerprintStatement = (taskIds: readonly string[]) => d1.prepare(fingerprintSql).bind(projectId, ids(taskIds));

  return {
    kind: "tasks",
    async due(cutoff) {
      return chooseTaskBatch(await candidates(WINDOW, cutoff)) ?? chooseTaskBatch(await candidates(LEAVES, cutoff));
    },
    async gather(taskIds): Promise<Gathered> {
      const rows = d1
        .prepare("SELECT * FROM tasks WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2)) ORDER BY id")
        .bind(projectId, ids(taskIds));
      const children = TASK_CHILDREN.map(({ table, order }) =>
        d1.prepare(`SELECT * FROM ${table} WHERE task_id IN (SELECT value FROM json_each(?1)) ORDER BY ${order}`).bind(ids(taskIds)),
      );
      const views = taskViewsInBatch(dbOf(d1), d1, [...taskIds]);
      const events = taskEventsStatement(d1, projectId, taskIds);
      // One batch: one transaction, so the records and the fingerprint describe the same rows.
      const results = await d1.batch([rows, ...children, views.statement, events.statement, fingerprintStatement(taskIds)]);
      const viewById = new Map(views.read(results[1 + children.length]!).map((v) => [v.id, v]));
      const records: ArchiveRecord[] = [];
      for (const row of results[0]!.results as Row[]) {
        records.push({ type: "task", task_id: row.id as string, row, view: viewById.get(row.id as string)! });
      }
      TASK_CHILDREN.forEach(({ type }, i) => {
        for (const row of results[1 + i]!.results as Row[]) records.push({ type, task_id: row.task_id as string, row });
      });
      const eventList = events.read(results[2 + children.length]!);
      for (const event of eventList) records.push({ type: "event", task_id: event.task_id, event });
      const fingerprint = (results[3 + children.length]!.results[0] as { fingerprint: string }).fingerprint;
      return { records, fingerprint, seqs: eventList.map((e) => e.seq) };
    },
    async fingerprint(taskIds) {
      return (await fingerprintStatement(taskIds).first<{ fingerprint: string }>())!.fingerprint;
    },
    deletions(taskIds) {
      const list = ids(taskIds);
      return [
        ...TASK_CHILDREN.map(({ table }) => d1.prepare(`DELETE FROM ${table} WHERE task_id IN (SELECT value FROM json_each(?1))`).bind(list)),
        deleteTaskEvents(d1, projectId, taskIds),
        d1.prepare("DELETE FROM tasks WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2))").bind(projectId, list),
      ];
    },
  };
}
