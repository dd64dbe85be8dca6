/** A schedule's slots as croner reads them in a time zone (daylight saving, nicknames), and what the room does when it wakes. */
import { describe, expect, it } from "vitest";
import { cronProblem, nextSlots, ON_TIME_MS, slotDecision } from "../src/domain/cron-slots";

const at = (iso: string) => new Date(iso);

describe("cronProblem", () => {
  it("takes five fields and the nicknames, in any IANA time zone", () => {
    for (const cron of ["0 2 * * *", "*/15 9-17 * * 1-5", "0 0 1 */3 *", "@daily", "@hourly", "@weekly", "@monthly", "@yearly"]) {
      expect(cronProblem(cron, "Europe/Berlin"), cron).toBeNull();
    }
    expect(cronProblem("0 2 * * *", "America/Argentina/Buenos_Aires")).toBeNull();
  });

  it("names the cron or the time zone, and says why", () => {
    expect(cronProblem("0 2 * * *", "Mars/Olympus")).toEqual({ field: "timezone", message: "must be an IANA time zone (e.g. UTC, Europe/Berlin)" });
    expect(cronProblem("0 2 * * *", "")?.field).toBe("timezone");
    expect(cronProblem("0 0 2 * * *", "UTC")).toEqual({
      field: "cron",
      message: "must be five fields (minute hour day-of-month month day-of-week) or a nickname such as @daily, not 6",
    });
    expect(cronProblem("61 * * * *", "UTC")?.message).toMatch(/^is not a cron expression of five fields: /);
    for (const cron of ["", "every night", "61 * * * *", "0 25 * * *", "* * * * * * *", "@reboot"]) expect(cronProblem(cron, "UTC")?.field, cron).toBe("cron");
    expect(cronProblem("0 0 30 2 *", "UTC")).toEqual({ field: "cron", message: "never matches a time" });
  });
});

describe("nextSlots", () => {
  it("reads the expression in the time zone: 09:00 in Berlin is 08:00Z in winter, 07:00Z in summer", () => {
    expect(nextSlots("0 9 * * *", "Europe/Berlin", at("2030-01-15T12:00:00Z"), 2)).toEqual(["2030-01-16T08:00:00.000Z", "2030-01-17T08:00:00.000Z"]);
    expect(nextSlots("0 9 * * *", "Europe/Berlin", at("2030-07-15T12:00:00Z"), 1)).toEqual(["2030-07-16T07:00:00.000Z"]);
    expect(nextSlots("@daily", "Asia/Kolkata", at("2030-01-01T00:00:00Z"), 2)).toEqual(["2030-01-01T18:30:00.000Z", "2030-01-02T18:30:00.000Z"]);
  });

  it("follows daylight saving as it starts: weekday mornings in New York move an hour in UTC", () => {
    expect(nextSlots("0 9 * * 1-5", "America/New_York", at("2030-03-08T12:00:00Z"), 2)).toEqual(["2030-03-08T14:00:00.000Z", "2030-03-11T13:00:00.000Z"]);
  });

  it("fires a daily slot in the hour the spring clock skips once, at the hour after the gap", () => {
    // 02:30 does not happen in Berlin on 2030-03-31 (02:00 CET becomes 03:00 CEST).
    expect(nextSlots("30 2 * * *", "Europe/Berlin", at("2030-03-29T12:00:00Z"), 3)).toEqual([
      "2030-03-30T01:30:00.000Z",
      "2030-03-31T01:00:00.000Z",
      "2030-04-01T00:30:00.000Z",
    ]);
  });

  it("fires a daily slot in the hour the autumn clock repeats once, and an every-half-hour one every half hour", () => {
    // 02:30 happens twice in Berlin on 2030-10-27 (00:30Z in CEST, 01:30Z in CET).
    expect(nextSlots("30 2 * * *", "Europe/Berlin", at("2030-10-25T12:00:00Z"), 3)).toEqual([
      "2030-10-26T00:30:00.000Z",
      "2030-10-27T00:30:00.000Z",
      "2030-10-28T01:30:00.000Z",
    ]);
    expect(nextSlots("*/30 * * * *", "Europe/Berlin", at("2030-10-27T00:10:00Z"), 4)).toEqual([
      "2030-10-27T00:30:00.000Z",
      "2030-10-27T01:00:00.000Z",
      "2030-10-27T01:30:00.000Z",
      "2030-10-27T02:00:00.000Z",
    ]);
  });
});

describe("slotDecision", () => {
  const hourly = (missed: "skip" | "run_once") => ({ cron: "0 * * * *", timezone: "UTC", missed, nextRunAt: "2030-01-01T10:00:00.000Z" });
  const decide = (missed: "skip" | "run_once", now: string) => slotDecision(hourly(missed), Date.parse(now));

  it("does nothing before the slot", () => {
    expect(decide("skip", "2030-01-01T09:59:59.999Z")).toBeNull();
  });

  it("fires a slot on time (up to five minutes late) whatever the policy, and is next due at the slot after now", () => {
    expect(ON_TIME_MS).toBe(5 * 60_000);
    for (const missed of ["skip", "run_once"] as const) {
      expect(decide(missed, "2030-01-01T10:00:00Z")).toEqual({ slot: "2030-01-01T10:00:00.000Z", action: "fire", next: "2030-01-01T11:00:00.000Z" });
      expect(decide(missed, "2030-01-01T10:05:00Z")?.action).toBe("fire");
    }
  });

  it("late, skips or runs once the latest slot only, however many came since", () => {
    expect(decide("skip", "2030-01-01T10:05:00.001Z")).toEqual({ slot: "2030-01-01T10:00:00.000Z", action: "skip_missed", next: "2030-01-01T11:00:00.000Z" });
    expect(decide("skip", "2030-01-01T13:20:00Z")).toEqual({ slot: "2030-01-01T13:00:00.000Z", action: "skip_missed", next: "2030-01-01T14:00:00.000Z" });
    expect(decide("run_once", "2030-01-01T13:20:00Z")).toEqual({ slot: "2030-01-01T13:00:00.000Z", action: "fire", next: "2030-01-01T14:00:00.000Z" });
    // The latest slot itself came just now: it is on time, the ones before it are let go.
    expect(decide("skip", "2030-01-01T13:02:00Z")).toEqual({ slot: "2030-01-01T13:00:00.000Z", action: "fire", next: "2030-01-01T14:00:00.000Z" });
  });
});
