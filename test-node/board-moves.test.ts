/** The board's drag table against the task lifecycle: every drop it allows is a move people may make, and the rest say why not. */
import { describe, expect, it } from "vitest";
import { LIFECYCLE, TASK_STATUSES, type TaskAction } from "../src/domain/lifecycle";
import { boardMove, COLUMNS, legalMoves, type BoardAction } from "../web/src/board-moves";

/** The lifecycle action each board action runs through the API. */
const LIFECYCLE_ACTION: Record<BoardAction["action"], TaskAction> = {
  auto_assign: "assign",
  approve_plan: "approve_plan",
  revise_plan: "revise_plan",
  answer: "respond",
  retry: "retry",
  cancel: "cancel",
};

const variants = TASK_STATUSES.flatMap((status) =>
  [false, true].flatMap((awaiting_approval) => [false, true].map((require_plan) => ({ status, awaiting_approval, require_plan }))),
);

describe("boardMove", () => {
  it("has a column for every status", () => {
    expect(COLUMNS.map((c) => c.status).sort()).toEqual([...TASK_STATUSES].sort());
  });

  it("allows only moves the lifecycle lets a person make, landing where the lifecycle says", () => {
    for (const task of variants)
      for (const to of TASK_STATUSES) {
        const check = boardMove(task, to);
        if (!check.ok) {
          expect(check.reason.length, `${task.status} → ${to}`).toBeGreaterThan(10);
          continue;
        }
        const rule = LIFECYCLE[LIFECYCLE_ACTION[check.action]];
        expect(rule.from, `${task.status} → ${to} by ${check.action}`).toContain(task.status);
        expect(rule.by, `${check.action} is not the assignee's alone`).not.toBe("assignee");
        const lands = task.require_plan && rule.toWithPlan ? rule.toWithPlan : rule.to;
        expect(lands, `${task.status} → ${to} by ${check.action}`).toBe(to);
      }
  });

  it("offers every status change people may make, but a reassignment (which needs a chosen assignee)", () => {
    for (const task of variants.filter((t) => !t.awaiting_approval))
      for (const [action, rule] of Object.entries(LIFECYCLE)) {
        if (rule.by === "assignee" || rule.to === "same" || !rule.from.includes(task.status)) continue;
        if (action === "assign" && task.status !== "pending") continue;
        const lands = task.require_plan && rule.toWithPlan ? rule.toWithPlan : rule.to;
        if (lands === task.status) continue;
        expect(boardMove(task, lands), `${task.status} → ${lands} by ${action}`).toMatchObject({ ok: true });
      }
  });

  it("refuses with the reason a person needs", () => {
    const running = { status: "running" as const, awaiting_approval: false, require_plan: false };
    expect(boardMove(running, "done")).toEqual({ ok: false, reason: "Only the agent working on a task marks it done." });
    expect(boardMove({ ...running, status: "done" }, "pending")).toEqual({ ok: false, reason: "A done task is finished: it stays done." });
    expect(boardMove({ ...running, status: "pending", awaiting_approval: true }, "assigned")).toMatchObject({ ok: false, reason: /approve it first/ });
    expect(boardMove({ ...running, status: "pending", require_plan: true }, "assigned")).toMatchObject({ ok: false, reason: /moves it to Planning/ });
  });

  it("asks first before a cancel, a plan revision or answers", () => {
    const review = { status: "plan_review" as const, awaiting_approval: false, require_plan: true };
    expect(legalMoves(review).map((m) => [m.to, m.action, "asks" in m ? m.asks : null])).toEqual([
      ["planning", "revise_plan", "feedback"],
      ["running", "approve_plan", null],
      ["cancelled", "cancel", "confirm"],
    ]);
    expect(legalMoves({ status: "done", awaiting_approval: false, require_plan: false })).toEqual([]);
  });
});
