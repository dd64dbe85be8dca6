/**
 * The task-format dialect (seeds/task-format.md), as the hub maps it (pure).
 * Its statuses name the hub's in the seed's words; a status the hub has and
 * the seed does not is mapped to the nearest of the seed's.
 */
import { z } from "zod";
import type { Priority } from "../db/schema";
import { canonicalJson } from "../domain/canonical-json";
import type { TaskStatus } from "../domain/lifecycle";
import { absentWhenNull, nullMeansAbsent, withinJsonLimit, withNullsAbsent } from "../http/fields";
import type { TaskView } from "../views/tasks";
import { isPlainObject } from "../domain/plain-object";

export const TASK_FORMAT_STATUSES = ["pending", "in_progress", "completed", "failed", "cancelled", "input_required"] as const;
export type TaskFormatStatus = (typeof TASK_FORMAT_STATUSES)[number];

/** Each hub status in the seed's words: assigned is still "received, not started"; a plan awaiting review needs a person. */
export const TASK_FORMAT_STATUS: Record<TaskStatus, TaskFormatStatus> = {
  pending: "pending",
  assigned: "pending",
  planning: "in_progress",
  plan_review: "input_required",
  running: "in_progress",
  needs_human: "input_required",
  done: "completed",
  failed: "failed",
  cancelled: "cancelled",
};

/** The seed's error block (§Error Block) as the hub keeps it on a failed task; a failure without a code is TASK_FAILED. */
export function errorBlock(message: string, code: string | null, details?: unknown, recoverable?: boolean) {
  return { code: code ?? "TASK_FAILED", message, ...(details === undefined ? {} : { details }), recoverable: recoverable ?? false };
}

/** The seed's names that are not also hub statuses, as filters: the hub statuses each stands for. */
export const STATUS_ALIASES: Record<string, TaskStatus[]> = Object.fromEntries(
  TASK_FORMAT_STATUSES.filter((name) => !(name in TASK_FORMAT_STATUS)).map((name) => [
    name,
    (Object.keys(TASK_FORMAT_STATUS) as TaskStatus[]).filter((hub) => TASK_FORMAT_STATUS[hub] === name),
  ]),
);

/* ---------------------------------------------------------------------------
 * Task request (§Task Request): `{id, type, payload, context?, routing?,
 * observability?}`, plus the hub's `priority`, `project_id` and `session_id`.
 * The named fields of each block are type-checked; anything else inside a
 * block is kept as sent. A field the request does not define is refused by
 * name rather than dropped.
 * ------------------------------------------------------------------------- */

const str = (max: number) => z.string({ error: "must be a string" }).max(max, `must be at most ${max} characters`);
const record = z.record(z.string(), z.unknown(), { error: "must be an object" });
/** The seed's urgency scale (context.priority). */
export const TASK_FORMAT_PRIORITIES = ["low", "normal", "high", "urgent"] as const;

/** The named fields of each block: type-checked; anything else in a block is kept as sent. */
const BLOCK_FIELDS = {
  context: {
    conversationId: str(500).optional(),
    parentTaskId: str(500).optional(),
    user: str(500).optional(),
    timestamp: str(100)
      .refine((s) => /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s)), "must be an ISO-8601 timestamp")
      .optional(),
    priority: z.enum(TASK_FORMAT_PRIORITIES, { error: `must be one of ${TASK_FORMAT_PRIORITIES.join(", ")}` }).optional(),
  },
  routing: {
    source: str(200).optional(),
    target: str(200).trim().min(1, "must not be empty").optional(),
    delegationChain: z.array(str(200), { error: "must be an array of strings" }).max(100, "must list at most 100 agents").optional(),
  },
  observability: {
    traceId: str(100).optional(),
    spanId: str(100).optional(),
    baggage: record.optional(),
  },
};

const block = <S extends z.ZodRawShape>(fields: S) => withinJsonLimit(z.looseObject(nullMeansAbsent(fields), { error: "must be an object" }), 64 * 1024);

/** A required field: left out, or null (which means left out), it "is required". */
const required = (what: string) => ({ error: (issue: { input?: unknown }) => (issue.input == null ? "is required" : `must be ${what}`) });

const REQUEST_FIELDS = nullMeansAbsent({
  id: z.string(required("a string")).trim().min(1, "must not be empty").max(200, "must be at most 200 characters"),
  type: z.string(required("a string")).trim().min(1, "must not be empty").max(100, "must be at most 100 characters"),
  payload: withinJsonLimit(z.record(z.string(), z.unknown(), required("an object"))),
  context: block(BLOCK_FIELDS.context).optional(),
  routing: block(BLOCK_FIELDS.routing).optional(),
  observability: block(BLOCK_FIELDS.observability).optional(),
  priority: z.enum(["low", "normal", "high", "critical", "urgent"], { error: "must be one of low, normal, high, critical, urgent" }).optional(),
  project_id: z.uuid("must be a UUID").optional(),
  session_id: z.uuid("must be a UUID").nullish(),
});

/**
 * Fields of the core create body: sent with a task-format request they would be silently ignored (the request has a
 * payload, not a spec), so they are refused by name rather than kept.
 */
const CORE_CREATE_FIELDS = [
  "title",
  "spec",
  "structured_spec",
  "requirements",
  "target_repo",
  "target_branch",
  "acceptance_criteria",
  "require_plan",
  "timeout_seconds",
  "dependencies",
  "dependency_ids",
];
/** How large the fields kept as extensions may be, together: as large as a block. */
const EXTENSIONS_LIMIT = 64 * 1024;

/**
 * Top-level fields the seed does not name, but for those of the core create body: compute-protocol.md extends a
 * protocol "by adding optional fields", so a newer client's field is kept as sent, with a warning, not refused.
 */
export function extensionsOf(body: Record<string, unknown>): Record<string, unknown> | null {
  const extra = Object.entries(body).filter(([key, value]) => !(key in REQUEST_FIELDS) && !CORE_CREATE_FIELDS.includes(key) && value !== null);
  return extra.length ? Object.fromEntries(extra) : null;
}

export const taskFormatRequest = z
  .object(REQUEST_FIELDS)
  .catchall(z.unknown())
  .superRefine((body, ctx) => {
    for (const [key, value] of Object.entries(body)) {
      // null is absent: a field left null is no field at all.
      if (CORE_CREATE_FIELDS.includes(key) && value !== null) {
        ctx.addIssue({ code: "custom", path: [key], message: `is a field of the core create body, not of a task-format request (send the work as payload)` });
      }
    }
    const extensions = extensionsOf(body);
    if (extensions && JSON.stringify(extensions).length > EXTENSIONS_LIMIT) {
      const [largest] = Object.entries(extensions).sort(([, a], [, b]) => JSON.stringify(b).length - JSON.stringify(a).length);
      ctx.addIssue({
        code: "custom",
        path: [largest![0]],
        message: `fields the seed does not name are kept up to ${EXTENSIONS_LIMIT} bytes of JSON together; this one is the largest`,
      });
    }
  });
export type TaskFormatRequest = z.output<typeof taskFormatRequest>;


/**
 * API.md: a create body with `payload` and no `title` is a task-format request. So is one with the request's `id`
 * and `type` and no `title`: it is refused for its missing payload, not for a title it never meant to send.
 * A null member is an absent one.
 */
export const isTaskFormatRequest = (body: unknown): boolean =>
  isPlainObject(body) && body.title == null && (body.payload != null || (body.id != null && body.type != null));

/**
 * What identifies the request for repeats: its body without where it was sent to (project_id, session_id), and
 * without the nulls that mean a field is absent (a request with `"parentTaskId": null` is the one without it).
 */
export function requestForHash(body: Record<string, unknown>): string {
  const { project_id: _p, session_id: _s, ...request } = body;
  const present = Object.entries(request)
    .filter(([, value]) => value !== null)
    .map(([key, value]) => {
      const named: Record<string, unknown> | undefined = BLOCK_FIELDS[key as keyof typeof BLOCK_FIELDS];
      return [key, named && isPlainObject(value) ? Object.fromEntries(Object.entries(value).filter(([field, v]) => !(v === null && field in named))) : value];
    });
  return canonicalJson(Object.fromEntries(present));
}

/** The hub's priority: `priority` when sent, else `context.priority`; the seed's `urgent` is the hub's `critical`. */
export function priorityOf(request: Pick<TaskFormatRequest, "priority" | "context">): Priority {
  const p = request.priority ?? request.context?.priority ?? "normal";
  return p === "urgent" ? "critical" : p;
}

/** A readable title from the type (parse_recipe → "Parse recipe"), with the client's id to tell repeats of a type apart. */
export function titleOf(type: string, id: string): string {
  const words = type.replace(/[_\-.]+/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2").trim().toLowerCase();
  const readable = words ? words[0]!.toUpperCase() + words.slice(1) : type;
  return `${readable} (${id})`.slice(0, 500);
}

/** observability.traceId as a W3C trace id, when it is one (any case); otherwise the hub begins a trace of its own. */
export function traceIdOf(request: Pick<TaskFormatRequest, "observability">): string | null {
  const id = request.observability?.traceId?.toLowerCase();
  return id && /^[0-9a-f]{32}$/.test(id) && !/^0+$/.test(id) ? id : null;
}

/**
 * The seed's `type` is "Task type matching agent capability name": without a routing.target, the task asks for a
 * server offering that capability (among its languages, tools, tags and environments), and is auto-assigned as any
 * task with requirements.
 */
export const requirementsOf = (request: Pick<TaskFormatRequest, "type" | "routing">) => (request.routing?.target ? null : { capabilities: [request.type] });

/** The request as the hub's new task: its blocks kept as sent, for the task and its repeats. */
export function newTaskOf(request: TaskFormatRequest, requestHash: string, warnings: string[]) {
  const kept = <T>(v: T | undefined) => (v === undefined ? null : v);
  const extensions = extensionsOf(request);
  return {
    title: titleOf(request.type, request.id),
    spec: `A task-format request of type ${request.type}; its input is the task's payload.`,
    type: request.type,
    priority: priorityOf(request),
    requirements: requirementsOf(request),
    warnings: [
      ...warnings,
      ...Object.keys(extensions ?? {}).map((key) => `${key} is not a field of a task-format request: kept as sent, in the task's extensions`),
      ...(request.observability?.traceId !== undefined && !traceIdOf(request)
        ? ["observability.traceId is not an OpenTelemetry trace id (32 hex digits): kept as sent, not used for the task's trace"]
        : []),
    ],
    origin: {
      clientId: request.id,
      clientRequestHash: requestHash,
      payload: request.payload,
      context: kept(request.context),
      routing: kept(request.routing),
      observability: kept(request.observability),
      extensions,
    },
  };
}

/**
 * routing.delegationChain lists the agents that have handled the task (the seed). When the hub gives a task-format
 * task to an agent (its routing.target, auto-assignment, a person's assign), that agent joins the end of the chain,
 * unless it is there already (the last one).
 */
export function delegatedTo(routing: Record<string, unknown> | null, agent: string): Record<string, unknown> {
  const chain = Array.isArray(routing?.delegationChain) ? (routing.delegationChain as unknown[]) : [];
  return { ...routing, delegationChain: chain.at(-1) === agent ? chain : [...chain, agent] };
}

/** The routing of a task given to an agent: a task-format task's chain extended; any other task has none to extend. */
export const routedTo = (task: { clientId: string | null; routing: Record<string, unknown> | null }, agent: string): { routing?: Record<string, unknown> } =>
  task.clientId ? { routing: delegatedTo(task.routing, agent) } : {};

/* ---------------------------------------------------------------------------
 * Task response (§Task Response): the task in the seed's words.
 * ------------------------------------------------------------------------- */

type ResponseSource = Pick<
  TaskView,
  "id" | "client_id" | "status" | "result" | "error" | "response" | "started_at" | "completed_at" | "assigned_server_name" | "retry_count"
>;

/**
 * The seed's artifacts: an array the result names `artifacts` as it is; a
 * task-result/v1 `artifacts` record ({name: reference}) one entry per name.
 */
export function artifactsOf(result: unknown): unknown[] {
  const artifacts = result && typeof result === "object" && !Array.isArray(result) ? (result as Record<string, unknown>).artifacts : undefined;
  if (Array.isArray(artifacts)) return artifacts;
  if (artifacts && typeof artifacts === "object") {
    return Object.entries(artifacts).map(([name, value]) =>
      value && typeof value === "object" && !Array.isArray(value) ? { ...value, name } : { name, value },
    );
  }
  return [];
}

/** The metadata fields the hub answers from the task itself. */
const HUB_METADATA = ["startedAt", "completedAt", "duration_ms", "agent", "retryCount"];
const withoutKeys = (o: Record<string, unknown>, keys: string[]) => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

/**
 * The task as the seed's Task Response. Artifacts and metadata an agent's own Task Response carried are answered as
 * it sent them, except that the metadata fields the hub answers itself (times, agent, retries) are the hub's (the
 * agent's own stay on the task, in `response`).
 */
export function taskFormatResponse(task: ResponseSource) {
  const status = TASK_FORMAT_STATUS[task.status as TaskStatus];
  const duration = task.started_at && task.completed_at ? Date.parse(task.completed_at) - Date.parse(task.started_at) : null;
  const sent = task.response ?? {};
  return {
    id: task.client_id ?? task.id,
    status,
    ...(status === "completed" ? { result: task.result } : {}),
    ...(status === "failed" && task.error ? { error: task.error } : {}),
    metadata: {
      ...(isPlainObject(sent.metadata) ? withoutKeys(sent.metadata, HUB_METADATA) : {}),
      ...(task.started_at ? { startedAt: task.started_at } : {}),
      ...(task.completed_at ? { completedAt: task.completed_at } : {}),
      ...(duration !== null && duration >= 0 ? { duration_ms: duration } : {}),
      ...(task.assigned_server_name ? { agent: task.assigned_server_name } : {}),
      retryCount: task.retry_count,
    },
    artifacts: Array.isArray(sent.artifacts) ? sent.artifacts : status === "completed" ? artifactsOf(task.result) : [],
  };
}

/* ---------------------------------------------------------------------------
 * Error block (§Error Block) as `fail` takes it: the text the official CLI
 * sends, or the block.
 * ------------------------------------------------------------------------- */

/** The error block as an agent sends it. */
export const errorBlockBody = withNullsAbsent(z.object({
    code: z.string({ error: "must be a string" }).trim().min(1, "must not be empty").max(100, "must be at most 100 characters"),
    message: z.string({ error: "is required (a string)" }).trim().min(1, "must not be empty").max(20_000, "must be at most 20000 characters"),
    // Any JSON, but the seed's details are an object: null is none.
    details: absentWhenNull(withinJsonLimit(z.unknown(), 64 * 1024).optional()),
    recoverable: z.boolean({ error: "must be true or false" }).optional(),
}));

const errorText = z.string({ error: "must be a string or an error block {code, message, details?, recoverable?}" }).min(1, "must not be empty").max(20_000, "must be at most 20000 characters");

/** `error` is text (as the official CLI sends it) or an error block; problems name the block's field (error.code). */
/** How the API's description shows `error`: the two forms the transform below tells apart by type (for its precise messages). */
const documentedError = z.toJSONSchema(z.union([errorText, errorBlockBody]), { io: "input", target: "draft-2020-12" });
delete documentedError.$schema;

export const failRequest = z.object({ error: z.unknown().optional().meta({ override: ({ jsonSchema }) => void Object.assign(jsonSchema, documentedError) }) }).transform((body, ctx) => {
  const raw = body.error ?? "Failed without a reason";
  const parsed = (raw && typeof raw === "object" && !Array.isArray(raw) ? errorBlockBody : errorText).safeParse(raw);
  if (parsed.success) return { error: parsed.data };
  for (const issue of parsed.error.issues) ctx.addIssue({ code: "custom", path: ["error", ...issue.path], message: issue.message });
  return z.NEVER;
});

/** The fail command's fields from either form. */
export function failureOf(error: z.output<typeof failRequest>["error"]) {
  return typeof error === "string"
    ? { error, code: null }
    : { error: error.message, code: error.code, ...(error.details !== undefined ? { details: error.details } : {}), ...(error.recoverable !== undefined ? { recoverable: error.recoverable } : {}) };
}
