/**
 * Roll-ups of the tasks' lifecycle for the overviews, counted where the change is written: one trigger per kind of
 * change on `tasks` (migrations 0032, 0038) keeps them in the same statement as every change of status, whichever
 * operation makes it, so a read sums a few rows instead of scanning tasks or events.
 *
 * All of them share one row per project, UTC day (of the change) and task type, so that a change writes one roll-up
 * row however many figures it moves: a completion moves the open counts, the day's done and its duration's bucket at
 * once. D1 bills each row a statement or its triggers write.
 */
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { DURATION_BUCKETS } from "../../domain/task-rollup";
import { projects } from "./people";

const count = (name: string) => integer(name).notNull().default(0);

/** The columns of the done tasks' durations: d<b> counts those in bucket b (domain/task-rollup.ts names the buckets). */
export const DURATION_COLUMNS = Array.from({ length: DURATION_BUCKETS }, (_, b) => `d${b}`);

export const taskRollup = sqliteTable(
  "task_rollup",
  {
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    day: text("day").notNull(),
    taskType: text("task_type").notNull(),
    /**
     * Unfinished tasks by status, as changes: each change adds one to the status it enters and takes one from the one
     * it leaves, so a project's open counts are the sums over its rows.
     */
    pending: count("pending"),
    assigned: count("assigned"),
    planning: count("planning"),
    planReview: count("plan_review"),
    running: count("running"),
    needsHuman: count("needs_human"),
    /** How many tasks were done, failed, retried and cancelled that day. */
    done: count("done"),
    failed: count("failed"),
    retried: count("retried"),
    cancelled: count("cancelled"),
    /**
     * How long the tasks done that day took from creation to done, as a fixed log-scale histogram: a median read from
     * it is within its bucket's bounds, which is all a chart needs.
     */
    ...(Object.fromEntries(DURATION_COLUMNS.map((c) => [c, count(c)])) as Record<`d${number}`, ReturnType<typeof count>>),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.day, t.taskType] })],
);
