/**
 * Files between people and a session's machine (API.md "Files between people and agents' machines"). A person's
 * upload streams to R2 as a DataRef; the session's daemon finds it in its pending list, fetches it with its API key
 * and acks where it wrote it. A person's download request waits in the daemon's other pending list until the daemon
 * posts the file (kept as a DataRef, fetched by signed URL) or says why not. Every change goes through the project's
 * room, with its event.
 *
 * Both pending lists are polled by every daemon every 3 s: each is one read of the index of pending transfers
 * (`file_transfers_waiting`), after the API key (which an isolate remembers for reads).
 */
import { and, desc, eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectFor } from "../auth/access";
import { agent, currentServer, currentUser, person, personStreaming } from "../auth/middleware";
import { signBlobUrl } from "../auth/signed-url";
import { blobKey } from "../blobs";
import { FILE_TRANSFER_STATUSES, fileTransfers, type FileTransferKind } from "../db/schema";
import { cutText } from "../domain/text";
import { emptyLists } from "../file-polls";
import { plainFilenameError } from "../domain/file-names";
import { hubBaseUrl } from "../http/base-url";
import { readJson } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { isUuid, text } from "../http/fields";
import { fieldError, forbidden, notFound, Problem } from "../http/problem";
import { documented } from "../openapi/operation";
import type { FileTransferEnd, NewFileTransfer } from "../room/commands";
import { roomActor, runInRoom } from "../room/client";
import type { FileTransferRow } from "../room/operations/file-transfers";
import { terminalAccess } from "../server-link/terminal-access";
import { discardFile, storeFile } from "../stored-files";
import { id } from "../views/fields";
import { downloadSchema, downloadView, pendingDownloadSchema, pendingUploadSchema, uploadSchema, uploadView } from "../views/file-transfers";
import { sessionIn } from "./project-sessions";

/** The largest file a person sends to a machine. */
export const MAX_UPLOAD_BYTES = 100 * 1024 ** 2;
/** The largest file a daemon sends back (hub.py refuses larger ones itself, `_PULL_MAX_SIZE`). */
export const MAX_PULL_BYTES = 10 * 1024 ** 2;
/** Transfers a daemon gets per poll (it handles them one by one, then polls again). */
const PENDING_PAGE = 20;
/** Transfers a session's lists show. */
const LIST_PAGE = 50;
/** What is kept of a daemon's error. */
const MAX_ERROR_CHARS = 2000;

export const fileTransferRoutes = { people: new Hono<HubEnv>(), agents: new Hono<HubEnv>() };
const people = fileTransferRoutes.people;
const agents = fileTransferRoutes.agents;

/**
 * The session of the project, for someone who may move files to and from its machine: like typing in its terminal,
 * an admin, or a member of every project its server serves (the daemon runs with the server's key, and reads and
 * writes as its user).
 */
export async function sessionForFiles(c: HubContext, what = "move them") {
  const project = await projectFor(c, c.req.param("id")!, "write");
  const { session, serverName } = await sessionIn(c, project.id, c.req.param("sid")!);
  if (!(await terminalAccess(c.env.DB, currentUser(c).id, session.serverId, project.id)).write) {
    throw forbidden(
      `Files reach the machine as its daemon's user, who works for every project its server serves: an admin, or a member of all of them, can ${what}`,
      "NOT_ALLOWED",
    );
  }
  return { project, session, serverName };
}

const newTransfer = (
  session: { id: string; serverId: string },
  kind: FileTransferKind,
  fields: Pick<NewFileTransfer, "filename" | "path">,
): NewFileTransfer => ({
  id: crypto.randomUUID(),
  sessionId: session.id,
  serverId: session.serverId,
  kind,
  ...fields,
});

/** The session's transfers of one kind, newest first. */
const transfersOf = (c: HubContext, sessionId: string, kind: FileTransferKind) =>
  c.var.db.query.fileTransfers.findMany({
    where: and(eq(fileTransfers.sessionId, sessionId), eq(fileTransfers.kind, kind)),
    orderBy: desc(fileTransfers.createdAt),
    limit: LIST_PAGE,
  });

async function transferOf(c: HubContext, kind: FileTransferKind, idParam: string) {
  const project = await projectFor(c, c.req.param("id")!);
  const id = c.req.param(idParam)!;
  const row = isUuid(id)
    ? await c.var.db.query.fileTransfers.findFirst({
        where: and(
          eq(fileTransfers.id, id),
          eq(fileTransfers.projectId, project.id),
          eq(fileTransfers.sessionId, c.req.param("sid")!),
          eq(fileTransfers.kind, kind),
        ),
      })
    : undefined;
  if (!row) throw notFound(kind === "upload" ? "Upload" : "Download");
  return { project, row };
}

/** A download as its caller sees it: with a signed URL for its bytes when ready, for those who may fetch files from its machine. */
async function downloadFor(c: HubContext, row: FileTransferRow, mayFetch: boolean | undefined) {
  const fetchable = row.status === "ready" && row.datarefId !== null && row.size !== null;
  const allowed = fetchable && (mayFetch ?? (await terminalAccess(c.env.DB, currentUser(c).id, row.serverId, row.projectId)).write);
  const link = allowed ? await signBlobUrl(c.env, hubBaseUrl(c), { datarefId: row.datarefId!, method: "GET", size: row.size! }) : null;
  return downloadView(row, link);
}

const uploadQuery = z.object({
  filename: z.string().optional().meta({ description: "The file's name, when `X-Filename` is not sent (URL-encoded: any Unicode)" }),
});

people.post(
  "/:id/sessions/:sid/uploads",
  documented({
    id: "uploadFileToSession",
    tag: "Files",
    summary: "Send a file to a session's machine",
    description:
      "Upload a file for the session's daemon to fetch into its uploads folder (`/tmp/orchestratia-uploads` on Linux).\n\n" +
      [
        "The request body is the file's raw bytes, streamed to storage and hashed on the way; `Content-Length` is required (411 " +
          `\`LENGTH_REQUIRED\` without it) and at most ${MAX_UPLOAD_BYTES} bytes (100 MiB; 413 \`PAYLOAD_TOO_LARGE\` before anything is stored).`,
        "The name comes from `X-Filename` or `?filename=`: a plain name (no `/`, `\\` or `:`, no `..`, no control characters, at most 255 bytes " +
          "of UTF-8); anything else is 422 naming `filename`.",
        "The answer is `pending` until the daemon acks: then `delivered` with the `path` it wrote, or `failed` with its `error` (the event " +
          "`file_uploaded` now, `file_delivered` or `file_failed` then).",
        "Admins, and members of every project the session's server serves (as for typing in its terminal; 403 `NOT_ALLOWED` otherwise). " +
          "No `Idempotency-Key` replay here.",
      ].join("\n\n"),
    caller: "person",
    query: uploadQuery,
    headers: { "X-Filename": "The file's name (ASCII; use `?filename=` for others)", "Content-Length": "The file's size in bytes (required)" },
    responses: { 201: uploadSchema },
  }),
  personStreaming("member"),
  async (c) => {
    const { project, session } = await sessionForFiles(c);
    const filename = c.req.header("X-Filename") ?? c.req.query("filename");
    if (filename === undefined) throw fieldError("filename", "is required: send `X-Filename` or `?filename=`");
    const refused = plainFilenameError(filename);
    if (refused) throw fieldError("filename", refused);
    const length = c.req.header("Content-Length");
    if (length === undefined || !/^\d+$/.test(length)) throw new Problem(411, "LENGTH_REQUIRED", "Send the file's size as Content-Length");
    const size = Number(length);
    if (size > MAX_UPLOAD_BYTES)
      throw new Problem(413, "PAYLOAD_TOO_LARGE", `The file is ${size} bytes; at most ${MAX_UPLOAD_BYTES} (100 MiB) go to a machine`);
    const body = c.req.raw.body ?? new Blob([]).stream();
    const dataref = await storeFile(c.env, project.id, body, size, { filename, createdBy: roomActor(c).label }).catch(() => {
      throw new Problem(400, "BODY_UNREADABLE", `The body was not the ${size} bytes Content-Length said`);
    });
    const transfer = newTransfer(session, "upload", { filename, path: null });
    try {
      const { data } = await runInRoom(c, project.id, { op: "file_upload", transfer, dataref });
      emptyLists.forget(session.serverId);
      return c.json(uploadView(data!.transfer as FileTransferRow), 201);
    } catch (e) {
      await discardFile(c.env, dataref);
      throw e;
    }
  },
);

people.get(
  "/:id/sessions/:sid/uploads",
  documented({
    id: "listSessionUploads",
    tag: "Files",
    summary: "Files sent to a session's machine",
    description: `The session's uploads, newest first (at most ${LIST_PAGE}). Anyone who may see the project.`,
    caller: "person",
    responses: { 200: z.object({ uploads: z.array(uploadSchema) }) },
  }),
  person(),
  async (c) => {
    const project = await projectFor(c, c.req.param("id"));
    await sessionIn(c, project.id, c.req.param("sid"));
    return c.json({ uploads: (await transfersOf(c, c.req.param("sid"), "upload")).map(uploadView) });
  },
);

people.get(
  "/:id/sessions/:sid/uploads/:uid",
  documented({ id: "getSessionUpload", tag: "Files", summary: "A file sent to a session's machine", caller: "person", responses: { 200: uploadSchema } }),
  person(),
  async (c) => c.json(uploadView((await transferOf(c, "upload", "uid")).row)),
);

const downloadBody = z.object({
  path: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(4096, "must be at most 4096 characters")
    .refine((p) => !/[\u0000-\u001f\u007f]/.test(p), "must not contain control characters")
    .meta({ description: "A file on the session's machine: absolute, relative to the daemon's working directory, or `~/…`" }),
});

people.post(
  "/:id/sessions/:sid/downloads",
  documented({
    id: "requestFileFromSession",
    tag: "Files",
    summary: "Fetch a file from a session's machine",
    description:
      "Ask the session's daemon for a file.\n\n" +
      "The daemon picks the request up within seconds and sends the file (at most 10 MiB; it refuses larger ones) or says why not: " +
      "`GET .../downloads/{id}` is then `ready` with a signed `url`, or `failed` with the `error` (events `file_pulled`, `file_failed`). " +
      "Admins, and members of every project the session's server serves (403 `NOT_ALLOWED` otherwise): the daemon reads as its user.",
    caller: "person",
    body: downloadBody,
    responses: { 201: downloadSchema },
  }),
  person("member"),
  async (c) => {
    const { project, session } = await sessionForFiles(c);
    const { path } = await readJson(c, downloadBody);
    const { data } = await runInRoom(c, project.id, { op: "file_request", transfer: newTransfer(session, "download", { filename: null, path }) });
    emptyLists.forget(session.serverId);
    return c.json(downloadView(data!.transfer as FileTransferRow, null), 201);
  },
);

people.get(
  "/:id/sessions/:sid/downloads",
  documented({
    id: "listSessionDownloads",
    tag: "Files",
    summary: "Files fetched from a session's machine",
    description: `The session's downloads, newest first (at most ${LIST_PAGE}); a \`ready\` one's \`url\` only for those who may fetch files from the machine.`,
    caller: "person",
    responses: { 200: z.object({ downloads: z.array(downloadSchema) }) },
  }),
  person(),
  async (c) => {
    const project = await projectFor(c, c.req.param("id"));
    const { session } = await sessionIn(c, project.id, c.req.param("sid"));
    const rows = await transfersOf(c, session.id, "download");
    const mayFetch = rows.some((r) => r.status === "ready") && (await terminalAccess(c.env.DB, currentUser(c).id, session.serverId, project.id)).write;
    return c.json({ downloads: await Promise.all(rows.map((r) => downloadFor(c, r, mayFetch))) });
  },
);

people.get(
  "/:id/sessions/:sid/downloads/:did",
  documented({
    id: "getSessionDownload",
    tag: "Files",
    summary: "A file fetched from a session's machine",
    description:
      "Its status; once `ready`, its `size`, `sha256` and a signed `url` for the bytes (10 minutes; ask again for a fresh one), for admins " +
      "and members of every project the server serves. Others who may see the project see the rest.",
    caller: "person",
    responses: { 200: downloadSchema },
  }),
  person(),
  async (c) => c.json(await downloadFor(c, (await transferOf(c, "download", "did")).row, undefined)),
);

// The daemon's side, as hub.py speaks it.

/**
 * The server's pending transfers of one kind, oldest first, and whether it has any of the other kind: one statement,
 * two steps into the index of pending transfers. What it found empty, this isolate answers for a while (file-polls.ts).
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

agents.get(
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

agents.get(
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

agents.post(
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

agents.get(
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

agents.post(
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

agents.post(
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
