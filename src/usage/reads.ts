/**
 * Usage read back for the API: sums over the roll-up rows the room wrote (a project's days, models and agents; its
 * tasks), never over raw points, which the hub does not keep.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { addUsage, noUsage, type UsageAmounts } from "../domain/usage";
import { usageOfRow } from "../views/usage";
import { taskGraph } from "../db/task-graph";

export const USAGE_GROUPS = ["day", "model", "agent", "task"] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

/** The most rows a breakdown by task answers (the costliest first). */
export const TASK_ROWS = 500;

const SUMS = sql.raw(
  "sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(cache_read_tokens) AS cache_read_tokens, " +
    "sum(cache_write_tokens) AS cache_write_tokens, sum(cost_usd) AS cost_usd, sum(api_ms) AS api_ms",
);
const amountsOf = (row: Record<string, unknown>) => usageOfRow(row as unknown as UsageAmounts);

type Row = Record<string, unknown> & UsageAmounts;

/** A project's usage from day `from` to day `to` (inclusive, UTC `YYYY-MM-DD`), in all and broken down by `group`. */
export async function projectUsage(db: Db, projectId: string, from: string, to: string, group: UsageGroup) {
  const inRange = sql`project_id = ${projectId} AND day >= ${from} AND day <= ${to}`;
  const [totals] = await db.all<Row>(sql`SELECT ${SUMS} FROM usage_daily WHERE ${inRange}`);
  const total = totals && totals.cost_usd !== null ? amountsOf(totals) : noUsage();
  const rows = await breakdown(db, projectId, inRange, from, to, group);
  return { totals: total, rows };
}

async function breakdown(db: Db, projectId: string, inRange: ReturnType<typeof sql>, from: string, to: string, group: UsageGroup) {
  switch (group) {
    case "day":
      return (await db.all<Row>(sql`SELECT day, ${SUMS} FROM usage_daily WHERE ${inRange} GROUP BY day ORDER BY day`)).map((r) => ({
        day: String(r.day),
        ...amountsOf(r),
      }));
    case "model":
      return (await db.all<Row>(sql`SELECT model, ${SUMS} FROM usage_daily WHERE ${inRange} GROUP BY model ORDER BY sum(cost_usd) DESC, model`)).map((r) => ({
        model: r.model === "" ? null : String(r.model),
        ...amountsOf(r),
      }));
    case "agent":
      return (
        await db.all<Row>(
          sql`SELECT u.server_id, s.name AS server_name, u.agent_type, ${SUMS} FROM (SELECT * FROM usage_daily WHERE ${inRange}) u
              LEFT JOIN servers s ON s.id = u.server_id GROUP BY u.server_id, u.agent_type ORDER BY sum(u.cost_usd) DESC`,
        )
      ).map((r) => ({
        server_id: r.server_id === "" ? null : String(r.server_id),
        server_name: (r.server_name as string | null) ?? null,
        agent_type: r.agent_type === "" ? null : String(r.agent_type),
        ...amountsOf(r),
      }));
    case "task":
      // The tasks at work in the period (begun by its end, not finished before its start), costliest first.
      return (
        await db.all<Row>(
          sql`SELECT t.id AS task_id, t.title, t.status, u.* FROM task_usage u JOIN tasks t ON t.id = u.task_id
              WHERE u.project_id = ${projectId} AND substr(t.created_at, 1, 10) <= ${to} AND (t.completed_at IS NULL OR substr(t.completed_at, 1, 10) >= ${from})
              ORDER BY u.cost_usd DESC, t.id LIMIT ${TASK_ROWS}`,
        )
      ).map((r) => ({ task_id: String(r.task_id), title: String(r.title), status: String(r.status), ...amountsOf(r) }));
  }
}

/** A task's usage, and its graph's: the ids in it and what they used together. */
export async function taskUsage(db: Db, taskId: string) {
  const [own] = await db.all<Row>(sql`SELECT * FROM task_usage WHERE task_id = ${taskId}`);
  const graph = await db.all<Row & { id: string; has_usage: number }>(
    sql`SELECT g.id, u.task_id IS NOT NULL AS has_usage, u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, u.cost_usd, u.api_ms
        FROM (${taskGraph(taskId)}) g LEFT JOIN task_usage u ON u.task_id = g.id ORDER BY g.id`,
  );
  const graphTotals = noUsage();
  for (const row of graph) if (row.has_usage) addUsage(graphTotals, amountsOf(row));
  return {
    totals: own ? amountsOf(own) : noUsage(),
    graph: { task_ids: graph.map((r) => r.id), totals: usageOfRow(graphTotals) },
  };
}
