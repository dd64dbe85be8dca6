/** Approval rules for agents' tool calls, and the log of every call. */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { PERMISSION_DECISIONS, PERMISSION_SOURCES } from "../../domain/permission-decisions";
import { projects } from "./people";

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

export { PERMISSION_DECISIONS, PERMISSION_SOURCES, type PermissionDecision, type PermissionSource } from "../../domain/permission-decisions";

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
    /** 'telemetry' only while the session has no hook entry: the hook's entries replace a session's telemetry ones. */
    source: text("source", { enum: PERMISSION_SOURCES }).notNull().default("hook"),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.createdAt, t.id] }),
    index("permission_log_task")
      .on(t.taskId, t.createdAt, t.id)
      .where(sql`task_id IS NOT NULL`),
  ],
);

/**
 * Where each session's permission-log entries come from: its daemon's hook, or (while the hook has logged nothing for
 * it) the agent's telemetry. One row a session, written when it is first seen or its source changes, so that an entry
 * still costs at most two rows and neither path walks the project's log to learn a session's source. Migration 0031
 * makes the table WITHOUT ROWID (drizzle cannot say so): a session's row is one row written, not two.
 */
export const permissionLogSessions = sqliteTable(
  "permission_log_sessions",
  {
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    sessionId: text("session_id").notNull(),
    source: text("source", { enum: PERMISSION_SOURCES }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.sessionId] })],
);
