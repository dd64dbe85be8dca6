/**
 * The lines of archive objects and exports: one record a line, each saying what it is. Rows are as D1 holds them
 * (column names, JSON columns as text), events as the API answers them, and an archived task carries its view as
 * the API answered it when it left D1.
 */
import { getTableColumns, type InferSelectModel } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { z } from "zod";
import type { eventSchema } from "../views/events";
import type { TaskView } from "../views/tasks";

export type EventView = z.infer<typeof eventSchema>;
export type Row = Record<string, unknown>;

export type ArchiveRecord =
  /** `view` is how the API answered the task when it moved to the archive (not given for a live task in an export). */
  | { type: "task"; task_id: string; row: Row; view?: TaskView }
  | { type: "dependency"; task_id: string; row: Row }
  | { type: "note"; task_id: string; row: Row }
  | { type: "intervention"; task_id: string; row: Row }
  | { type: "usage"; task_id: string; row: Row }
  | { type: "code_review"; task_id: string; row: Row }
  | { type: "event"; task_id: string | null; event: EventView }
  | { type: "permission_log"; row: Row }
  | { type: "delivery"; row: Row; attempts: Row[] };

/** The tables that hang off a task by its task_id, archived and deleted with it, and the record type of each. */
export const TASK_CHILDREN = [
  { table: "task_dependencies", type: "dependency", order: "task_id, depends_on_task_id" },
  { table: "task_notes", type: "note", order: "created_at, id" },
  { table: "interventions", type: "intervention", order: "created_at, id" },
  { table: "task_usage", type: "usage", order: "task_id" },
  { table: "code_reviews", type: "code_review", order: "task_id, id" },
] as const;

/** A row as D1 held it, as drizzle would have read it from `table` (its keys, JSON parsed, booleans as booleans). */
export function rowOf<T extends SQLiteTable>(table: T, raw: Row): InferSelectModel<T> {
  const out: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    const value = raw[column.name];
    out[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return out as InferSelectModel<T>;
}
