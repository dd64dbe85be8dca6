/**
 * seeds/agent-orchestrator-messages.md: the JSON messages agents and the hub
 * exchange over an agent socket. Requests get a response correlated by id;
 * events get none (an invalid one is answered with an error all the same).
 */
import { z } from "zod";

export const ERROR_CODES = ["INVALID_REQUEST", "INVALID_MESSAGE_TYPE", "UNAUTHORIZED", "NOT_FOUND", "TIMEOUT", "INTERNAL_ERROR"] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const baseMessage = z.looseObject({
  type: z.string({ error: "type is required" }).min(1),
  id: z.string().min(1).max(200).optional(),
  timestamp: z.string().max(100).optional(),
  payload: z.unknown().optional(),
});

const text = (max: number) => z.string().max(max);

export const requestPayloads = {
  "request:query-agents": z.looseObject({
    role: text(100).optional(),
    status: text(100).optional(),
    capabilities: z.array(text(100)).max(100).optional(),
  }),
  "request:query-tasks": z.looseObject({
    status: z.enum(["queued", "running", "completed", "failed", "cancelled"]).optional(),
    requiredRole: text(100).optional(),
    limit: z.int().min(1).max(200).optional(),
  }),
  "request:submit-task": z.looseObject({
    type: text(100).optional(),
    name: z.string().trim().min(1).max(500),
    description: text(200_000).optional(),
    payload: z.unknown().optional(),
    requiredRole: text(100).optional(),
    requiredCapabilities: z.array(text(100)).max(100).optional(),
    dependencies: z.array(z.uuid("must be task UUIDs")).max(100).optional(),
    priority: z.union([z.int().min(0).max(10), z.enum(["low", "normal", "high", "critical", "urgent"])]).optional(),
  }),
  "request:get-task": z.looseObject({ taskId: z.string().min(1).max(100) }),
  "request:ask-user": z.looseObject({
    question: z.string().trim().min(1).max(20_000),
    options: z.array(z.looseObject({ label: text(500), value: z.unknown() })).max(50).optional(),
    /** Milliseconds; five minutes when left out. */
    timeout: z.int().min(1000).max(24 * 3600_000).optional(),
    taskId: z.uuid().optional(),
  }),
  "request:subscribe-task": z.looseObject({ taskId: z.uuid("must be a task UUID") }),
  "request:unsubscribe-task": z.looseObject({ taskId: z.uuid("must be a task UUID") }),
} as const;

export const eventPayloads = {
  "event:progress": z.looseObject({ taskId: z.uuid("must be a task UUID"), progress: z.number().min(0).max(1), message: text(5000).optional() }),
  "event:log": z.looseObject({ level: z.enum(["debug", "info", "warn", "error"]).default("info"), message: text(20_000), context: z.unknown().optional() }),
  "event:error": z.looseObject({ taskId: z.uuid().optional(), error: text(20_000), stack: text(50_000).optional(), recoverable: z.boolean().optional() }),
  "event:question": z.looseObject({ question: z.string().trim().min(1).max(20_000), context: z.unknown().optional(), taskId: z.uuid().optional() }),
} as const;

export type RequestType = keyof typeof requestPayloads;
export type EventType = keyof typeof eventPayloads;

/** Priority numbers (task-format.md's urgency scale, 0 lowest) as the hub's priorities. */
export function priorityOf(p: number | "low" | "normal" | "high" | "critical" | "urgent" | undefined): "low" | "normal" | "high" | "critical" {
  if (p === undefined) return "normal";
  if (typeof p === "string") return p === "urgent" ? "critical" : p;
  return p <= 1 ? "low" : p === 2 ? "normal" : p === 3 ? "high" : "critical";
}

/** The seed's task statuses, from the hub's. */
export function seedStatusOf(status: string): "queued" | "running" | "completed" | "failed" | "cancelled" {
  if (status === "done") return "completed";
  if (status === "failed" || status === "cancelled") return status;
  if (status === "running" || status === "needs_human") return "running";
  return "queued";
}

export const hubStatusesOf: Record<string, string[]> = {
  queued: ["pending", "assigned", "planning", "plan_review"],
  running: ["running", "needs_human"],
  completed: ["done"],
  failed: ["failed"],
  cancelled: ["cancelled"],
};
