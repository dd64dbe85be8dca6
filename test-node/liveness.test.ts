/** src/domain/liveness.ts: what counts as a result, a stall and an unassignable task, with the clock passed in; and what Telegram says of them. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cannotTake, firstLook, MINUTE_MS, silentResultReason, stallDecision, startsLivenessWatch, unassignableDecision } from "../src/domain/liveness";
import type { Match } from "../src/domain/matching";
import { DEFAULT_PROJECT_SETTINGS, projectSettingsOf } from "../src/domain/project-settings";
import { notification } from "../src/integrations/telegram/messages";

const T0 = Date.parse("2026-12-02T10:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();

describe("silentResultReason", () => {
  it("a non-blank summary, an offloaded one, or a non-empty contracts object is a result; anything else is not", () => {
    expect(silentResultReason({ summary: "did it" })).toBeNull();
    expect(silentResultReason({ summary: { $ref: "dataref", id: "x" } })).toBeNull();
    expect(silentResultReason({ contracts: { api: { status: "fulfilled", data: 1 } } })).toBeNull();
    for (const result of [{}, { summary: "" }, { summary: "  \n" }, { summary: null }, { contracts: {} }, { contracts: [] }, { files: ["a"] }]) {
      expect(silentResultReason(result)).toMatch(/no summary and no contract/);
    }
  });
});

describe("stallDecision", () => {
  const facts = { startedAt: iso(T0), lastHeartbeat: null, onSession: false, lastOutput: null, lastReport: null, stalledAt: null };

  it("raises once the latest sign of life is stall_minutes old, and looks again when it would be", () => {
    expect(stallDecision(facts, 5, T0 + 4 * MINUTE_MS)).toEqual({ raise: false, recheckAt: T0 + 5 * MINUTE_MS });
    expect(stallDecision(facts, 5, T0 + 5 * MINUTE_MS)).toEqual({ raise: true, lastSignOfLife: T0, silentMinutes: 5 });
    const heartbeat = { ...facts, lastHeartbeat: iso(T0 + 3 * MINUTE_MS) };
    expect(stallDecision(heartbeat, 5, T0 + 6 * MINUTE_MS)).toEqual({ raise: false, recheckAt: T0 + 8 * MINUTE_MS });
  });

  it("reads a task on a session by its session's output, not its server's heartbeat (a daemon beats whatever its agent does)", () => {
    const onSession = { ...facts, onSession: true, lastHeartbeat: iso(T0 + 5 * MINUTE_MS) };
    expect(stallDecision(onSession, 5, T0 + 6 * MINUTE_MS)).toEqual({ raise: true, lastSignOfLife: T0, silentMinutes: 6 });
    const output = { ...onSession, lastOutput: iso(T0 + 3 * MINUTE_MS) };
    expect(stallDecision(output, 5, T0 + 6 * MINUTE_MS)).toEqual({ raise: false, recheckAt: T0 + 8 * MINUTE_MS });
    // Output of a task's session counts for nothing once the task is on no session.
    expect(stallDecision({ ...output, onSession: false, lastHeartbeat: null }, 5, T0 + 6 * MINUTE_MS).raise).toBe(true);
  });

  it("never raises twice for one silence, and raises again after a sign of life later than the flag", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1440 }), fc.nat(10_000), fc.nat(10_000), (minutes, flaggedAfter, later) => {
        const stalledAt = iso(T0 + minutes * MINUTE_MS + flaggedAfter);
        const raised = { ...facts, stalledAt };
        expect(stallDecision(raised, minutes, T0 + minutes * MINUTE_MS * 3 + later).raise).toBe(false);
        const alive = { ...raised, lastReport: iso(Date.parse(stalledAt) + 1 + later) };
        expect(stallDecision(alive, minutes, Date.parse(alive.lastReport) + minutes * MINUTE_MS).raise).toBe(true);
      }),
    );
  });
});

describe("unassignableDecision", () => {
  const match = (name: string, score: number, reason: string): Match => ({
    server_id: `id-${name}`,
    server_name: name,
    score,
    status: "online",
    reasons: [reason],
    active_tasks: 0,
  });
  const lacking = [match("a", -1, "missing languages: cobol (disqualified)"), match("b", -1, "missing role: reviewer (disqualified)")];

  it("flags after unassignable_minutes when every server is disqualified, with each one's reason", () => {
    const f = { waitingSince: iso(T0), flaggedAt: null, matches: lacking };
    expect(unassignableDecision(f, 10, T0 + 9 * MINUTE_MS)).toEqual({ flag: false, recheckAt: T0 + 10 * MINUTE_MS });
    expect(unassignableDecision(f, 10, T0 + 10 * MINUTE_MS)).toEqual({
      flag: true,
      waitingMinutes: 10,
      servers: [
        { server_id: "id-a", server_name: "a", reason: "missing languages: cobol (disqualified)" },
        { server_id: "id-b", server_name: "b", reason: "missing role: reviewer (disqualified)" },
      ],
    });
    expect(unassignableDecision({ ...f, matches: [] }, 10, T0 + 10 * MINUTE_MS)).toMatchObject({ flag: true, servers: [] });
  });

  it("a server that could take it (even at capacity or offline) flags nothing; a flag in this wait is not raised again", () => {
    const busy = [...lacking, match("c", -1, "at capacity: 1/1 tasks (disqualified)")];
    expect(cannotTake(busy[2]!)).toBeNull();
    expect(unassignableDecision({ waitingSince: iso(T0), flaggedAt: null, matches: busy }, 10, T0 + 60 * MINUTE_MS).flag).toBe(false);
    expect(unassignableDecision({ waitingSince: iso(T0), flaggedAt: null, matches: [match("d", 75, "online (+25)")] }, 10, T0 + 60 * MINUTE_MS).flag).toBe(
      false,
    );
    const flagged = { waitingSince: iso(T0), flaggedAt: iso(T0 + 11 * MINUTE_MS), matches: lacking };
    expect(unassignableDecision(flagged, 10, T0 + 99 * MINUTE_MS)).toEqual({ flag: false, recheckAt: null });
    expect(unassignableDecision({ ...flagged, waitingSince: iso(T0 + 20 * MINUTE_MS) }, 10, T0 + 31 * MINUTE_MS).flag).toBe(true);
  });
});

describe("settings and watching", () => {
  it("stored settings out of range or of another type read as their defaults", () => {
    expect(projectSettingsOf({})).toEqual(DEFAULT_PROJECT_SETTINGS);
    expect(projectSettingsOf({ stall_minutes: 0, unassignable_minutes: 1441, stall_action: "page", require_result: "yes" })).toEqual(DEFAULT_PROJECT_SETTINGS);
    expect(projectSettingsOf({ stall_minutes: 5, stall_action: "needs_human" })).toMatchObject({ stall_minutes: 5, stall_action: "needs_human" });
  });

  it("the room looks after the shortest rule, only with one on, and only after a task begins to work or wait", () => {
    expect(firstLook(DEFAULT_PROJECT_SETTINGS, T0)).toBeNull();
    expect(firstLook({ ...DEFAULT_PROJECT_SETTINGS, require_result: true }, T0)).toBeNull();
    expect(firstLook({ ...DEFAULT_PROJECT_SETTINGS, stall_minutes: 30, unassignable_minutes: 10 }, T0)).toBe(T0 + 10 * MINUTE_MS);
    expect(startsLivenessWatch({ type: "task_started", data: { status: "running" } })).toBe(true);
    expect(startsLivenessWatch({ type: "task_created", data: { status: "pending" } })).toBe(true);
    expect(startsLivenessWatch({ type: "note_added", data: {} })).toBe(false);
  });
});

describe("Telegram", () => {
  const ctx = { projectName: "Shop", taskTitle: "Build <it>" };

  it("tells of a stall that only alerts (a stall moved to needs_human is told as its question), and of an unassignable task with each server's reason", () => {
    const stalled = notification({ type: "task_stalled", task_id: "t", data: { action: "alert", reason: "no heartbeat for 6 minutes" } }, ctx);
    expect(stalled?.text).toContain("<b>Task stalled</b> · Shop · Build &lt;it&gt;");
    expect(stalled?.text).toContain("no heartbeat for 6 minutes");
    expect(notification({ type: "task_stalled", task_id: "t", data: { action: "needs_human", reason: "x" } }, ctx)).toBeNull();
    const unassignable = notification(
      {
        type: "task_unassignable",
        task_id: "t",
        data: { reason: "no server can take it", servers: [{ server_name: "box", reason: "missing repo: api (disqualified)" }] },
      },
      ctx,
    );
    expect(unassignable?.text).toContain("no server can take it\n• box: missing repo: api (disqualified)");
  });
});
