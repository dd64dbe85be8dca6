/** The lifecycle table, checked exhaustively as pure logic. */
import { describe, expect, it } from "vitest";
import { allowedActions, checkTransition, LIFECYCLE, TASK_ACTIONS, TASK_STATUSES, type TaskAction, type TaskStatus } from "../src/domain/lifecycle";

const EXPECTED: Partial<Record<TaskStatus, Partial<Record<TaskAction, TaskStatus>>>> = {
  pending: { assign: "assigned", cancel: "cancelled", update: "pending" },
  assigned: { assign: "assigned", start: "running", fail: "failed", cancel: "cancelled", update: "assigned", reject: "pending" },
  planning: { assign: "assigned", plan: "plan_review", fail: "failed", cancel: "cancelled", update: "planning", reject: "pending" },
  plan_review: { approve_plan: "running", revise_plan: "planning", fail: "failed", cancel: "cancelled", update: "plan_review" },
  running: { complete: "done", fail: "failed", help: "needs_human", cancel: "cancelled", update: "running" },
  needs_human: { fail: "failed", help: "needs_human", respond: "running", cancel: "cancelled", update: "needs_human" },
  done: { update: "done" },
  failed: { retry: "pending", update: "failed" },
  cancelled: { update: "cancelled" },
};

const partyFor = (action: TaskAction) =>
  LIFECYCLE[action].by === "people" ? ({ kind: "person" } as const) : ({ kind: "agent", isAssignee: true } as const);

describe("every (status, action) pair", () => {
  for (const status of TASK_STATUSES) {
    for (const action of TASK_ACTIONS) {
      const next = EXPECTED[status]?.[action];
      it(`${status} × ${action} → ${next ?? "409"}`, () => {
        const check = checkTransition(status, action, partyFor(action));
        if (next) {
          expect(check).toEqual({ ok: true, next });
        } else {
          expect(check.ok).toBe(false);
          if (check.ok) return;
          expect(check.reason).toBe("invalid_transition");
          expect(check.detail).toContain(status);
          expect(check.allowed).toEqual(allowedActions(status));
        }
      });
    }
  }
});

describe("who may act", () => {
  it("keeps start, plan, complete, fail, help and reject to the assigned agent", () => {
    for (const [action, status] of [["start", "assigned"], ["plan", "planning"], ["complete", "running"], ["fail", "running"], ["help", "running"], ["reject", "assigned"], ["reject", "planning"]] as const) {
      expect(checkTransition(status, action, { kind: "agent", isAssignee: true }).ok).toBe(true);
      const other = checkTransition(status, action, { kind: "agent", isAssignee: false });
      expect(other).toMatchObject({ ok: false, reason: "not_allowed" });
      expect(checkTransition(status, action, { kind: "person" })).toMatchObject({ ok: false, reason: "not_allowed" });
    }
  });

  it("keeps approve-plan, revise-plan and retry to people", () => {
    for (const [action, status] of [["approve_plan", "plan_review"], ["revise_plan", "plan_review"], ["retry", "failed"]] as const) {
      expect(checkTransition(status, action, { kind: "person" }).ok).toBe(true);
      expect(checkTransition(status, action, { kind: "agent", isAssignee: true })).toMatchObject({ ok: false, reason: "not_allowed" });
    }
  });

  it("lets anyone who can write assign, cancel, update and respond", () => {
    for (const party of [{ kind: "person" }, { kind: "agent", isAssignee: false }] as const) {
      expect(checkTransition("pending", "assign", party).ok).toBe(true);
      expect(checkTransition("running", "cancel", party).ok).toBe(true);
      expect(checkTransition("done", "update", party).ok).toBe(true);
      expect(checkTransition("needs_human", "respond", party).ok).toBe(true);
    }
  });

  it("assigns into planning when the task requires a plan", () => {
    expect(checkTransition("pending", "assign", { kind: "person" }, true)).toEqual({ ok: true, next: "planning" });
    expect(checkTransition("assigned", "assign", { kind: "person" }, true)).toEqual({ ok: true, next: "planning" });
    expect(checkTransition("running", "start", { kind: "agent", isAssignee: true }, true).ok).toBe(false);
  });

  it("names the current status and the allowed actions when refusing", () => {
    const check = checkTransition("done", "start", { kind: "agent", isAssignee: true });
    expect(check).toMatchObject({ ok: false, detail: "Cannot start a task that is done; allowed from done: update" });
    const fromRunning = checkTransition("running", "start", { kind: "agent", isAssignee: true });
    expect(fromRunning).toMatchObject({ ok: false, detail: "Cannot start a task that is running; allowed from running: complete, fail, help, cancel, update" });
  });
});
