/** How long a task spent in each phase of its life, from its timeline: each event carrying a `status` moves it to that status. */
import type { TaskStatus } from "./types";

export type Phase = "waited" | "planned" | "ran" | "held";

/** Which phase each status counts towards; a finished task's clock has stopped. */
const PHASE_OF: Partial<Record<TaskStatus, Phase>> = {
  pending: "waited",
  assigned: "waited",
  planning: "planned",
  plan_review: "planned",
  running: "ran",
  needs_human: "held",
};

export type Durations = Record<Phase, number>;

/**
 * Milliseconds spent in each phase, from the task's creation (as `pending`) to `now` (for a task not finished), walking
 * its status changes in order. A status the timeline never shows reached counts for nothing.
 */
export function phaseDurations(
  createdAt: string,
  events: readonly { created_at: string; data: Record<string, unknown> }[],
  now: number = Date.now(),
): Durations {
  const spent: Durations = { waited: 0, planned: 0, ran: 0, held: 0 };
  let status: TaskStatus = "pending";
  let since = Date.parse(createdAt);
  const close = (until: number) => {
    const phase = PHASE_OF[status];
    if (phase && until > since) spent[phase] += until - since;
  };
  for (const e of events) {
    if (typeof e.data.status !== "string" || e.data.status === status) continue;
    // Clocks apart may stamp an event before the one it follows: time never runs backwards.
    const at = Math.max(Date.parse(e.created_at), since);
    close(at);
    status = e.data.status as TaskStatus;
    since = at;
  }
  close(now);
  return spent;
}

/** A duration as a person reads it: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 24) return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}
