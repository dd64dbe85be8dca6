/**
 * Budgets (API.md "Usage, budgets and telemetry"), as pure decisions: which period a spend counts in, what a budget
 * has spent of its limit, which thresholds it has reached, the state they put it in, and what a change (a spend, a
 * new limit, new actions) crosses and releases. The project's room applies them in the batch that causes them.
 */
import type { BudgetAction, BudgetPeriod, BudgetRow, BudgetScope, BudgetState, BudgetThreshold } from "../db/schema/usage";

/** Budgets per project: a few, so that every usage batch and task view reads them all cheaply. */
export const MAX_BUDGETS = 50;

/** What a budget counts: USD, and every token (tokensOf). */
export interface Spend {
  usd: number;
  tokens: number;
}

/** The fields of a budget these decisions read and write. */
export type BudgetFacts = Pick<
  BudgetRow,
  "id" | "scope" | "taskId" | "period" | "limitUsd" | "limitTokens" | "actions" | "state" | "spentUsd" | "spentTokens" | "periodKey"
>;

/** The period a spend at `now` counts in: its UTC day (`YYYY-MM-DD`) or month (`YYYY-MM`); a graph budget has one period, ''. */
export const periodKeyOf = (period: BudgetPeriod | null, now: string) => (period === "day" ? now.slice(0, 10) : period === "month" ? now.slice(0, 7) : "");

/** The budget as of `now`: a period that has ended leaves nothing spent and nothing reached in the one that runs now. */
export function asOf<B extends BudgetFacts>(budget: B, now: string): B {
  const key = periodKeyOf(budget.period, now);
  return budget.periodKey === key ? budget : { ...budget, periodKey: key, spentUsd: 0, spentTokens: 0, state: "ok" };
}

/** Adds a spend to the budget's period at `now` (a new period starts from nothing). */
export function spent<B extends BudgetFacts>(budget: B, amount: Spend, now: string): B {
  const current = asOf(budget, now);
  return { ...current, spentUsd: current.spentUsd + amount.usd, spentTokens: current.spentTokens + amount.tokens };
}

/** What the budget has spent of its limit, in its unit, and the limit. */
export function usedOfLimit(b: Pick<BudgetFacts, "limitUsd" | "limitTokens" | "spentUsd" | "spentTokens">): { used: number; limit: number } {
  return b.limitUsd !== null ? { used: b.spentUsd, limit: b.limitUsd } : { used: b.spentTokens, limit: b.limitTokens ?? 0 };
}

export function percentOf(b: Pick<BudgetFacts, "limitUsd" | "limitTokens" | "spentUsd" | "spentTokens">): number {
  const { used, limit } = usedOfLimit(b);
  return limit > 0 ? (used / limit) * 100 : 0;
}

/** Sums of many small costs drift in the last bits: $0.50 made of 20 × $0.025 reaches 50 %. */
const DRIFT = 1e-9;

/** The thresholds the budget has reached, lowest first. */
export function reached(b: Pick<BudgetFacts, "limitUsd" | "limitTokens" | "spentUsd" | "spentTokens" | "actions">): BudgetThreshold[] {
  const { used, limit } = usedOfLimit(b);
  return b.actions.filter((a) => used * 100 >= a.at_percent * limit * (1 - DRIFT)).sort((x, y) => x.at_percent - y.at_percent);
}

const STATE_OF: Record<BudgetAction, BudgetState> = { warn: "warned", hold: "held", stop: "stopped" };
const SEVERITY: Record<BudgetState, number> = { ok: 0, warned: 1, held: 2, stopped: 3 };

/** The state reached thresholds put a budget in: that of the most severe action among them. */
export const stateOf = (thresholds: readonly BudgetThreshold[]): BudgetState =>
  thresholds.map((t) => STATE_OF[t.action]).reduce<BudgetState>((worst, s) => (SEVERITY[s] > SEVERITY[worst] ? s : worst), "ok");

export const severity = (state: BudgetState) => SEVERITY[state];

/** A held or stopped budget: no new assignment or start in its scope. */
export const holds = (state: BudgetState) => state === "held" || state === "stopped";

const same = (a: BudgetThreshold, b: BudgetThreshold) => a.at_percent === b.at_percent && a.action === b.action;

/** What a change to a budget crosses and releases: decided from the budget before it and after it. */
export interface BudgetDecision<B extends BudgetFacts = BudgetFacts> {
  /** The budget as the change leaves it (its state decided). */
  next: B;
  /** Thresholds reached now that were not before (in this period), lowest first: each fires its action once. */
  crossed: BudgetThreshold[];
  /** Thresholds reached before that no longer are (a higher limit, actions taken out): their crossings go. */
  uncrossed: BudgetThreshold[];
  /** It held (or stopped) work in its scope and no longer does. */
  released: boolean;
  /** Its period ended since it was last written. */
  newPeriod: boolean;
  percent: number;
}

/**
 * Settles a budget changed from `before` (as last written) to `after` (its spend, limit or actions changed, in the
 * period of `now`). The thresholds reached before are those of `before` in this period, exactly the crossings kept
 * for it: the room removes a crossing as soon as its threshold is no longer reached, so a threshold reached again
 * (after a raise) crosses again.
 */
export function settle<B extends BudgetFacts>(before: B, after: B, now: string): BudgetDecision<B> {
  const was = asOf(before, now);
  const had = reached(was);
  const has = reached(after);
  const next = { ...after, state: stateOf(has) };
  return {
    next,
    crossed: has.filter((t) => !had.some((h) => same(h, t))),
    uncrossed: had.filter((h) => !has.some((t) => same(h, t))),
    released: holds(before.state) && !holds(next.state),
    newPeriod: was !== before,
    percent: percentOf(after),
  };
}

/** What is left of a budget's limit in its unit (never below nothing), as of `now`. */
export function remainingOf(b: BudgetFacts, now: string): { remaining_usd?: number; remaining_tokens?: number } {
  const current = asOf(b, now);
  if (b.limitUsd !== null) return { remaining_usd: Math.max(0, b.limitUsd - current.spentUsd) };
  return { remaining_tokens: Math.max(0, (b.limitTokens ?? 0) - current.spentTokens) };
}

/** A task's budget as its view shows it: what is left in each unit (the least of its budgets in that unit) and the worst state. */
export interface TaskBudget {
  budget_id: string;
  remaining_usd?: number;
  remaining_tokens?: number;
  state: BudgetState;
}

/**
 * The tightest of the budgets a task is under (its project's and those of the graphs that hold it): the one in the
 * worst state, then with the least left of its limit; beside it, the least left in each unit. Null under none.
 */
export function tightestBudget(budgets: readonly BudgetFacts[], now: string): TaskBudget | null {
  if (budgets.length === 0) return null;
  const current = budgets.map((b) => asOf(b, now));
  const left = (b: BudgetFacts) => 1 - percentOf(b) / 100;
  const [tightest] = [...current].sort((a, b) => SEVERITY[b.state] - SEVERITY[a.state] || left(a) - left(b));
  const least = (unit: "remaining_usd" | "remaining_tokens") => {
    const values = current.flatMap((b) => remainingOf(b, now)[unit] ?? []);
    return values.length > 0 ? { [unit]: Math.min(...values) } : {};
  };
  return { budget_id: tightest!.id, ...least("remaining_usd"), ...least("remaining_tokens"), state: tightest!.state };
}

/** How a budget is named to people: "the project's daily budget", "the budget of the graph of task 1a2b3c4d". */
export function budgetLabel(b: { scope: BudgetScope; period: BudgetPeriod | null; taskId: string | null }): string {
  if (b.scope === "graph") return `the budget of the task graph of ${b.taskId?.slice(0, 8) ?? "a task"}`;
  return `the project's ${b.period === "month" ? "monthly" : "daily"} budget`;
}

/** A spend as people read it: "$0.82 of $1.00 (82%)" or "82,000 of 100,000 tokens (82%)". */
export function spendText(b: Pick<BudgetFacts, "limitUsd" | "limitTokens" | "spentUsd" | "spentTokens">): string {
  const percent = `${Math.round(percentOf(b))}%`;
  if (b.limitUsd !== null) return `$${b.spentUsd.toFixed(2)} of $${b.limitUsd.toFixed(2)} (${percent})`;
  return `${b.spentTokens.toLocaleString("en-US")} of ${(b.limitTokens ?? 0).toLocaleString("en-US")} tokens (${percent})`;
}
