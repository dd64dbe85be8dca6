/** Files between people and a session's machine, as people and daemons see them (API.md "Files between people and agents' machines"). */
import { z } from "zod";
import type { FileTransferRow } from "../room/operations/file-transfers";
import { id, timestamp } from "./fields";

const sha256 = z.string().meta({ description: "Lowercase hex of the bytes" });

export const uploadSchema = z
  .object({
    id,
    session_id: id,
    filename: z.string(),
    size: z.int().min(0),
    sha256,
    status: z
      .enum(["pending", "delivered", "failed"])
      .meta({ description: "`pending` until the session's daemon has fetched the file and said where it wrote it" }),
    path: z.string().optional().meta({ description: "Where the daemon wrote the file on its machine, once `delivered`" }),
    error: z.string().optional().meta({ description: "What the daemon reported, once `failed`" }),
    created_by: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "FileUpload" });

export const downloadSchema = z
  .object({
    id,
    session_id: id,
    path: z.string().meta({ description: "The path asked for, as the daemon resolves it (`~` is its user's home)" }),
    status: z.enum(["pending", "ready", "failed"]).meta({ description: "`pending` until the session's daemon has sent the file or said why not" }),
    filename: z.string().optional().meta({ description: "The file's name, as the daemon sent it, once `ready`" }),
    size: z.int().min(0).optional(),
    sha256: sha256.optional(),
    url: z.string().optional().meta({
      format: "uri",
      description: "A signed URL for the bytes (10 minutes, honours `Range`), once `ready`; only for those who may fetch files from the machine",
    }),
    expires_at: timestamp.optional().meta({ description: "When `url` stops working" }),
    error: z.string().optional().meta({ description: "What went wrong, once `failed`" }),
    created_by: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "FileDownload" });

export const uploadView = (r: FileTransferRow): z.infer<typeof uploadSchema> => ({
  id: r.id,
  session_id: r.sessionId,
  filename: r.filename ?? "",
  size: r.size ?? 0,
  sha256: r.sha256 ?? "",
  status: r.status === "delivered" || r.status === "failed" ? r.status : "pending",
  ...(r.path !== null ? { path: r.path } : {}),
  ...(r.error !== null ? { error: r.error } : {}),
  created_by: r.createdBy,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

export const downloadView = (r: FileTransferRow, link: { url: string; expires_at: string } | null): z.infer<typeof downloadSchema> => ({
  id: r.id,
  session_id: r.sessionId,
  path: r.path ?? "",
  status: r.status === "ready" || r.status === "failed" ? r.status : "pending",
  ...(r.filename !== null ? { filename: r.filename } : {}),
  ...(r.size !== null ? { size: r.size } : {}),
  ...(r.sha256 !== null ? { sha256: r.sha256 } : {}),
  ...(link ?? {}),
  ...(r.error !== null ? { error: r.error } : {}),
  created_by: r.createdBy,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

/** What a daemon's poll for uploads gets (hub.py `pending_uploads_loop`). */
export const pendingUploadSchema = z
  .object({
    upload_id: id,
    filename: z.string(),
    download_url: z.string().meta({ format: "uri", description: "Where the daemon GETs the bytes, with its API key (`X-API-Key`)" }),
    sha256: sha256.meta({ description: "What the bytes hash to: the daemon checks before it keeps them" }),
  })
  .meta({ id: "PendingUpload" });

/** What a daemon's poll for downloads gets (hub.py `pending_pulls_loop`). */
export const pendingDownloadSchema = z.object({ download_id: id, path: z.string() }).meta({ id: "PendingDownload" });
