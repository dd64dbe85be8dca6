/** The time a task page says a task waited, planned, ran and was held for a person, from its timeline. */
import { describe, expect, it } from "vitest";
import { formatDuration, phaseDurations } from "../web/src/task-durations";

const at = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 9, minutes)).toISOString();
const event = (minutes: number, status?: string, extra: Record<string, unknown> = {}) => ({
  created_at: at(minutes),
  data: { ...(status ? { status } : {}), ...extra },
});

describe("phaseDurations", () => {
  it("adds up each phase, over plan revisions and a question, and stops the clock when the task ends", () => {
    const events = [
      event(0, "pending"),
      event(5, "assigned"),
      event(6, "planning"),
      event(10, "plan_review"),
      event(12, "planning", { feedback: "smaller" }),
      event(13, undefined, { note: "no status: changes nothing" }),
      event(15, "plan_review"),
      event(16, "running"),
      event(20, "needs_human", { question: "Which region?" }),
      event(23, "running"),
      event(30, "done"),
    ];
    const minutes = (ms: number) => ms / 60_000;
    const spent = phaseDurations(at(0), events, Date.parse(at(59)));
    expect([spent.waited, spent.planned, spent.ran, spent.held].map(minutes)).toEqual([6, 10, 11, 3]);
  });

  it("counts an unfinished task's current phase up to now", () => {
    const spent = phaseDurations(at(0), [event(4, "assigned"), event(7, "running")], Date.parse(at(9)));
    expect(spent).toEqual({ waited: 7 * 60_000, planned: 0, ran: 2 * 60_000, held: 0 });
  });

  it("counts a task with no events as waiting since it was created, and never a negative span", () => {
    expect(phaseDurations(at(0), [], Date.parse(at(3))).waited).toBe(3 * 60_000);
    // An event stamped before the task (clocks apart) adds nothing.
    expect(phaseDurations(at(10), [event(5, "running")], Date.parse(at(12))).ran).toBe(2 * 60_000);
  });
});

describe("formatDuration", () => {
  it("reads as seconds, minutes, hours and days", () => {
    expect([1_000, 59_000, 61_000, 3_600_000, 3_900_000, 86_400_000, 97_200_000].map(formatDuration)).toEqual([
      "1 s",
      "59 s",
      "1 min",
      "1 h",
      "1 h 5 min",
      "1 d",
      "1 d 3 h",
    ]);
  });
});
