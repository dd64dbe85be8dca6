/**
 * Files between people and a session's machine: a person's upload (its bytes already a complete DataRef) or request
 * for a file, and the daemon settling either. The room is the only writer of a project's transfers, and runs these
 * alone, so the status it reads is the one it changes; each change commits with its event, which names who, the
 * session and machine, and the file, never its bytes.
 */
import { and, eq } from "drizzle-orm";
import { datarefs, fileTransfers, servers, sessions } from "../../db/schema";
import type { NewFileTransfer, ProblemData } from "../commands";
import { statement, type EventDraft } from "../statements";
import { recordEvents, type OpContext, type Planner } from "./kernel";
import { notAllowed, notFound } from "./refusals";

export type FileTransferRow = typeof fileTransfers.$inferSelect;

const settledAlready = (row: FileTransferRow): ProblemData => ({
  status: 409,
  code: "FILE_TRANSFER_SETTLED",
  detail: `This ${row.kind} is ${row.status} already`,
});

/** The session and machine a transfer is about, as its events name them. */
async function whereTo(ctx: OpContext, sessionId: string) {
  const [row] = await ctx.db
    .select({ sessionName: sessions.name, serverId: servers.id, serverName: servers.name })
    .from(sessions)
    .innerJoin(servers, eq(servers.id, sessions.serverId))
    .where(and(eq(sessions.id, sessionId), eq(sessions.projectId, ctx.projectId)));
  return row;
}

const placeOf = (sessionId: string, where: { sessionName: string; serverId: string; serverName: string }) => ({
  session_id: sessionId,
  session_name: where.sessionName,
  server_id: where.serverId,
  server_name: where.serverName,
});

const idField = (row: Pick<FileTransferRow, "kind" | "id">) => (row.kind === "upload" ? { upload_id: row.id } : { download_id: row.id });

function newRow(ctx: OpContext, t: NewFileTransfer, extra: Partial<FileTransferRow>): FileTransferRow {
  return {
    id: t.id,
    projectId: ctx.projectId,
    sessionId: t.sessionId,
    serverId: t.serverId,
    kind: t.kind,
    status: "pending",
    filename: t.filename,
    path: t.path,
    datarefId: null,
    size: null,
    sha256: null,
    error: null,
    createdBy: ctx.actor.label,
    createdAt: ctx.now,
    updatedAt: ctx.now,
    ...extra,
  };
}

export const uploadFile: Planner<"file_upload"> = async (ctx, cmd) => {
  if (ctx.actor.kind !== "person") return notAllowed("Only people send files to a session's machine");
  const where = await whereTo(ctx, cmd.transfer.sessionId);
  if (!where) return notFound("Session");
  const d = cmd.dataref;
  const row = newRow(ctx, cmd.transfer, { datarefId: d.id, size: d.size, sha256: d.sha256 });
  return {
    taskId: "",
    statements: [statement(ctx.d1, ctx.db.insert(datarefs).values(d)), statement(ctx.d1, ctx.db.insert(fileTransfers).values(row))],
    events: recordEvents(ctx, [
      {
        type: "file_uploaded",
        taskId: null,
        data: { ...idField(row), ...placeOf(row.sessionId, where), filename: row.filename, size: row.size, sha256: row.sha256 },
      },
    ]),
    data: { transfer: row },
  };
};

export const requestFile: Planner<"file_request"> = async (ctx, cmd) => {
  if (ctx.actor.kind !== "person") return notAllowed("Only people ask a session's machine for a file");
  if (!(await whereTo(ctx, cmd.transfer.sessionId))) return notFound("Session");
  const row = newRow(ctx, cmd.transfer, {});
  return { taskId: "", statements: [statement(ctx.d1, ctx.db.insert(fileTransfers).values(row))], data: { transfer: row } };
};

export const settleFile: Planner<"file_settle"> = async (ctx, cmd) => {
  const what = cmd.kind === "upload" ? "Upload" : "Download";
  // Only the daemon of the transfer's own server settles it; to any other caller it does not exist.
  if (ctx.actor.kind !== "agent") return notFound(what);
  const row = await ctx.db.query.fileTransfers.findFirst({
    where: and(eq(fileTransfers.id, cmd.transferId), eq(fileTransfers.projectId, ctx.projectId), eq(fileTransfers.kind, cmd.kind)),
  });
  if (!row || row.serverId !== ctx.actor.serverId) return notFound(what);
  if (row.status !== "pending") return settledAlready(row);
  const where = (await whereTo(ctx, row.sessionId))!;
  const end = cmd.end;
  const next: FileTransferRow = { ...row, updatedAt: ctx.now, status: end.status };
  const statements: D1PreparedStatement[] = [];
  let event: EventDraft;
  const about = { ...idField(row), ...placeOf(row.sessionId, where) };
  if (end.status === "failed") {
    next.error = end.error;
    event = {
      type: "file_failed",
      taskId: null,
      data: { ...about, kind: row.kind, ...(row.kind === "upload" ? { filename: row.filename } : { path: row.path }), error: end.error },
    };
  } else if (end.status === "delivered") {
    if (row.kind !== "upload") return notFound(what);
    next.path = end.path;
    event = { type: "file_delivered", taskId: null, data: { ...about, filename: row.filename, path: end.path } };
  } else {
    if (row.kind !== "download") return notFound(what);
    Object.assign(next, { filename: end.filename, datarefId: end.dataref.id, size: end.dataref.size, sha256: end.dataref.sha256 });
    statements.push(statement(ctx.d1, ctx.db.insert(datarefs).values(end.dataref)));
    event = { type: "file_pulled", taskId: null, data: { ...about, path: row.path, filename: end.filename, size: next.size, sha256: next.sha256 } };
  }
  const update = ctx.db
    .update(fileTransfers)
    .set({
      status: next.status,
      path: next.path,
      filename: next.filename,
      datarefId: next.datarefId,
      size: next.size,
      sha256: next.sha256,
      error: next.error,
      updatedAt: ctx.now,
    })
    .where(and(eq(fileTransfers.id, row.id), eq(fileTransfers.status, "pending")))
    .returning({ id: fileTransfers.id });
  return {
    taskId: "",
    // A pulled file's DataRef before the transfer that points at it; the update must have applied (guardedUpdate).
    statements: [...statements, statement(ctx.d1, update)],
    guardedUpdate: statements.length,
    guardRefusal: settledAlready(row),
    events: recordEvents(ctx, [event]),
    data: { transfer: next },
  };
};
