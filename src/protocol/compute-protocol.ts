/**
 * The compute-protocol semantics (seeds/compute-protocol.md), as the hub
 * applies them to its tasks (pure): what becomes immutable once a task is
 * dispatched, and what happens to a task whose agent disappeared.
 *
 * The seed's "Task Acknowledgment … acceptance or rejection" is the hub's
 * start (acceptance) and reject (back to pending, never offered to that
 * server again); "Agent disappearance" is the lease below; "Duplicate or late
 * results are valid and expected" is a late result kept on the task.
 */
import { z } from "zod";
import { canonicalJson, contentOfPointers } from "../domain/canonical-json";
import type { TaskStatus } from "../domain/lifecycle";

/** "Tasks are immutable once dispatched": the fields that say what the work is, by their API names. */
export const IMMUTABLE_FIELDS = ["spec", "structured_spec", "requirements", "type", "payload", "dependencies"] as const;
export type ImmutableField = (typeof IMMUTABLE_FIELDS)[number];

/** Dispatched means having left pending (a retried task is pending again, and editable). */
export const isDispatched = (status: TaskStatus) => status !== "pending";

/**
 * The immutable fields a change would alter on a task in `status`, in the
 * order of IMMUTABLE_FIELDS. Sending a field's current value again is no
 * change (DataRef pointers compare by content): a client repeating the whole
 * task is not refused.
 */
export function immutableFieldsChanged(
  status: TaskStatus,
  current: Partial<Record<ImmutableField, unknown>>,
  changes: Partial<Record<ImmutableField, unknown>>,
): ImmutableField[] {
  if (!isDispatched(status)) return [];
  const same = (a: unknown, b: unknown) => canonicalJson(a ?? null, contentOfPointers) === canonicalJson(b ?? null, contentOfPointers);
  return IMMUTABLE_FIELDS.filter((f) => changes[f] !== undefined && !same(current[f], changes[f]));
}

/** How long a task's server may stay silent before its task is taken back (ASSIGNMENT_LEASE_SECONDS). */
export const DEFAULT_LEASE_SECONDS = 300;

/** The lease from the var: a positive whole number of seconds, else the default. */
export function leaseSeconds(configured: string | undefined): number {
  const n = Number(configured);
  return configured && Number.isInteger(n) && n > 0 ? n : DEFAULT_LEASE_SECONDS;
}

export interface LeaseFacts {
  status: TaskStatus;
  /** When the task was last given to its server. */
  assignedAt: string | null;
  /** The server's last heartbeat. */
  lastHeartbeat: string | null;
  /** An agent socket of the server in the project's room, or its daemon's socket, is open now. */
  connected: boolean;
  now: number;
  leaseMs: number;
}

export type LeaseDecision =
  /** Leave the task; look again at `recheckAt` (null: this status is not watched). */
  | { action: "keep"; recheckAt: number | null }
  /** Back to pending, the assignment cleared, offered again like any waiting task. */
  | { action: "requeue" }
  /** Failed with AGENT_LOST (recoverable: a person may retry it). */
  | { action: "fail" };

/**
 * What the lease says of a task on its server. Assigned and planning tasks
 * hold no work yet: they go back to pending. A running task's work is lost
 * with its agent: it fails, explicitly (the seed never retries implicitly).
 * A task waiting on a person (needs_human, plan_review) is left alone: the
 * person's answer comes first, and the agent is asked again then.
 *
 * The lease runs from the later of the assignment and the last heartbeat; a
 * connected socket keeps it alive however old the heartbeat.
 */
export function leaseDecision(f: LeaseFacts): LeaseDecision {
  const onExpiry = LEASE_ON_EXPIRY[f.status];
  if (!onExpiry) return { action: "keep", recheckAt: null };
  if (f.connected) return { action: "keep", recheckAt: f.now + f.leaseMs };
  const since = Math.max(f.assignedAt ? Date.parse(f.assignedAt) : 0, f.lastHeartbeat ? Date.parse(f.lastHeartbeat) : 0);
  const expiresAt = since + f.leaseMs;
  return f.now >= expiresAt ? { action: onExpiry } : { action: "keep", recheckAt: expiresAt };
}

/** What each status becomes when its server's lease lapses; absent: not watched. */
export const LEASE_ON_EXPIRY: Partial<Record<TaskStatus, "requeue" | "fail">> = {
  assigned: "requeue",
  planning: "requeue",
  running: "fail",
};

/** The statuses the lease watches. */
export const LEASED_STATUSES = Object.keys(LEASE_ON_EXPIRY) as TaskStatus[];

/** The error block of a running task whose agent disappeared. */
export const AGENT_LOST = "AGENT_LOST";

/** `POST .../{id}/reject`: why the agent declines the task, in a few words. */
export const rejectBody = z.object({
  reason: z.string("must be a string").trim().min(1, "must not be empty").max(1000, "must be at most 1000 characters"),
});
