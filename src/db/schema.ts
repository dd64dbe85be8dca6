/**
 * D1 schema. Timestamps are ISO-8601 UTC strings (they sort correctly as text
 * and are what the API returns); ids are UUIDs; JSON columns hold protocol
 * objects exactly as accepted.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { TASK_STATUSES } from "../domain/lifecycle";
import { DEPENDENCY_TYPES } from "../protocol/orchestratia-v1";
import type { ProjectSettings } from "../domain/project-settings";

export const ROLES = ["admin", "member", "viewer"] as const;
export type Role = (typeof ROLES)[number];

export const users = sqliteTable("users", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  name: text("name"),
  role: text("role", { enum: ROLES }).notNull(),
  /** Null for accounts that only sign in through the external identity provider. */
  passwordHash: text("password_hash"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const refreshTokens = sqliteTable(
  "refresh_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** All tokens descended from one login share a family; reuse of a rotated one revokes it. */
    familyId: text("family_id").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    expiresAt: text("expires_at").notNull(),
    createdAt: text("created_at").notNull(),
    rotatedAt: text("rotated_at"),
    revokedAt: text("revoked_at"),
  },
  (t) => [index("refresh_tokens_family").on(t.familyId)],
);

export const projects = sqliteTable("projects", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  slug: text("slug").notNull().unique(),
  description: text("description"),
  /** What the project's admins chose (src/domain/project-settings.ts); a setting left out is at its default. */
  settings: text("settings", { mode: "json" })
    .$type<Partial<ProjectSettings>>()
    .notNull()
    .default(sql`'{}'`),
  createdBy: text("created_by"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const projectMembers = sqliteTable(
  "project_members",
  {
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.userId] }), index("project_members_user").on(t.userId)],
);

export const registrationTokens = sqliteTable("registration_tokens", {
  id: text("id").primaryKey(),
  name: text("name"),
  tokenHash: text("token_hash").notNull().unique(),
  expiresAt: text("expires_at").notNull(),
  maxUses: integer("max_uses").notNull(),
  uses: integer("uses").notNull().default(0),
  /** Projects a server registered with this token may see; null = all. */
  projectIds: text("project_ids", { mode: "json" }).$type<string[] | null>(),
  createdBy: text("created_by"),
  createdAt: text("created_at").notNull(),
  revokedAt: text("revoked_at"),
});

export const servers = sqliteTable("servers", {
  id: text("id").primaryKey(),
  name: text("name").notNull().unique(),
  hostname: text("hostname").notNull(),
  ip: text("ip"),
  os: text("os"),
  repos: text("repos", { mode: "json" }).$type<unknown>(),
  systemInfo: text("system_info", { mode: "json" }).$type<unknown>(),
  capabilities: text("capabilities", { mode: "json" }).$type<unknown>(),
  protocolVersions: text("protocol_versions", { mode: "json" }).$type<string[] | null>(),
  machineId: text("machine_id"),
  macAddress: text("mac_address"),
  /** sha256 of the current API key; null once revoked. */
  apiKeyHash: text("api_key_hash").unique(),
  apiKeyPrefix: text("api_key_prefix"),
  projectIds: text("project_ids", { mode: "json" }).$type<string[] | null>(),
  registrationTokenId: text("registration_token_id"),
  lastHeartbeat: text("last_heartbeat"),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
  revokedAt: text("revoked_at"),
});

/** `starting` until the daemon answers a start; `closed` and `error` are final. */
export const SESSION_STATUSES = ["starting", "running", "closed", "error"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export const OPEN_SESSION_STATUSES = ["starting", "running"] as const satisfies readonly SessionStatus[];
export const SESSION_ROLES = ["worker", "orchestrator"] as const;
/**
 * What the daemon did with the agent's MCP configuration when it started the session (agent_registry.py WriteStatus):
 * written or merged into the workspace's config file, or not (a read-only workspace, an agent it has no writer for,
 * no workspace).
 */
export const MCP_STATUSES = ["written", "merged", "workspace_readonly", "unsupported", "skipped"] as const;
export type McpStatus = (typeof MCP_STATUSES)[number];

export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    serverId: text("server_id")
      .notNull()
      .references(() => servers.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    workingDirectory: text("working_directory"),
    agentType: text("agent_type"),
    role: text("role", { enum: SESSION_ROLES }).notNull().default("worker"),
    status: text("status", { enum: SESSION_STATUSES }).notNull(),
    /** The agent's process on its server and its tmux session, as the daemon reported them. */
    pid: integer("pid"),
    tmuxName: text("tmux_name"),
    exitCode: integer("exit_code"),
    error: text("error"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    closedAt: text("closed_at"),
    /** As the daemon reported it (PATCH /api/v1/server/sessions/{id}/mcp-status); null until it does. */
    mcpStatus: text("mcp_status", { enum: MCP_STATUSES }),
  },
  (t) => [
    index("sessions_project").on(t.projectId, t.status),
    index("sessions_server").on(t.serverId, t.status),
    // One open session of a given name per server; closed ones are history.
    uniqueIndex("sessions_open_name")
      .on(t.serverId, t.name)
      .where(sql`status IN ('starting', 'running')`),
  ],
);

export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    /** "user:<id>" or "server:<id>": keys never collide across callers. */
    caller: text("caller").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    /** Null while the first request is still being handled. */
    responseStatus: integer("response_status"),
    responseBody: text("response_body"),
    responseContentType: text("response_content_type"),
    /** The answer holds a secret a replay hands out again: the body is sealed under DATA_KEY. */
    sealed: integer("sealed", { mode: "boolean" }).notNull().default(false),
    /** The project access the first request was granted (src/auth/access.ts): a replay is answered only to a caller granted it still. */
    scope: text("scope", { mode: "json" }).$type<{ project_id: string; access: "read" | "write"; what: string }[]>(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.caller, t.key] }), index("idempotency_keys_created").on(t.createdAt)],
);

export const PRIORITIES = ["low", "normal", "high", "critical"] as const;
export type Priority = (typeof PRIORITIES)[number];

/** Most urgent first: the order waiting tasks are offered in (indexed as written, so queries must use this very expression). */
export const PRIORITY_RANK = sql`CASE priority WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END`;

/** Tasks waiting for auto-assignment: pending, with requirements to match a server by, and not waiting for a person's approval. */
export const WAITING = sql`status = 'pending' AND requirements IS NOT NULL AND awaiting_approval = 0`;

/** Waiting tasks no unresolved dependency blocks: all that tasks_waiting holds, so a query reads that index only by naming this very condition. */
export const READY_TO_OFFER = sql`${WAITING} AND blocked = 0`;

/**
 * A task not yet done, failed or cancelled: exactly those without completed_at, since only finishing a task sets it
 * and only a retry (the one way out of failed) clears it. The server and session indexes hold these first, so a
 * query for an agent's unfinished tasks names this condition to read only them (as text for a statement written as a
 * string; it names no table, so it binds to the innermost one that has the column).
 */
export const UNFINISHED_TASK_TEXT = "completed_at IS NULL";
export const UNFINISHED_TASK = sql.raw(UNFINISHED_TASK_TEXT);

export const tasks = sqliteTable(
  "tasks",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    title: text("title").notNull(),
    spec: text("spec").notNull(),
    type: text("type").notNull(),
    priority: text("priority", { enum: PRIORITIES }).notNull(),
    status: text("status", { enum: TASK_STATUSES }).notNull(),
    targetRepo: text("target_repo"),
    targetBranch: text("target_branch"),
    acceptanceCriteria: text("acceptance_criteria", { mode: "json" }).$type<string[]>().notNull(),
    structuredSpec: text("structured_spec", { mode: "json" }).$type<Record<string, unknown> | null>(),
    requirements: text("requirements", { mode: "json" }).$type<Record<string, unknown> | null>(),
    result: text("result", { mode: "json" }).$type<Record<string, unknown> | null>(),
    /** Whether `result` is a task-result/v1 object (contracts flow downstream) rather than a legacy one. */
    resultStructured: integer("result_structured", { mode: "boolean" }).notNull().default(false),
    errorCode: text("error_code"),
    /** The assigned agent's last progress report (event:progress): a fraction from 0 to 1, and what it said. */
    progress: real("progress"),
    progressMessage: text("progress_message"),
    plan: text("plan", { mode: "json" }).$type<unknown>(),
    planFeedback: text("plan_feedback"),
    requirePlan: integer("require_plan", { mode: "boolean" }).notNull().default(false),
    assignedServerId: text("assigned_server_id").references(() => servers.id, { onDelete: "set null" }),
    targetSessionId: text("target_session_id").references(() => sessions.id, { onDelete: "set null" }),
    sourceSessionId: text("source_session_id").references(() => sessions.id, { onDelete: "set null" }),
    createdBy: text("created_by").notNull(),
    timeoutSeconds: integer("timeout_seconds"),
    /** When a running task with a timeout is failed with TIMEOUT by the room's alarm. */
    deadlineAt: text("deadline_at"),
    warnings: text("warnings", { mode: "json" }).$type<string[]>().notNull(),
    /** The task-format request's own id (seeds/task-format.md): unique per project; a repeat of the request finds the task by it. */
    clientId: text("client_id"),
    /** sha256 of the request that created the task under clientId: the same id with another body is a conflict. */
    clientRequestHash: text("client_request_hash"),
    /** The task-format blocks, kept as sent. */
    payload: text("payload", { mode: "json" }).$type<unknown>(),
    context: text("context", { mode: "json" }).$type<Record<string, unknown> | null>(),
    routing: text("routing", { mode: "json" }).$type<Record<string, unknown> | null>(),
    observability: text("observability", { mode: "json" }).$type<Record<string, unknown> | null>(),
    /** A task-format request's top-level fields the seed does not name, kept as sent (compute protocol: extended by optional fields). */
    extensions: text("extensions", { mode: "json" }).$type<Record<string, unknown> | null>(),
    /** Why the task failed, as the task-format error block {code, message, details?, recoverable?}. */
    error: text("error", { mode: "json" }).$type<Record<string, unknown> | null>(),
    /** How many times the task was retried or requeued (task-format metadata.retryCount). */
    retryCount: integer("retry_count").notNull().default(0),
    /**
     * What a task-format Task Response carried beside its result or error ({artifacts?, metadata?}, as sent): not part of
     * the result, which downstream tasks and agents read as the agent made it.
     */
    response: text("response", { mode: "json" }).$type<Record<string, unknown> | null>(),
    /** A result that arrived after the task failed or was cancelled (compute protocol): kept, not applied. */
    lateResult: text("late_result", { mode: "json" }).$type<unknown>(),
    /** What the completing agent's last commit changed, as `orchestratia task complete` measures it (git --numstat). */
    gitDiffStats: text("git_diff_stats", { mode: "json" }).$type<Record<string, unknown> | null>(),
    /** Servers that rejected the task (compute protocol): auto-assignment does not offer it to them again. */
    rejectedBy: text("rejected_by", { mode: "json" })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    /** When the task was last given to a server: its lease counts from here or the server's last sign of life, whichever is later. */
    assignedAt: text("assigned_at"),
    /** W3C trace context of the request that created the task (or one the hub began). */
    traceId: text("trace_id"),
    traceparent: text("traceparent"),
    /**
     * Whether a dependency (other than related) is unresolved: kept by triggers on task_dependencies and on a task's
     * change to done (migrations 0009, 0021), whichever statement changes them, so waiting tasks ready to run are
     * indexed apart from blocked ones.
     */
    blocked: integer("blocked", { mode: "boolean" }).notNull().default(false),
    /**
     * Created by an agent while its project approves agents' tasks, and not approved yet: never auto-assigned, and not
     * started or planned until a person approves it (POST /api/v1/tasks/{id}/approve).
     */
    awaitingApproval: integer("awaiting_approval", { mode: "boolean" }).notNull().default(false),
    /** Bumped by every write; each write is guarded by the version it read. */
    version: integer("version").notNull().default(1),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    startedAt: text("started_at"),
    completedAt: text("completed_at"),
  },
  (t) => [
    index("tasks_project_created").on(t.projectId, t.createdAt, t.id),
    // Partial: a task with no server or session is never looked up by it, and each change of such a task would write an
    // index row that D1 bills. Keyed by completed_at rather than status (unfinished tasks first, UNFINISHED_TASK), so
    // only assigning and finishing a task write its entry, not every change of status in between.
    index("tasks_server_completed")
      .on(t.assignedServerId, t.completedAt)
      .where(sql`assigned_server_id IS NOT NULL`),
    index("tasks_session_completed")
      .on(t.targetSessionId, t.completedAt)
      .where(sql`target_session_id IS NOT NULL`),
    uniqueIndex("tasks_client_id")
      .on(t.projectId, t.clientId)
      .where(sql`client_id IS NOT NULL`),
    index("tasks_deadline")
      .on(t.projectId, t.deadlineAt)
      .where(sql`deadline_at IS NOT NULL`),
    // Tasks ready for auto-assignment, in the order they are offered: read without sorting, and without passing finished
    // or blocked tasks, however many a project holds.
    index("tasks_waiting").on(t.projectId, PRIORITY_RANK, t.createdAt, t.id).where(READY_TO_OFFER),
  ],
);

/**
 * Whether dependency `d` (an alias of task_dependencies) on upstream `u` (of tasks) is resolved, and since when, as SQL
 * text: as its row was written, or since its upstream was done. A completion writes no dependency row; the triggers of
 * migration 0021 read it so to keep tasks.blocked.
 */
export const dependencyResolved = (d: string, u: string) => `(${d}.resolved = 1 OR ${u}.status = 'done')`;
export const dependencyResolvedAt = (d: string, u: string) => `COALESCE(${d}.resolved_at, CASE WHEN ${u}.status = 'done' THEN ${u}.completed_at END)`;
/** Dependency `d` still holds its task back: it blocks (not related) and is unresolved, its upstream `u` not done. */
export const dependencyBlocking = (d: string, u: string) => `${d}.dependency_type != 'related' AND NOT ${dependencyResolved(d, u)}`;

export const taskDependencies = sqliteTable(
  "task_dependencies",
  {
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    dependsOnTaskId: text("depends_on_task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull(),
    dependencyType: text("dependency_type", { enum: DEPENDENCY_TYPES }).notNull(),
    contractKey: text("contract_key"),
    /**
     * Resolved as the dependency was written (related, or on an upstream already done): a completion writes no
     * dependency row, so one is also resolved once its upstream is done (DEPENDENCY_RESOLVED), at its completed_at.
     */
    resolved: integer("resolved", { mode: "boolean" }).notNull().default(false),
    resolvedAt: text("resolved_at"),
    createdAt: text("created_at").notNull(),
  },
  // WITHOUT ROWID since migration 0008, as events.
  (t) => [primaryKey({ columns: [t.taskId, t.dependsOnTaskId] }), index("task_dependencies_upstream").on(t.dependsOnTaskId)],
);

export const taskNotes = sqliteTable(
  "task_notes",
  {
    id: text("id").primaryKey(),
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    projectId: text("project_id").notNull(),
    author: text("author").notNull(),
    content: text("content").notNull(),
    urgent: integer("urgent", { mode: "boolean" }).notNull().default(false),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("task_notes_task").on(t.taskId, t.createdAt)],
);

export const INTERVENTION_TYPES = ["help", "question", "approval"] as const;
export const INTERVENTION_STATUSES = ["pending", "responded", "cancelled", "timed_out"] as const;

export const interventions = sqliteTable(
  "interventions",
  {
    id: text("id").primaryKey(),
    /** Null for a question an agent asks outside any task (request:ask-user, event:question). */
    taskId: text("task_id").references(() => tasks.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    interventionType: text("intervention_type", { enum: INTERVENTION_TYPES }).notNull(),
    question: text("question").notNull(),
    context: text("context", { mode: "json" }).$type<unknown>(),
    status: text("status", { enum: INTERVENTION_STATUSES }).notNull(),
    response: text("response"),
    respondedBy: text("responded_by"),
    respondedAt: text("responded_at"),
    askedBy: text("asked_by").notNull(),
    targetSessionId: text("target_session_id"),
    /** For request:ask-user: who waits for the answer, under which request id, offering which options, until when. */
    serverId: text("server_id"),
    correlationId: text("correlation_id"),
    options: text("options", { mode: "json" }).$type<unknown>(),
    expiresAt: text("expires_at"),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    index("interventions_task").on(t.taskId, t.status),
    index("interventions_project").on(t.projectId, t.status, t.createdAt),
    index("interventions_expiry")
      .on(t.projectId, t.expiresAt)
      .where(sql`expires_at IS NOT NULL AND status = 'pending'`),
  ],
);

/** What agents said on their sockets that is not a request: event:log, event:error, and non-JSON lines. */
export const agentLogs = sqliteTable(
  "agent_logs",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    serverId: text("server_id").notNull(),
    taskId: text("task_id"),
    level: text("level").notNull(),
    message: text("message").notNull(),
    context: text("context", { mode: "json" }).$type<unknown>(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("agent_logs_project").on(t.projectId, t.createdAt), index("agent_logs_task").on(t.taskId, t.createdAt)],
);

export const events = sqliteTable(
  "events",
  {
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    /** Strictly increasing per project; assigned inside the writing transaction. */
    seq: integer("seq").notNull(),
    type: text("type").notNull(),
    taskId: text("task_id"),
    actor: text("actor").notNull(),
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** The task's trace context, so work can be followed across agents. */
    traceparent: text("traceparent"),
    createdAt: text("created_at").notNull(),
  },
  // Migration 0008 makes the table WITHOUT ROWID (drizzle cannot say so): its primary key is then the table itself, so
  // an event is one row written rather than two, before its task index.
  (t) => [
    primaryKey({ columns: [t.projectId, t.seq] }),
    index("events_task")
      .on(t.taskId)
      .where(sql`task_id IS NOT NULL`),
  ],
);

export const DATAREF_STATUSES = ["pending", "uploading", "complete"] as const;

/** Large payloads held in R2 (compute-protocol "Data References"); immutable once complete. */
export const datarefs = sqliteTable(
  "datarefs",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    status: text("status", { enum: DATAREF_STATUSES }).notNull(),
    contentType: text("content_type").notNull(),
    size: integer("size").notNull(),
    /** Declared by the uploader (R2 verifies it) or computed while the bytes streamed in. */
    sha256: text("sha256"),
    filename: text("filename"),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    /** A pending upload not completed by then is cleaned up. */
    uploadExpiresAt: text("upload_expires_at").notNull(),
    completedAt: text("completed_at"),
  },
  (t) => [index("datarefs_project").on(t.projectId, t.status)],
);

/**
 * A project's outbound webhook (API.md "Webhooks"). Its signing secret is kept
 * sealed (src/auth/sealed.ts); after a rotation the previous one keeps signing
 * too until `previousSecretExpiresAt`.
 */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    /** Event types delivered; null: all of them. */
    events: text("events", { mode: "json" }).$type<string[] | null>(),
    description: text("description"),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    /** Why the hub disabled it (an endpoint failing too long), if it did. */
    disabledReason: text("disabled_reason"),
    secret: text("secret").notNull(),
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: text("previous_secret_expires_at"),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("webhooks_project").on(t.projectId, t.enabled)],
);

export const OUTBOX_TARGETS = ["webhook", "telegram"] as const;
export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

/**
 * What integrations are owed: one row per event a target wants, written in the
 * same batch as the event itself, then delivered by the target's own Durable
 * Object in seq order. The id is the delivery's `webhook-id`, stable across
 * retries.
 */
export const outbox = sqliteTable(
  "outbox",
  {
    id: text("id").primaryKey(),
    targetKind: text("target_kind", { enum: OUTBOX_TARGETS }).notNull(),
    targetId: text("target_id").notNull(),
    projectId: text("project_id").notNull(),
    /** The event's seq in its project; null for a test delivery. */
    seq: integer("seq"),
    eventType: text("event_type").notNull(),
    /** Set only for deliveries that are not an event of the log (tests). */
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown> | null>(),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: text("next_attempt_at").notNull(),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: text("created_at").notNull(),
    deliveredAt: text("delivered_at"),
  },
  (t) => [
    uniqueIndex("outbox_event").on(t.targetKind, t.targetId, t.projectId, t.seq),
    index("outbox_queue").on(t.targetKind, t.targetId, t.status, t.createdAt, t.seq),
  ],
);

/** Every attempt at a delivery: when, the answer's status (or the error) and how long it took. */
export const deliveryAttempts = sqliteTable(
  "delivery_attempts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    outboxId: text("outbox_id")
      .notNull()
      .references(() => outbox.id, { onDelete: "cascade" }),
    attempt: integer("attempt").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
    /** The start of the answer's body, at most 4 KiB. */
    responseBody: text("response_body"),
    at: text("at").notNull(),
  },
  (t) => [index("delivery_attempts_outbox").on(t.outboxId)],
);

/** A Telegram chat linked to a person: they hear of their projects there and act as themselves. */
export const telegramLinks = sqliteTable("telegram_links", {
  id: text("id").primaryKey(),
  userId: text("user_id")
    .notNull()
    .unique()
    .references(() => users.id, { onDelete: "cascade" }),
  chatId: text("chat_id").notNull().unique(),
  /** Nothing is sent while muted (`/mute`). */
  muted: integer("muted", { mode: "boolean" }).notNull().default(false),
  /** Projects the person stopped watching (`/watch`); every other project they can see is watched. */
  unwatched: text("unwatched", { mode: "json" })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
  /** Projects whose denied tool calls the person hears of (`/denied`); none unless asked. */
  deniedProjects: text("denied_projects", { mode: "json" })
    .$type<string[]>()
    .notNull()
    .default(sql`'[]'`),
  createdAt: text("created_at").notNull(),
});

/** One-time codes that link a chat (`/start <code>` through the bot's deep link); stored hashed. */
export const telegramLinkCodes = sqliteTable("telegram_link_codes", {
  codeHash: text("code_hash").primaryKey(),
  userId: text("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  expiresAt: text("expires_at").notNull(),
});

/** The bot as Telegram described it at setup (getMe), so no request asks again. */
export const telegramBot = sqliteTable("telegram_bot", {
  id: integer("id").primaryKey(),
  botInfo: text("bot_info", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
  webhookUrl: text("webhook_url").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export const APPROVAL_ACTIONS = ["allow", "deny"] as const;
export const APPROVAL_SCOPES = ["tenant", "project", "server"] as const;

/**
 * Rules the daemon's PreToolUse hook matches each tool call against (API.md "Approval rules"): `tool_pattern` and
 * `param_pattern` are fnmatch globs; `scope_id` names the project or server (null for tenant rules, the whole hub).
 */
export const approvalRules = sqliteTable(
  "approval_rules",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    toolPattern: text("tool_pattern").notNull(),
    paramPattern: text("param_pattern"),
    action: text("action", { enum: APPROVAL_ACTIONS }).notNull(),
    scopeType: text("scope_type", { enum: APPROVAL_SCOPES }).notNull(),
    scopeId: text("scope_id"),
    /** `all`, or a comma list of claude, codex, gemini. */
    agentFilter: text("agent_filter").notNull().default("all"),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    createdBy: text("created_by"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("approval_rules_scope").on(t.scopeType, t.scopeId)],
);

export const PERMISSION_DECISIONS = ["allowed", "denied", "asked"] as const;
export type PermissionDecision = (typeof PERMISSION_DECISIONS)[number];

/**
 * Every tool call an agent's PreToolUse hook saw, as its daemon posted it (API.md "Approval rules and the permission
 * log"). Written at volume and read a page at a time, newest first, per project; kept PERMISSION_LOG_DAYS.
 *
 * D1 bills each row written, index rows included, so an entry costs at most two: migration 0015 makes the table
 * WITHOUT ROWID (drizzle cannot say so), so the primary key (project_id, created_at, id) is the table itself and serves
 * the project's pages and their cursor; the one index serves the filter that picks the fewest rows, a task, and holds
 * only entries that have one. The other filters (session, decision, tool) walk the project's own rows newest first:
 * rows read, which cost a thousandth of rows written, and a project has few sessions, decisions and tools.
 */
export const permissionLog = sqliteTable(
  "permission_log",
  {
    id: text("id").notNull(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    serverId: text("server_id").notNull(),
    sessionId: text("session_id"),
    /** The task the session was working on when the entry arrived. */
    taskId: text("task_id"),
    toolName: text("tool_name").notNull(),
    /** JSON text of the hook's tool_input; long strings cut when it exceeds 8 KiB (then `tool_input_truncated`). */
    toolInput: text("tool_input").notNull(),
    toolInputTruncated: integer("tool_input_truncated", { mode: "boolean" }).notNull().default(false),
    decision: text("decision", { enum: PERMISSION_DECISIONS }).notNull(),
    matchedRuleId: text("matched_rule_id"),
    reason: text("reason"),
    agentName: text("agent_name"),
    /** When the hook saw the call (its own clock, never later than `received_at`), ISO UTC. */
    createdAt: text("created_at").notNull(),
    receivedAt: text("received_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.createdAt, t.id] }),
    index("permission_log_task")
      .on(t.taskId, t.createdAt, t.id)
      .where(sql`task_id IS NOT NULL`),
  ],
);

export const FILE_TRANSFER_KINDS = ["upload", "download"] as const;
export type FileTransferKind = (typeof FILE_TRANSFER_KINDS)[number];
/** An upload ends `delivered` (the daemon wrote it) or `failed`; a download ends `ready` (its bytes are in) or `failed`. */
export const FILE_TRANSFER_STATUSES = ["pending", "delivered", "ready", "failed"] as const;
export type FileTransferStatus = (typeof FILE_TRANSFER_STATUSES)[number];

/**
 * Files between people and a session's machine (API.md "Files between people and agents' machines"): an upload a
 * person sent for the session's daemon to fetch, or a download a person asked the daemon for. The bytes are a
 * complete DataRef of the project (an upload's from the start, a download's once the daemon sent them). Written only
 * by the project's room, with the transfer's event.
 *
 * Every daemon asks for its pending uploads and downloads every 3 s: `file_transfers_waiting` holds only the pending
 * rows, by server and kind, so an empty answer is one step into a small index.
 */
export const fileTransfers = sqliteTable(
  "file_transfers",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    /** The session's server: the only daemon that sees the transfer. */
    serverId: text("server_id")
      .notNull()
      .references(() => servers.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: FILE_TRANSFER_KINDS }).notNull(),
    status: text("status", { enum: FILE_TRANSFER_STATUSES }).notNull(),
    /** An upload's file name; a download's, once the daemon sent it. */
    filename: text("filename"),
    /** Where an upload landed on the machine; the path a download asked for. */
    path: text("path"),
    datarefId: text("dataref_id").references(() => datarefs.id, { onDelete: "set null" }),
    size: integer("size"),
    sha256: text("sha256"),
    error: text("error"),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("file_transfers_waiting")
      .on(t.serverId, t.kind, t.createdAt)
      .where(sql`status = 'pending'`),
    index("file_transfers_session").on(t.sessionId, t.kind, t.createdAt),
  ],
);

export const PRIVILEGE_LEVELS = ["standard", "elevated"] as const;
export const GRANT_STATUSES = ["active", "revoked", "expired"] as const;
export type GrantStatus = (typeof GRANT_STATUSES)[number];

/**
 * SSH access from one server's machine to another's, relayed through the hub (API.md "SSH access grants and
 * tunnels"): the target's daemon installs `public_key` for its `orchestratia` user, the source's daemon keeps the
 * private key and listens on `local_bind_port`. The private key is sealed with DATA_KEY and only ever handed to the
 * source's daemon. `status` stays `active` past `expires_at` until the source's link expires it (its alarm); every
 * check reads `expires_at` too. `project_id` is the project both servers serve whose log records the grant's events.
 */
export const accessGrants = sqliteTable(
  "access_grants",
  {
    id: text("id").primaryKey(),
    sourceServerId: text("source_server_id")
      .notNull()
      .references(() => servers.id, { onDelete: "cascade" }),
    targetServerId: text("target_server_id")
      .notNull()
      .references(() => servers.id, { onDelete: "cascade" }),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    privilegeLevel: text("privilege_level", { enum: PRIVILEGE_LEVELS }).notNull(),
    localBindPort: integer("local_bind_port").notNull(),
    targetPort: integer("target_port").notNull(),
    sshUsername: text("ssh_username").notNull(),
    publicKey: text("public_key").notNull(),
    sealedPrivateKey: text("sealed_private_key").notNull(),
    status: text("status", { enum: GRANT_STATUSES }).notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    endedAt: text("ended_at"),
  },
  (t) => [
    // A source's daemon listens on one port per live grant.
    uniqueIndex("access_grants_source_port")
      .on(t.sourceServerId, t.localBindPort)
      .where(sql`status = 'active'`),
    index("access_grants_target").on(t.targetServerId, t.status),
  ],
);

/**
 * A project's code health (API.md "Session files and code health"): one row per snapshot a daemon's scanner
 * (orchestratia_agent/codebase_scanner) produced, newest kept beside the older ones as its history. The row holds what
 * `orchestratia code health|debt|priorities` print and the dashboard draws; the whole snapshot is a DataRef of the
 * project in R2. Written only by the project's room, with its `code_health_scanned` event.
 */
export const codeHealthSnapshots = sqliteTable(
  "code_health_snapshots",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    serverId: text("server_id").notNull(),
    sessionId: text("session_id"),
    /** The whole snapshot, as JSON. */
    datarefId: text("dataref_id")
      .notNull()
      .references(() => datarefs.id, { onDelete: "cascade" }),
    healthScore: integer("health_score").notNull(),
    healthGrade: text("health_grade").notNull(),
    techDebtHours: real("tech_debt_hours").notNull(),
    /** JSON text: the summary as the CLI reads it (src/domain/code-health.ts), without the fields above. */
    summary: text("summary").notNull(),
    /** The scanner's clock, as it said it. */
    scannedAt: text("scanned_at").notNull(),
    receivedAt: text("received_at").notNull(),
  },
  (t) => [index("code_health_project").on(t.projectId, t.receivedAt)],
);
export type CodeHealthRow = typeof codeHealthSnapshots.$inferSelect;
