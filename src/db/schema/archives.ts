/**
 * What left D1 for R2 (src/archive/): each batch the room archived, where each archived task now lives, and the
 * project's history exports. None references tasks: the rows they speak of are gone from D1 once a batch is done.
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { projects } from "./people";

export const ARCHIVE_KINDS = ["tasks", "permission_log", "deliveries"] as const;
export type ArchiveKind = (typeof ARCHIVE_KINDS)[number];
/**
 * How far a batch got: recorded (its rows named), put (the object written), verified (read back whole), done (D1 rows
 * gone); or dropped (its rows stay in D1; its object and then it are deleted), or failed (it kept failing: set aside
 * with its rows, which are tried again in a new batch a week later).
 */
export const ARCHIVE_STEPS = ["recorded", "put", "verified", "done", "dropped", "failed"] as const;
export type ArchiveStep = (typeof ARCHIVE_STEPS)[number];

export const archiveBatches = sqliteTable(
  "archive_batches",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ARCHIVE_KINDS }).notNull(),
    /** The UTC day its rows finished (tasks) or were written (logs), yyyy-mm-dd. */
    day: text("day").notNull(),
    key: text("key").notNull(),
    /** The ids of the rows it takes (tasks, permission log entries or deliveries), as a JSON list. */
    ids: text("ids", { mode: "json" }).$type<string[]>().notNull(),
    step: text("step", { enum: ARCHIVE_STEPS }).notNull(),
    /** Lines in the object and the sha256 of its bytes, once put. */
    count: integer("count"),
    sha256: text("sha256"),
    /** What the rows were when they were read for the object: the rows are deleted only if they still are. */
    fingerprint: text("fingerprint"),
    /** The seqs of the events the object holds (tasks): a read of the log after a seq opens only batches that reach past it. */
    seqMin: integer("seq_min"),
    seqMax: integer("seq_max"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [index("archive_batches_step").on(t.projectId, t.step), index("archive_batches_seq").on(t.projectId, t.seqMax)],
);

/** Where an archived task lives now. */
export const archivedTasks = sqliteTable("archived_tasks", {
  taskId: text("task_id").primaryKey(),
  projectId: text("project_id")
    .notNull()
    .references(() => projects.id, { onDelete: "cascade" }),
  batchId: text("batch_id").notNull(),
  key: text("key").notNull(),
  day: text("day").notNull(),
  seqMin: integer("seq_min"),
  seqMax: integer("seq_max"),
});

export const EXPORT_STATUSES = ["pending", "ready", "failed"] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

/** A project's whole history as one gzip NDJSON object, kept as a DataRef of the project once ready. */
export const projectExports = sqliteTable(
  "project_exports",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    status: text("status", { enum: EXPORT_STATUSES }).notNull(),
    datarefId: text("dataref_id"),
    size: integer("size"),
    error: text("error"),
    requestedBy: text("requested_by").notNull(),
    createdAt: text("created_at").notNull(),
    completedAt: text("completed_at"),
  },
  (t) => [index("project_exports_project").on(t.projectId, t.createdAt)],
);
