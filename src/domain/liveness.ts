/**
 * The liveness rules of a project (its settings): what a completion must carry,
 * when a running task counts as stalled, and when a waiting task counts as one
 * no server can take. Pure: the clock and what the hub knows are passed in.
 */
import type { Match } from "./matching";
import type { ProjectSettings } from "./project-settings";
import { isPlainObject } from "./plain-object";

export const MINUTE_MS = 60_000;

/**
 * Why a completion's result carries nothing a person or a dependent could use (no summary and no contract), or null
 * when it carries one. A summary too large to keep inline is stored as a DataRef pointer (an object): it counts.
 */
export function silentResultReason(result: Record<string, unknown>): string | null {
  const summary = result.summary;
  const hasSummary = (typeof summary === "string" && summary.trim() !== "") || isPlainObject(summary);
  const contracts = result.contracts;
  const hasContract = isPlainObject(contracts) && Object.keys(contracts).length > 0;
  if (hasSummary || hasContract) return null;
  return "its result carries no summary and no contract, and this project requires one (require_result)";
}

/** The latest of the ISO times given (null ones ignored), in epoch ms, or null. */
export const latestOf = (times: readonly (string | null | undefined)[]): number | null => {
  const ms = times.flatMap((t) => (t ? [Date.parse(t)] : [])).filter((t) => !Number.isNaN(t));
  return ms.length ? Math.max(...ms) : null;
};

/** What the hub knows of a running task's signs of life. */
export interface StallFacts {
  /** When it started, or came back to work (its last such event). */
  startedAt: string | null;
  /** Its server's last heartbeat: the sign of life of a task on no session. */
  lastHeartbeat: string | null;
  /** Whether it was given to a session, whose terminal output is then its sign of life instead. */
  onSession: boolean;
  /** Its session's last output. */
  lastOutput: string | null;
  /** Its last note or progress report. */
  lastReport: string | null;
  /** When its stall was last raised. */
  stalledAt: string | null;
}

export type StallDecision = { raise: true; lastSignOfLife: number; silentMinutes: number } | { raise: false; recheckAt: number | null };

/**
 * A running task is stalled once nothing (its session's output, or its server's heartbeat when it is on no session; a
 * note, progress, its start) has been heard of it for the project's stall_minutes. A daemon beats whatever its agents
 * do, so for a task on a session only the session's output says its agent is at work. Raised once per silence: again
 * only after a sign of life since the last time.
 */
export function stallDecision(f: StallFacts, stallMinutes: number, now: number): StallDecision {
  const stallMs = stallMinutes * MINUTE_MS;
  const last = latestOf([f.startedAt, f.lastReport, f.onSession ? f.lastOutput : f.lastHeartbeat]) ?? now;
  const raised = f.stalledAt !== null && Date.parse(f.stalledAt) >= last;
  // Raised for this silence: a heartbeat wakes no room, so it is looked at again after another stall_minutes.
  if (raised) return { raise: false, recheckAt: now + stallMs };
  if (now - last >= stallMs) return { raise: true, lastSignOfLife: last, silentMinutes: Math.floor((now - last) / MINUTE_MS) };
  return { raise: false, recheckAt: last + stallMs };
}

/** A stalled task's reason, as its event and (with stall_action needs_human) its question say it. */
export const stallReason = (silentMinutes: number, stallMinutes: number, onSession: boolean) =>
  `${onSession ? "no output from its session" : "no heartbeat from its server"}, no note and no progress for ${silentMinutes} minutes (the project's stall_minutes is ${stallMinutes})`;

/** Why a server cannot take the task, as matching says (null when it could, now or once it has capacity or is back online). */
export function cannotTake(match: Pick<Match, "score" | "reasons">): string | null {
  if (match.score >= 0) return null;
  const [reason = "disqualified"] = match.reasons;
  return reason.startsWith("at capacity") ? null : reason;
}

export type UnassignableDecision =
  { flag: true; waitingMinutes: number; servers: { server_id: string; server_name: string; reason: string }[] } | { flag: false; recheckAt: number | null };

/**
 * A waiting task is unassignable once no server serving the project could take it (every one disqualified by its
 * requirements, or none at all) for the project's unassignable_minutes since it began to wait. Flagged once per wait.
 */
export function unassignableDecision(
  f: { waitingSince: string; flaggedAt: string | null; matches: readonly Match[] },
  unassignableMinutes: number,
  now: number,
): UnassignableDecision {
  const since = Date.parse(f.waitingSince);
  if (f.flaggedAt !== null && Date.parse(f.flaggedAt) >= since) return { flag: false, recheckAt: null };
  const reasons = f.matches.map((m) => ({ server_id: m.server_id, server_name: m.server_name, reason: cannotTake(m) }));
  // A server could take it: nothing to flag while that holds; a server's change wakes no room, so look again later.
  if (reasons.some((r) => r.reason === null)) return { flag: false, recheckAt: now + unassignableMinutes * MINUTE_MS };
  const due = since + unassignableMinutes * MINUTE_MS;
  if (now < due) return { flag: false, recheckAt: due };
  return {
    flag: true,
    waitingMinutes: Math.floor((now - since) / MINUTE_MS),
    servers: reasons.map((r) => ({ server_id: r.server_id, server_name: r.server_name, reason: r.reason! })),
  };
}

/** Whether a project has any liveness rule that the room's alarm watches for. */
export const watchesLiveness = (s: ProjectSettings) => s.stall_minutes !== null || s.unassignable_minutes !== null;

/** How soon after a task starts work or begins to wait the room must look at it (epoch ms), or null with no rule on. */
export function firstLook(s: ProjectSettings, now: number): number | null {
  const minutes = [s.stall_minutes, s.unassignable_minutes].filter((m): m is number => m !== null);
  return minutes.length ? now + Math.min(...minutes) * MINUTE_MS : null;
}

/** Events after which the room must look at its liveness rules: a task began to work or to wait, or the rules changed. */
export const startsLivenessWatch = (e: { type: string; data: Record<string, unknown> }) =>
  e.type === "project_settings_changed" ||
  e.type === "task_unblocked" ||
  e.type === "task_approved" ||
  e.data.status === "running" ||
  e.data.status === "pending";
