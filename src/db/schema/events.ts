/** Each project's event log. */
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { projects } from "./people";

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
  // an event is one row written. No other index: a task's events are read from the log by this key, from where it stood
  // when the task was created (db/task-events.ts).
  (t) => [primaryKey({ columns: [t.projectId, t.seq] })],
);
