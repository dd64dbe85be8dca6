/** Large payloads in R2 (DataRefs) and the files sent between people and sessions. */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { projects } from "./people";
import { servers, sessions } from "./servers";

export const DATAREF_STATUSES = ["pending", "uploading", "complete"] as const;

/** Large payloads held in R2 (compute-protocol "Data References"); immutable once complete. */
export const datarefs = sqliteTable(
  "datarefs",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    status: text("status", { enum: DATAREF_STATUSES }).notNull(),
    contentType: text("content_type").notNull(),
    size: integer("size").notNull(),
    /** Declared by the uploader (R2 verifies it) or computed while the bytes streamed in. */
    sha256: text("sha256"),
    filename: text("filename"),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    /** A pending upload not completed by then is cleaned up. */
    uploadExpiresAt: text("upload_expires_at").notNull(),
    completedAt: text("completed_at"),
  },
  (t) => [index("datarefs_project").on(t.projectId, t.status)],
);

export const FILE_TRANSFER_KINDS = ["upload", "download"] as const;
export type FileTransferKind = (typeof FILE_TRANSFER_KINDS)[number];
/** An upload ends `delivered` (the daemon wrote it) or `failed`; a download ends `ready` (its bytes are in) or `failed`. */
export const FILE_TRANSFER_STATUSES = ["pending", "delivered", "ready", "failed"] as const;
export type FileTransferStatus = (typeof FILE_TRANSFER_STATUSES)[number];

/**
 * Files between people and a session's machine (API.md "Files between people and agents' machines"): an upload a
 * person sent for the session's daemon to fetch, or a download a person asked the daemon for. The bytes are a
 * complete DataRef of the project (an upload's from the start, a download's once the daemon sent them). Written only
 * by the project's room, with the transfer's event.
 *
 * Every daemon asks for its pending uploads and downloads every 3 s: `file_transfers_waiting` holds only the pending
 * rows, by server and kind, so an empty answer is one step into a small index.
 */
export const fileTransfers = sqliteTable(
  "file_transfers",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    /** The session's server: the only daemon that sees the transfer. */
    serverId: text("server_id")
      .notNull()
      .references(() => servers.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: FILE_TRANSFER_KINDS }).notNull(),
    status: text("status", { enum: FILE_TRANSFER_STATUSES }).notNull(),
    /** An upload's file name; a download's, once the daemon sent it. */
    filename: text("filename"),
    /** Where an upload landed on the machine; the path a download asked for. */
    path: text("path"),
    datarefId: text("dataref_id").references(() => datarefs.id, { onDelete: "set null" }),
    size: integer("size"),
    sha256: text("sha256"),
    error: text("error"),
    createdBy: text("created_by").notNull(),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("file_transfers_waiting")
      .on(t.serverId, t.kind, t.createdAt)
      .where(sql`status = 'pending'`),
    index("file_transfers_session").on(t.sessionId, t.kind, t.createdAt),
  ],
);
