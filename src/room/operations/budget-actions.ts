/**
 * What a settled budget writes in the batch that settled it: its crossings (one row per threshold and period, so a
 * repeat is a no-op), its events, and what its crossed actions do to the running tasks in its scope: a hold leaves
 * each a note, a stop moves each to needs_human with a question a person answers (as an agent's help does).
 */
import { and, eq, sql } from "drizzle-orm";
import { tasks, type BudgetRow } from "../../db/schema";
import { taskGraph } from "../../db/task-graph";
import { asOf, budgetLabel, spendText, type BudgetDecision } from "../../domain/budgets";
import { guardAfter, guardHolds, statement, updateTask, type EventDraft, type TaskRow } from "../statements";
import { statusEvent, type OpContext } from "./kernel";

export interface BudgetWrites {
  statements: D1PreparedStatement[];
  events: EventDraft[];
}

/** A budget as it was and as a change settled it. */
export interface Settled {
  before: BudgetRow;
  decision: BudgetDecision<BudgetRow>;
}

/** Why a budget no longer holds its scope, as its budget_released event says. */
export type ReleaseReason = "new_period" | "changed" | "deleted";

const EVENT_OF = { warn: "budget_warned", hold: "budget_held", stop: "budget_stopped" } as const;

/** What every budget event says of the budget: scope, period, spend, limit and how much of it is spent. */
export function budgetData(b: BudgetRow, percent: number): Record<string, unknown> {
  return {
    budget_id: b.id,
    scope: b.scope,
    task_id: b.taskId,
    period: b.period,
    period_key: b.periodKey,
    spent: { cost_usd: b.spentUsd, tokens: b.spentTokens },
    limit_usd: b.limitUsd,
    limit_tokens: b.limitTokens,
    percent: Math.round(percent * 100) / 100,
    state: b.state,
  };
}

/** The crossings a settled budget adds and removes, and its events (a release first, then each threshold crossed). */
export function crossingWrites(ctx: OpContext, { before, decision }: Settled, reason: ReleaseReason): BudgetWrites {
  const { next } = decision;
  const data = budgetData(next, decision.percent);
  const statements: D1PreparedStatement[] = [];
  if (decision.uncrossed.length > 0) {
    const percents = JSON.stringify(decision.uncrossed.map((t) => t.at_percent));
    statements.push(
      statement(
        ctx.d1,
        sql`DELETE FROM budget_crossings WHERE budget_id = ${next.id} AND period_key = ${asOf(before, ctx.now).periodKey}
            AND at_percent IN (SELECT value FROM json_each(${percents}))`,
      ),
    );
  }
  for (const t of decision.crossed) {
    statements.push(
      statement(
        ctx.d1,
        sql`INSERT INTO budget_crossings (budget_id, period_key, at_percent, action, spent_usd, spent_tokens, crossed_at)
            VALUES (${next.id}, ${next.periodKey}, ${t.at_percent}, ${t.action}, ${next.spentUsd}, ${next.spentTokens}, ${ctx.now})
            ON CONFLICT DO NOTHING`,
      ),
    );
  }
  const events: EventDraft[] = [
    ...(decision.released
      ? [{ type: "budget_released" as const, taskId: next.taskId, data: { ...data, reason: decision.newPeriod ? "new_period" : reason } }]
      : []),
    ...decision.crossed.map((t) => ({ type: EVENT_OF[t.action], taskId: next.taskId, data: { ...data, at_percent: t.at_percent, action: t.action } })),
  ];
  return { statements, events };
}

/** The budget's row as the change leaves it. */
export const budgetRowWrite = (ctx: OpContext, b: BudgetRow) =>
  statement(
    ctx.d1,
    sql`UPDATE budgets SET period = ${b.period}, limit_usd = ${b.limitUsd}, limit_tokens = ${b.limitTokens}, actions = ${JSON.stringify(b.actions)},
          state = ${b.state}, spent_usd = ${b.spentUsd}, spent_tokens = ${b.spentTokens}, period_key = ${b.periodKey}, updated_at = ${ctx.now}
        WHERE id = ${b.id}`,
  );

/** The project's running tasks in the budget's scope, read whole: their writes are guarded by the versions read. */
function runningIn(ctx: OpContext, b: BudgetRow): Promise<TaskRow[]> {
  const inScope = b.scope === "graph" && b.taskId ? sql`${tasks.id} IN (${taskGraph(b.taskId)})` : undefined;
  return ctx.db
    .select()
    .from(tasks)
    .where(and(eq(tasks.projectId, ctx.projectId), eq(tasks.status, "running"), inScope));
}

/**
 * What the actions crossed do to the running tasks in each budget's scope: a stop moves them to needs_human, a hold
 * (unless a stop crossed with it) leaves each a note. A task in the scopes of several budgets is stopped once.
 */
export async function scopeActions(ctx: OpContext, settled: readonly Settled[]): Promise<BudgetWrites> {
  const writes: BudgetWrites = { statements: [], events: [] };
  const stopped = new Set<string>();
  for (const { decision } of settled) {
    const actions = new Set(decision.crossed.map((t) => t.action));
    if (!actions.has("stop") && !actions.has("hold")) continue;
    const b = decision.next;
    for (const task of await runningIn(ctx, b)) {
      if (stopped.has(task.id)) continue;
      if (actions.has("stop")) {
        stopped.add(task.id);
        stop(ctx, task, b, writes);
      } else note(ctx, task, b, writes);
    }
  }
  return writes;
}

/** Running → needs_human, with a question that says why; the person's answer lets the agent go on (respond). */
function stop(ctx: OpContext, task: TaskRow, b: BudgetRow, writes: BudgetWrites) {
  const interventionId = crypto.randomUUID();
  const question =
    `Stopped by ${budgetLabel(b)} (budget ${b.id}): it has spent ${spendText(b)}. ` +
    "Raise the budget or change its actions, then answer to let the agent go on; or cancel the task.";
  const context = JSON.stringify({
    budget_id: b.id,
    scope: b.scope,
    spent: { cost_usd: b.spentUsd, tokens: b.spentTokens },
    limit_usd: b.limitUsd,
    limit_tokens: b.limitTokens,
  });
  writes.statements.push(
    updateTask(ctx.d1, task, { status: "needs_human" }, ctx.now),
    statement(
      ctx.d1,
      sql`INSERT INTO interventions (id, task_id, project_id, intervention_type, question, context, status, asked_by, created_at)
          SELECT ${interventionId}, ${task.id}, ${ctx.projectId}, 'help', ${question}, ${context}, 'pending', 'hub', ${ctx.now}
          WHERE ${guardHolds(guardAfter(task))}`,
    ),
  );
  writes.events.push(
    statusEvent("intervention_requested", task, "needs_human", { intervention_id: interventionId, intervention_type: "help", question, budget_id: b.id }),
  );
}

/** A note to the task's agent: its scope is held, so no new work starts there. */
function note(ctx: OpContext, task: TaskRow, b: BudgetRow, writes: BudgetWrites) {
  const noteId = crypto.randomUUID();
  const content =
    `Budget hold: ${budgetLabel(b)} (budget ${b.id}) has spent ${spendText(b)}. ` +
    "No new task in its scope is assigned or started until it is raised; finish or wrap up this one.";
  writes.statements.push(
    statement(
      ctx.d1,
      sql`INSERT INTO task_notes (id, task_id, project_id, author, content, urgent, created_at)
          VALUES (${noteId}, ${task.id}, ${ctx.projectId}, 'hub', ${content}, 1, ${ctx.now})`,
    ),
  );
  writes.events.push({ type: "note_added", taskId: task.id, data: { note_id: noteId, urgent: true, content, budget_id: b.id }, traceparent: task.traceparent });
}
