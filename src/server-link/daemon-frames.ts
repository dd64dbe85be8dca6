/** The official daemon's frames (orchestratia_agent/hub.py), as the hub reads and answers them. */

/** The daemon opens its socket with `max_size=2**20`; the hub holds frames to the same bound. */
export const MAX_DAEMON_FRAME_BYTES = 1 << 20;

/** How long a daemon has to send its API key after connecting (it sends it at once). */
export const DAEMON_AUTH_GRACE_MS = 10_000;

/** Close codes of the daemon's socket (4000–4999 are the application's). */
export const DAEMON_CLOSE = {
  unauthorized: 4003,
  revoked: 4004,
  replaced: 4009,
  /** A frame over the size bound (the protocol's own 1009 may only be sent by the runtime). */
  tooBig: 4013,
} as const;

export const frameBytes = (message: string | ArrayBuffer) => (typeof message === "string" ? new TextEncoder().encode(message).byteLength : message.byteLength);

export type DaemonFrame = { ok: true; type: string; frame: Record<string, unknown> } | { ok: false; detail: string };

export function parseDaemonFrame(message: string | ArrayBuffer): DaemonFrame {
  let value: unknown;
  try {
    value = JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message));
  } catch {
    return { ok: false, detail: "a frame is a JSON object" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, detail: "a frame is a JSON object" };
  const type = (value as { type?: unknown }).type;
  if (typeof type !== "string" || type === "") return { ok: false, detail: "a frame names its type: a non-empty string" };
  return { ok: true, type, frame: value as Record<string, unknown> };
}
