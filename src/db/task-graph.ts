/**
 * A task graph, as usage and budgets count it (API.md "Usage, budgets and telemetry"): a task with everything it
 * depends on and everything that depends on it, transitively. Upstream and downstream are walked apart, so a sibling
 * (a task sharing an upstream with this one, not connected to it otherwise) is not in its graph. Dependencies of every
 * type count, `related` ones too: work a person linked is work of the same graph. Recursive queries over the two
 * indexes of task_dependencies; dependencies never close a cycle, and UNION keeps each task once whatever the shape.
 */
import { sql, type SQL } from "drizzle-orm";

/** The ids of the tasks in the graph of `anchor` (an SQL value: a bound id, or a column of an outer query), as a SELECT of `id`. */
export const taskGraph = (anchor: SQL | string) =>
  sql`WITH RECURSIVE
      up(id) AS (SELECT ${anchor} UNION SELECT d.depends_on_task_id FROM task_dependencies d JOIN up g ON d.task_id = g.id),
      down(id) AS (SELECT ${anchor} UNION SELECT d.task_id FROM task_dependencies d JOIN down g ON d.depends_on_task_id = g.id)
    SELECT id FROM up UNION SELECT id FROM down`;

/**
 * Which of `taskIds` are in the graph of each anchor, as rows `{key, task_id}`: one walk per anchor, whatever the
 * number of tasks asked about. `anchors` pairs a caller's key (a budget's id) with its anchor task.
 */
export const tasksInGraphs = (anchors: readonly { key: string; taskId: string }[], taskIds: readonly string[]) => {
  const seeds = sql`SELECT a.value ->> '$.key', a.value ->> '$.taskId' FROM json_each(${JSON.stringify(anchors)}) a`;
  return sql`WITH RECURSIVE
      up(key, id) AS (${seeds} UNION SELECT g.key, d.depends_on_task_id FROM task_dependencies d JOIN up g ON d.task_id = g.id),
      down(key, id) AS (${seeds} UNION SELECT g.key, d.task_id FROM task_dependencies d JOIN down g ON d.depends_on_task_id = g.id)
    SELECT key, id AS task_id FROM (SELECT key, id FROM up UNION SELECT key, id FROM down)
    WHERE id IN (SELECT value FROM json_each(${JSON.stringify(taskIds)}))`;
};

/**
 * The ids of every task connected to `anchor` by dependencies, whichever way each edge points (siblings too): the whole
 * graph a person sees drawn, as a template is saved from it. At most `limit` ids are walked.
 */
export const connectedTasks = (anchor: SQL, limit: number) =>
  sql`WITH RECURSIVE
      g(id) AS (SELECT ${anchor}
        UNION SELECT d.depends_on_task_id FROM task_dependencies d JOIN g ON d.task_id = g.id
        UNION SELECT d.task_id FROM task_dependencies d JOIN g ON d.depends_on_task_id = g.id
        LIMIT ${limit})
    SELECT id FROM g`;
