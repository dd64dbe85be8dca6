/**
 * What a usage batch spends on the project's budgets, and the thresholds it crosses: decided here, in the batch that
 * spends, from the budgets the room keeps (it is their only writer, so what it holds is what D1 holds). A project
 * budget takes the batch's whole amount into the period running now (a new period starts from the batch's amount);
 * a graph budget takes the usage of the batch's tasks in its graph, read only when the project has graph budgets.
 */
import type { BudgetRow } from "../../db/schema";
import { tasksInGraphs } from "../../db/task-graph";
import { settle, spent, type Spend } from "../../domain/budgets";
import { addUsage, noUsage, tokensOf, type UsageAmounts } from "../../domain/usage";
import type { UsageRollup } from "../../domain/usage-rollup";
import type { EventDraft } from "../statements";
import { budgetRowWrite, crossingWrites, scopeActions, type Settled } from "./budget-actions";
import type { OpContext } from "./kernel";

export interface BudgetSpend {
  statements: D1PreparedStatement[];
  events: EventDraft[];
  /** The budgets as the batch leaves them, when it changed any: the room keeps them once it has committed. */
  rows?: readonly BudgetRow[];
  /** Whether its actions wrote tasks (stopped them, noted them, offered them): else the room's memory of them stays. */
  touchesTasks?: boolean;
}

const spendOf = (a: UsageAmounts): Spend => ({ usd: a.cost_usd, tokens: tokensOf(a) });

export async function spendOnBudgets(ctx: OpContext, rollup: UsageRollup): Promise<BudgetSpend> {
  const budgets = await ctx.budgets();
  if (budgets.length === 0 || rollup.points === 0) return { statements: [], events: [] };
  const graphs = await graphAmounts(ctx, budgets, rollup);
  const settled: Settled[] = [];
  const rows = budgets.map((b) => {
    const amount = b.scope === "project" ? spendOf(rollup.total) : spendOf(graphs.get(b.id) ?? noUsage());
    if (amount.usd === 0 && amount.tokens === 0) return b;
    const decision = settle(b, { ...spent(b, amount, ctx.now), updatedAt: ctx.now }, ctx.now);
    settled.push({ before: b, decision });
    return decision.next;
  });
  if (settled.length === 0) return { statements: [], events: [] };
  const writes = settled.map((s) => crossingWrites(ctx, s, "new_period"));
  const actions = await scopeActions(ctx, settled);
  return {
    statements: [...settled.map((s) => budgetRowWrite(ctx, s.decision.next)), ...writes.flatMap((w) => w.statements), ...actions.statements],
    events: [...writes.flatMap((w) => w.events), ...actions.events],
    rows,
    touchesTasks: actions.statements.length > 0,
  };
}

/** What the batch's tasks used, per graph budget whose graph holds them: one walk of each graph, only when there are any. */
async function graphAmounts(ctx: OpContext, budgets: readonly BudgetRow[], rollup: UsageRollup): Promise<Map<string, UsageAmounts>> {
  const graphs = budgets.filter((b) => b.scope === "graph" && b.taskId);
  const amounts = new Map<string, UsageAmounts>();
  if (graphs.length === 0 || rollup.byTask.size === 0) return amounts;
  const rows = await ctx.db.all<{ key: string; task_id: string }>(
    tasksInGraphs(
      graphs.map((b) => ({ key: b.id, taskId: b.taskId! })),
      [...rollup.byTask.keys()],
    ),
  );
  for (const r of rows) {
    const used = rollup.byTask.get(r.task_id);
    if (!used) continue;
    if (!amounts.has(r.key)) amounts.set(r.key, noUsage());
    addUsage(amounts.get(r.key)!, used);
  }
  return amounts;
}
