/**
 * A session's files, beside its terminal (API.md "Session files and code
 * health"): each request goes to the session's daemon through its server's
 * link (`fs_*` with a request id) and is answered from the daemon's
 * `fs_*_result`, its refusals as problem documents. Anyone who may see the
 * project reads; only those who may type in the session's terminal write.
 * The root is the session's working directory; an admin may name another.
 */
import { Hono } from "hono";
import { z } from "zod";
import { projectDataFor } from "../auth/access";
import { currentUser, person } from "../middleware/guards";
import { isFinalSession } from "../domain/session-lifecycle";
import { readJson, readQuery } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { text } from "../http/fields";
import { conflict, fieldError, forbidden, notFound, Problem } from "../http/problem";
import { documented } from "../openapi/operation";
import { linkStub } from "../server-link/client";
import type { Waited } from "../server-link/pending-requests";
import { MAX_DAEMON_FRAME_BYTES } from "../server-link/daemon-frames";
import {
  conflictState,
  DAEMON_FILE_LIMIT_BYTES,
  FS_DEADLINE_MS,
  fsFrame,
  frameSize,
  MAX_FS_ANSWER_BYTES,
  pathUnderRoot,
  type FsAnswer,
  type FsOperation,
} from "../server-link/session-files";
import { fsFileSchema, fsFileView, fsListingSchema, fsListingView, fsStatSchema, fsStatView, fsWrittenSchema, fsWrittenView } from "../views/session-files";
import { sessionForFiles } from "./file-transfers";
import { sessionIn } from "./project-sessions";

export const sessionFileRoutes = new Hono<HubEnv>();

const path = text(4096).meta({ description: "Relative to the root (leading slashes are dropped); a `..` may not climb out of it" });
const root = text(4096)
  .regex(/^(\/|[A-Za-z]:[\\/])/, "must be an absolute path")
  .optional()
  .meta({ description: "Admins only: another folder of the session's machine to use as the root (absolute)" });
const listQuery = z.object({ path: path.default(""), root });
const fileQuery = z.object({ path: path.min(1, "must name a file"), root });
const writeBody = z.object({
  content: z.string().meta({ description: "The whole new text, written as UTF-8" }),
  expected_sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hexadecimal digits")
    .nullish()
    .meta({
      description:
        "The sha256 the file was read with: when the file is no longer that, nothing is written (409 `FILE_CHANGED`). Left out: written whatever the file is",
    }),
});

const MIB = (bytes: number) => `${bytes / 1024 / 1024} MiB`;

/** The daemon's refusal as the person gets it. */
function refusal(op: FsOperation, where: string, a: FsAnswer): Problem {
  switch (a.error) {
    case "access_denied":
      return new Problem(403, "PATH_DENIED", `The daemon refused ${where}: it leads outside the root (through a symlink), or its user may not open it`);
    case "not_found":
      return notFound(`${where} on the session's machine`);
    case "not_a_directory":
      return fieldError("query.path", "names a file, not a folder");
    case "is_a_directory":
      return fieldError("query.path", "names a folder, not a file");
    case "parent_not_found":
      return fieldError("query.path", "its folder does not exist on the session's machine (folders are not created)");
    case "conflict": {
      const now = conflictState(a);
      // Shown to the person and kept by the editor: a value that is not a sha256 is the daemon's fault, not a change to show.
      if (!now.ok)
        return new Problem(
          502,
          "DAEMON_ERROR",
          `The daemon refused to write ${where} as changed since it was read, but its ${now.field} is not ${now.rule}: nothing was written; read the file again`,
          [{ path: now.field, message: `must be ${now.rule}` }],
        );
      return conflict(
        now.sha256 === null
          ? `${where} was deleted since it was read: nothing was written`
          : `${where} changed since it was read (its sha256 is now ${now.sha256}): nothing was written`,
        "FILE_CHANGED",
        { current_sha256: now.sha256, current_mtime: now.mtime },
      );
    }
    case "too_large": {
      const limit = typeof a.limit === "number" ? a.limit : DAEMON_FILE_LIMIT_BYTES;
      const size = typeof a.size === "number" ? ` is ${a.size} bytes:` : ":";
      return new Problem(
        413,
        "FILE_TOO_LARGE",
        `${where}${size} the daemon reads and writes files of at most ${limit} bytes (${MIB(limit)})`,
        undefined,
        {},
        {
          limit,
          ...(typeof a.size === "number" ? { size: a.size } : {}),
        },
      );
    }
    case "frame_too_large":
      return new Problem(
        413,
        "FILE_TOO_LARGE",
        `${where} took ${String(a.frame_bytes)} bytes on the daemon's socket (the daemon sends a file in one frame, its text escaped as JSON); ` +
          `the hub takes a file's answer of at most ${MAX_FS_ANSWER_BYTES} bytes`,
        undefined,
        {},
        { limit: MAX_FS_ANSWER_BYTES },
      );
    case "session_not_found":
      return conflict("The daemon does not run this session (it ended, or the daemon restarted without it)", "SESSION_ENDED");
    case "working_dir_unset":
      return conflict("The session has no working directory its daemon can find: an admin may name a root", "NO_WORKING_DIRECTORY");
    default:
      return new Problem(502, "DAEMON_ERROR", `The daemon could not do ${op} on ${where}: it answered ${JSON.stringify(a.error ?? "nothing")}`);
  }
}

/** Asks the session's daemon and answers its result; every refusal the hub can make is made before anything is sent. */
async function askDaemon(
  c: HubContext,
  session: { id: string; serverId: string; workingDirectory: string | null; status: string },
  serverName: string,
  op: FsOperation,
  query: { path: string; root?: string | undefined },
  write?: { content: string; expectedSha256: string | null },
): Promise<{ path: string; answer: FsAnswer }> {
  if (query.root !== undefined && currentUser(c).role !== "admin")
    throw forbidden("The root of a session's files is its working directory: only an admin may name another", "NOT_ALLOWED");
  const rel = pathUnderRoot(query.path);
  if (rel === null) throw fieldError("query.path", "must stay inside the root: a `..` leads out of it");
  if (isFinalSession(session.status)) throw conflict("The session has ended", "SESSION_ENDED");
  const request = {
    type: op,
    requestId: crypto.randomUUID(),
    sessionId: session.id,
    path: rel,
    workingDir: session.workingDirectory,
    root: query.root ?? null,
    ...(write ? { content: write.content, expectedSha256: write.expectedSha256 } : {}),
  };
  // The daemon's socket closes itself on a larger frame.
  if (write && frameSize(fsFrame(request)) > MAX_DAEMON_FRAME_BYTES)
    throw new Problem(
      413,
      "FILE_TOO_LARGE",
      `The new content does not fit one frame of the daemon's socket (${MAX_DAEMON_FRAME_BYTES} bytes, ${MIB(MAX_DAEMON_FRAME_BYTES)}, with its JSON escapes): nothing was written`,
      undefined,
      {},
      { limit: MAX_DAEMON_FRAME_BYTES },
    );
  // The RPC stub's types lose the answer's open record: it is what the link returns.
  const waited = (await linkStub(c.env, session.serverId).sessionFiles(request, FS_DEADLINE_MS)) as Waited<FsAnswer> | null;
  if (waited === null) throw conflict(`The daemon of server "${serverName}" is not connected: the session's files cannot be reached now`, "DAEMON_OFFLINE");
  if (waited.kind === "gone") throw conflict(`The daemon of server "${serverName}" disconnected before answering`, "DAEMON_OFFLINE");
  if (waited.kind === "timed_out")
    throw new Problem(504, "DAEMON_TIMEOUT", `The daemon of server "${serverName}" did not answer within ${FS_DEADLINE_MS / 1000} s`);
  const where = rel === "" ? "the root" : `"${rel}"`;
  if (!waited.answer.ok) throw refusal(op, where, waited.answer);
  return { path: rel, answer: waited.answer };
}

const common = [
  "Relayed to the session's daemon (its `fs_*` frame with a request id, answered by `fs_*_result`). 404 for a session not in the project; " +
    "409 `SESSION_ENDED` for one that ended (or that its daemon no longer runs), 409 `DAEMON_OFFLINE` when its daemon is not connected, " +
    `504 \`DAEMON_TIMEOUT\` when it does not answer within ${FS_DEADLINE_MS / 1000} s.`,
  "`path` is relative to the root, the session's working directory; only an admin may name another `root` (403 `NOT_ALLOWED`). A path whose " +
    "`..` climbs out of the root is 422 before reaching the daemon; one leading out through a symlink is refused by the daemon: 403 `PATH_DENIED`. " +
    "404 when nothing is there; 409 `NO_WORKING_DIRECTORY` when the daemon knows no root for the session; 502 `DAEMON_ERROR` for its I/O errors.",
].join("\n\n");

/** A request that reads, for anyone who may see the project: its query, the daemon's operation, and the view of its answer. */
function reading(
  route: string,
  op: FsOperation,
  doc: { id: string; summary: string; description: string },
  query: typeof listQuery | typeof fileQuery,
  response: z.ZodType,
  view: (path: string, answer: FsAnswer) => unknown,
) {
  sessionFileRoutes.get(
    route,
    documented({
      ...doc,
      tag: "Session files",
      description: `${doc.description}\n\n${common}\n\nAnyone who may see the project.`,
      caller: "person",
      query,
      responses: { 200: response },
    }),
    person(),
    async (c) => {
      const asked = readQuery(c, query);
      const project = await projectDataFor(c, c.req.param("id")!);
      const { session, serverName } = await sessionIn(c, project.id, c.req.param("sid")!);
      const { path, answer } = await askDaemon(c, session, serverName, op, asked);
      return c.json(view(path, answer));
    },
  );
}

reading(
  "/:id/sessions/:sid/fs",
  "fs_list_dir",
  {
    id: "listSessionFolder",
    summary: "List a folder of a session's machine",
    description: "A folder's entries (`fs_list_dir`): folders first, at most 5000. 422 naming `path` for a file.",
  },
  listQuery,
  fsListingSchema,
  fsListingView,
);

reading(
  "/:id/sessions/:sid/fs/file",
  "fs_read_file",
  {
    id: "readSessionFile",
    summary: "Read a file of a session's machine",
    description:
      "The file's text with its sha256 and modification time (`fs_read_file`); a binary file (a NUL byte in its first 8 KiB) has `content: null`; " +
      "text that is not UTF-8 is read as Latin-1. 413 `FILE_TOO_LARGE` naming `limit`: the daemon reads files of at most " +
      `${MIB(DAEMON_FILE_LIMIT_BYTES)}. 422 naming \`path\` for a folder.`,
  },
  fileQuery,
  fsFileSchema,
  fsFileView,
);

reading(
  "/:id/sessions/:sid/fs/stat",
  "fs_stat",
  {
    id: "statSessionFile",
    summary: "Describe a path of a session's machine",
    description: `Whether something is there, and what (\`fs_stat\`): its type, size, modification time, and sha256 for a file of at most ${MIB(DAEMON_FILE_LIMIT_BYTES)}.`,
  },
  listQuery,
  fsStatSchema,
  fsStatView,
);

sessionFileRoutes.put(
  "/:id/sessions/:sid/fs/file",
  documented({
    id: "writeSessionFile",
    tag: "Session files",
    summary: "Write a file of a session's machine",
    description:
      "Replaces the file's content, or creates it in an existing folder (`fs_write_file`; the daemon writes a sibling and renames it). With " +
      "`expected_sha256` (the sha256 it was read with), a file that changed meanwhile is not written: 409 `FILE_CHANGED` with its " +
      "`current_sha256` and `current_mtime`. 413 `FILE_TOO_LARGE` naming `limit` when the content does not fit one frame of the daemon's " +
      `socket (${MIB(MAX_DAEMON_FRAME_BYTES)}). 422 naming \`path\` for a folder, or a file whose folder does not exist.\n\n${common}\n\n` +
      "Admins, and members of every project the session's server serves, as for typing in its terminal (403 `NOT_ALLOWED` otherwise, before " +
      "anything reaches the daemon).",
    caller: "person",
    query: fileQuery,
    body: writeBody,
    bodyRequired: true,
    responses: { 200: fsWrittenSchema },
  }),
  person("member"),
  async (c) => {
    const query = readQuery(c, fileQuery);
    const { session, serverName } = await sessionForFiles(c, "edit them");
    const body = await readJson(c, writeBody);
    const { path, answer } = await askDaemon(c, session, serverName, "fs_write_file", query, {
      content: body.content,
      expectedSha256: body.expected_sha256 ?? null,
    });
    return c.json(fsWrittenView(path, answer));
  },
);
