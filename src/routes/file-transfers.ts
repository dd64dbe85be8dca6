/**
 * Files between people and a session's machine (API.md "Files between people and agents' machines"). A person's
 * upload streams to R2 as a DataRef; the session's daemon finds it in its pending list, fetches it with its API key
 * and acks where it wrote it. A person's download request waits in the daemon's other pending list until the daemon
 * posts the file (kept as a DataRef, fetched by signed URL) or says why not. Every change goes through the project's
 * room, with its event.
 * The daemon's side is daemon-files.ts.
 */
import { and, desc, eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectDataFor } from "../auth/access";
import { currentUser, person, personStreaming } from "../middleware/guards";
import { signBlobUrl } from "../auth/signed-url";
import { fileTransfers, type FileTransferKind } from "../db/schema";
import { emptyLists } from "../files/file-polls";
import { plainFilenameError } from "../domain/file-names";
import { hubBaseUrl } from "../http/base-url";
import { readJson } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { isUuid } from "../http/fields";
import { conflict, fieldError, forbidden, notFound, Problem } from "../http/problem";
import { documented } from "../openapi/operation";
import type { NewFileTransfer } from "../room/commands";
import { roomActor, runInRoom } from "../room/client";
import type { FileTransferRow } from "../room/operations/file-transfers";
import { pathInFolder, pathUnderRoot } from "../server-link/session-files";
import { terminalAccess } from "../server-link/terminal-access";
import { discardFile, storeFile } from "../files/stored-files";
import { downloadSchema, downloadView, uploadSchema, uploadView } from "../views/file-transfers";
import { daemonFileRoutes } from "./daemon-files";
import { sessionIn } from "./project-sessions";

/** The largest file a person sends to a machine. */
export const MAX_UPLOAD_BYTES = 100 * 1024 ** 2;
/** Transfers a session's lists show. */
const LIST_PAGE = 50;

const people = new Hono<HubEnv>();
export const fileTransferRoutes = { people, agents: daemonFileRoutes };

/**
 * The session of the project, for someone who may move files to and from its machine: like typing in its terminal,
 * an admin, or a member of every project its server serves (the daemon runs with the server's key, and reads and
 * writes as its user).
 */
export async function sessionForFiles(c: HubContext, what = "move them") {
  const project = await projectDataFor(c, c.req.param("id")!, "write");
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
  const project = await projectDataFor(c, c.req.param("id")!);
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
    const project = await projectDataFor(c, c.req.param("id"));
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
    .meta({
      description: "A file of the session's working directory, relative to it (a `..` may not climb out of it). Admins may also name an absolute path or `~/…`",
    }),
});

/**
 * Where the daemon is asked to read: hub.py takes the path as given (`~` expanded, relative to its own folder), so for
 * all but admins it is confined to the session's working directory as the session's files are (pathUnderRoot), and
 * sent as an absolute path there. A symlink inside the folder is followed by the daemon.
 */
function pullPath(c: HubContext, asked: string, workingDirectory: string | null): string {
  if (currentUser(c).role === "admin") return asked;
  if (/^(~|[/\\]|[A-Za-z]:)/.test(asked))
    throw fieldError("path", "must be relative to the session's working directory: only an admin may name an absolute path or one under ~");
  const rel = pathUnderRoot(asked);
  if (rel === null) throw fieldError("path", "must stay inside the session's working directory: a `..` leads out of it");
  if (rel === "") throw fieldError("path", "must name a file inside the session's working directory, not the folder itself");
  if (!workingDirectory) throw conflict("The hub does not know the session's working directory: only an admin may fetch a file of it", "NO_WORKING_DIRECTORY");
  return pathInFolder(workingDirectory, rel);
}

people.post(
  "/:id/sessions/:sid/downloads",
  documented({
    id: "requestFileFromSession",
    tag: "Files",
    summary: "Fetch a file from a session's machine",
    description:
      "Ask the session's daemon for a file.\n\n" +
      "`path` is relative to the session's working directory and sent to the daemon as an absolute path inside it; a `..` that climbs " +
      "out of it, an absolute path or `~/…` is 422 naming `path` (admins may name any path, as the daemon reads it: absolute, `~/…`, or " +
      "relative to the daemon's own folder). 409 `NO_WORKING_DIRECTORY` when the hub does not know the session's folder.\n\n" +
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
    const path = pullPath(c, (await readJson(c, downloadBody)).path, session.workingDirectory);
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
    const project = await projectDataFor(c, c.req.param("id"));
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
