/**
 * People setting, changing and removing budgets, in the room that spends on them, so that a change takes effect on
 * the next write whatever races it. A new budget counts what its scope has spent already in the period running now
 * (the project's days of it, or every task of the graph), and crosses at once each threshold that spend reaches. A
 * change is settled the same way: thresholds it reaches cross, those it no longer reaches are forgotten (to cross
 * again later), and a scope it no longer holds is released; so is one whose budget is deleted.
 */
import { sql } from "drizzle-orm";
import { budgets as budgetsTable, type BudgetRow } from "../../db/schema";
import { taskGraph } from "../../db/task-graph";
import { asOf, holds, MAX_BUDGETS, percentOf, periodKeyOf, settle, type Spend } from "../../domain/budgets";
import { recordEvents, type OpContext, type OpOutcome, type Planner } from "./kernel";
import { statement } from "../statements";
import { budgetData, budgetRowWrite, crossingWrites, scopeActions, type Settled } from "./budget-actions";
import { invalidField, notAllowed, notFound } from "./refusals";

const TOKENS = sql.raw("input_tokens + output_tokens + cache_read_tokens + cache_write_tokens");

/** What the scope has spent in the period running now: the project's usage of the period's days, or its graph's tasks'. */
async function spentSoFar(ctx: OpContext, b: Pick<BudgetRow, "scope" | "taskId" | "period">): Promise<Spend> {
  const query =
    b.scope === "graph"
      ? sql`SELECT COALESCE(SUM(cost_usd), 0) AS usd, COALESCE(SUM(${TOKENS}), 0) AS tokens FROM task_usage
            WHERE task_id IN (${taskGraph(b.taskId!)}) AND project_id = ${ctx.projectId}`
      : (() => {
          const key = periodKeyOf(b.period, ctx.now);
          const [from, to] = b.period === "month" ? [`${key}-01`, `${key}-31`] : [key, key];
          return sql`SELECT COALESCE(SUM(cost_usd), 0) AS usd, COALESCE(SUM(${TOKENS}), 0) AS tokens FROM usage_daily
                     WHERE project_id = ${ctx.projectId} AND day BETWEEN ${from} AND ${to}`;
        })();
  const [row] = await ctx.db.all<{ usd: number; tokens: number }>(query);
  return { usd: row?.usd ?? 0, tokens: row?.tokens ?? 0 };
}

const peopleOnly = (ctx: OpContext) => (ctx.actor.kind === "person" ? undefined : notAllowed("Only people set budgets"));

/** The writes of settled budgets: their rows (`rowWrites`), crossings, events and what their actions do, answered with `budgetId`. */
async function budgetPlan(
  ctx: OpContext,
  settled: Settled[],
  rowWrites: D1PreparedStatement[],
  rows: readonly BudgetRow[],
  budgetId: string,
): Promise<OpOutcome> {
  const writes = settled.map((s) => crossingWrites(ctx, s, "changed"));
  const actions = await scopeActions(ctx, settled);
  return {
    taskId: "",
    statements: [...rowWrites, ...writes.flatMap((w) => w.statements), ...actions.statements],
    events: recordEvents(ctx, [...writes.flatMap((w) => w.events), ...actions.events]),
    budgets: rows,
    data: { budget_id: budgetId, ...(settled.some((x) => x.decision.released) ? { released: true } : {}) },
  };
}

export const createBudget: Planner<"create_budget"> = async (ctx, cmd) => {
  const refusal = peopleOnly(ctx);
  if (refusal) return refusal;
  const existing = await ctx.budgets();
  if (existing.length >= MAX_BUDGETS) return { status: 409, code: "CONFLICT", detail: `A project has at most ${MAX_BUDGETS} budgets; this one has them` };
  const { budget } = cmd;
  if (budget.scope === "graph" && !(budget.taskId && (await ctx.reads.row(budget.taskId)))) {
    return invalidField("task_id", "must be a task of this project");
  }
  const before: BudgetRow = {
    id: crypto.randomUUID(),
    projectId: ctx.projectId,
    scope: budget.scope,
    taskId: budget.scope === "graph" ? budget.taskId : null,
    period: budget.scope === "project" ? budget.period : null,
    limitUsd: budget.limitUsd,
    limitTokens: budget.limitTokens,
    actions: budget.actions,
    state: "ok",
    spentUsd: 0,
    spentTokens: 0,
    periodKey: periodKeyOf(budget.scope === "project" ? budget.period : null, ctx.now),
    createdBy: ctx.actor.label,
    createdAt: ctx.now,
    updatedAt: ctx.now,
  };
  const so = await spentSoFar(ctx, before);
  const decision = settle(before, { ...before, spentUsd: so.usd, spentTokens: so.tokens }, ctx.now);
  const row = decision.next;
  return budgetPlan(ctx, [{ before, decision }], [statement(ctx.d1, ctx.db.insert(budgetsTable).values(row))], [...existing, row], row.id);
};

export const changeBudget: Planner<"change_budget"> = async (ctx, cmd) => {
  const refusal = peopleOnly(ctx);
  if (refusal) return refusal;
  const all = await ctx.budgets();
  const b = all.find((x) => x.id === cmd.budgetId);
  if (!b) return notFound("Budget");
  const changes = cmd.changes;
  const limits = {
    limitUsd: changes.limitUsd !== undefined ? changes.limitUsd : b.limitUsd,
    limitTokens: changes.limitTokens !== undefined ? changes.limitTokens : b.limitTokens,
  };
  if ((limits.limitUsd === null) === (limits.limitTokens === null)) {
    const field = changes.limitUsd !== undefined ? "limit_usd" : "limit_tokens";
    return invalidField(field, "a budget has exactly one of limit_usd and limit_tokens (set the other to null to change its unit)");
  }
  if (b.scope === "graph" && changes.period !== undefined) return invalidField("period", "a graph budget has no period");
  const period = changes.period ?? b.period;
  // A new period unit counts from what the project spent in the period it starts now; nothing of the old one's crossings is reached.
  const periodChanged = period !== b.period;
  const base = periodChanged ? { ...b, period, periodKey: periodKeyOf(period, ctx.now), spentUsd: 0, spentTokens: 0 } : asOf(b, ctx.now);
  const so = periodChanged ? await spentSoFar(ctx, base) : { usd: base.spentUsd, tokens: base.spentTokens };
  const after: BudgetRow = { ...base, ...limits, actions: changes.actions ?? b.actions, spentUsd: so.usd, spentTokens: so.tokens, updatedAt: ctx.now };
  const decision = settle(periodChanged ? { ...base, state: b.state } : b, after, ctx.now);
  const row = decision.next;
  return budgetPlan(
    ctx,
    [{ before: b, decision }],
    [budgetRowWrite(ctx, row)],
    all.map((x) => (x.id === b.id ? row : x)),
    b.id,
  );
};

export const deleteBudget: Planner<"delete_budget"> = async (ctx, cmd) => {
  const refusal = peopleOnly(ctx);
  if (refusal) return refusal;
  const all = await ctx.budgets();
  const b = all.find((x) => x.id === cmd.budgetId);
  if (!b) return notFound("Budget");
  const current = asOf(b, ctx.now);
  // The scope it held is free again (a hold whose period ended was released as that period ended).
  const released = holds(b.state)
    ? [
        {
          type: "budget_released" as const,
          taskId: b.taskId,
          data: { ...budgetData(current, percentOf(current)), state: "ok", reason: current === b ? "deleted" : "new_period" },
        },
      ]
    : [];
  return {
    taskId: "",
    statements: [
      statement(ctx.d1, sql`DELETE FROM budget_crossings WHERE budget_id = ${b.id}`),
      statement(ctx.d1, sql`DELETE FROM budgets WHERE id = ${b.id}`),
    ],
    events: recordEvents(ctx, released),
    budgets: all.filter((x) => x.id !== b.id),
    data: { budget_id: b.id, ...(released.length > 0 ? { released: true } : {}) },
  };
};
