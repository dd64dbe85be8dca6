/** Each project's event log. */
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { projects } from "./people";
import { tasks } from "./tasks";

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
  // an event is one row written. No index by task: a task's events are read by this key from the few blocks of the log
  // that hold them (task_log_blocks, db/task-events.ts).
  (t) => [primaryKey({ columns: [t.projectId, t.seq] })],
);

/**
 * The blocks of the log (LOG_BLOCK seqs each, db/task-events.ts) that hold a task's events, other than the block where
 * the log stood at its creation: a task's events are read from those blocks alone. A row is written only when a task
 * has its first event in a new block, so a task whose events all fall in one block writes none. Migration 0040 makes it
 * WITHOUT ROWID (one row written per entry).
 */
export const taskLogBlocks = sqliteTable(
  "task_log_blocks",
  {
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    block: integer("block").notNull(),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.block] })],
);
