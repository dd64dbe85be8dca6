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
import { deleteTaskEvents, EVENT_WEIGHTS, holdsLogHead, TASK_EVENTS_FINGERPRINT, taskEventsStatement } from "./task-events";

/** SQL text: task `t` of project ?1 finished before cutoff ?3 and nothing else holds it in D1 (its dependents aside). */
const FREE = `t.project_id = ?1 AND t.status IN ('done', 'failed', 'cancelled') AND t.completed_at IS NOT NULL AND t.completed_at < ?3
    AND NOT EXISTS (SELECT 1 FROM budgets b WHERE b.task_id = t.id) AND NOT ${holdsLogHead("t")}
    AND NOT EXISTS (SELECT 1 FROM tasks r WHERE r.project_id = ?1 AND r.review_of = t.id AND r.completed_at IS NULL)`;

/**
 * SQL text: the ids of batch ?2 that may no longer leave D1: gone or not finished (a retry), held by something that
 * came after the batch was chosen (a budget, a review, the log's last event after a late note), or depended on by a
 * task outside the batch (a new dependency). Checked in the D1 batch that deletes them.
 */
const NOT_DUE = `SELECT j.value FROM json_each(?2) j WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = j.value AND ${FREE}
    AND NOT EXISTS (SELECT 1 FROM task_dependencies d WHERE d.depends_on_task_id = t.id AND d.task_id NOT IN (SELECT value FROM json_each(?2))))`;

/** Finished before the cutoff and not in an open batch: the cheap part, newest first (a dependent usually finished after its upstream). */
const WINDOW = `SELECT t.id FROM tasks t WHERE t.project_id = ?1 AND t.status IN ('done', 'failed', 'cancelled') AND t.completed_at < ?3
    AND t.id NOT IN ${inOpenBatch("tasks")} ORDER BY t.completed_at DESC, t.id LIMIT ?2`;
/** The same among tasks nothing depends on, when the window holds none free to go. */
const LEAVES = WINDOW.replace(" ORDER BY", " AND NOT EXISTS (SELECT 1 FROM task_dependencies d WHERE d.depends_on_task_id = t.id) ORDER BY");

/**
 * Of the window ?2, those free to go whose every dependent is finished before the cutoff too (chooseTaskBatch keeps
 * one only with its dependents), with their dependents and size: rows, and bytes of what weighs (events, notes, result).
 */
const CANDIDATES = `WITH ${EVENT_WEIGHTS} SELECT t.id, t.completed_at,
    (SELECT json_group_array(d.task_id) FROM task_dependencies d WHERE d.depends_on_task_id = t.id) AS dependents,
    ifnull(w.n, 0) + (SELECT count(*) FROM task_notes n WHERE n.task_id = t.id) + (SELECT count(*) FROM interventions i WHERE i.task_id = t.id) AS rows,
    ifnull(length(t.result), 0) + ifnull(length(t.spec), 0) + ifnull(length(t.payload), 0) + ifnull(w.bytes, 0)
      + (SELECT ifnull(sum(length(n.content)), 0) FROM task_notes n WHERE n.task_id = t.id) AS bytes
  FROM tasks t LEFT JOIN event_weights w ON w.task_id = t.id WHERE t.id IN (SELECT value FROM json_each(?2)) AND ${FREE}
    AND NOT EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks down ON down.id = d.task_id
      WHERE d.depends_on_task_id = t.id AND NOT (down.completed_at IS NOT NULL AND down.completed_at < ?3))
  ORDER BY t.completed_at DESC, t.id`;

/** SQL text of a scalar that changes when the tasks ?2 or anything of theirs does (?1 the project). */
const TASK_FINGERPRINT = `((SELECT group_concat(id || ':' || version || ':' || status) FROM (SELECT id, version, status FROM tasks WHERE id IN (SELECT value FROM json_each(?2)) ORDER BY id))
      || '|' || ${TASK_EVENTS_FINGERPRINT}
      || '|' || (SELECT count(*) FROM task_dependencies WHERE task_id IN (SELECT value FROM json_each(?2)) OR depends_on_task_id IN (SELECT value FROM json_each(?2)))
      || '|' || (SELECT count(*) FROM task_notes WHERE task_id IN (SELECT value FROM json_each(?2)))
      || '|' || (SELECT count(*) || ':' || ifnull(group_concat(status), '') FROM interventions WHERE task_id IN (SELECT value FROM json_each(?2)))
      || '|' || (SELECT count(*) || ':' || ifnull(max(updated_at), '') FROM task_usage WHERE task_id IN (SELECT value FROM json_each(?2)))
      || '|' || (SELECT count(*) || ':' || ifnull(group_concat(status), '') FROM code_reviews WHERE task_id IN (SELECT value FROM json_each(?2)))
      || '|' || (SELECT count(*) FROM budgets WHERE task_id IN (SELECT value FROM json_each(?2))))`;

const ids = (taskIds: readonly string[]) => JSON.stringify(taskIds);

export function taskSource(d1: D1Database, projectId: string): ArchiveSource {
  const candidates = async (sql: string, cutoff: string): Promise<TaskCandidate[]> => {
    const window = (
      await d1
        .prepare(sql)
        .bind(projectId, BATCH_LIMIT * 2, cutoff)
        .all<{ id: string }>()
    ).results.map((r) => r.id);
    if (window.length === 0) return [];
    const { results } = await d1
      .prepare(CANDIDATES)
      .bind(projectId, ids(window), cutoff)
      .all<{ id: string; completed_at: string; dependents: string; rows: number; bytes: number }>();
    return results.map((r) => ({ ...r, dependents: JSON.parse(r.dependents) as string[] }));
  };
  const fingerprintSql = `SELECT ${TASK_FINGERPRINT} AS fingerprint`;
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
    fingerprintSql: TASK_FINGERPRINT,
    notDueSql: NOT_DUE,
    deletions(taskIds, guard) {
      const list = ids(taskIds);
      return [
        ...TASK_CHILDREN.map(({ table }) => d1.prepare(`DELETE FROM ${table} WHERE task_id IN (SELECT value FROM json_each(?1)) AND ${guard}`).bind(list)),
        deleteTaskEvents(d1, projectId, taskIds, guard),
        d1.prepare(`DELETE FROM tasks WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2)) AND ${guard}`).bind(projectId, list),
      ];
    },
  };
}
