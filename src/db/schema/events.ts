/** Each project's event log. */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
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
  // an event is one row written rather than two, before its task index.
  (t) => [
    primaryKey({ columns: [t.projectId, t.seq] }),
    index("events_task")
      .on(t.taskId)
      .where(sql`task_id IS NOT NULL`),
  ],
);
