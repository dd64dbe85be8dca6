/**
 * A session's terminal over its WebSocket: output in, keystrokes and sizes
 * out, with the flow control the hub requires (output is acknowledged as it is
 * shown, or the hub pauses it). Drops reconnect with a fresh token after a
 * growing pause; every connection starts with the recent scrollback, so the
 * screen is cleared before it. A writer's frames are paced (terminal-input.ts),
 * and input that does not reach the session is told, never dropped silently.
 */
import { ApiError, currentAccessToken, hub, ok, refresh } from "./api";
import { base64FromBytes, bytesFromBase64 } from "./base64";
import { CLOSE_GONE, CLOSE_REVOKED } from "./close-codes";
import { Refusals, WriterOutbox, type WriterFrame } from "./terminal-input";
import type { SessionStatus } from "./types";

export type TerminalLinkState = "connecting" | "live" | "lagging" | "reconnecting" | "ended";

export interface StatusChange {
  status: SessionStatus;
  exit_code?: number | null;
  error?: string | null;
}

export interface TerminalHandlers {
  /** What is shown is stale: the scrollback follows as output (on each connection, and when live output resumes). */
  clear(): void;
  /** Whether this person may type into the session, as the hub said on connecting. */
  writer(writer: boolean): void;
  /** Output to show; `shown` is called once it is, which acknowledges it. */
  output(bytes: Uint8Array, shown: () => void): void;
  status(change: StatusChange): void;
  scrollback(lines: string[]): void;
  /** A refusal or a pause to tell the person of (null: nothing to tell any more). */
  notice(message: string | null): void;
  state(state: TerminalLinkState): void;
}

type ServerFrame =
  | ({ type: "ready"; writer: boolean } & StatusChange)
  | { type: "output"; data: string }
  | ({ type: "status" } & StatusChange)
  | { type: "lagging" }
  | { type: "resync"; dropped: number }
  | { type: "scrollback"; lines: string[]; error?: string }
  /** `data`: the input of a frame the hub refused. */
  | { type: "error"; code: string; message: string; data?: string };

/** The hub pauses output after 1 MiB unacknowledged; acknowledging every 64 KiB keeps well clear of it. */
const ACK_EVERY_BYTES = 64 * 1024;
/** Output that stopped short of 64 KiB is acknowledged after this pause. */
const ACK_IDLE_MS = 100;
const MAX_BACKOFF_MS = 10_000;
const GONE = "This session is gone, or you no longer have access to it.";

export class TerminalLink {
  private ws: WebSocket | null = null;
  private attempts = 0;
  private stopped = false;
  /** Bytes shown since the last ack on the current socket. */
  private unacked = 0;
  private ackTimer: ReturnType<typeof setTimeout> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private isWriter = false;
  /** Whether the last socket closed before it opened: the hub may have refused it. */
  private refused = false;
  private readonly encoder = new TextEncoder();
  private readonly outbox = new WriterOutbox((frame) => this.deliver(frame));
  private readonly refusals = new Refusals(() => this.showNotice());
  /** What the hub last said of the connection (a pause, an end), beside any refusal. */
  private connectionNotice: string | null = null;

  constructor(
    private readonly projectId: string,
    private readonly sessionId: string,
    private readonly on: TerminalHandlers,
  ) {}

  start() {
    this.stopped = false;
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.ackTimer);
    this.outbox.drain();
    this.refusals.dispose();
    this.ws?.close(1000, "done");
  }

  /** Keystrokes and pastes as xterm.js gives them (a string, sent as UTF-8), gathered into frames. */
  input(text: string) {
    this.typed(this.encoder.encode(text));
  }

  /** Bytes xterm.js reports as binary (some mouse reports): one byte a character. */
  binaryInput(text: string) {
    this.typed(Uint8Array.from(text, (c) => c.charCodeAt(0) & 0xff));
  }

  resize(cols: number, rows: number) {
    if (this.connectedWriter()) this.outbox.resize(cols, rows);
  }

  /** Asks for the session's scrollback as text; it arrives through `scrollback`. */
  capture() {
    if (this.connectedWriter()) this.outbox.requestCapture();
  }

  get writer() {
    return this.isWriter;
  }

  private connectedWriter() {
    return this.isWriter && this.ws?.readyState === WebSocket.OPEN;
  }

  private typed(bytes: Uint8Array) {
    if (this.connectedWriter()) this.outbox.input(bytes);
    else this.notSent(bytes);
  }

  private notSent(bytes: Uint8Array) {
    if (bytes.length > 0) this.refusals.refused("the terminal was not connected", bytes);
  }

  /** A writer's frame, when the outbox lets it go. */
  private deliver(frame: WriterFrame) {
    if (!this.connectedWriter()) {
      if (frame.type === "input") this.notSent(frame.bytes);
      return;
    }
    if (frame.type !== "input") return this.ws!.send(JSON.stringify(frame));
    this.ws!.send(JSON.stringify({ type: "input", data: base64FromBytes(frame.bytes) }));
    this.refusals.delivered();
  }

  private notice(text: string | null) {
    this.connectionNotice = text;
    this.showNotice();
  }

  private showNotice() {
    this.on.notice([this.connectionNotice, this.refusals.text].filter(Boolean).join(" ") || null);
  }

  private connect() {
    if (this.stopped) return;
    const token = currentAccessToken();
    if (!token) return this.reconnect();
    this.on.state(this.attempts === 0 ? "connecting" : "reconnecting");
    const url = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/api/v1/projects/${this.projectId}/sessions/${this.sessionId}/terminal`;
    const ws = new WebSocket(url, ["bearer", token]);
    this.ws = ws;
    this.unacked = 0;
    clearTimeout(this.ackTimer);
    this.ackTimer = undefined;
    let opened = false;
    ws.onopen = () => (opened = true);
    ws.onmessage = (e) => this.onFrame(ws, JSON.parse(String(e.data)) as ServerFrame);
    ws.onclose = (e) => {
      if (this.ws !== ws || this.stopped) return;
      this.isWriter = false;
      this.notSent(this.outbox.drain());
      this.refused = !opened;
      // Access ended or the session is gone: reconnecting would only be refused.
      if (e.code === CLOSE_GONE || e.code === CLOSE_REVOKED) return this.end(GONE);
      if (e.code === 1000) return this.end("The hub ended the terminal.");
      // Any other drop, an expired token (4001) included, reconnects with a fresh token.
      this.reconnect();
    };
  }

  private end(notice: string) {
    this.stopped = true;
    this.notice(notice);
    this.on.state("ended");
  }

  /** Connects again after a growing pause (at once the first time), with a fresh token. */
  private reconnect() {
    this.on.state("reconnecting");
    const delay = this.attempts === 0 ? 0 : Math.min(MAX_BACKOFF_MS, 250 * 2 ** this.attempts);
    this.attempts++;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(async () => {
      if (this.stopped) return;
      const refreshed = await refresh();
      if (refreshed === "signed-out") return this.end("You were signed out.");
      if (refreshed === "unavailable") return this.reconnect();
      if (this.refused && (await this.gone())) return this.end(GONE);
      this.connect();
    }, delay);
  }

  /** A refused upgrade closes like any drop (the browser hides its status); the API tells whether the session is still there to watch. */
  private async gone() {
    try {
      await ok(hub.GET("/api/v1/projects/{id}/sessions/{sid}", { params: { path: { id: this.projectId, sid: this.sessionId } } }));
      return false;
    } catch (e) {
      return e instanceof ApiError && (e.status === 403 || e.status === 404);
    }
  }

  private onFrame(ws: WebSocket, frame: ServerFrame) {
    if (this.ws !== ws) return;
    switch (frame.type) {
      case "ready":
        this.attempts = 0;
        this.isWriter = frame.writer;
        this.on.clear();
        this.on.writer(frame.writer);
        this.on.status(frame);
        this.notice(null);
        this.on.state("live");
        break;
      case "output": {
        const bytes = bytesFromBase64(frame.data);
        this.on.output(bytes, () => this.shown(ws, bytes.length));
        break;
      }
      case "status":
        this.on.status(frame);
        break;
      case "lagging":
        // The hub's detail speaks of acknowledgements; the person only needs to know the screen is behind.
        this.notice("This page fell behind the session's output: it is paused, and redraws once the page has caught up.");
        this.on.state("lagging");
        break;
      case "resync":
        this.on.clear();
        this.notice(null);
        this.on.state("live");
        break;
      case "scrollback":
        this.on.scrollback(frame.lines);
        if (frame.error) this.refusals.refused(frame.error);
        break;
      case "error":
        if (frame.data) this.refusals.refused(`the hub refused it: ${frame.message}`, bytesFromBase64(frame.data));
        else this.refusals.refused(frame.message);
        break;
    }
  }

  private shown(ws: WebSocket, bytes: number) {
    if (this.ws !== ws) return;
    this.unacked += bytes;
    if (this.unacked >= ACK_EVERY_BYTES) this.ack();
    else this.ackTimer ??= setTimeout(() => this.ack(), ACK_IDLE_MS);
  }

  private ack() {
    clearTimeout(this.ackTimer);
    this.ackTimer = undefined;
    if (this.unacked === 0) return;
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: "ack", bytes: this.unacked }));
    this.unacked = 0;
  }
}
