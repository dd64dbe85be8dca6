/** Tasks, their dependencies, notes, questions to people and agents, and what agents logged on their sockets. */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { TASK_STATUSES } from "../../domain/lifecycle";
import { TASK_REVIEW_STATUSES } from "../../domain/code-review";
import { DEPENDENCY_TYPES } from "../../protocol/orchestratia-v1";
import { projects } from "./people";
import { servers, sessions } from "./servers";

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

/**
 * Tasks waiting on a person: a plan to review, or an agent's task not approved yet (a cancelled one is finished, and
 * waits on nobody). Only these are in tasks_awaiting_person, so the inbox reads that index by naming this very
 * condition, as SQL text with the columns of `alias` (of tasks) when the query joins tables that share their names.
 */
export const awaitingPerson = (alias?: string) => {
  const column = (name: string) => (alias ? `${alias}.${name}` : name);
  return `(${column("status")} = 'plan_review' OR (${column("awaiting_approval")} = 1 AND ${column("completed_at")} IS NULL))`;
};

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
    /** The run (a template's firing) that made the task, if any: its graph's tasks share it (schema/automation.ts). */
    runId: text("run_id"),
    /** When the task's stall was last raised (liveness rules): raised again only after a sign of life since. */
    stalledAt: text("stalled_at"),
    /** When the task was flagged as one no server can take (liveness rules): once per wait. */
    unassignableAt: text("unassignable_at"),
    /** Where the task stands in the code-review loop (domain/code-review.ts); null when no review was asked. */
    reviewStatus: text("review_status", { enum: TASK_REVIEW_STATUSES }),
    /** The latest review attempt of this task; for a review task, the attempt it reviews. */
    reviewAttempt: integer("review_attempt").notNull().default(0),
    /** For a review task the hub created: the task whose change it reviews. */
    reviewOf: text("review_of"),
    /** Where the project's event log ended when the task was created: its events all follow (db/task-events.ts). */
    logFrom: integer("log_from").notNull().default(0),
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
    // What waits on a person, read by each inbox: a handful of rows, however many tasks a project holds.
    index("tasks_awaiting_person").on(t.projectId).where(sql.raw(awaitingPerson())),
    // A run's tasks, read to tell its outcome; most tasks belong to no run and write no entry.
    index("tasks_run")
      .on(t.runId)
      .where(sql`run_id IS NOT NULL`),
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
