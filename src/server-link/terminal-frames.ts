/**
 * The terminal socket's frames (API.md "Terminal"), as a viewer sends them:
 * parsed and checked here, so the link only ever acts on valid ones.
 */

/** A viewer's frame: text up to this size (a paste of input included). */
export const MAX_VIEWER_FRAME_BYTES = 256 * 1024;
/** Output a viewer may have unacknowledged before the hub pauses it. */
export const VIEWER_WINDOW_BYTES = 1024 * 1024;

export const TERMINAL_CLOSE = {
  expired: 4001,
  gone: 4004,
  tooBig: 4013,
} as const;

export type ViewerFrame =
  | { type: "input"; data: string }
  | { type: "resize"; cols: number; rows: number }
  | { type: "ack"; bytes: number }
  | { type: "capture" };

export type ParsedViewerFrame = { ok: true; frame: ViewerFrame } | { ok: false; code: "INVALID_REQUEST" | "INVALID_MESSAGE_TYPE"; message: string };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const within = (n: unknown, min: number, max: number): n is number => Number.isInteger(n) && (n as number) >= min && (n as number) <= max;

export function parseViewerFrame(message: string | ArrayBuffer): ParsedViewerFrame {
  let value: unknown;
  try {
    value = JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message));
  } catch {
    return { ok: false, code: "INVALID_REQUEST", message: "frames are JSON objects" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, code: "INVALID_REQUEST", message: "frames are JSON objects" };
  const f = value as Record<string, unknown>;
  switch (f.type) {
    case "input":
      if (typeof f.data !== "string" || f.data === "" || f.data.length % 4 !== 0 || !BASE64.test(f.data)) {
        return { ok: false, code: "INVALID_REQUEST", message: "input.data: non-empty base64" };
      }
      return { ok: true, frame: { type: "input", data: f.data } };
    case "resize":
      if (!within(f.cols, 2, 1000) || !within(f.rows, 1, 500)) return { ok: false, code: "INVALID_REQUEST", message: "resize: cols an integer 2–1000, rows an integer 1–500" };
      return { ok: true, frame: { type: "resize", cols: f.cols, rows: f.rows } };
    case "ack":
      if (!within(f.bytes, 0, Number.MAX_SAFE_INTEGER)) return { ok: false, code: "INVALID_REQUEST", message: "ack.bytes: a non-negative integer" };
      return { ok: true, frame: { type: "ack", bytes: f.bytes } };
    case "capture":
      return { ok: true, frame: { type: "capture" } };
    default:
      return { ok: false, code: "INVALID_MESSAGE_TYPE", message: `unknown message type ${JSON.stringify(f.type)}` };
  }
}

/** Bytes a base64 string stands for. */
export const base64Bytes = (b64: string) => Math.floor((b64.length * 3) / 4) - (b64.endsWith("==") ? 2 : b64.endsWith("=") ? 1 : 0);

/**
 * One viewer's flow: output sent and not yet acknowledged. Past the window
 * the viewer is paused (output to it is dropped and counted) until it has
 * acknowledged everything; it then starts again from the scrollback.
 */
export class ViewerFlow {
  unacked = 0;
  paused = false;
  dropped = 0;

  /** Whether `bytes` more may go to the viewer now; false pauses it (the caller tells it once). */
  admit(bytes: number): "send" | "pause" | "drop" {
    if (this.paused) {
      this.dropped += bytes;
      return "drop";
    }
    if (this.unacked + bytes > VIEWER_WINDOW_BYTES && this.unacked > 0) {
      this.paused = true;
      this.dropped += bytes;
      return "pause";
    }
    this.unacked += bytes;
    return "send";
  }

  /** Takes an acknowledgement; true when a paused viewer has caught up and should be resynchronised. */
  ack(bytes: number): boolean {
    this.unacked = Math.max(0, this.unacked - bytes);
    return this.paused && this.unacked === 0;
  }

  /** Resumes a caught-up viewer; returns what it missed. */
  resume(): number {
    const dropped = this.dropped;
    this.paused = false;
    this.dropped = 0;
    return dropped;
  }
}
