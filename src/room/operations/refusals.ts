/** Every refusal a room operation answers with, by name: the problem the client sees. */
import type { TaskStatus } from "../../domain/lifecycle";
import type { Blocker } from "../task-reads";
import type { ProblemData } from "../commands";
import type { BudgetRow } from "../../db/schema";
import { budgetLabel, spendText } from "../../domain/budgets";

export const notFound = (what: "Task" | "Dependency" | "Intervention" | "Session" | "Upload" | "Download" | "Budget"): ProblemData => ({
  status: 404,
  code: "NOT_FOUND",
  detail: `${what} not found`,
});

/** A field of the request names something the project does not have (422, naming the field). */
export const invalidField = (path: string, message: string, detail = `${path}: ${message}`): ProblemData => ({
  status: 422,
  code: "VALIDATION_FAILED",
  detail,
  errors: [{ path, message }],
});

export const unknownDependencies = (missing: string[]): ProblemData => ({
  status: 422,
  code: "VALIDATION_FAILED",
  detail: `dependencies: no task ${missing.join(", ")} in this project`,
  errors: missing.map((m) => ({ path: "dependencies", message: `no task ${m} in this project` })),
});

export const notAllowed = (detail: string): ProblemData => ({ status: 403, code: "NOT_ALLOWED", detail });

export const invalidTransition = (current: TaskStatus, detail: string, allowed?: readonly string[]): ProblemData => ({
  status: 409,
  code: "INVALID_TRANSITION",
  detail,
  extensions: { current_status: current, ...(allowed ? { allowed_actions: allowed } : {}) },
});

export function blocked(blockers: Blocker[]): ProblemData {
  return {
    status: 409,
    code: "UNRESOLVED_DEPENDENCIES",
    detail: `The task is blocked by ${blockers.length} unresolved ${blockers.length === 1 ? "dependency" : "dependencies"}: ${blockers.map((b) => b.depends_on_task_id).join(", ")}`,
    extensions: { unresolved: blockers },
  };
}

/** Compute protocol: a task is immutable once dispatched. */
export const taskImmutable = (status: TaskStatus, fields: string[]): ProblemData => ({
  status: 409,
  code: "TASK_IMMUTABLE",
  detail: `A task is immutable once it has left pending; this one is ${status}, so ${fields.join(", ")} cannot change`,
  errors: fields.map((path) => ({ path, message: "cannot change once the task has left pending" })),
  extensions: { current_status: status },
});

/** A task-format request reused an id its project already gave to another request. */
export const clientIdTaken = (clientId: string): ProblemData => ({
  status: 409,
  code: "TASK_ID_TAKEN",
  detail: `A task with id ${JSON.stringify(clientId)} was already created in this project from another request`,
  errors: [{ path: "id", message: "is already the id of another request's task in this project" }],
});

export const resultConflict = (): ProblemData => ({ status: 409, code: "RESULT_CONFLICT", detail: "The task is already done with a different result" });

export const interventionClosed = (status: string): ProblemData => ({
  status: 409,
  code: "INTERVENTION_CLOSED",
  detail: `The intervention is already ${status}`,
  extensions: { current_status: status },
});

export const dependencyCycle = (cycle: string[]): ProblemData => ({
  status: 409,
  code: "DEPENDENCY_CYCLE",
  detail: `This dependency would close a cycle: ${cycle.join(" → ")}`,
  extensions: { cycle },
});

/** The task changed under a planned write, or other rooms kept taking the servers it planned for: a retry will do. */
export const concurrentChange = (detail = "The task changed while this request was being handled; retry"): ProblemData => ({
  status: 409,
  code: "CONCURRENT_CHANGE",
  detail,
});

/** The task waits for a person's approval before this may happen to it. */
export const awaitingApproval = (what: string): ProblemData => ({
  status: 409,
  code: "TASK_AWAITING_APPROVAL",
  detail: `The task waits for a person's approval before it may be ${what} (POST /api/v1/tasks/{id}/approve)`,
});

export const notAwaitingApproval = (): ProblemData => ({
  status: 409,
  code: "NOT_AWAITING_APPROVAL",
  detail: "The task is not waiting for approval: it was approved already, or never needed to be",
});

/** A budget over its hold (or stop) threshold holds the task's scope: nothing new is assigned or started there. */
export const budgetHeld = (budget: BudgetRow, what: string): ProblemData => ({
  status: 409,
  code: "BUDGET_HELD",
  detail:
    `Budget ${budget.id} (${budgetLabel(budget)}, ${budget.state}: ${spendText(budget)}) holds this task's scope: it may not be ${what} ` +
    "until the budget is raised, its actions changed, it is deleted or its period ends",
  extensions: { budget_id: budget.id, budget_scope: budget.scope, budget_state: budget.state },
});
