/**
 * The writes a room operation is made of. Every statement of one operation
 * goes into one db.batch (one D1 transaction); statements that follow a task
 * update only take effect if that update did, i.e. if the task still had the
 * version the operation read, and so do its events.
 */
import { getTableColumns, sql, type Column, type SQL } from "drizzle-orm";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { tasks } from "../db/schema";
import type { EventType } from "../domain/event-types";

const dialect = new SQLiteAsyncDialect();

/** A drizzle query builder or raw SQL, as a D1 statement for `D1Database.batch`. */
export function statement(d1: D1Database, query: SQL | { toSQL(): { sql: string; params: unknown[] } }): D1PreparedStatement {
  const { sql: text, params } = "toSQL" in query ? query.toSQL() : dialect.sqlToQuery(query);
  return d1.prepare(text).bind(...params);
}

export type TaskRow = typeof tasks.$inferSelect;


export interface EventDraft {
  type: EventType;
  taskId: string | null;
  data: Record<string, unknown>;
  /** The task's trace context as the planner read it, sparing the batch a read of the task; looked up when absent. */
  traceparent?: string | null;
}

/**
 * Condition under which dependent statements apply: the task was updated to
 * this version, or the session or webhook written at this time, in this batch.
 */
export type VersionGuard = { taskId: string; version: number } | { sessionId: string; updatedAt: string } | { webhookId: string; updatedAt: string } | null;

/** The session, or the webhook, is still as the operation wrote it at `updatedAt`. */
export const sessionWritten = (id: SQL | string, updatedAt: SQL | string) =>
  sql`EXISTS (SELECT 1 FROM sessions WHERE id = ${id} AND updated_at = ${updatedAt})`;
export const webhookWritten = (id: SQL | string, updatedAt: SQL | string) =>
  sql`EXISTS (SELECT 1 FROM webhooks WHERE id = ${id} AND updated_at = ${updatedAt})`;

/** SQL condition true when the guard holds (always true without a guard). */
export function guardHolds(guard: VersionGuard): SQL {
  if (!guard) return sql`1`;
  if ("taskId" in guard) return sql`EXISTS (SELECT 1 FROM tasks WHERE id = ${guard.taskId} AND version = ${guard.version})`;
  if ("sessionId" in guard) return sessionWritten(guard.sessionId, guard.updatedAt);
  return webhookWritten(guard.webhookId, guard.updatedAt);
}

/** Each task field's column (its SQL name and how its values are stored), read once from the schema. */
const TASK_COLUMNS: ReadonlyMap<string, Column> = new Map(Object.entries(getTableColumns(tasks)));

/**
 * The task's update to `set`, guarded by the version read: written as SQL
 * directly, as drizzle's builder costs a tenth of a millisecond per update
 * on the room's hot path. Values are stored as drizzle stores them (each
 * column's own encoding); test/task-update.test.ts holds the two equal.
 */
export function updateTask(d1: D1Database, task: TaskRow, set: Partial<TaskRow>, now: string) {
  const assignments: string[] = [];
  const values: unknown[] = [];
  for (const [field, value] of Object.entries({ ...set, version: task.version + 1, updatedAt: now })) {
    // As drizzle does, a field set to undefined is left as it is.
    if (value === undefined) continue;
    const column = TASK_COLUMNS.get(field);
    if (!column) throw new Error(`tasks has no field ${field}`);
    assignments.push(`"${column.name}" = ?`);
    values.push(value === null ? null : column.mapToDriverValue(value));
  }
  return d1.prepare(`UPDATE tasks SET ${assignments.join(", ")} WHERE id = ? AND version = ?`).bind(...values, task.id, task.version);
}

export const guardAfter = (task: TaskRow): VersionGuard => ({ taskId: task.id, version: task.version + 1 });

/** An operation's events, written with its actor at its time once the batch's other writes are in, if its guard holds then. */
export interface EventAppend {
  actor: string;
  at: string;
  events: EventDraft[];
  guard: VersionGuard;
}

/** An event as committed: what the room appends (EventLog) and publishes. */
export interface CommittedEvent {
  project_id: string;
  seq: number;
  type: EventType;
  task_id: string | null;
  actor: string;
  data: Record<string, unknown>;
  /** The task's W3C trace context, when the event is about a task that has one. */
  traceparent: string | null;
  created_at: string;
}

/** Splits rows so one INSERT stays under D1's 100 bound parameters. */
export function chunkRows<T>(rows: T[], columns: number): T[][] {
  const size = Math.max(1, Math.floor(99 / columns));
  const chunks: T[][] = [];
  for (let i = 0; i < rows.length; i += size) chunks.push(rows.slice(i, i + size));
  return chunks;
}
