/**
 * A task's graph, as usage and budgets count it: the task, everything it depends on and everything that depends on
 * it, transitively (API.md "Usage, budgets and telemetry"). A `related` link is a pointer, not a dependency: it
 * joins nothing. Read with one recursive query over the two indexes of task_dependencies.
 */
import { sql, type SQL } from "drizzle-orm";

/**
 * SQL selecting the ids (column `id`) of `taskId`'s graph. Upstream and downstream are walked apart: a sibling (a task
 * that shares an upstream with this one but is not connected through it) is not in the graph.
 */
export const graphIdsSql = (taskId: string): SQL => sql`
  WITH RECURSIVE
    up(id) AS (SELECT ${taskId} UNION SELECT d.depends_on_task_id FROM task_dependencies d JOIN up ON d.task_id = up.id WHERE d.dependency_type <> 'related'),
    down(id) AS (SELECT ${taskId} UNION SELECT d.task_id FROM task_dependencies d JOIN down ON d.depends_on_task_id = down.id WHERE d.dependency_type <> 'related')
  SELECT id FROM up UNION SELECT id FROM down`;
