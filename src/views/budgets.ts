/** A project's budgets as people see them (API.md "Usage, budgets and telemetry"): spend, state and crossings of the period running now. */
import { and, asc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { BUDGET_ACTIONS, BUDGET_PERIODS, BUDGET_SCOPES, BUDGET_STATES, budgetCrossings, budgets, type BudgetRow } from "../db/schema";
import { asOf, percentOf, remainingOf } from "../domain/budgets";
import { id, timestamp } from "./fields";

const threshold = z.object({
  at_percent: z.number().meta({ description: "Percent of the limit spent at which the action is taken" }),
  action: z.enum(BUDGET_ACTIONS),
});

export const budgetSchema = z
  .object({
    id,
    project_id: id,
    scope: z.enum(BUDGET_SCOPES),
    task_id: id.nullable().meta({ description: "A graph budget's anchor: the graph is it with every task connected to it by dependencies, either way" }),
    period: z.enum(BUDGET_PERIODS).nullable().meta({ description: "A project budget's period (UTC day or month); null for a graph budget" }),
    period_key: z.string().meta({ description: "The period running now: `YYYY-MM-DD`, `YYYY-MM`, or '' for a graph budget" }),
    limit_usd: z.number().nullable(),
    limit_tokens: z.int().nullable().meta({ description: "Counted as input, output, cache-read and cache-write tokens together" }),
    actions: z.array(threshold).meta({ description: "Lowest threshold first" }),
    spent: z.object({ cost_usd: z.number(), tokens: z.int() }).meta({ description: "What the scope has spent in the period running now" }),
    percent: z.number().meta({ description: "How much of its limit the budget has spent" }),
    remaining_usd: z.number().optional().meta({ description: "What is left of `limit_usd` (never below 0)" }),
    remaining_tokens: z.int().optional().meta({ description: "What is left of `limit_tokens` (never below 0)" }),
    state: z.enum(BUDGET_STATES).meta({ description: "The most severe action among the thresholds crossed this period; `held` and `stopped` hold the scope" }),
    crossed: z
      .array(threshold.extend({ crossed_at: timestamp }))
      .meta({ description: "The thresholds crossed in the period running now, lowest first: each crosses once, unless a raise takes it back" }),
    created_by: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "Budget" });
export type BudgetView = z.infer<typeof budgetSchema>;

type CrossingRow = typeof budgetCrossings.$inferSelect;

/** A budget as of `now` (a period that ended shows the new one, with nothing spent), with its crossings of that period. */
export function budgetView(row: BudgetRow, crossings: readonly CrossingRow[], now: string): BudgetView {
  const b = asOf(row, now);
  return {
    id: b.id,
    project_id: b.projectId,
    scope: b.scope,
    task_id: b.taskId,
    period: b.period,
    period_key: b.periodKey,
    limit_usd: b.limitUsd,
    limit_tokens: b.limitTokens,
    actions: [...b.actions].sort((x, y) => x.at_percent - y.at_percent),
    spent: { cost_usd: b.spentUsd, tokens: b.spentTokens },
    percent: Math.round(percentOf(b) * 100) / 100,
    ...remainingOf(b, now),
    state: b.state,
    crossed: crossings
      .filter((c) => c.budgetId === b.id && c.periodKey === b.periodKey)
      .sort((x, y) => x.atPercent - y.atPercent)
      .map((c) => ({ at_percent: c.atPercent, action: c.action, crossed_at: c.crossedAt })),
    created_by: b.createdBy,
    created_at: b.createdAt,
    updated_at: b.updatedAt,
  };
}

/** The project's budgets (or the one named), oldest first, as views: two queries, whatever their number. */
export async function budgetViews(db: Db, projectId: string, budgetId?: string): Promise<BudgetView[]> {
  const rows = await db
    .select()
    .from(budgets)
    .where(and(eq(budgets.projectId, projectId), budgetId ? eq(budgets.id, budgetId) : undefined))
    .orderBy(asc(budgets.createdAt), asc(budgets.id));
  if (rows.length === 0) return [];
  const now = new Date().toISOString();
  const periods = JSON.stringify(rows.map((r) => ({ id: r.id, key: asOf(r, now).periodKey })));
  const crossings = await db
    .select()
    .from(budgetCrossings)
    .where(sql`(${budgetCrossings.budgetId}, ${budgetCrossings.periodKey}) IN (SELECT p.value ->> '$.id', p.value ->> '$.key' FROM json_each(${periods}) p)`);
  return rows.map((r) => budgetView(r, crossings, now));
}
