/**
 * A fake of the official daemon (orchestratia_agent/hub.py and session.py)
 * on its socket: `json.dumps` frames (", " and ": " separators), the auth
 * frame first; it answers `session_start` the way hub.py does
 * (`session_started` with pid, tmux_name and working_dir; with `mcpStatus`,
 * first the `PATCH .../mcp-status` hub.py's `_report_mcp_status` makes when its
 * MCP server is on), and, like a shell in a terminal, echoes what is typed as
 * base64 `session_output`. Every frame the hub sends is in `socket.frames`.
 * What hub.py puts before the agent of a session (`ws_receive_loop`), reading
 * only the fields it reads, is kept per session: `shown(sessionId)`.
 */
import { createHash } from "node:crypto";
import { expect } from "vitest";
import { BASE, call, fetchUrl, type Reply } from "./helpers";
import { answerFsRequest, type FakeMachine } from "./fake-fs-handler";
import { openSocket, type TestSocket } from "./sockets";

/** Python's json.dumps of a flat object: the daemon's wire format. */
export const pythonJson = (frame: Record<string, unknown>) =>
  `{${Object.entries(frame)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(", ")}}`;

/** Python's json.dumps of any value (default separators, ensure_ascii): how the daemon and its hook write JSON. */
export function pythonDumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonDumps).join(", ")}]`;
  if (typeof value === "object" && value !== null)
    return `{${Object.entries(value)
      .map(([k, v]) => `${pythonDumps(k)}: ${pythonDumps(v)}`)
      .join(", ")}}`;
  if (typeof value === "string") return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return JSON.stringify(value ?? null);
}

/** A line of the permission log as the PreToolUse hook writes it (orchestratia-pretooluse.sh `log_entry`), keys in its order. */
export interface HookLogEntry {
  session_id: string | null;
  project_id: string | null;
  tool_name: string;
  tool_input: Record<string, unknown>;
  decision: "allowed" | "denied" | "asked";
  matched_rule_id: string | null;
  reason: string | null;
  agent_name: string | null;
  created_at: string;
}

/** The hook's `time.strftime('%Y-%m-%dT%H:%M:%S+00:00', time.gmtime())` of a moment. */
export const hookTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}+00:00`;

/**
 * Hook lines a second apart, from an hour ago: a Claude `Bash npm test` the hook asked about, unless `fields` say
 * otherwise (`created_at` included). One clock per test file, so that its lines never share a second by accident.
 */
export function hookLines(start = Date.now() - 3_600_000) {
  let clock = start;
  return (fields: Partial<HookLogEntry> = {}): HookLogEntry => {
    clock += 1000;
    return {
      session_id: null,
      project_id: null,
      tool_name: "Bash",
      tool_input: { command: "npm test", description: "Run the tests" },
      decision: "asked",
      matched_rule_id: null,
      reason: null,
      agent_name: "claude",
      created_at: hookTime(clock),
      ...fields,
    };
  };
}

/**
 * hub.py `permlog_flush_loop`: the log file's lines (each a json.dumps line, read back with json.loads) posted as
 * `{"entries": [...]}` with X-API-Key; a 201 is all it checks.
 */
export const postPermissionLog = (apiKey: string, entries: unknown[]) =>
  call("/api/v1/server/permissions/log", {
    method: "POST",
    raw: pythonDumps({ entries }),
    headers: { "X-API-Key": apiKey, "Content-Type": "application/json", "User-Agent": "python-httpx/0.28.1" },
  });

export const b64 = (text: string) => new TextEncoder().encode(text).toBase64();
export const unb64 = (data: string) => new TextDecoder().decode(Uint8Array.fromBase64(data));

export async function connectDaemon(apiKey: string): Promise<TestSocket> {
  // File chunks and tunnel data are checked as they come (fileTransfers, sshSide), not kept.
  const socket = await openSocket("/ws/server", {}, (f) => f.type !== "file_chunk" && f.type !== "tunnel_data");
  socket.send(pythonJson({ type: "auth", api_key: apiKey }));
  return socket;
}

export interface FakeDaemon {
  socket: TestSocket;
  send(frame: Record<string, unknown>): void;
  /** Output of a session, as session.py's reader sends it. */
  output(sessionId: string, text: string | Uint8Array): void;
  /** Bytes typed into each session, decoded. */
  typed(sessionId: string): string;
  /** The hub's answers to the MCP status reports, by session. */
  mcpReports: Map<string, Promise<Reply>>;
  /** What hub.py put before the agent of each session, in order. */
  shown(sessionId: string): Shown[];
  /** The rules file hub.py keeps for its hook (`_refresh_rules_cache`): fetched on connect and on each `approval_rules_updated`. */
  rules(): unknown;
}

/**
 * What hub.py does with a push for a session: a notification drawn in its
 * terminal (`write_notification`, a box of box-drawing lines and CR/LFs written
 * to the PTY's input, so the agent gets it as keystrokes; kept here as its
 * words), text typed into it (`_inject_text`), or a note queued in its inbox
 * (`pending_notes`, typed once the agent is idle; an MCP agent is told to
 * re-read `notes://inbox`, which serves its current task's notes).
 */
export type Shown = { via: "notification" | "typed"; text: string; taskId?: string } | { via: "inbox"; content: string; author: string };

/** The prompt `_inject_task_trigger` types. */
export const TASK_TRIGGER =
  "A new task has been assigned to you via Orchestratia. Please run `orchestratia task check` to see the details and begin working on it.";

/** What hub.py types for a task assigned in plan mode. */
export const PLAN_TRIGGER =
  "A new task has been assigned to you via Orchestratia in PLAN MODE. You must analyze the task and submit a plan before executing. " +
  "Please run `orchestratia task check` to see the details.";

/** hub.py's handling of the pushes that concern a session's agent, field for field; null for the others. */
function presented(frame: Record<string, any>): { sessionId: string; shown: Shown } | null {
  const typed = (sessionId: string, text: string) => ({ sessionId, shown: { via: "typed" as const, text, taskId: frame.task_id ?? "" } });
  switch (frame.type) {
    case "task_assigned": {
      const title: string = frame.title ?? "";
      if (frame.pending_approval ?? false) {
        return {
          sessionId: frame.session_id,
          shown: {
            via: "notification",
            text: `Task pending approval #${String(frame.task_id ?? "").slice(0, 8)}: "${title.slice(0, 40)}"`,
            taskId: frame.task_id,
          },
        };
      }
      if (frame.require_plan ?? false) return typed(frame.session_id, PLAN_TRIGGER);
      return typed(frame.session_id, TASK_TRIGGER);
    }
    case "task_approved":
      return typed(frame.session_id, TASK_TRIGGER);
    case "task_rejected":
      return {
        sessionId: frame.session_id,
        shown: {
          via: "notification",
          text: `Task rejected by admin "${String(frame.title ?? "Unknown").slice(0, 45)}" Reason: ${String(frame.reason ?? "No reason given").slice(0, 40)}`,
          taskId: frame.task_id,
        },
      };
    case "task_status_update": {
      if (!frame.session_id) return null;
      const parts = [`Task '${frame.title ?? ""}' (#${String(frame.task_id ?? "").slice(0, 8)}) ${frame.status_label ?? frame.status ?? ""}.`];
      if (frame.summary) parts.push(`Summary: ${frame.summary}`);
      parts.push("Run `orchestratia task list` to see current status.");
      return typed(frame.session_id, parts.join(" "));
    }
    case "intervention_response":
      return frame.session_id ? typed(frame.session_id, frame.response ?? "") : null;
    case "code_review_fix_request":
      // An Escape first, then the prompt as one typed line.
      return frame.session_id ? typed(frame.session_id, frame.prompt ?? "") : null;
    case "note_for_session": {
      const content: string = frame.content ?? "";
      const via: string = frame.mentioned_via ?? "";
      return frame.target_session_id
        ? {
            sessionId: frame.target_session_id,
            shown: { via: "inbox", content: via === "dependency" ? `[upstream] ${content}` : content, author: frame.author || "hub" },
          }
        : null;
    }
    case "intervention_for_session":
      return frame.target_session_id
        ? {
            sessionId: frame.target_session_id,
            shown: { via: "inbox", content: `[ask from ${frame.source || "agent"}] ${frame.question ?? ""}`, author: "hub" },
          }
        : null;
    default:
      return null;
  }
}

/** Connects, waits for auth_ok, and plays the daemon: starts sessions it is asked to and echoes input. */
export async function fakeDaemon(apiKey: string, options: { start?: boolean; echo?: boolean; mcpStatus?: string } = {}): Promise<FakeDaemon> {
  const socket = await connectDaemon(apiKey);
  expect(await socket.next()).toMatchObject({ type: "auth_ok" });
  const typed = new Map<string, string>();
  const mcpReports = new Map<string, Promise<Reply>>();
  const shown = new Map<string, Shown[]>();
  const send = (frame: Record<string, unknown>) => socket.send(pythonJson(frame));
  let rules: unknown;
  const refreshRules = async () => {
    const reply = await call("/api/v1/server/approval-rules", { apiKey });
    if (reply.status === 200) rules = reply.json;
  };
  void refreshRules();
  const output = (sessionId: string, data: string | Uint8Array) =>
    send({ type: "session_output", session_id: sessionId, data: typeof data === "string" ? b64(data) : data.toBase64() });
  socket.ws.addEventListener("message", (e) => {
    const frame = JSON.parse(e.data as string);
    if (frame.type === "session_start" && options.start !== false) {
      if (options.mcpStatus) {
        const report = call(`/api/v1/server/sessions/${frame.session_id}/mcp-status`, { method: "PATCH", apiKey, body: { mcp_status: options.mcpStatus } });
        mcpReports.set(frame.session_id, report);
      }
      send({
        type: "session_started",
        session_id: frame.session_id,
        pid: 4242,
        tmux_name: `orc-${frame.session_id.slice(0, 12)}`,
        working_dir: frame.working_directory ?? "/home/dev",
      });
    }
    if (frame.type === "session_input") {
      const text = unb64(frame.data);
      typed.set(frame.session_id, (typed.get(frame.session_id) ?? "") + text);
      if (options.echo !== false) output(frame.session_id, text.replace(/\r/g, "\r\n"));
    }
    if (frame.type === "approval_rules_updated") void refreshRules();
    const p = presented(frame);
    if (p) shown.set(p.sessionId, [...(shown.get(p.sessionId) ?? []), p.shown]);
  });
  return {
    socket,
    send,
    output,
    typed: (sessionId) => typed.get(sessionId) ?? "",
    mcpReports,
    shown: (sessionId) => shown.get(sessionId) ?? [],
    rules: () => rules,
  };
}

/** hub.py `_handle_remote_exec`: each `remote_exec {request_id, command}` is run by `run` and answered with `remote_exec_result`. */
export function answerRemoteExec(daemon: FakeDaemon, run: (command: string) => { exit_code: number; stdout: string; stderr: string } | null) {
  daemon.socket.ws.addEventListener("message", (e) => {
    const frame = JSON.parse(e.data as string);
    if (frame.type !== "remote_exec" || !frame.request_id || !frame.command) return;
    const result = run(frame.command);
    if (result) daemon.send({ type: "remote_exec_result", request_id: frame.request_id, ...result });
  });
}

/**
 * hub.py's file requests (`_handle_fs_request`, fs_handler.py) on a pretend machine: the daemon knows the sessions it
 * started (in their `working_directory`, or /home/dev) and answers every `fs_*` frame with its `fs_*_result`, as
 * json.dumps writes it; requests whose path `silent` picks are never answered.
 */
export function answerFiles(daemon: FakeDaemon, machine: FakeMachine, options: { silent?: (path: string) => boolean } = {}) {
  const sessions = new Map<string, string>();
  daemon.socket.ws.addEventListener("message", (e) => {
    const frame = JSON.parse(e.data as string);
    if (frame.type === "session_start") sessions.set(frame.session_id, frame.working_directory ?? "/home/dev");
    if (!String(frame.type).startsWith("fs_") || options.silent?.(frame.path ?? "")) return;
    for (const answer of answerFsRequest(machine, sessions, frame)) daemon.socket.send(pythonDumps(answer));
  });
  return sessions;
}

/** A file a fake daemon can send, made chunk by chunk as it is read (file_transfer.py reads CHUNK_SIZE bytes at a time). */
export interface FakeFile {
  size: number;
  /** The bytes of chunk `index` (the last one may be short). */
  chunk(index: number): Uint8Array;
}

/** A file of `size` bytes: one random 64 KiB block, each chunk of it numbered in its first bytes, so that no two chunks are alike. */
export function patternFile(size: number): FakeFile {
  const block = new Uint8Array(CHUNK_SIZE);
  crypto.getRandomValues(block);
  return {
    size,
    chunk(index) {
      const bytes = block.slice(0, Math.max(0, Math.min(CHUNK_SIZE, size - index * CHUNK_SIZE)));
      new DataView(bytes.buffer).setUint32(0, index);
      return bytes;
    },
  };
}

export const sha256Of = (file: FakeFile) => {
  const hash = createHash("sha256");
  for (let index = 0; index * CHUNK_SIZE < file.size; index++) hash.update(file.chunk(index));
  return hash.digest("hex");
};

/** file_transfer.py CHUNK_SIZE. */
export const CHUNK_SIZE = 65_536;

/** A file as the receiving side of a fake daemon got it. */
export interface Received {
  filename: string;
  fileSize: number;
  senderSession: string;
  /** The index of each chunk, in the order they came. */
  indices: number[];
  bytes: number;
  hash: ReturnType<typeof createHash>;
  /** file_complete's sha256, and whether the bytes hashed to it (what file_ack said). */
  verified?: boolean;
  error?: string;
}

export interface FileTransfers {
  received: Map<string, Received>;
  /** What the sending side heard back about each of its transfers (`file_accepted`, `file_rejected`, `file_ack`, `file_error`), in order. */
  outcomes: Map<string, any[]>;
  /** Chunks sent, over all transfers. */
  chunksSent(): number;
}

/**
 * file_transfer.py on a fake daemon, both sides, as hub.py dispatches them:
 * it accepts every `file_offer`, appends each `file_chunk` to the file
 * (`index` and `total_chunks` are only noted), checks `file_complete`'s sha256
 * and answers `file_ack {sha256_verified}`; on `file_send_start` it reads the
 * file at `file_path` from `files` and sends it in 64 KiB base64 chunks, then
 * `file_complete {total_chunks, sha256}` (or `file_error` for a missing file).
 * Options make it misbehave for the failure cases: chunks out of order, a
 * receiver whose copy does not verify, a pause after some chunks, and how far
 * ahead a sender may run before waiting (what a socket's buffers allow).
 */
export function fileTransfers(
  daemon: FakeDaemon,
  files: Map<string, FakeFile> = new Map(),
  options: { swapChunks?: [number, number]; corrupt?: boolean; pauseAfter?: number; ahead?: () => boolean } = {},
): FileTransfers {
  const received = new Map<string, Received>();
  const outcomes = new Map<string, any[]>();
  let sent = 0;
  const heard = (frame: any) => outcomes.set(frame.transfer_id, [...(outcomes.get(frame.transfer_id) ?? []), frame]);
  const send = async (transferId: string, path: string) => {
    const file = files.get(path);
    if (!file) return daemon.send({ type: "file_error", transfer_id: transferId, error: `File not found: ${path}` });
    const total = file.size > 0 ? Math.ceil(file.size / CHUNK_SIZE) : 1;
    const hash = createHash("sha256");
    const order = Array.from({ length: Math.ceil(file.size / CHUNK_SIZE) }, (_, i) => i);
    if (options.swapChunks) {
      const [a, b] = options.swapChunks;
      [order[a], order[b]] = [order[b]!, order[a]!];
    }
    let index = 0;
    // A daemon whose socket closed mid-way stops sending, as hub.py's loop ends with its connection.
    const closed = () => daemon.socket.ws.readyState !== WebSocket.OPEN;
    for (const n of order) {
      if (closed() || (options.pauseAfter !== undefined && index === options.pauseAfter)) return;
      const raw = file.chunk(n);
      hash.update(raw);
      daemon.send({ type: "file_chunk", transfer_id: transferId, index: n, data: raw.toBase64(), total_chunks: total });
      sent++;
      index++;
      // hub.py's `ws.send` waits while the socket's buffers are full; `ahead` says when that would be (otherwise each chunk lets the others run).
      if (!options.ahead) await new Promise((r) => setTimeout(r, 0));
      while (options.ahead?.()) await new Promise((r) => setTimeout(r, 0));
    }
    if (!closed()) daemon.send({ type: "file_complete", transfer_id: transferId, total_chunks: index, sha256: hash.digest("hex") });
  };
  daemon.socket.ws.addEventListener("message", (e) => {
    const frame = JSON.parse(e.data as string);
    const incoming = received.get(frame.transfer_id);
    switch (frame.type) {
      case "file_offer":
        received.set(frame.transfer_id, {
          filename: frame.filename ?? "unknown",
          fileSize: frame.file_size ?? 0,
          senderSession: frame.sender_session ?? "",
          indices: [],
          bytes: 0,
          hash: createHash("sha256"),
        });
        daemon.send({ type: "file_accept", transfer_id: frame.transfer_id });
        break;
      case "file_chunk":
        if (!incoming || !frame.data) break;
        incoming.indices.push(frame.index);
        {
          const raw = Uint8Array.fromBase64(frame.data);
          if (options.corrupt) raw[0] = raw[0]! ^ 1;
          incoming.hash.update(raw);
          incoming.bytes += raw.byteLength;
        }
        break;
      case "file_complete":
        if (!incoming) break;
        incoming.verified = incoming.hash.digest("hex") === frame.sha256;
        daemon.send({ type: "file_ack", transfer_id: frame.transfer_id, sha256_verified: incoming.verified });
        break;
      case "file_send_start":
        if (frame.transfer_id && frame.file_path) void send(frame.transfer_id, frame.file_path);
        break;
      case "file_error":
        if (incoming) incoming.error = frame.error;
        heard(frame);
        break;
      case "file_accepted":
      case "file_rejected":
      case "file_ack":
        heard(frame);
        break;
    }
  });
  return { received, outcomes, chunksSent: () => sent };
}

const HTTPX = { "User-Agent": "python-httpx/0.28.1" };
const sha256Hex = async (bytes: Uint8Array) => new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)).toHex();

/**
 * hub.py's file loops (`pending_uploads_loop`, `pending_pulls_loop` and what they call), one step at a time, as they
 * speak: httpx with `X-API-Key`, JSON acks, the pulled file as multipart `file`.
 */
export function daemonFiles(apiKey: string, uploadsDir = "/tmp/orchestratia-uploads") {
  const headers = { ...HTTPX, "X-API-Key": apiKey };
  const post = (path: string, body: unknown) =>
    call(path, { method: "POST", raw: pythonDumps(body), headers: { ...headers, "Content-Type": "application/json" } });
  const files = {
    /** `GET /api/v1/server/files/pending`: hub.py reads `upload_id`, `filename`, `download_url`, `sha256`. */
    pendingUploads: () => call("/api/v1/server/files/pending", { headers }),
    pendingPulls: () => call("/api/v1/server/files/pulls/pending", { headers }),
    /** The daemon's GET of `download_url` (prefixed with the hub's URL when it starts with `/`), with its key. */
    fetchUpload: (downloadUrl: string) => fetchUrl(downloadUrl.startsWith("/") ? BASE + downloadUrl : downloadUrl, { headers }),
    ack: (uploadId: string, body: { success: boolean; path?: string; error?: string }) => post(`/api/v1/server/files/${uploadId}/ack`, body),
    /** `files={"file": (p.name, f, "application/octet-stream")}`. */
    sendPull: async (downloadId: string, name: string, bytes: Uint8Array) => {
      const form = new FormData();
      form.append("file", new File([bytes], name, { type: "application/octet-stream" }));
      const res = await fetchUrl(`${BASE}/api/v1/server/files/pulls/${downloadId}/upload`, { method: "POST", body: form, headers });
      return { status: res.status, text: await res.text() };
    },
    failPull: (downloadId: string, error: string) => post(`/api/v1/server/files/pulls/${downloadId}/fail`, { error }),
    /** `_process_pending_upload` for every pending item: fetch, check the sha256, ack with where it was written (or why not). */
    async deliverPending(): Promise<{ upload_id: string; bytes: Uint8Array; acked: number }[]> {
      const list = await files.pendingUploads();
      if (list.status !== 200) throw new Error(`pending uploads: ${list.status} ${list.text}`);
      const delivered = [];
      for (const item of list.json as { upload_id: string; filename: string; download_url: string; sha256: string }[]) {
        const res = await files.fetchUpload(item.download_url);
        if (res.status >= 400) {
          await files.ack(item.upload_id, { success: false, error: `download failed: ${res.status}` });
          continue;
        }
        const bytes = new Uint8Array(await res.arrayBuffer());
        const ok = (await sha256Hex(bytes)) === item.sha256;
        const ack = await files.ack(
          item.upload_id,
          ok ? { success: true, path: `${uploadsDir}/${item.filename}` } : { success: false, error: "sha256 mismatch" },
        );
        delivered.push({ upload_id: item.upload_id, bytes, acked: ack.status });
      }
      return delivered;
    },
  };
  return files;
}
