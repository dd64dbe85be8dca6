/**
 * A schedule's slots, as croner reads its cron expression in its time zone, and what the room does when it wakes for
 * one. Pure: the room passes its clock in, so a test can move it.
 */
import { Cron } from "croner";

/** How late the room may wake for a slot and still run it as on time; later, the schedule's `missed` policy decides. */
export const ON_TIME_MS = 5 * 60 * 1000;

const pattern = (cron: string, timezone: string) => new Cron(cron, { timezone, paused: true, mode: "5-part" });

/** Why the expression or time zone cannot be used, or null. Five fields (minute to weekday) or a nickname (@daily). */
export function cronProblem(cron: string, timezone: string): { field: "cron" | "timezone"; message: string } | null {
  try {
    new Intl.DateTimeFormat("en", { timeZone: timezone });
  } catch {
    return { field: "timezone", message: "must be an IANA time zone (e.g. UTC, Europe/Berlin)" };
  }
  const fields = cron.trim() === "" ? 0 : cron.trim().split(/\s+/).length;
  if (!cron.trim().startsWith("@") && fields !== 5) {
    return { field: "cron", message: `must be five fields (minute hour day-of-month month day-of-week) or a nickname such as @daily, not ${fields}` };
  }
  try {
    if (pattern(cron, timezone).nextRun(new Date()) === null) return { field: "cron", message: "never matches a time" };
  } catch (e) {
    return { field: "cron", message: `is not a cron expression of five fields: ${(e as Error).message.replace(/^CronPattern: /, "")}` };
  }
  return null;
}

/** The next `count` slots after `after`, as ISO times. */
export function nextSlots(cron: string, timezone: string, after: Date, count: number): string[] {
  return pattern(cron, timezone)
    .nextRuns(count, after)
    .map((d) => d.toISOString());
}

export interface SlotDecision {
  /** The slot handled: the latest one due. */
  slot: string;
  /** Run it, or not because the room woke too late for it and the schedule skips missed slots. */
  action: "fire" | "skip_missed";
  /** The first slot after now: when the schedule is due next. */
  next: string | null;
}

/**
 * What a schedule due at `nextRunAt` does at `now`: nothing yet (null), or handle the latest slot that has come. Only
 * that slot is run, however many came since: on time it fires; late, `run_once` fires it once for all of them and
 * `skip` lets them go.
 */
export function slotDecision(s: { cron: string; timezone: string; missed: "skip" | "run_once"; nextRunAt: string }, now: number): SlotDecision | null {
  if (Date.parse(s.nextRunAt) > now) return null;
  const cron = pattern(s.cron, s.timezone);
  const latest = cron.previousRuns(1, new Date(now + 1))[0];
  const slot = latest && latest.getTime() >= Date.parse(s.nextRunAt) ? latest.toISOString() : s.nextRunAt;
  const onTime = now - Date.parse(slot) <= ON_TIME_MS;
  return {
    slot,
    action: onTime || s.missed === "run_once" ? "fire" : "skip_missed",
    next: cron.nextRun(new Date(now))?.toISOString() ?? null,
  };
}
