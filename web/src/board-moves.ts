/**
 * Which moves a person may make on the board by dragging a card to another column: only those the task lifecycle lets
 * people make through an action the API has, and for every other column the reason it refuses.
 */
import type { Task, TaskStatus } from "./types";
import { STATUSES } from "./task-statuses";

/** The API action a drop runs, and what it asks of the person first. */
export type BoardAction =
  | { action: "auto_assign" }
  | { action: "approve_plan" }
  | { action: "revise_plan"; asks: "feedback" }
  | { action: "answer"; asks: "answers" }
  | { action: "retry" }
  | { action: "cancel"; asks: "confirm" };

export type MoveCheck = ({ ok: true } & BoardAction) | { ok: false; reason: string };

type MovedTask = Pick<Task, "status" | "awaiting_approval" | "require_plan">;

/** What dropping `task` on the column of `to` would do, or why it may not. */
export function boardMove(task: MovedTask, to: TaskStatus): MoveCheck {
  const from = task.status;
  const no = (reason: string): MoveCheck => ({ ok: false, reason });
  if (from === to) return no("The task is already there.");
  if (from === "done" || from === "cancelled") return no(`A ${from} task is finished: it stays ${from}.`);
  if (from === "failed") return to === "pending" ? { ok: true, action: "retry" } : no("A failed task is finished: it can only be retried (to Pending).");
  if (to === "cancelled") return { ok: true, action: "cancel", asks: "confirm" };
  if (to === "done" || to === "failed") return no(`Only the agent working on a task marks it ${to}.`);
  if (to === "plan_review") return no("Only the agent puts its plan up for review.");
  if (to === "needs_human") return no("Only the agent asks for a person's help.");
  if (from === "plan_review" && to === "running") return { ok: true, action: "approve_plan" };
  if (from === "plan_review" && to === "planning") return { ok: true, action: "revise_plan", asks: "feedback" };
  if (from === "needs_human" && to === "running") return { ok: true, action: "answer", asks: "answers" };
  if (from === "pending" && (to === "assigned" || to === "planning")) {
    if (task.awaiting_approval) return no("The task waits for a person's approval: approve it first.");
    const lands = task.require_plan ? "planning" : "assigned";
    if (to === lands) return { ok: true, action: "auto_assign" };
    return no(
      task.require_plan ? "The task asks for a plan: assigning it moves it to Planning." : "The task asks for no plan: assigning it moves it to Assigned.",
    );
  }
  if (to === "running") return no(from === "pending" ? "Assign the task first: its agent starts it." : "The agent starts the task itself.");
  const underWay = from === "running" || from === "needs_human" || from === "plan_review";
  if (to === "pending")
    return no(
      underWay ? "A task under way does not go back to Pending: cancel it instead." : "Only its agent hands a task back: assign it elsewhere from its page.",
    );
  if (underWay) return no("A task under way is not assigned again.");
  return no("Whether a task is planned is settled when it is assigned: assign it again from its page.");
}

/** The board's columns, in the lifecycle's order. */
export const COLUMNS = STATUSES;

export const labelOf = (status: TaskStatus) => COLUMNS.find((c) => c.status === status)?.label ?? status;

/** Every move a person may make on this task, by the column it lands in. */
export const legalMoves = (task: MovedTask) =>
  COLUMNS.flatMap((c) => {
    const check = boardMove(task, c.status);
    return check.ok ? [{ to: c.status, ...check }] : [];
  });

/** What each action does, as a column's drop note and the toast after it says. */
export const ACTION_LABEL: Record<BoardAction["action"], string> = {
  auto_assign: "Assign to the best-matching server",
  approve_plan: "Approve the plan",
  revise_plan: "Ask for plan changes",
  answer: "Answer its questions",
  retry: "Retry",
  cancel: "Cancel the task",
};
