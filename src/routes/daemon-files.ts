/**
 * The daemon's side of files between people and a session's machine (file-transfers.ts), as hub.py speaks it: it
 * polls both pending lists every 3 s (`pending_uploads_loop`, `pending_pulls_loop`), fetches and acks uploads, and
 * posts the files asked of it or says why not.
 *
 * Each pending list is one read of the index of pending transfers (`file_transfers_waiting`), after the API key
 * (which an isolate remembers for reads).
 */
import { and, eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { agent, currentServer } from "../middleware/guards";
import { blobKey } from "../datarefs/blobs";
import { FILE_TRANSFER_STATUSES, fileTransfers, type FileTransferKind } from "../db/schema";
import { plainFilenameError } from "../domain/file-names";
import { cutText } from "../domain/text";
import { emptyLists } from "../files/file-polls";
import { hubBaseUrl } from "../http/base-url";
import { readJson } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { isUuid, text } from "../http/fields";
import { fieldError, notFound, Problem } from "../http/problem";
import { documented } from "../openapi/operation";
import type { FileTransferEnd } from "../room/commands";
import { roomActor, runInRoom } from "../room/client";
import type { FileTransferRow } from "../room/operations/file-transfers";
import { discardFile, storeFile } from "../files/stored-files";
import { id } from "../views/fields";
import { pendingDownloadSchema, pendingUploadSchema } from "../views/file-transfers";

/** The largest file a daemon sends back (hub.py refuses larger ones itself, `_PULL_MAX_SIZE`). */
export const MAX_PULL_BYTES = 10 * 1024 ** 2;
/** Transfers a daemon gets per poll (it handles them one by one, then polls again). */
const PENDING_PAGE = 20;
/** What is kept of a daemon's error. */
const MAX_ERROR_CHARS = 2000;

export const daemonFileRoutes = new Hono<HubEnv>();

/**
 * The server's pending transfers of one kind, oldest first, and whether it has any of the other kind: one statement,
 * two steps into the index of pending transfers. What it found empty, this isolate answers for a while (files/file-polls.ts).
 */
async function pending(c: HubContext, kind: FileTransferKind) {
  const server = currentServer(c).id;
  const other: FileTransferKind = kind === "upload" ? "download" : "upload";
  const readAt = emptyLists.now();
  const { results } = await c.env.DB.prepare(
    `SELECT * FROM (SELECT id, kind, filename, path, sha256 FROM file_transfers WHERE server_id = ?1 AND kind = ?2 AND status = 'pending' ORDER BY created_at LIMIT ${PENDING_PAGE})
     UNION ALL
     SELECT * FROM (SELECT id, kind, filename, path, sha256 FROM file_transfers WHERE server_id = ?1 AND kind = ?3 AND status = 'pending' LIMIT 1)`,
  )
    .bind(server, kind, other)
    .all<{ id: string; kind: FileTransferKind; filename: string | null; path: string | null; sha256: string | null }>();
  const asked = results.filter((r) => r.kind === kind);
  emptyLists.record(server, readAt, { [kind]: asked.length === 0, [other]: asked.length === results.length } as Record<FileTransferKind, boolean>);
  return asked;
}

/** The server's own transfer of this kind (its project picks the room that settles it); 404 for any other. */
async function ownTransfer(c: HubContext, kind: FileTransferKind, id: string) {
  const row = isUuid(id)
    ? await c.var.db.query.fileTransfers.findFirst({
        where: and(eq(fileTransfers.id, id), eq(fileTransfers.serverId, currentServer(c).id), eq(fileTransfers.kind, kind)),
      })
    : undefined;
  if (!row) throw notFound(kind === "upload" ? "Upload" : "Download");
  return row;
}

/** Has the transfer's room settle it as the daemon said, and answers its new status. */
async function settle(c: HubContext, row: FileTransferRow, end: FileTransferEnd) {
  const { data } = await runInRoom(c, row.projectId, { op: "file_settle", transferId: row.id, kind: row.kind, end });
  const done = data!.transfer as FileTransferRow;
  return c.json({ id: done.id, status: done.status });
}

/** A failure as the daemon reported it, kept to MAX_ERROR_CHARS. */
const failure = (error: string | undefined): FileTransferEnd => ({
  status: "failed",
  error: cutText(error || "The daemon reported a failure", MAX_ERROR_CHARS),
});

const settledSchema = z.object({ id, status: z.enum(FILE_TRANSFER_STATUSES) }).meta({ id: "FileTransferSettled" });

daemonFileRoutes.get(
  "/files/pending",
  documented({
    id: "pendingUploads",
    tag: "Files",
    summary: "Files waiting for this server",
    description:
      `Uploads for this server's sessions that its daemon has not acked, oldest first (at most ${PENDING_PAGE}): hub.py polls this every 3 s, ` +
      "GETs each `download_url` with its `X-API-Key`, checks the sha256 and acks. An empty list costs at most one indexed read; " +
      "a list an isolate found empty in the last 10 s is answered from memory, so a new upload may take that long to be listed.",
    caller: "agent",
    responses: { 200: z.array(pendingUploadSchema) },
  }),
  agent,
  async (c) => {
    const rows = await pending(c, "upload");
    const base = hubBaseUrl(c);
    return c.json(
      rows.map((r) => ({ upload_id: r.id, filename: r.filename ?? "", download_url: `${base}/api/v1/server/files/${r.id}/content`, sha256: r.sha256 ?? "" })),
    );
  },
);

daemonFileRoutes.get(
  "/files/:uploadId/content",
  documented({
    id: "fetchUpload",
    tag: "Files",
    summary: "Fetch an uploaded file",
    description:
      "The bytes of an upload for one of this server's sessions (the `download_url` of its pending list), with the server's API key. 404 for any other.",
    caller: "agent",
    responses: {
      200: {
        description: "The file's bytes",
        contentType: "application/octet-stream",
        headers: { "Content-Length": "The file's size", ETag: "The bytes' sha256, quoted" },
      },
    },
  }),
  agent,
  async (c) => {
    const row = await ownTransfer(c, "upload", c.req.param("uploadId"));
    const object = row.datarefId ? await c.env.BLOBS.get(blobKey(row.projectId, row.datarefId)) : null;
    if (!object) throw notFound("Upload bytes");
    return new Response(object.body, {
      headers: {
        "Content-Type": "application/octet-stream",
        "Content-Length": String(object.size),
        ETag: `"${row.sha256}"`,
        "X-Content-Type-Options": "nosniff",
      },
    });
  },
);

const ackBody = z
  .object({
    success: z.boolean(),
    path: text(4096).optional().meta({ description: "Where the daemon wrote the file (with `success: true`)" }),
    error: z
      .string()
      .optional()
      .meta({ description: `Why it could not (with \`success: false\`); kept to ${MAX_ERROR_CHARS} characters` }),
  })
  .superRefine((b, ctx) => {
    if (b.success && !b.path) ctx.addIssue({ code: "custom", path: ["path"], message: "is required when success is true" });
  });

daemonFileRoutes.post(
  "/files/:uploadId/ack",
  documented({
    id: "ackUpload",
    tag: "Files",
    summary: "Say what became of an uploaded file",
    description:
      "`{success: true, path}`: the upload is `delivered` at `path`; `{success: false, error}`: `failed`. Once only: 409 " +
      "`FILE_TRANSFER_SETTLED` after that. 404 for an upload not for this server.",
    caller: "agent",
    body: ackBody,
    responses: { 200: settledSchema },
  }),
  agent,
  async (c) => {
    const row = await ownTransfer(c, "upload", c.req.param("uploadId"));
    const body = await readJson(c, ackBody);
    return settle(c, row, body.success ? { status: "delivered", path: body.path! } : failure(body.error));
  },
);

daemonFileRoutes.get(
  "/files/pulls/pending",
  documented({
    id: "pendingDownloads",
    tag: "Files",
    summary: "Files people asked this server for",
    description:
      `Download requests for this server's sessions not yet answered, oldest first (at most ${PENDING_PAGE}): hub.py polls this every 3 s and posts ` +
      "each file to `.../upload` or says why not at `.../fail`. An empty list costs at most one indexed read; " +
      "a list an isolate found empty in the last 10 s is answered from memory, so a new request may take that long to be listed.",
    caller: "agent",
    responses: { 200: z.array(pendingDownloadSchema) },
  }),
  agent,
  async (c) => c.json((await pending(c, "download")).map((r) => ({ download_id: r.id, path: r.path ?? "" }))),
);

daemonFileRoutes.post(
  "/files/pulls/:downloadId/upload",
  documented({
    id: "sendDownload",
    tag: "Files",
    summary: "Send a file people asked for",
    description:
      `A \`multipart/form-data\` body with the file as \`file\` (at most ${MAX_PULL_BYTES} bytes, 10 MiB; 413 \`PAYLOAD_TOO_LARGE\` otherwise, ` +
      "and the daemon then reports the failure). The download is then `ready`. Once only (409 `FILE_TRANSFER_SETTLED`); 404 for a download not for this server.",
    caller: "agent",
    headers: { "Content-Type": "`multipart/form-data; boundary=…`" },
    responses: { 200: settledSchema },
  }),
  agent,
  async (c) => {
    const row = await ownTransfer(c, "download", c.req.param("downloadId"));
    let file: unknown;
    try {
      file = (await c.req.formData()).get("file");
    } catch {
      throw fieldError("file", "is required: send the file as multipart/form-data field `file`");
    }
    if (!(file instanceof File)) throw fieldError("file", "is required: send the file as multipart/form-data field `file`");
    if (file.size > MAX_PULL_BYTES)
      throw new Problem(413, "PAYLOAD_TOO_LARGE", `The file is ${file.size} bytes; at most ${MAX_PULL_BYTES} (10 MiB) come back from a machine`);
    const filename = plainFilenameError(file.name) === null ? file.name : "file";
    const dataref = await storeFile(c.env, row.projectId, file.stream(), file.size, { filename, createdBy: roomActor(c).label });
    try {
      return await settle(c, row, { status: "ready", filename, dataref });
    } catch (e) {
      await discardFile(c.env, dataref);
      throw e;
    }
  },
);

const failBody = z.object({ error: z.string().meta({ description: `What went wrong on the machine; kept to ${MAX_ERROR_CHARS} characters` }) });

daemonFileRoutes.post(
  "/files/pulls/:downloadId/fail",
  documented({
    id: "failDownload",
    tag: "Files",
    summary: "Say why a file people asked for cannot be sent",
    description: "The download is `failed` with `error`. Once only (409 `FILE_TRANSFER_SETTLED`); 404 for a download not for this server.",
    caller: "agent",
    body: failBody,
    responses: { 200: settledSchema },
  }),
  agent,
  async (c) => {
    const row = await ownTransfer(c, "download", c.req.param("downloadId"));
    const { error } = await readJson(c, failBody);
    return settle(c, row, failure(error));
  },
);
