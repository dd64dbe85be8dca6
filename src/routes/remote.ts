/**
 * Agents working in each other's sessions (API.md "Remote exec and
 * agent-to-agent file transfer"): a shell command run by another session's
 * daemon (`orchestratia remote exec|read`), and a file sent to another
 * session's machine (`orchestratia file send`). Both stay inside one project,
 * need its `remote_exec` setting, and are events in its log. Every refusal
 * is made here, before anything reaches a daemon.
 */
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectFor } from "../auth/access";
import { agent, currentServer } from "../middleware/guards";
import { servers, sessions } from "../db/schema";
import { projectSettingsOf } from "../domain/project-settings";
import { fromDirectory } from "../domain/shell-words";
import { readJson, readQuery } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { label, text, uuid } from "../http/fields";
import { conflict, forbidden, notFound, Problem } from "../http/problem";
import { documented } from "../openapi/operation";
import { runInRoom } from "../room/client";
import { linkStub } from "../server-link/client";
import { CHUNK_BYTES, RELAY_WINDOW_BYTES, TRANSFER_IDLE_MS, TRANSFER_STATUSES } from "../server-link/file-transfers";
import { MAX_EXEC_OUTPUT_BYTES, MAX_EXEC_TIMEOUT_S } from "../server-link/remote-exec";
import { id } from "../views/fields";
import { assignTarget } from "./task-assignment";

export const remoteRoutes = new Hono<HubEnv>();

/** Commands are recorded in the project's log up to this many characters. */
const RECORDED_COMMAND_CHARS = 4096;

const sessionName = label().meta({ description: "An open session of the project, by name" });
const serverName = label()
  .optional()
  .meta({ description: "The session's server, when the name is open on several servers (otherwise 409 `AMBIGUOUS_SESSION`)" });

const execQuery = z.object({ project_id: uuid });
const execBody = z.object({
  session_name: sessionName,
  server_name: serverName,
  command: text(100_000).min(1, "must not be empty"),
  timeout: z
    .int("must be a whole number of seconds")
    .min(1, "must be at least 1 second")
    .max(MAX_EXEC_TIMEOUT_S, `must be at most ${MAX_EXEC_TIMEOUT_S} seconds`)
    .default(30)
    .meta({ description: "Seconds to wait for the answer (the CLI's `--timeout`, 30 by default)" }),
});
const execResult = z
  .object({
    exit_code: z.int().meta({ description: "The command's exit code; -1 when the daemon could not run it or stopped it after 120 s" }),
    stdout: z.string(),
    stderr: z.string(),
  })
  .meta({ id: "RemoteExecResult" });

/** A plain file name: the receiving daemon writes it under its transfers folder as given. */
const fileName = z
  .string()
  .min(1, "must not be empty")
  .refine((n) => new TextEncoder().encode(n).byteLength <= 255, "must be at most 255 bytes")
  .refine((n) => !/[/\\]/.test(n), "must be a plain file name, without / or \\")
  .refine((n) => n !== "." && n !== "..", "must not be . or ..")
  // eslint-disable-next-line no-control-regex
  .refine((n) => !/[\u0000-\u001f\u007f]/.test(n), "must not hold control characters");

const transferBody = z.object({
  target_session: sessionName,
  server_name: serverName,
  project_id: uuid,
  filename: fileName,
  file_path: text(4096).min(1, "must not be empty").meta({ description: "Where the file is on the sending machine: its daemon reads it from there" }),
  file_size: z.int("must be a whole number of bytes").min(0, "must not be negative").max(Number.MAX_SAFE_INTEGER),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hexadecimal digits"),
});
const transferSchema = z
  .object({
    transfer_id: id,
    status: z.enum(TRANSFER_STATUSES),
    filename: z.string(),
    file_size: z.int(),
    chunks_relayed: z.int(),
    total_chunks: z.int(),
    error: z.string().nullable().meta({ description: "Why it failed or was rejected" }),
  })
  .meta({ id: "FileTransfer" });

/** The project, checked for the caller and its setting, and the open session the request names in it. */
async function remoteTarget(c: HubContext, projectId: string, session: string, server: string | undefined) {
  const project = await projectFor(c, projectId, "write");
  if (!projectSettingsOf(project.settings).remote_exec) {
    throw forbidden(
      "Remote commands and file transfers are off in this project: an admin turns them on (settings.remote_exec, the project's Settings page)",
      "REMOTE_EXEC_DISABLED",
    );
  }
  const target = await assignTarget(c, projectId, { session_name: session, server_name: server });
  return { projectId, serverId: target.serverId, serverName: target.serverName, sessionId: target.sessionId!, sessionName: target.sessionName! };
}

/**
 * The folder a command runs from: the session's working directory. The daemon runs commands from its own folder, so
 * the command goes there first; on a Windows server (cmd.exe, not a POSIX shell), or for a session whose folder the
 * hub does not know, it runs as given.
 */
async function commandFolder(c: HubContext, sessionId: string): Promise<string | null> {
  const row = await c.var.db
    .select({ dir: sessions.workingDirectory, os: servers.os })
    .from(sessions)
    .innerJoin(servers, eq(servers.id, sessions.serverId))
    .where(eq(sessions.id, sessionId))
    .get();
  return row?.dir && !/^win/i.test(row.os ?? "") ? row.dir : null;
}

const offline = (serverName: string) => conflict(`The daemon of server "${serverName}" is not connected: the session cannot be reached now`, "DAEMON_OFFLINE");

remoteRoutes.post(
  "/exec",
  documented({
    id: "remoteExec",
    tag: "Remote work",
    summary: "Run a command in another session of the project",
    description:
      "`orchestratia remote exec <session> <command>` (and `remote read <session> <path>`, which runs `cat <path>`). The command runs in a shell " +
      "on the session's machine, by its daemon (`remote_exec {request_id, command}`, answered by `remote_exec_result`), from the session's " +
      "working directory: the daemon is sent `cd -- '<directory>' || exit 1` (single-quoted) on a line before it, so nothing runs when the " +
      "folder is gone (exit code 1). On a Windows server, or for a session whose folder the hub does not know, it runs from the daemon's own " +
      "folder. Needs the project's " +
      "`remote_exec` setting (403 `REMOTE_EXEC_DISABLED`) and an open session of the project by that name (404; 409 `AMBIGUOUS_SESSION` when " +
      "the name is open on several servers). 409 `DAEMON_OFFLINE` when its daemon is not connected or leaves before answering; 504 " +
      `\`DAEMON_TIMEOUT\` when it does not answer within \`timeout\` seconds (at most ${MAX_EXEC_TIMEOUT_S}). Output beyond ` +
      `${MAX_EXEC_OUTPUT_BYTES / 1024 / 1024} MiB (stdout and stderr together) is cut, and the cut stream ends with a line saying so. ` +
      "Each command that reaches a daemon is the event `remote_exec` (the caller, the session, the command as given, the `working_directory` " +
      "it ran from, the exit code; never the output).",
    caller: "agent",
    query: execQuery,
    body: execBody,
    bodyRequired: true,
    responses: { 200: execResult },
  }),
  agent,
  async (c) => {
    const { project_id } = readQuery(c, execQuery);
    const body = await readJson(c, execBody);
    const target = await remoteTarget(c, project_id, body.session_name, body.server_name);
    const folder = await commandFolder(c, target.sessionId);
    const outcome = await linkStub(c.env, target.serverId).remoteExec({
      requestId: crypto.randomUUID(),
      command: folder ? fromDirectory(folder, body.command) : body.command,
      sessionId: target.sessionId,
      timeoutMs: body.timeout * 1000,
    });
    if (outcome.kind === "offline") throw offline(target.serverName);
    await runInRoom(c, project_id, {
      op: "remote_use",
      event: "remote_exec",
      data: {
        session_id: target.sessionId,
        session_name: target.sessionName,
        server_name: target.serverName,
        command: body.command.slice(0, RECORDED_COMMAND_CHARS),
        ...(folder ? { working_directory: folder } : {}),
        exit_code: outcome.kind === "answered" ? outcome.exit_code : null,
        ...(outcome.kind === "answered" ? {} : { outcome: outcome.kind === "timed_out" ? "timed out" : "the daemon disconnected" }),
      },
    });
    if (outcome.kind === "gone")
      throw conflict(`The daemon of server "${target.serverName}" disconnected before answering; the command may have run`, "DAEMON_OFFLINE");
    if (outcome.kind === "timed_out")
      throw new Problem(504, "DAEMON_TIMEOUT", `The daemon of server "${target.serverName}" did not answer within ${body.timeout} s`);
    return c.json({ exit_code: outcome.exit_code, stdout: outcome.stdout, stderr: outcome.stderr });
  },
);

remoteRoutes.post(
  "/file-transfer",
  documented({
    id: "startFileTransfer",
    tag: "Remote work",
    summary: "Send a file to another session of the project",
    description:
      "`orchestratia file send <path> --to <session>`. The caller's daemon reads the file at `file_path` and sends it in chunks over its socket; " +
      "the hub relays the offer, the acceptance, the chunks, the completion and the receiver's acknowledgement between the two daemons in order " +
      `(\`file_offer\`, \`file_accept\`, \`file_send_start\`, \`file_chunk\`, \`file_complete\`, \`file_ack\`, \`file_error\`), keeping no chunk: at most ` +
      `${Math.round(RELAY_WINDOW_BYTES / 1e6)} MB may be on their way to the receiver's link at once, and a transfer that falls further behind fails. ` +
      "Chunks out of order, a sha256 that does not match the bytes relayed or the receiver's copy, an error or a disconnection of either daemon " +
      `end it \`failed\` with the reason, and both daemons are told; it also fails after ${TRANSFER_IDLE_MS / 1000} s without progress. ` +
      "Needs the project's `remote_exec` setting (403 `REMOTE_EXEC_DISABLED`) and an open session of the project by that name; 409 " +
      "`DAEMON_OFFLINE` when either daemon is not connected. The start and the end of each transfer are events (`file_transfer_started`, " +
      "`file_transfer_completed`, `file_transfer_failed`).",
    caller: "agent",
    body: transferBody,
    bodyRequired: true,
    responses: { 200: z.object({ transfer_id: id }) },
  }),
  agent,
  async (c) => {
    const body = await readJson(c, transferBody);
    const target = await remoteTarget(c, body.project_id, body.target_session, body.server_name);
    const me = currentServer(c);
    const transferId = crypto.randomUUID();
    const started = await linkStub(c.env, me.id).startTransfer({
      transferId,
      projectId: body.project_id,
      filename: body.filename,
      filePath: body.file_path,
      fileSize: body.file_size,
      sha256: body.sha256,
      senderServerId: me.id,
      senderName: me.name,
      receiver: { serverId: target.serverId, sessionId: target.sessionId, sessionName: target.sessionName },
    });
    if (started === "sender_offline") throw offline(me.name);
    if (started === "receiver_offline") throw offline(target.serverName);
    return c.json({ transfer_id: transferId });
  },
);

remoteRoutes.get(
  "/file-transfer/:id",
  documented({
    id: "getFileTransfer",
    tag: "Remote work",
    summary: "A file transfer's status",
    description:
      "What `orchestratia file send` polls every second: `pending` until the receiving daemon accepts, then `accepted`, `transferring` " +
      `(\`chunks_relayed\` of \`total_chunks\`, ${CHUNK_BYTES / 1024} KiB each), and \`completed\` once the receiver's copy hashed to the sha256 sent, ` +
      "or `failed` / `rejected` with `error`. Only the server that sent it reads it (404 for others); finished transfers stay readable a day.",
    caller: "agent",
    params: z.object({ id: uuid }),
    responses: { 200: transferSchema },
  }),
  agent,
  async (c) => {
    const transferId = c.req.param("id");
    const view = uuid.safeParse(transferId).success ? await linkStub(c.env, currentServer(c).id).transferStatus(transferId) : null;
    if (!view) throw notFound("File transfer");
    return c.json(view);
  },
);
