/**
 * The task lifecycle as a table: (status, action) → next status, and who may
 * take the action. Every pair not in the table is an illegal transition.
 *
 *   pending ─assign→ assigned ─start→ running ─complete→ done
 *              └─assign (plan required)→ planning ─plan→ plan_review ─approve_plan→ running
 *                                                        └─revise_plan→ planning
 *   running ─help→ needs_human ─respond→ running;  running ─fail→ failed ─retry→ pending
 *   assigned, planning ─reject→ pending (the assignee declines: compute protocol)
 *   any unfinished status ─cancel→ cancelled
 */
export const TASK_STATUSES = ["pending", "assigned", "planning", "plan_review", "running", "done", "failed", "needs_human", "cancelled"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const TASK_ACTIONS = [
  "assign",
  "start",
  "plan",
  "approve_plan",
  "revise_plan",
  "complete",
  "fail",
  "help",
  "respond",
  "retry",
  "cancel",
  "update",
  "reject",
] as const;
export type TaskAction = (typeof TASK_ACTIONS)[number];

/** Who may act: the agent the task is assigned to, people (members and admins), or any agent or person who can write to the project. */
export type Actor = "assignee" | "people" | "anyone";

interface Rule {
  from: readonly TaskStatus[];
  /** The next status; `same` keeps the current one. */
  to: TaskStatus | "same";
  /** The next status instead when the task requires a plan before work. */
  toWithPlan?: TaskStatus;
  by: Actor;
}

const UNFINISHED: readonly TaskStatus[] = ["pending", "assigned", "planning", "plan_review", "running", "needs_human"];

export const LIFECYCLE: Record<TaskAction, Rule> = {
  assign: { from: ["pending", "assigned", "planning"], to: "assigned", toWithPlan: "planning", by: "anyone" },
  start: { from: ["assigned"], to: "running", by: "assignee" },
  plan: { from: ["planning"], to: "plan_review", by: "assignee" },
  approve_plan: { from: ["plan_review"], to: "running", by: "people" },
  revise_plan: { from: ["plan_review"], to: "planning", by: "people" },
  complete: { from: ["running"], to: "done", by: "assignee" },
  fail: { from: ["assigned", "planning", "plan_review", "running", "needs_human"], to: "failed", by: "assignee" },
  help: { from: ["running", "needs_human"], to: "needs_human", by: "assignee" },
  respond: { from: ["needs_human"], to: "running", by: "anyone" },
  retry: { from: ["failed"], to: "pending", by: "people" },
  cancel: { from: UNFINISHED, to: "cancelled", by: "anyone" },
  update: { from: TASK_STATUSES, to: "same", by: "anyone" },
  reject: { from: ["assigned", "planning"], to: "pending", by: "assignee" },
};

export const FINISHED: readonly TaskStatus[] = ["done", "failed", "cancelled"];
export const ACTIVE: readonly TaskStatus[] = ["assigned", "planning", "running"];

export function allowedActions(status: TaskStatus): TaskAction[] {
  return TASK_ACTIONS.filter((a) => LIFECYCLE[a].from.includes(status));
}

export type ActingParty = { kind: "person" } | { kind: "agent"; isAssignee: boolean };

export type TransitionCheck =
  { ok: true; next: TaskStatus } | { ok: false; reason: "invalid_transition" | "not_allowed"; detail: string; allowed: TaskAction[] };

const describe = (action: TaskAction) => action.replaceAll("_", "-");

/** Whether `party` may take `action` on a task in `status`, and the status it leads to. */
export function checkTransition(status: TaskStatus, action: TaskAction, party: ActingParty, requirePlan = false): TransitionCheck {
  const rule = LIFECYCLE[action];
  const allowed = allowedActions(status);
  if (!rule.from.includes(status)) {
    const options = allowed.length ? allowed.map(describe).join(", ") : "none (the task is finished)";
    return {
      ok: false,
      reason: "invalid_transition",
      detail: `Cannot ${describe(action)} a task that is ${status}; allowed from ${status}: ${options}`,
      allowed,
    };
  }
  if (rule.by === "people" && party.kind !== "person") {
    return { ok: false, reason: "not_allowed", detail: `Only people can ${describe(action)} a task`, allowed };
  }
  if (rule.by === "assignee" && !(party.kind === "agent" && party.isAssignee)) {
    return { ok: false, reason: "not_allowed", detail: `Only the agent the task is assigned to can ${describe(action)} it`, allowed };
  }
  if (requirePlan && rule.toWithPlan) return { ok: true, next: rule.toWithPlan };
  return { ok: true, next: rule.to === "same" ? status : rule.to };
}
