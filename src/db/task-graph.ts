/**
 * A task graph (API.md "Usage, budgets and telemetry"): a task with everything it depends on and everything that
 * depends on it, transitively, over dependencies of every type, read by a recursive query that walks both indexes of
 * task_dependencies. Dependencies never close a cycle, and UNION keeps each task once whatever the shape.
 */
import { sql, type SQL } from "drizzle-orm";

/** The ids of the tasks in the graph of `anchor` (an SQL value: a bound id, or a column of an outer query), as a SELECT. */
export const taskGraph = (anchor: SQL | string) =>
  sql`WITH RECURSIVE graph(id) AS (
      SELECT ${anchor}
      UNION SELECT d.depends_on_task_id FROM task_dependencies d JOIN graph g ON d.task_id = g.id
      UNION SELECT d.task_id FROM task_dependencies d JOIN graph g ON d.depends_on_task_id = g.id)
    SELECT id FROM graph`;

/**
 * Which of `taskIds` are in the graph of each anchor, as rows `{key, task_id}`: one walk per anchor, whatever the
 * number of tasks asked about. `anchors` pairs a caller's key (a budget's id) with its anchor task.
 */
export const tasksInGraphs = (anchors: readonly { key: string; taskId: string }[], taskIds: readonly string[]) =>
  sql`WITH RECURSIVE graph(key, id) AS (
      SELECT a.value ->> '$.key', a.value ->> '$.taskId' FROM json_each(${JSON.stringify(anchors)}) a
      UNION SELECT g.key, d.depends_on_task_id FROM task_dependencies d JOIN graph g ON d.task_id = g.id
      UNION SELECT g.key, d.task_id FROM task_dependencies d JOIN graph g ON d.depends_on_task_id = g.id)
    SELECT key, id AS task_id FROM graph WHERE id IN (SELECT value FROM json_each(${JSON.stringify(taskIds)}))`;
