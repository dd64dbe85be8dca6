/**
 * Which budgets hold work: a budget over its hold or stop threshold in the period running now holds its scope, every
 * task of the project or those of its task graph, so nothing there is assigned or started. Read from the room's own
 * budgets; the graphs are walked only when a graph budget holds.
 */
import type { BudgetRow } from "../../db/schema";
import { tasksInGraphs } from "../../db/task-graph";
import { asOf, holds } from "../../domain/budgets";
import type { ProblemData } from "../commands";
import type { OpContext } from "./kernel";
import { budgetHeld } from "./refusals";

/** The project's budgets that hold work now, as of now. */
export async function holdingBudgets(ctx: OpContext): Promise<BudgetRow[]> {
  return (await ctx.budgets()).map((b) => asOf(b, ctx.now)).filter((b) => holds(b.state));
}

/** The budget holding each of these tasks, if any: a project budget that holds holds them all. */
export async function holdsOn(ctx: OpContext, taskIds: readonly string[]): Promise<Map<string, BudgetRow>> {
  const held = await holdingBudgets(ctx);
  const found = new Map<string, BudgetRow>();
  if (held.length === 0 || taskIds.length === 0) return found;
  const project = held.find((b) => b.scope === "project");
  if (project) {
    for (const id of taskIds) found.set(id, project);
    return found;
  }
  const graphs = held.filter((b) => b.taskId !== null);
  const byId = new Map(graphs.map((b) => [b.id, b]));
  const rows = await ctx.db.all<{ key: string; task_id: string }>(
    tasksInGraphs(
      graphs.map((b) => ({ key: b.id, taskId: b.taskId! })),
      taskIds,
    ),
  );
  for (const r of rows) if (!found.has(r.task_id)) found.set(r.task_id, byId.get(r.key)!);
  return found;
}

/**
 * The refusal when a budget holds work on the task (or, for a task being created, on the tasks it depends on, whose
 * graphs it joins; a project budget holds it whatever they are).
 */
export async function budgetRefusal(ctx: OpContext, taskIds: readonly string[], what: string): Promise<ProblemData | undefined> {
  const held = await holdingBudgets(ctx);
  if (held.length === 0) return undefined;
  const project = held.find((b) => b.scope === "project");
  if (project) return budgetHeld(project, what);
  const [holding] = (await holdsOn(ctx, taskIds)).values();
  return holding && budgetHeld(holding, what);
}
