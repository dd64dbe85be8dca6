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
import { expect } from "vitest";
import { call, type Reply } from "./helpers";
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
  const socket = await openSocket("/ws/server");
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
 * terminal, text typed into it (`_inject_text`), or a note queued in its
 * inbox (`pending_notes`, which the MCP `notes://inbox` also serves).
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
    case "intervention_response":
      return frame.session_id ? typed(frame.session_id, frame.response ?? "") : null;
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
