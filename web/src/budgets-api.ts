/**
 * A project's budgets over the API (API.md "Usage, budgets and telemetry"), typed here by hand: the hub's description
 * (client/) gains the budget routes with the budgets themselves, and these few calls then move to the typed client.
 * Answers and refusals are those of `ok`: the data, or an ApiError carrying the problem's fields.
 */
import { ApiError, asPerson } from "./api";
import type { Task } from "./types";

export type BudgetScope = "project" | "graph";
export type BudgetPeriod = "day" | "month";
export type BudgetActionKind = "warn" | "hold" | "stop";
export type BudgetState = "ok" | "warned" | "held" | "stopped";

export interface BudgetThreshold {
  at_percent: number;
  action: BudgetActionKind;
}

export interface Budget {
  id: string;
  scope: BudgetScope;
  /** The task whose graph a `graph` budget covers. */
  task_id: string | null;
  period: BudgetPeriod | null;
  limit_usd: number | null;
  limit_tokens: number | null;
  actions: BudgetThreshold[];
  spent: { cost_usd: number; tokens: number };
  /** How much of its limit it has spent. */
  percent?: number;
  remaining_usd?: number | null;
  remaining_tokens?: number | null;
  state: BudgetState;
  /** The day or month being counted ("2026-05-14", "2026-05"); empty for a graph's budget. */
  period_key: string | null;
  crossed: (BudgetThreshold & { crossed_at: string })[];
  created_at: string;
  updated_at: string;
}

export interface NewBudget {
  scope: BudgetScope;
  task_id?: string;
  period?: BudgetPeriod;
  limit_usd?: number;
  limit_tokens?: number;
  actions: BudgetThreshold[];
}

export type BudgetChange = Partial<Pick<NewBudget, "limit_usd" | "limit_tokens" | "actions">>;

/** The budget a task's view carries: its tightest. */
export interface TaskBudget {
  remaining_usd?: number | null;
  remaining_tokens?: number | null;
  state: BudgetState;
}

/** The task view's `budget`, once the hub answers one. */
export const taskBudgetOf = (task: Task): TaskBudget | null => (task as Task & { budget?: TaskBudget | null }).budget ?? null;

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await asPerson(
    new Request(path, {
      method,
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const text = await res.text();
  let data: unknown = undefined;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: something in front of the hub answered.
  }
  if (!res.ok) {
    const problem = data && typeof data === "object" ? data : { title: res.statusText, status: res.status, detail: `The hub answered ${res.status}` };
    throw new ApiError(res.status, problem);
  }
  return data as T;
}

const base = (projectId: string) => `/api/v1/projects/${encodeURIComponent(projectId)}/budgets`;

export async function listBudgets(projectId: string): Promise<Budget[]> {
  const answer = await call<{ budgets: Budget[] } | Budget[]>("GET", base(projectId));
  return Array.isArray(answer) ? answer : answer.budgets;
}

export const createBudget = (projectId: string, budget: NewBudget) => call<Budget>("POST", base(projectId), budget);

export const changeBudget = (projectId: string, budgetId: string, change: BudgetChange) =>
  call<Budget>("PATCH", `${base(projectId)}/${encodeURIComponent(budgetId)}`, change);

export const deleteBudget = (projectId: string, budgetId: string) => call<undefined>("DELETE", `${base(projectId)}/${encodeURIComponent(budgetId)}`);
