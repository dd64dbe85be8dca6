/**
 * The official daemon's file requests on a pretend machine: hub.py
 * `_handle_fs_request` (the session, then the root: `root` when absolute and a
 * folder, else `working_dir`, else the session's own folder, else
 * `working_dir_unset`) and fs_handler.py's `list_dir`, `read_file`,
 * `write_file` and `stat`, field for field and refusal for refusal, on an
 * in-memory tree of folders, files and symlinks resolved as Python's
 * `Path.resolve` resolves them. Used by the workerd tests and the browser
 * tests' daemon alike.
 */
import { createHash } from "node:crypto";

/** fs_handler.py's limits. */
export const MAX_READ_BYTES = 5 * 1024 * 1024;
export const MAX_WRITE_BYTES = 5 * 1024 * 1024;
export const MAX_DIR_ENTRIES = 5000;
const BINARY_SNIFF_BYTES = 8192;

export type Node = { kind: "dir"; mtime: number } | { kind: "file"; bytes: Uint8Array; mtime: number } | { kind: "symlink"; target: string; mtime: number };

const now = () => Math.floor(Date.now() / 1000);
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const parentOf = (p: string) => p.slice(0, p.lastIndexOf("/")) || "/";
const join = (a: string, b: string) => (a === "/" ? `/${b}` : `${a}/${b}`);

/** A machine's files, by absolute path. */
export class FakeMachine {
  readonly nodes = new Map<string, Node>([["/", { kind: "dir", mtime: now() }]]);

  /** A folder and its parents. */
  dir(path: string, mtime = now()) {
    if (path !== "/" && !this.nodes.has(parentOf(path))) this.dir(parentOf(path), mtime);
    if (!this.nodes.has(path)) this.nodes.set(path, { kind: "dir", mtime });
    return this;
  }

  file(path: string, content: string | Uint8Array, mtime = now()) {
    this.dir(parentOf(path));
    this.nodes.set(path, { kind: "file", bytes: typeof content === "string" ? new TextEncoder().encode(content) : content, mtime });
    return this;
  }

  symlink(path: string, target: string) {
    this.dir(parentOf(path));
    this.nodes.set(path, { kind: "symlink", target, mtime: now() });
    return this;
  }

  text(path: string): string | null {
    const node = this.nodes.get(path);
    return node?.kind === "file" ? new TextDecoder().decode(node.bytes) : null;
  }

  /** os.path.realpath: symlinks followed as met, `..` applied to what they resolved to, missing parts kept. */
  realpath(path: string, depth = 0): string {
    let current = "/";
    for (const part of path.split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") {
        current = parentOf(current);
        continue;
      }
      const next = join(current, part);
      const node = this.nodes.get(next);
      if (node?.kind === "symlink" && depth < 40) current = this.realpath(node.target.startsWith("/") ? node.target : join(current, node.target), depth + 1);
      else current = next;
    }
    return current;
  }

  /** Path.exists / is_dir / stat(): through symlinks. */
  private followed(path: string): Node | undefined {
    const node = this.nodes.get(this.realpath(path));
    return node?.kind === "symlink" ? undefined : node;
  }

  /** fs_handler `_safe_resolve`. */
  safeResolve(root: string, relPath: string | null | undefined): string | null {
    const rel = (relPath ?? "").replace(/^[/\\]+/, "");
    const rootReal = this.realpath(root);
    if (this.followed(rootReal)?.kind !== "dir") return null;
    const candidate = this.realpath(rel === "" ? rootReal : `${rootReal}/${rel}`);
    return candidate === rootReal || candidate.startsWith(rootReal === "/" ? "/" : `${rootReal}/`) ? candidate : null;
  }

  isDir(path: string) {
    return this.followed(path)?.kind === "dir";
  }

  listDir(root: string, relPath: string): Record<string, unknown> {
    const target = this.safeResolve(root, relPath);
    if (target === null) return { ok: false, error: "access_denied" };
    const node = this.followed(target);
    if (!node) return { ok: false, error: "not_found" };
    if (node.kind !== "dir") return { ok: false, error: "not_a_directory" };
    const prefix = target === "/" ? "/" : `${target}/`;
    const children = [...this.nodes].filter(([p]) => p !== target && p.startsWith(prefix) && !p.slice(prefix.length).includes("/"));
    const entries = children.slice(0, MAX_DIR_ENTRIES).map(([p, n]) => ({
      name: p.slice(prefix.length),
      type: n.kind,
      size: n.kind === "file" ? n.bytes.byteLength : n.kind === "symlink" ? new TextEncoder().encode(n.target).byteLength : 4096,
      mtime: n.mtime,
    }));
    // Python's sort is stable and compares (is not a dir, lower-case name).
    entries.sort(
      (a, b) =>
        Number(a.type !== "dir") - Number(b.type !== "dir") ||
        (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : a.name.toLowerCase() > b.name.toLowerCase() ? 1 : 0),
    );
    return { ok: true, entries, truncated: children.length > MAX_DIR_ENTRIES };
  }

  readFile(root: string, relPath: string): Record<string, unknown> {
    const target = this.safeResolve(root, relPath);
    if (target === null) return { ok: false, error: "access_denied" };
    const node = this.followed(target);
    if (!node) return { ok: false, error: "not_found" };
    if (node.kind === "dir") return { ok: false, error: "is_a_directory" };
    const raw = (node as { bytes: Uint8Array }).bytes;
    if (raw.byteLength > MAX_READ_BYTES) return { ok: false, error: "too_large", size: raw.byteLength, limit: MAX_READ_BYTES };
    const sha = sha256(raw);
    if (raw.subarray(0, BINARY_SNIFF_BYTES).includes(0))
      return { ok: true, binary: true, content: null, size: raw.byteLength, mtime: node.mtime, sha256: sha, encoding: "binary" };
    let text: string;
    let encoding: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(raw);
      encoding = "utf-8";
    } catch {
      text = Array.from(raw, (b) => String.fromCharCode(b)).join("");
      encoding = "latin-1";
    }
    return { ok: true, binary: false, content: text, size: raw.byteLength, mtime: node.mtime, sha256: sha, encoding };
  }

  writeFile(root: string, relPath: string, content: string, expectedSha256: string | null | undefined): Record<string, unknown> {
    const target = this.safeResolve(root, relPath);
    if (target === null) return { ok: false, error: "access_denied" };
    const payload = new TextEncoder().encode(content);
    if (payload.byteLength > MAX_WRITE_BYTES) return { ok: false, error: "too_large", limit: MAX_WRITE_BYTES };
    const node = this.followed(target);
    if (node) {
      if (node.kind === "dir") return { ok: false, error: "is_a_directory" };
      const currentSha = sha256((node as { bytes: Uint8Array }).bytes);
      if (expectedSha256 && expectedSha256 !== currentSha) return { ok: false, error: "conflict", current_sha256: currentSha, current_mtime: node.mtime };
    } else {
      if (expectedSha256) return { ok: false, error: "conflict", current_sha256: null, current_mtime: null };
      if (!this.followed(parentOf(target))) return { ok: false, error: "parent_not_found" };
    }
    const mtime = now();
    this.nodes.set(target, { kind: "file", bytes: payload, mtime });
    return { ok: true, sha256: sha256(payload), mtime, size: payload.byteLength };
  }

  stat(root: string, relPath: string): Record<string, unknown> {
    const target = this.safeResolve(root, relPath);
    if (target === null) return { ok: false, error: "access_denied" };
    const node = this.followed(target);
    if (!node) return { ok: true, exists: false };
    const size = node.kind === "file" ? node.bytes.byteLength : 4096;
    const result: Record<string, unknown> = { ok: true, exists: true, type: node.kind, size, mtime: node.mtime };
    if (node.kind === "file" && size <= MAX_READ_BYTES) result.sha256 = sha256(node.bytes);
    return result;
  }
}

/**
 * hub.py `_handle_fs_request` for one `fs_*` frame: the frames it sends back, in order (a `session_working_dir`
 * first when it fell back on the session's own folder without the hub's). `sessions` maps the daemon's sessions
 * to their own folder ("" when unknown).
 */
export function answerFsRequest(machine: FakeMachine, sessions: Map<string, string>, msg: Record<string, any>): Record<string, unknown>[] {
  const type = `${msg.type}_result`;
  const requestId = msg.request_id;
  const sessionId = msg.session_id;
  if (!requestId || !sessionId) return [];
  const local = sessions.get(sessionId);
  if (local === undefined) return [{ type, request_id: requestId, ok: false, error: "session_not_found" }];
  const explicitRoot = String(msg.root ?? "").trim();
  const hubCwd = String(msg.working_dir ?? "").trim();
  let root: string;
  if (explicitRoot && explicitRoot.startsWith("/") && machine.isDir(explicitRoot)) root = explicitRoot;
  else if (hubCwd && machine.isDir(hubCwd)) root = hubCwd;
  else if (local && machine.isDir(local)) root = local;
  else return [{ type, request_id: requestId, ok: false, error: "working_dir_unset" }];
  const frames: Record<string, unknown>[] = [];
  if (!explicitRoot && !hubCwd && root === local) frames.push({ type: "session_working_dir", session_id: sessionId, working_dir: local });
  const path = msg.path ?? "";
  const result =
    msg.type === "fs_list_dir"
      ? machine.listDir(root, path)
      : msg.type === "fs_read_file"
        ? machine.readFile(root, path)
        : msg.type === "fs_write_file"
          ? machine.writeFile(root, path, msg.content ?? "", msg.expected_sha256)
          : msg.type === "fs_stat"
            ? machine.stat(root, path)
            : { ok: false, error: "unknown_op" };
  frames.push({ type, request_id: requestId, ...result });
  return frames;
}
