/**
 * Work that starts itself (API.md "Templates, schedules and triggers"): templates of task graphs with parameters,
 * schedules that instantiate one on cron slots, inbound triggers that instantiate one on a call, and the runs each
 * firing made. The project's room is the only writer of schedules and runs; templates and triggers are written by
 * their routes (nothing the room decides reads them twice in one turn).
 */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { TemplateParameter, TemplateTask } from "../../domain/template-params";
import type { GithubTriggerRule } from "../../domain/github-events";
import { projects } from "./people";
import { MISSED_POLICIES, OVERLAP_POLICIES, TRIGGER_KINDS } from "../../domain/automation-kinds";

export { MISSED_POLICIES, OVERLAP_POLICIES, TRIGGER_KINDS, type TriggerKind } from "../../domain/automation-kinds";

export const templates = sqliteTable(
  "templates",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description"),
    parameters: text("parameters", { mode: "json" }).$type<TemplateParameter[]>().notNull(),
    tasks: text("tasks", { mode: "json" }).$type<TemplateTask[]>().notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [uniqueIndex("templates_project_name").on(t.projectId, t.name)],
);

export const schedules = sqliteTable(
  "schedules",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    templateId: text("template_id")
      .notNull()
      .references(() => templates.id, { onDelete: "cascade" }),
    name: text("name"),
    cron: text("cron").notNull(),
    timezone: text("timezone").notNull(),
    parameters: text("parameters", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    missed: text("missed", { enum: MISSED_POLICIES }).notNull(),
    overlap: text("overlap", { enum: OVERLAP_POLICIES }).notNull(),
    paused: integer("paused", { mode: "boolean" }).notNull().default(false),
    /** The slot handled last (fired or skipped): a slot at or before it never fires again. */
    lastSlot: text("last_slot"),
    /** The next slot after `last_slot` (null while paused): the room's alarm wakes for the earliest. */
    nextRunAt: text("next_run_at"),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("schedules_due")
      .on(t.projectId, t.nextRunAt)
      .where(sql`next_run_at IS NOT NULL`),
  ],
);

export const triggers = sqliteTable(
  "triggers",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    templateId: text("template_id")
      .notNull()
      .references(() => templates.id, { onDelete: "cascade" }),
    name: text("name"),
    kind: text("kind", { enum: TRIGGER_KINDS }).notNull(),
    /** sha256 of the secret, shown once when the trigger was made (a bearer secret, and the key of its signatures). */
    secretHash: text("secret_hash").notNull(),
    /**
     * The secret sealed with DATA_KEY: a signature (Standard Webhooks' HMAC, GitHub's X-Hub-Signature-256) can only be
     * checked with the secret itself. Never answered back.
     */
    secretSealed: text("secret_sealed").notNull(),
    /** Parameters every firing gets, under those the call sends. */
    parameters: text("parameters", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    github: text("github", { mode: "json" }).$type<GithubTriggerRule | null>(),
    paused: integer("paused", { mode: "boolean" }).notNull().default(false),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("triggers_project").on(t.projectId, t.createdAt)],
);

export const RUN_SOURCES = ["manual", "schedule", "trigger", "telegram", "slack"] as const;
export type RunSource = (typeof RUN_SOURCES)[number];

/**
 * One firing: the graph it made and the parameters it made it with, or why it made none (`skipped`). Its outcome is
 * read from its tasks (tasks.run_id). A slot or a delivery fires once: (schedule, slot) and (trigger, delivery) are
 * unique, and the room inserts the run in the batch that makes its tasks.
 */
export const runs = sqliteTable(
  "runs",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    /** The template it was made from (kept when the template is deleted, as `template_name` is). */
    templateId: text("template_id"),
    templateName: text("template_name").notNull(),
    source: text("source", { enum: RUN_SOURCES }).notNull(),
    scheduleId: text("schedule_id"),
    slot: text("slot"),
    triggerId: text("trigger_id"),
    deliveryId: text("delivery_id"),
    parameters: text("parameters", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    taskIds: text("task_ids", { mode: "json" }).$type<string[]>().notNull(),
    /** Why the slot or call made no tasks ("missed", "overlap", ...); null for a run that made its graph. */
    skipped: text("skipped"),
    createdBy: text("created_by").notNull(),
    startedAt: text("started_at").notNull(),
  },
  (t) => [
    index("runs_project_started").on(t.projectId, t.startedAt, t.id),
    uniqueIndex("runs_schedule_slot")
      .on(t.scheduleId, t.slot)
      .where(sql`schedule_id IS NOT NULL`),
    uniqueIndex("runs_trigger_delivery")
      .on(t.triggerId, t.deliveryId)
      .where(sql`trigger_id IS NOT NULL AND delivery_id IS NOT NULL`),
  ],
);

export type TemplateRow = typeof templates.$inferSelect;
export type ScheduleRow = typeof schedules.$inferSelect;
export type TriggerRow = typeof triggers.$inferSelect;
export type RunRow = typeof runs.$inferSelect;
