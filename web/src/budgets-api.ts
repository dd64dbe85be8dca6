/**
 * A project's budgets over the API (API.md "Usage, budgets and telemetry"), through the typed client. Answers and
 * refusals are those of `ok`: the data, or an ApiError carrying the problem's fields.
 */
import { hub, ok } from "./api";
import type { Schemas } from "../../client";
import type { operations } from "../../client/schema";
import type { Task } from "./types";

export type BudgetScope = "project" | "graph";
export type BudgetPeriod = "day" | "month";
export type BudgetActionKind = "warn" | "hold" | "stop";
export type BudgetState = "ok" | "warned" | "held" | "stopped";

export interface BudgetThreshold {
  at_percent: number;
  action: BudgetActionKind;
}

export type Budget = Schemas["Budget"];
export type NewBudget = NonNullable<operations["createBudget"]["requestBody"]>["content"]["application/json"];
export type BudgetChange = Partial<Pick<NewBudget, "limit_usd" | "limit_tokens" | "actions">>;

/** The budget a task's view carries: its tightest. */
export type TaskBudget = Schemas["TaskBudget"];

export const taskBudgetOf = (task: Task): TaskBudget | null => task.budget;

const budget = (projectId: string, budgetId: string) => ({ params: { path: { id: projectId, bid: budgetId } } });

export const listBudgets = async (projectId: string): Promise<Budget[]> =>
  (await ok(hub.GET("/api/v1/projects/{id}/budgets", { params: { path: { id: projectId } } }))).budgets;

export const createBudget = (projectId: string, body: NewBudget) =>
  ok(hub.POST("/api/v1/projects/{id}/budgets", { params: { path: { id: projectId } }, body }));

export const changeBudget = (projectId: string, budgetId: string, body: BudgetChange) =>
  ok(hub.PATCH("/api/v1/projects/{id}/budgets/{bid}", { ...budget(projectId, budgetId), body }));

export const deleteBudget = (projectId: string, budgetId: string) => ok(hub.DELETE("/api/v1/projects/{id}/budgets/{bid}", budget(projectId, budgetId)));
