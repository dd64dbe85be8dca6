/**
 * What the agents cost (API.md "Usage, budgets and telemetry"): roll-ups counted where they are written (the project
 * room's usage batch), budgets with the thresholds they crossed, and where a project sends its tasks as spans.
 */
import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { projects } from "./people";
import { sessions } from "./servers";
import { tasks } from "./tasks";

/** The counters every roll-up keeps (domain/usage.ts names them the same). */
const amounts = () => ({
  inputTokens: integer("input_tokens").notNull().default(0),
  outputTokens: integer("output_tokens").notNull().default(0),
  cacheReadTokens: integer("cache_read_tokens").notNull().default(0),
  cacheWriteTokens: integer("cache_write_tokens").notNull().default(0),
  costUsd: real("cost_usd").notNull().default(0),
  /** Time the agent's model API calls took, in milliseconds. */
  apiMs: integer("api_ms").notNull().default(0),
  updatedAt: text("updated_at").notNull(),
});

/** One task's usage: everything attributed to it, whichever session, model or source reported it. */
export const taskUsage = sqliteTable("task_usage", {
  taskId: text("task_id")
    .primaryKey()
    .references(() => tasks.id, { onDelete: "cascade" }),
  projectId: text("project_id").notNull(),
  ...amounts(),
});

/** What a session used while working on no task: kept here and on the project (a task's usage is on the task). */
export const sessionUsage = sqliteTable("session_usage", {
  sessionId: text("session_id")
    .primaryKey()
    .references(() => sessions.id, { onDelete: "cascade" }),
  projectId: text("project_id").notNull(),
  ...amounts(),
});

/**
 * A project's usage per UTC day, model and agent (server and agent type; '' where unknown, so the key has no nulls):
 * the project's totals, per day, per model and per agent are sums over these few rows.
 */
export const usageDaily = sqliteTable(
  "usage_daily",
  {
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    day: text("day").notNull(),
    model: text("model").notNull(),
    serverId: text("server_id").notNull(),
    agentType: text("agent_type").notNull(),
    ...amounts(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.day, t.model, t.serverId, t.agentType] })],
);

/**
 * The room's usage batches that committed: each batch inserts its id first, so a batch handed to D1 again after a
 * restart fails whole on this key instead of counting twice.
 */
export const usageBatches = sqliteTable(
  "usage_batches",
  {
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    batchId: text("batch_id").notNull(),
    recordedAt: text("recorded_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.batchId] }), index("usage_batches_recorded").on(t.recordedAt)],
);

/** An agent's own session id (Claude Code's `session.id`) seen beside a hub session: points that carry only the former find the latter. */
export const agentSessionLinks = sqliteTable("agent_session_links", {
  agentSessionId: text("agent_session_id").primaryKey(),
  sessionId: text("session_id")
    .notNull()
    .references(() => sessions.id, { onDelete: "cascade" }),
  createdAt: text("created_at").notNull(),
});

export const BUDGET_SCOPES = ["project", "graph"] as const;
export const BUDGET_PERIODS = ["day", "month"] as const;
export const BUDGET_ACTIONS = ["warn", "hold", "stop"] as const;
export const BUDGET_STATES = ["ok", "warned", "held", "stopped"] as const;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];
export type BudgetAction = (typeof BUDGET_ACTIONS)[number];
export type BudgetState = (typeof BUDGET_STATES)[number];
export interface BudgetThreshold {
  at_percent: number;
  action: BudgetAction;
}

/**
 * A spending limit on a project (per day or month) or on a task graph (the task named and everything connected to it
 * by dependencies), in USD or tokens. Written only by the project's room, which adds each usage batch to `spent` and
 * decides the crossings in the same batch.
 */
export const budgets = sqliteTable(
  "budgets",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    scope: text("scope", { enum: BUDGET_SCOPES }).notNull(),
    /** The graph's anchor task (scope `graph`). */
    taskId: text("task_id").references(() => tasks.id, { onDelete: "cascade" }),
    period: text("period", { enum: BUDGET_PERIODS }),
    limitUsd: real("limit_usd"),
    limitTokens: integer("limit_tokens"),
    actions: text("actions", { mode: "json" }).$type<BudgetThreshold[]>().notNull(),
    state: text("state", { enum: BUDGET_STATES }).notNull().default("ok"),
    /** What the current period (`periodKey`: a UTC day, a month, or '' for a graph) has spent. */
    spentUsd: real("spent_usd").notNull().default(0),
    spentTokens: integer("spent_tokens").notNull().default(0),
    periodKey: text("period_key").notNull().default(""),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("budgets_project").on(t.projectId)],
);

/** Each threshold a budget crossed in a period, once: the key makes a repeat (a retry, a race) a no-op. */
export const budgetCrossings = sqliteTable(
  "budget_crossings",
  {
    budgetId: text("budget_id")
      .notNull()
      .references(() => budgets.id, { onDelete: "cascade" }),
    periodKey: text("period_key").notNull(),
    atPercent: real("at_percent").notNull(),
    action: text("action", { enum: BUDGET_ACTIONS }).notNull(),
    spentUsd: real("spent_usd").notNull(),
    spentTokens: integer("spent_tokens").notNull(),
    crossedAt: text("crossed_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.budgetId, t.periodKey, t.atPercent] })],
);

/** Where a project sends its tasks as OTLP spans: the endpoint, its headers sealed (never answered back). */
export const telemetryExports = sqliteTable("telemetry_exports", {
  projectId: text("project_id")
    .primaryKey()
    .references(() => projects.id, { onDelete: "cascade" }),
  endpoint: text("endpoint").notNull(),
  /** Sealed JSON of the headers (src/auth/sealed.ts). */
  headers: text("headers"),
  includeContent: integer("include_content", { mode: "boolean" }).notNull().default(false),
  /** Why the hub stopped exporting (a span's tries ran out); null while it exports. Saving the export again clears it. */
  disabledReason: text("disabled_reason"),
  createdBy: text("created_by").notNull(),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

export type BudgetRow = typeof budgets.$inferSelect;
export type TelemetryExportRow = typeof telemetryExports.$inferSelect;
