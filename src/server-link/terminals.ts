/**
 * People's terminal sockets on a server's sessions (API.md "Terminal"): the
 * session's scrollback first, then its live output, to every viewer; input
 * and resizes from writers only, on to the daemon. Each frame of output is
 * built once for all viewers. A viewer that does not keep up is paused on its
 * own (see ViewerFlow) and never holds the daemon or the others back.
 */
import { isOpenSession } from "../domain/session-lifecycle";
import { FrameRate, sendJson } from "../http/websockets";
import type { DaemonPush } from "./pushes";
import type { Scrollback } from "./scrollback";
import { AccessChecks, type TerminalAccess } from "./terminal-access";
import { MAX_VIEWER_FRAME_BYTES, parseViewerFrame, TERMINAL_CLOSE, VIEWER_WINDOW_BYTES, ViewerFlow, type ViewerFrame } from "./terminal-frames";

export const VIEWER_TAG = "viewer";
export const viewerTag = (sessionId: string) => `viewer:${sessionId}`;

export interface ViewerAttachment {
  kind: "viewer";
  sessionId: string;
  projectId: string;
  userId: string;
  /** People with write access type and resize; the others watch. */
  writer: boolean;
  /** When the viewer's access token expires: the socket closes then. */
  expiresAt: number;
  /** Paused for not keeping up (kept here so a pause outlasts the link's eviction). */
  paused?: boolean;
}

/** What the terminals need of their link. */
export interface TerminalPort {
  viewers(sessionId: string): WebSocket[];
  scrollback: Scrollback;
  /** The session's status (read again after the link was evicted). */
  statusOf(sessionId: string): Promise<string | undefined>;
  /** Sends a frame to the server's daemon; false when it is not connected. */
  toDaemon(frame: DaemonPush): boolean;
  /** What the viewer's person may do in its session's terminal now (read from D1). */
  access(viewer: ViewerAttachment): Promise<TerminalAccess>;
}

const CAPTURE_INTERVAL_MS = 5000;
/**
 * Input, resize and capture frames a writer may send a second, as many as an agent may send on its socket: typing, key
 * repeat and a TUI's mouse reports stay under it, a flood does not. The rest are refused. The limit is on frames, not
 * characters: the dashboard gathers keystrokes into frames (one every 10 ms at most, 60 a second, a paste in one), so
 * typing and pasting at any speed stay well under it.
 */
export const TERMINAL_INPUTS_PER_SECOND = 100;
/** Replayed scrollback goes out in frames of at most this many bytes (before base64). */
const REPLAY_FRAME_BYTES = 48 * 1024;

const outputFrame = (b64: string) => `{"type":"output","data":${JSON.stringify(b64)}}`;

/** Refuses a writer's frame; a refused input's `data` goes back with the reason, so the page can say what was not typed. */
function refuse(ws: WebSocket, frame: ViewerFrame, code: string, message: string) {
  sendJson(ws, { type: "error", code, message, ...(frame.type === "input" && { data: frame.data }) });
}

export class Terminals {
  private readonly flows = new Map<WebSocket, ViewerFlow>();
  private readonly attachments = new Map<WebSocket, ViewerAttachment>();
  /** When each session's scrollback was last captured. */
  private readonly captures = new Map<string, number>();
  private readonly access: AccessChecks<ViewerAttachment>;
  private readonly rate = new FrameRate(TERMINAL_INPUTS_PER_SECOND);
  /** Each writer's frames still being handled, so that they reach the daemon in the order they came. */
  private readonly turns = new Map<WebSocket, Promise<void>>();

  constructor(private readonly port: TerminalPort) {
    this.access = new AccessChecks((viewer) => port.access(viewer));
  }

  /**
   * A viewer just accepted, its session's scrollback loaded: it is told who it is, then sees the scrollback, then live
   * output. A writer joining an open session has the daemon leave tmux's copy mode, which a scroll in an earlier
   * terminal (a writer's: mouse input reaches tmux) may have left on, and in which tmux takes no keystrokes. A viewer
   * cannot type, so its joining changes nothing in the session.
   */
  joined(ws: WebSocket, attachment: ViewerAttachment, status: string) {
    ws.serializeAttachment(attachment);
    this.attachments.set(ws, attachment);
    sendJson(ws, { type: "ready", writer: attachment.writer, status });
    if (attachment.writer && isOpenSession(status)) this.port.toDaemon({ type: "session_exit_copy_mode", session_id: attachment.sessionId });
    this.replay(ws, this.flowOf(ws), attachment.sessionId);
  }

  /** Live output of a session, to each of its viewers that keeps up. */
  output(sessionId: string, b64: string, bytes: number) {
    const now = Date.now();
    let frame: string | null = null;
    for (const ws of this.port.viewers(sessionId)) {
      if (this.closedAtExpiry(ws, now)) continue;
      const flow = this.flowOf(ws);
      switch (flow.admit(bytes)) {
        case "send":
          frame ??= outputFrame(b64);
          try {
            ws.send(frame);
          } catch {
            // The viewer left.
          }
          break;
        case "pause":
          this.remember(ws, { paused: true });
          sendJson(ws, {
            type: "lagging",
            detail: `output paused: more than ${VIEWER_WINDOW_BYTES} bytes unacknowledged; acknowledge what you have read to resume`,
          });
          break;
        case "drop":
          break;
      }
    }
  }

  /** A frame for every viewer of a session (status changes, screens, captured scrollback). */
  relay(sessionId: string, frame: Record<string, unknown>) {
    const text = JSON.stringify(frame);
    for (const ws of this.port.viewers(sessionId)) {
      try {
        ws.send(text);
      } catch {
        // The viewer left.
      }
    }
  }

  async onMessage(ws: WebSocket, message: string | ArrayBuffer) {
    const attachment = this.attachmentOf(ws);
    if (this.closedAtExpiry(ws, Date.now())) return;
    const size = typeof message === "string" ? message.length : message.byteLength;
    if (size > MAX_VIEWER_FRAME_BYTES) return ws.close(TERMINAL_CLOSE.tooBig, `frames are at most ${MAX_VIEWER_FRAME_BYTES} bytes`);
    const parsed = parseViewerFrame(message);
    if (!parsed.ok) return sendJson(ws, { type: "error", code: parsed.code, message: parsed.message });
    const frame = parsed.frame;
    const session_id = attachment.sessionId;
    switch (frame.type) {
      case "ack": {
        const flow = this.flowOf(ws);
        if (flow.ack(frame.bytes)) {
          sendJson(ws, { type: "resync", dropped: flow.resume() });
          this.remember(ws, { paused: false });
          this.replay(ws, flow, session_id);
        }
        return;
      }
      case "capture":
      case "input":
      case "resize": {
        if (!attachment.writer) return refuse(ws, frame, "FORBIDDEN", "viewers can only watch this terminal");
        if (this.rate.exceeded(ws)) return refuse(ws, frame, "RATE_LIMITED", `at most ${TERMINAL_INPUTS_PER_SECOND} input, resize and capture frames a second`);
        return this.inTurn(ws, () => this.fromWriter(ws, frame));
      }
    }
  }

  /** A writer's frames are handled one after another, in the order they came, whatever each waits for. */
  private inTurn(ws: WebSocket, work: () => Promise<void>) {
    const turn = (this.turns.get(ws) ?? Promise.resolve()).then(work);
    const settled = turn.catch(() => undefined);
    this.turns.set(ws, settled);
    void settled.then(() => this.turns.get(ws) === settled && this.turns.delete(ws));
    return turn;
  }

  /** Input, a resize or a capture, from a writer whose access is checked again first (terminal-access.ts). */
  private async fromWriter(ws: WebSocket, frame: Extract<ViewerFrame, { type: "input" | "resize" | "capture" }>) {
    const attachment = this.attachmentOf(ws);
    const session_id = attachment.sessionId;
    let access: TerminalAccess;
    try {
      access = await this.access.of(ws, attachment);
    } catch {
      return refuse(ws, frame, "INTERNAL_ERROR", "the hub could not check your access to this terminal; send it again");
    }
    if (!access.watch) return this.disconnect([ws], null, null, "your access to this project ended");
    if (!access.write) {
      // Made a viewer, or no longer a member of every project the server serves: from now on this socket only watches.
      this.remember(ws, { writer: false });
      return refuse(ws, frame, "FORBIDDEN", "your access changed: you can only watch this terminal now");
    }
    if (frame.type === "capture") {
      // A capture makes the daemon read the whole tmux history: one at a time per session.
      const last = this.captures.get(session_id) ?? 0;
      if (Date.now() - last < CAPTURE_INTERVAL_MS) return refuse(ws, frame, "RATE_LIMITED", `one capture every ${CAPTURE_INTERVAL_MS / 1000} s`);
      this.captures.set(session_id, Date.now());
      if (!this.port.toDaemon({ type: "capture_scrollback", session_id })) refuse(ws, frame, "DAEMON_OFFLINE", "the server's daemon is not connected");
      return;
    }
    const status = await this.port.statusOf(session_id);
    if (!isOpenSession(status)) return refuse(ws, frame, "SESSION_CLOSED", `the session is ${status ?? "closed"}`);
    const push =
      frame.type === "input"
        ? { type: "session_input", session_id, data: frame.data }
        : { type: "session_resize", session_id, cols: frame.cols, rows: frame.rows };
    if (!this.port.toDaemon(push)) refuse(ws, frame, "DAEMON_OFFLINE", "the server's daemon is not connected");
  }

  closed(ws: WebSocket) {
    this.flows.delete(ws);
    this.attachments.delete(ws);
    this.access.forget(ws);
    this.rate.forget(ws);
    this.turns.delete(ws);
  }

  /**
   * Closes the viewers a person (or anyone, for null) has of these projects (null: all), after their access changed;
   * the person's other viewers have their access checked again at their next frame (typing depends on every project
   * the server serves).
   */
  disconnect(sockets: WebSocket[], userId: string | null, projectIds: readonly string[] | null, reason: string) {
    if (userId !== null) this.access.forgetUser(userId, (ws) => this.attachmentOf(ws));
    for (const ws of sockets) {
      const a = this.attachmentOf(ws);
      if ((userId === null || a.userId === userId) && (projectIds === null || projectIds.includes(a.projectId))) {
        try {
          ws.close(TERMINAL_CLOSE.gone, reason);
        } catch {
          // Already closed.
        }
        this.closed(ws);
      }
    }
  }

  /** Closes viewers whose token has expired; returns the next expiry among the others. */
  closeExpired(sockets: WebSocket[], now: number): number | null {
    let next: number | null = null;
    for (const ws of sockets) {
      if (this.closedAtExpiry(ws, now)) continue;
      const at = this.attachmentOf(ws).expiresAt;
      next = next === null ? at : Math.min(next, at);
    }
    return next;
  }

  /** The session's scrollback, counted against the viewer's window like any output. */
  private replay(ws: WebSocket, flow: ViewerFlow, sessionId: string) {
    const kept = this.port.scrollback.bytes(sessionId);
    for (let at = 0; at < kept.byteLength; at += REPLAY_FRAME_BYTES) {
      const part = kept.subarray(at, at + REPLAY_FRAME_BYTES);
      flow.unacked += part.byteLength;
      try {
        ws.send(outputFrame(part.toBase64()));
      } catch {
        return;
      }
    }
  }

  private closedAtExpiry(ws: WebSocket, now: number) {
    if (now < this.attachmentOf(ws).expiresAt) return false;
    try {
      ws.close(TERMINAL_CLOSE.expired, "the access token expired; connect again with a fresh one");
    } catch {
      // Already closed.
    }
    this.closed(ws);
    return true;
  }

  /** Flows live in memory; after the link was evicted a viewer starts again with nothing unacknowledged (still paused if it was). */
  private flowOf(ws: WebSocket) {
    let flow = this.flows.get(ws);
    if (!flow) {
      this.flows.set(ws, (flow = new ViewerFlow()));
      flow.paused = this.attachmentOf(ws).paused === true;
    }
    return flow;
  }

  private remember(ws: WebSocket, change: Partial<ViewerAttachment>) {
    const attachment = { ...this.attachmentOf(ws), ...change };
    this.attachments.set(ws, attachment);
    ws.serializeAttachment(attachment);
  }

  private attachmentOf(ws: WebSocket): ViewerAttachment {
    let attachment = this.attachments.get(ws);
    if (!attachment) this.attachments.set(ws, (attachment = ws.deserializeAttachment() as ViewerAttachment));
    return attachment;
  }
}
