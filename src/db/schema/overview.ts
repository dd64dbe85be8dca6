/**
 * Roll-ups of the tasks' lifecycle for the overviews, counted where the change is written: triggers on `tasks` (migration
 * 0032) keep them in the same statement as every change of status, whichever operation makes it, so a read sums a few
 * rows instead of scanning tasks or events.
 */
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { projects } from "./people";

const projectId = () =>
  text("project_id")
    .notNull()
    .references(() => projects.id, { onDelete: "cascade" });

/** Per project, UTC day (of the change) and task type: how many tasks were done, failed, retried and cancelled. */
export const taskDailyRollup = sqliteTable(
  "task_daily_rollup",
  {
    projectId: projectId(),
    day: text("day").notNull(),
    taskType: text("task_type").notNull(),
    done: integer("done").notNull().default(0),
    failed: integer("failed").notNull().default(0),
    retried: integer("retried").notNull().default(0),
    cancelled: integer("cancelled").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.day, t.taskType] })],
);

/**
 * How long the tasks done that day took from creation to done, as a fixed log-scale histogram (domain/task-rollup.ts
 * names the buckets): a median read from it is within its bucket's bounds, which is all a chart needs.
 */
export const taskDoneDurations = sqliteTable(
  "task_done_durations",
  {
    projectId: projectId(),
    day: text("day").notNull(),
    taskType: text("task_type").notNull(),
    bucket: integer("bucket").notNull(),
    count: integer("count").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.day, t.taskType, t.bucket] })],
);

/** Each project's unfinished tasks by status, one row a project. */
export const taskOpenCounts = sqliteTable("task_open_counts", {
  projectId: projectId().primaryKey(),
  pending: integer("pending").notNull().default(0),
  assigned: integer("assigned").notNull().default(0),
  planning: integer("planning").notNull().default(0),
  planReview: integer("plan_review").notNull().default(0),
  running: integer("running").notNull().default(0),
  needsHuman: integer("needs_human").notNull().default(0),
});
