/** The official daemon's frames (orchestratia_agent/hub.py), as the hub reads and answers them. */
import { TOO_DEEP, tooDeepUnder } from "../domain/json-depth";
import type { SessionChange } from "../room/commands";

/** The daemon opens its socket with `max_size=2**20`; the hub holds frames to the same bound. */
export const MAX_DAEMON_FRAME_BYTES = 1 << 20;

/** How long a daemon has to send its API key after connecting (it sends it at once). */
export const DAEMON_AUTH_GRACE_MS = 10_000;

/** Close codes of the daemon's socket (4000–4999 are the application's). */
export const DAEMON_CLOSE = {
  unauthorized: 4003,
  revoked: 4004,
  replaced: 4009,
} as const;

/** What an oversized frame is, read from its start (`json.dumps` puts the keys in the order the daemon wrote them). */
export function oversizedFrame(message: string | ArrayBuffer): { type: string | null; sessionId: string | null; requestId: string | null } {
  const head = (typeof message === "string" ? message : new TextDecoder().decode(message)).slice(0, 512);
  return {
    type: head.match(/"type":\s*"([a-z_]+)"/)?.[1] ?? null,
    sessionId: head.match(/"session_id":\s*"([0-9a-f-]{36})"/)?.[1] ?? null,
    requestId: head.match(/"request_id":\s*"([0-9a-f-]{36})"/)?.[1] ?? null,
  };
}

export const frameBytes = (message: string | ArrayBuffer) => (typeof message === "string" ? new TextEncoder().encode(message).byteLength : message.byteLength);

/** Whether a frame is over MAX_DAEMON_FRAME_BYTES: a string too short to be, whatever its characters (three UTF-8 bytes each at most), is not encoded to be measured. */
export const overFrameLimit = (message: string | ArrayBuffer) =>
  (typeof message !== "string" || 3 * message.length > MAX_DAEMON_FRAME_BYTES) && frameBytes(message) > MAX_DAEMON_FRAME_BYTES;

export type DaemonFrame = { ok: true; type: string; frame: Record<string, unknown> } | { ok: false; detail: string };

export function parseDaemonFrame(message: string | ArrayBuffer): DaemonFrame {
  let value: unknown;
  try {
    value = JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message));
  } catch {
    return { ok: false, detail: "a frame is a JSON object" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, detail: "a frame is a JSON object" };
  const deep = tooDeepUnder(value);
  if (deep !== null) return { ok: false, detail: `${deep}: ${TOO_DEEP}` };
  const type = (value as { type?: unknown }).type;
  if (typeof type !== "string" || type === "") return { ok: false, detail: "a frame names its type: a non-empty string" };
  return { ok: true, type, frame: value as Record<string, unknown> };
}

/** The id a frame's session has, if it names one. */
export const sessionIdOf = (frame: Record<string, unknown>) => (typeof frame.session_id === "string" && frame.session_id !== "" ? frame.session_id : null);

const str = (v: unknown, max = 4096) => (typeof v === "string" && v !== "" ? v.slice(0, max) : null);
const int = (v: unknown) => (Number.isSafeInteger(v) ? (v as number) : null);

/** What a daemon's report on a session makes of it (session.py and hub.py send these). */
export function sessionReportOf(type: string, frame: Record<string, unknown>): SessionChange | null {
  switch (type) {
    case "session_started":
      return { status: "running", pid: int(frame.pid), tmuxName: str(frame.tmux_name, 200), workingDirectory: str(frame.working_dir) };
    case "session_error":
      return { status: "error", error: str(frame.error) ?? "The daemon could not start the session" };
    case "session_closed":
      return { status: "closed", exitCode: int(frame.exit_code) };
    default:
      return null;
  }
}

/** How a recovered tmux session is named by the daemon (`orc-` and the first 12 characters of the session id). */
export const tmuxPrefixOf = (tmuxName: string) => (/^orc-[0-9a-f-]{12}$/.test(tmuxName) ? tmuxName.slice(4) : null);
