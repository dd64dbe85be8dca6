/**
 * Templates, schedules, triggers and runs as the API answers them (API.md "Templates, schedules and triggers"). A run's
 * status is read from its tasks (tasks.run_id) when it is listed: one grouped query for a page of runs.
 */
import { and, desc, eq, inArray, lt, or, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import {
  MISSED_POLICIES,
  OVERLAP_POLICIES,
  PRIORITIES,
  RUN_SOURCES,
  runs,
  tasks,
  TRIGGER_KINDS,
  type RunRow,
  type ScheduleRow,
  type TemplateRow,
  type TriggerRow,
} from "../db/schema";
import { GITHUB_EVENTS } from "../domain/github-events";
import { nextSlots } from "../domain/cron-slots";
import { templateParameterSchema, templateTaskSchema } from "../protocol/templates";
import { id, jsonObject, timestamp } from "./fields";

/** A template's task as answered: as saved (`urgent` was kept as `critical`). */
export const templateTaskView = templateTaskSchema.extend({ priority: z.enum(PRIORITIES).optional() }).meta({ id: "TemplateTaskView" });

export const templateSchema = z
  .object({
    id,
    project_id: id,
    name: z.string(),
    description: z.string().nullable(),
    parameters: z.array(templateParameterSchema),
    tasks: z.array(templateTaskView),
    created_by: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "Template" });
export type TemplateView = z.infer<typeof templateSchema>;

export const templateView = (t: TemplateRow): TemplateView => ({
  id: t.id,
  project_id: t.projectId,
  name: t.name,
  description: t.description,
  parameters: t.parameters,
  tasks: t.tasks as TemplateView["tasks"],
  created_by: t.createdBy,
  created_at: t.createdAt,
  updated_at: t.updatedAt,
});

export const scheduleSchema = z
  .object({
    id,
    project_id: id,
    template_id: id,
    name: z.string().nullable(),
    cron: z.string().meta({ description: "Five fields (minute hour day-of-month month day-of-week) or a nickname such as @daily" }),
    timezone: z.string().meta({ description: "IANA time zone the expression is read in" }),
    parameters: jsonObject.meta({ description: "Given to every firing" }),
    missed: z.enum(MISSED_POLICIES).meta({ description: "A slot the room woke too late for (more than five minutes): run it once, or skip it" }),
    overlap: z.enum(OVERLAP_POLICIES).meta({ description: "While the previous firing's graph has a task not finished: skip the slot, or fire anyway" }),
    paused: z.boolean(),
    last_slot: timestamp.nullable().meta({ description: "The last slot handled (fired or skipped)" }),
    next_runs: z.array(timestamp).meta({ description: "The next five slots (none while paused)" }),
    created_by: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "Schedule" });
export type ScheduleView = z.infer<typeof scheduleSchema>;

export const scheduleView = (s: ScheduleRow, now = new Date()): ScheduleView => ({
  id: s.id,
  project_id: s.projectId,
  template_id: s.templateId,
  name: s.name,
  cron: s.cron,
  timezone: s.timezone,
  parameters: s.parameters,
  missed: s.missed,
  overlap: s.overlap,
  paused: s.paused,
  last_slot: s.lastSlot,
  next_runs:
    s.paused || !s.nextRunAt ? [] : [s.nextRunAt, ...nextSlots(s.cron, s.timezone, new Date(Math.max(Date.parse(s.nextRunAt), now.getTime())), 4)].slice(0, 5),
  created_by: s.createdBy,
  created_at: s.createdAt,
  updated_at: s.updatedAt,
});

export const githubRuleSchema = z
  .object({
    events: z.array(z.enum(GITHUB_EVENTS)),
    label: z.string().nullable().optional(),
    command: z.string().nullable().optional(),
    mapping: z.record(z.string(), z.string()).optional(),
  })
  .meta({ id: "GithubTriggerRule" });

export const triggerSchema = z
  .object({
    id,
    project_id: id,
    template_id: id,
    name: z.string().nullable(),
    kind: z.enum(TRIGGER_KINDS),
    url: z.string().meta({ description: "Where the caller (or GitHub) posts: `POST /hooks/triggers/{id}`" }),
    parameters: jsonObject.meta({ description: "Given to every firing, under what the call sends" }),
    github: githubRuleSchema.nullable(),
    paused: z.boolean(),
    created_by: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "Trigger" });
export type TriggerView = z.infer<typeof triggerSchema>;

export const triggerView = (t: TriggerRow, base: string): TriggerView => ({
  id: t.id,
  project_id: t.projectId,
  template_id: t.templateId,
  name: t.name,
  kind: t.kind,
  url: `${base}/hooks/triggers/${t.id}`,
  parameters: t.parameters,
  github: t.github,
  paused: t.paused,
  created_by: t.createdBy,
  created_at: t.createdAt,
  updated_at: t.updatedAt,
});

export const RUN_STATUSES = ["open", "done", "failed", "skipped"] as const;

export const runSchema = z
  .object({
    id,
    project_id: id,
    template_id: id.nullable().meta({ description: "Null once the template was deleted (`template_name` stays)" }),
    template_name: z.string(),
    source: z.enum(RUN_SOURCES),
    schedule_id: id.nullable(),
    slot: timestamp.nullable().meta({ description: "The schedule's slot the run is for" }),
    trigger_id: id.nullable(),
    delivery_id: z
      .string()
      .nullable()
      .meta({ description: "The call's delivery id (GitHub's X-GitHub-Delivery, a Standard Webhooks webhook-id, an Idempotency-Key)" }),
    parameters: jsonObject,
    task_ids: z.array(id),
    status: z.enum(RUN_STATUSES).meta({
      description:
        "open while a task of its graph is not finished; failed once all are finished and one failed or was cancelled; done when all are done; skipped: it made no tasks (see `skipped`)",
    }),
    skipped: z
      .string()
      .nullable()
      .meta({ description: "Why the firing made no tasks: `missed` (a slot the room woke too late for), `overlap` (the previous graph was open)" }),
    tasks: z
      .object({ total: z.int(), done: z.int(), failed: z.int(), open: z.int() })
      .meta({ description: "How many of its tasks are in each state (cancelled count as failed)" }),
    created_by: z.string(),
    started_at: timestamp,
  })
  .meta({ id: "Run" });
export type RunView = z.infer<typeof runSchema>;

export interface RunFilter {
  templateId?: string;
  scheduleId?: string;
  triggerId?: string;
  /** Older than this run (`started_at`, `id`), for the next page. */
  before?: { startedAt: string; id: string };
  limit: number;
}

/** A project's runs, newest first, with their status read from their tasks: two queries a page. */
export async function runViews(db: Db, projectId: string, filter: RunFilter): Promise<RunView[]> {
  const conditions: (SQL | undefined)[] = [
    eq(runs.projectId, projectId),
    filter.templateId ? eq(runs.templateId, filter.templateId) : undefined,
    filter.scheduleId ? eq(runs.scheduleId, filter.scheduleId) : undefined,
    filter.triggerId ? eq(runs.triggerId, filter.triggerId) : undefined,
    filter.before
      ? or(lt(runs.startedAt, filter.before.startedAt), and(eq(runs.startedAt, filter.before.startedAt), lt(runs.id, filter.before.id)))
      : undefined,
  ];
  const rows = await db
    .select()
    .from(runs)
    .where(and(...conditions))
    .orderBy(desc(runs.startedAt), desc(runs.id))
    .limit(filter.limit);
  const counts = await taskCounts(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => runView(r, counts.get(r.id)));
}

type Counts = { total: number; done: number; failed: number; open: number };

async function taskCounts(db: Db, runIds: string[]): Promise<Map<string, Counts>> {
  if (runIds.length === 0) return new Map();
  const rows = await db
    .select({
      runId: tasks.runId,
      total: sql<number>`count(*)`,
      done: sql<number>`sum(${tasks.status} = 'done')`,
      failed: sql<number>`sum(${tasks.status} IN ('failed', 'cancelled'))`,
      open: sql<number>`sum(${tasks.completedAt} IS NULL)`,
    })
    .from(tasks)
    .where(inArray(tasks.runId, runIds))
    .groupBy(tasks.runId);
  return new Map(rows.map((r) => [r.runId!, { total: r.total, done: r.done ?? 0, failed: r.failed ?? 0, open: r.open ?? 0 }]));
}

export function runView(r: RunRow, counts: Counts = { total: 0, done: 0, failed: 0, open: 0 }): RunView {
  const status = r.skipped ? "skipped" : counts.open > 0 ? "open" : counts.failed > 0 ? "failed" : "done";
  return {
    id: r.id,
    project_id: r.projectId,
    template_id: r.templateId,
    template_name: r.templateName,
    source: r.source,
    schedule_id: r.scheduleId,
    slot: r.slot,
    trigger_id: r.triggerId,
    delivery_id: r.deliveryId,
    parameters: r.parameters,
    task_ids: r.taskIds,
    status,
    skipped: r.skipped,
    tasks: counts,
    created_by: r.createdBy,
    started_at: r.startedAt,
  };
}
