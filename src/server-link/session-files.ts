/**
 * A session's files, through its daemon (API.md "Session files and code
 * health"): the link hands the daemon `fs_list_dir`, `fs_read_file`,
 * `fs_write_file` or `fs_stat` with a request id, the session, the path and
 * the session's working directory (hub.py `_handle_fs_request`), and waits
 * for the `<type>_result` it sends back with fs_handler.py's answer:
 * `{ok: true, ...}`, or `{ok: false, error}` with `access_denied`,
 * `not_found`, `not_a_directory`, `is_a_directory`, `too_large` (with
 * `limit`, and `size` for reads), `conflict` (with `current_sha256` and
 * `current_mtime`), `parent_not_found`, `io_error`, `session_not_found`,
 * `working_dir_unset`, `internal_error`.
 */
import { frameBytes, parseDaemonFrame } from "./daemon-frames";

export const FS_OPERATIONS = ["fs_list_dir", "fs_read_file", "fs_write_file", "fs_stat"] as const;
export type FsOperation = (typeof FS_OPERATIONS)[number];
export const FS_RESULTS = FS_OPERATIONS.map((op) => `${op}_result`);
/**
 * hub.py answers `{"type": "<op>_result", "request_id", **result}`, and fs_handler's `stat` of an existing path has a
 * `type` of its own, which wins: that answer comes as a frame of type `file`, `dir` or `symlink`.
 */
export const STAT_KINDS: readonly string[] = ["file", "dir", "symlink"];

/** How long a person's request waits for the daemon. */
export const FS_DEADLINE_MS = 15_000;
/** fs_handler.py MAX_READ_BYTES and MAX_WRITE_BYTES: the daemon refuses larger files itself. */
export const DAEMON_FILE_LIMIT_BYTES = 5 * 1024 * 1024;

/** What the daemon is asked: the fields hub.py reads. */
export interface FsRequest {
  type: FsOperation;
  requestId: string;
  sessionId: string;
  path: string;
  /** The session's working directory as the hub knows it; the daemon falls back on its own. */
  workingDir: string | null;
  /** Another root (an admin's): an absolute folder the daemon must find. */
  root: string | null;
  content?: string;
  expectedSha256?: string | null;
}

export function fsFrame(r: FsRequest): Record<string, unknown> & { type: string } {
  return {
    type: r.type,
    request_id: r.requestId,
    session_id: r.sessionId,
    path: r.path,
    working_dir: r.workingDir ?? "",
    ...(r.root ? { root: r.root } : {}),
    ...(r.type === "fs_write_file" ? { content: r.content ?? "", expected_sha256: r.expectedSha256 ?? null } : {}),
  };
}

/** A frame's size on the daemon's socket, which closes itself on anything over MAX_DAEMON_FRAME_BYTES. */
export const frameSize = (frame: Record<string, unknown>) => new TextEncoder().encode(JSON.stringify(frame)).byteLength;

/** The daemon's answer, without its envelope. */
export type FsAnswer = Record<string, unknown> & { ok: boolean; error?: string };

export function fsAnswerOf(frame: Record<string, unknown>): FsAnswer {
  const { type, request_id: _id, ...answer } = frame;
  return {
    ...answer,
    // hub.py spreads fs_handler's answer over its envelope: a stat of something that exists arrives typed by its kind.
    ...(STAT_KINDS.includes(type as string) ? { type } : {}),
    ok: answer.ok === true,
    ...(typeof answer.error === "string" ? { error: answer.error } : {}),
  };
}

/** What a `conflict` says of the file now (both null: it was deleted), or which of its fields is not as fs_handler.py writes it. */
export type ConflictState = { ok: true; sha256: string | null; mtime: number | null } | { ok: false; field: string; rule: string };

export function conflictState(a: FsAnswer): ConflictState {
  const sha256 = a.current_sha256 ?? null;
  const mtime = a.current_mtime ?? null;
  if (sha256 !== null && !(typeof sha256 === "string" && /^[0-9a-f]{64}$/.test(sha256)))
    return { ok: false, field: "current_sha256", rule: "a sha256 (64 lowercase hexadecimal digits) or null" };
  if (mtime !== null && !Number.isSafeInteger(mtime)) return { ok: false, field: "current_mtime", rule: "whole seconds since the epoch, or null" };
  return { ok: true, sha256: sha256 as string | null, mtime: mtime as number | null };
}

/**
 * The largest answer the Worker hands the link itself: a file at the daemon's limit whose every byte `json.dumps`
 * escapes to six (`\u00e9`, as Latin-1 text comes), and its envelope. Within what one RPC call carries (32 MiB).
 */
export const MAX_FS_ANSWER_BYTES = 6 * DAEMON_FILE_LIMIT_BYTES + 64 * 1024;

/** What stands for an answer the Worker could not pass on. */
export const tooLargeForFrame = (bytes: number): FsAnswer => ({ ok: false, error: "frame_too_large", frame_bytes: bytes, limit: MAX_FS_ANSWER_BYTES });

/**
 * An `fs_*_result` too large for a frame between the Worker and the link (the daemon sends a whole file in one, up to
 * its 5 MB limit), read by the Worker to be handed to the link over RPC: the answer, or why there is none.
 */
export function oversizedFsAnswer(message: string | ArrayBuffer): FsAnswer {
  const bytes = frameBytes(message);
  if (bytes > MAX_FS_ANSWER_BYTES) return tooLargeForFrame(bytes);
  const frame = parseDaemonFrame(message);
  return frame.ok ? fsAnswerOf(frame.frame) : { ok: false, error: "unreadable_answer" };
}

/**
 * Where `path` leads under the root, read as the daemon reads it (leading
 * slashes dropped, relative to the root), or null when a `..` climbs out of
 * it. Symlinks are the daemon's to judge: it resolves them and refuses what
 * leaves the root (`access_denied`).
 */
export function pathUnderRoot(path: string): string | null {
  const kept: string[] = [];
  for (const part of path.replace(/^[/\\]+/, "").split(/[/\\]+/)) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (kept.length === 0) return null;
      kept.pop();
    } else kept.push(part);
  }
  return kept.join("/");
}

/** `rel` (as pathUnderRoot leaves it, `/`-separated) inside `folder`, an absolute folder of the machine, with its separators. */
export function pathInFolder(folder: string, rel: string): string {
  const windows = /^[A-Za-z]:[\\/]/.test(folder) && !folder.includes("/");
  const sep = windows ? "\\" : "/";
  const base = folder.replace(/[\\/]+$/, "");
  return rel === "" ? folder : `${base}${sep}${windows ? rel.replaceAll("/", "\\") : rel}`;
}
