/**
 * seeds/agent-orchestrator-messages.md: the JSON messages agents and the hub
 * exchange over an agent socket. Requests get a response correlated by id;
 * events get none (an invalid one is answered with an error all the same).
 * Every mapping between the seed's messages and the hub's records is here.
 */
import { z } from "zod";
import { withNullsAbsent } from "../http/fields";
import { negotiateProtocol, protocolRefusal, UNDECLARED_PROTOCOL_WARNING } from "../domain/protocol-version";

/** The seed's "Requests timeout after 30 seconds (configurable)": every request is answered by then. */
export const REQUEST_TIMEOUT_MS = 30_000;
/** ask-user waits this long for a person when the request gives no `timeout` (the seed's request timeout). */
export const DEFAULT_ASK_TIMEOUT_MS = REQUEST_TIMEOUT_MS;

/** The request timeout in force: AGENT_REQUEST_TIMEOUT_SECONDS (1 to 300), else the seed's 30 s. */
export function requestTimeoutMs(configured: string | undefined): number {
  const n = Number(configured);
  return configured && Number.isInteger(n) && n >= 1 && n <= 300 ? n * 1000 : REQUEST_TIMEOUT_MS;
}

export const ERROR_CODES = ["INVALID_REQUEST", "INVALID_MESSAGE_TYPE", "UNAUTHORIZED", "NOT_FOUND", "TIMEOUT", "INTERNAL_ERROR"] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** A date and time as ISO-8601 writes them: a date, `T`, a time, and a zone (`Z` or an offset) or none. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** A message's fields; in it and in the payloads below, null is an absent field (JSON clients send nulls). */
export const baseMessage = withNullsAbsent(z.looseObject({
  type: z.string({ error: "type is required" }).min(1),
  id: z.string({ error: "must be a string" }).min(1, "must not be empty").max(200, "must be at most 200 characters").optional(),
  timestamp: z
    .string({ error: "must be an ISO-8601 timestamp" })
    .max(100)
    .refine((t) => ISO_8601.test(t) && !Number.isNaN(Date.parse(t)), "must be an ISO-8601 timestamp (2026-02-04T14:30:00Z)")
    .optional(),
  payload: z.unknown().optional(),
  // Only ever a hint: a malformed one is dropped (the hub then begins a trace of its own).
  traceparent: z.string().max(200).optional().catch(undefined),
}));

const text = (max: number) => z.string().max(max);

/**
 * The hub's `auth` frame: the API key (when the upgrade carried none) and the protocol versions the agent speaks,
 * which it may also send on a socket the key opened. Null is absent, as everywhere.
 */
export const authFrame = withNullsAbsent(
  z.looseObject({
    api_key: z.string().max(1024).optional(),
    protocol_versions: z.array(text(64), { error: "must be a list of version strings" }).max(20).optional(),
  }),
);

/**
 * What an `auth` frame's declaration comes to: the version spoken, with a warning when neither the frame nor the
 * server's registration declared any (taken as v1, core §7); or why it is refused (`[]`, or no version in common).
 */
export function socketProtocol(
  declared: readonly string[] | undefined,
  registered: readonly string[] | null | undefined,
): { ok: true; version: string; warnings: string[] } | { ok: false; message: string } {
  // A registration from before an empty list was refused declared nothing.
  const versions = declared ?? (registered?.length ? registered : undefined);
  const refusal = protocolRefusal(versions);
  if (refusal) return { ok: false, message: `protocol_versions ${refusal}` };
  return { ok: true, version: negotiateProtocol(versions)!, warnings: versions === undefined ? [UNDECLARED_PROTOCOL_WARNING] : [] };
}

/** Each message type's payload schema, with null as an absent field. */
const nullsAbsentIn = <M extends Record<string, z.ZodObject>>(schemas: M): M =>
  Object.fromEntries(Object.entries(schemas).map(([type, schema]) => [type, withNullsAbsent(schema)])) as M;

const requestShapes = {
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
    /** Milliseconds; the seed's request timeout (30 s) when left out. */
    timeout: z.int().min(1000).max(24 * 3600_000).optional(),
    taskId: z.uuid().optional(),
  }),
  "request:subscribe-task": z.looseObject({ taskId: z.uuid("must be a task UUID") }),
  "request:unsubscribe-task": z.looseObject({ taskId: z.uuid("must be a task UUID") }),
} as const;
export const requestPayloads = nullsAbsentIn(requestShapes);

const eventShapes = {
  "event:progress": z.looseObject({ taskId: z.uuid("must be a task UUID"), progress: z.number().min(0).max(1), message: text(5000).optional() }),
  "event:log": z.looseObject({
    level: z.enum(["debug", "info", "warn", "error"]).default("info"),
    message: text(20_000),
    context: z.unknown().optional(),
    // The hub's addition, as on event:error: the line is then read with the task's logs.
    taskId: z.uuid("must be a task UUID").optional(),
  }),
  "event:error": z.looseObject({ taskId: z.uuid().optional(), error: text(20_000), stack: text(50_000).optional(), recoverable: z.boolean().optional() }),
  "event:question": z.looseObject({ question: z.string().trim().min(1).max(20_000), context: z.unknown().optional(), taskId: z.uuid().optional() }),
} as const;

export const eventPayloads = nullsAbsentIn(eventShapes);

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

/** The hub's requirements of a submitted task: its required role and capabilities are hard requirements. */
export function requirementsOfSubmit(p: { requiredRole?: string; requiredCapabilities?: string[] }): Record<string, unknown> | null {
  const req = {
    ...(p.requiredRole ? { role: p.requiredRole } : {}),
    ...(p.requiredCapabilities?.length ? { capabilities: p.requiredCapabilities } : {}),
  };
  return Object.keys(req).length ? req : null;
}

/** The role a task requires, from its requirements; null when any role may take it. */
export const requiredRoleOf = (requirements: Record<string, unknown> | null | undefined) =>
  typeof requirements?.role === "string" ? requirements.role : null;

/** What the seed's task objects need of a task. */
export interface SeedTaskSource {
  id: string;
  title: string;
  spec: string;
  type: string;
  status: string;
  priority: string;
  requirements: Record<string, unknown> | null;
  payload: unknown;
  dependencies: { depends_on_task_id: string }[];
  assigned_server_name: string | null;
  progress: number | null;
  result: unknown;
  resolved_inputs: unknown;
  traceparent: string | null;
}

/** A task as the seed's messages show it; `payload` is the one it was submitted with. */
export const seedTask = (t: SeedTaskSource) => ({
  id: t.id,
  name: t.title,
  description: t.spec,
  type: t.type,
  status: seedStatusOf(t.status),
  hub_status: t.status,
  priority: t.priority,
  requiredRole: requiredRoleOf(t.requirements),
  requiredCapabilities: Array.isArray(t.requirements?.capabilities) ? t.requirements.capabilities : [],
  payload: t.payload ?? null,
  dependencies: t.dependencies.map((d) => d.depends_on_task_id),
  assignedTo: t.assigned_server_name,
  progress: t.progress,
  result: t.result,
  resolved_inputs: t.resolved_inputs,
  traceparent: t.traceparent,
});

/** An agent as query-agents shows it: `role` is its first role, `roles` all of them. */
export function seedAgent(c: { id: string; name: string; roles: string[]; online: boolean; activeTasks: number; capabilities: string[]; currentTask: string | null }) {
  return {
    id: c.id,
    name: c.name,
    role: c.roles[0]!,
    roles: c.roles,
    status: !c.online ? "offline" : c.activeTasks > 0 ? "busy" : "idle",
    capabilities: c.capabilities,
    currentTask: c.currentTask,
  };
}

/** query-agents' filters: role among the agent's roles, status equal, every capability offered (case-insensitive). */
export function agentMatches(agent: ReturnType<typeof seedAgent>, f: { role?: string; status?: string; capabilities?: string[] }) {
  const lower = (xs: string[]) => xs.map((x) => x.toLowerCase());
  const offered = new Set(lower(agent.capabilities));
  return (
    (!f.role || lower(agent.roles).includes(f.role.toLowerCase())) &&
    (!f.status || f.status === agent.status) &&
    (f.capabilities ?? []).every((x) => offered.has(x.toLowerCase()))
  );
}

/** A refusal of the hub (an RFC 9457 problem), as the seed's error: its code, with the hub's own in `details`. */
export function seedErrorOf(problem: { status: number; code: string; detail: string; errors?: unknown; extensions?: Record<string, unknown> }): {
  code: ErrorCode;
  message: string;
  details: Record<string, unknown>;
} {
  const code: ErrorCode = problem.status === 404 ? "NOT_FOUND" : problem.status === 401 || problem.status === 403 ? "UNAUTHORIZED" : "INVALID_REQUEST";
  return {
    code,
    message: problem.detail,
    details: { problem: problem.code, status: problem.status, ...(problem.errors ? { errors: problem.errors } : {}), ...(problem.extensions ?? {}) },
  };
}

/** What identifies a request's content for repeated ids: its type and payload, keys in a stable order. */
export function requestFingerprintText(type: string, payload: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
          )
        : v;
  return `${type}\n${JSON.stringify(canonical(payload ?? {}))}`;
}

/** Requests whose effect must not happen twice: a repeated id gets the first answer instead of a second effect. */
/** How long an answer is remembered for a repeated id: a day, as Idempotency-Key answers (swept with them). */
export const REMEMBER_ANSWERS_MS = 24 * 60 * 60 * 1000;

export const REMEMBERED_REQUESTS: readonly RequestType[] = ["request:submit-task", "request:ask-user"];

/**
 * The first of a handler's answer and the request's deadline: a handler
 * still running when `deadline` settles loses, so its late answer is dropped.
 */
export async function withinDeadline<T>(work: Promise<T>, deadline: Promise<void>): Promise<{ done: true; value: T } | { done: false }> {
  return Promise.race([work.then((value) => ({ done: true as const, value })), deadline.then(() => ({ done: false as const }))]);
}

/**
 * notify:shutdown's grace period for each reason the hub closes an agent's
 * sockets, and what it says: a revoked key or a deleted project ends at once
 * (there is nothing left the agent may do), a replaced key after a short grace
 * in which answers already under way still arrive but new requests are refused.
 */
export const SHUTDOWN_GRACE_MS = { revoked: 0, replaced: 2_000, "project-deleted": 0 } as const;
export type ShutdownReason = keyof typeof SHUTDOWN_GRACE_MS;
