/**
 * A project's live events over its WebSocket, gap-free across drops: every
 * (re)connection resumes from the last seq applied, a socket too far behind
 * pages GET /events instead, and the access token is renewed on the socket
 * before it expires and before every reconnection.
 */
import { currentAccessToken, hub, ok, refresh } from "./api";
import { CLOSE_GONE, CLOSE_REVOKED } from "./close-codes";
import { fromLog, type HubEvent } from "./types";

export type FeedStatus = "connecting" | "live" | "reconnecting" | "closed";

/** How often the socket's token is renewed (access tokens last 15 minutes). */
const RENEW_MS = 10 * 60_000;
const MAX_BACKOFF_MS = 10_000;

interface EventFrame extends Omit<HubEvent, "event_type"> {
  type: "event";
  event_type: string;
}

/** New entries in the project's permission log: not an event (no seq, never replayed), a cue to read the log again. */
export interface PermissionLoggedFrame {
  type: "permission_logged";
  count: number;
  newest_created_at: string;
}

/** Whoever hears every open feed's events (the inbox's count, which reads itself again when something waits on people). */
const everyFeed = new Set<(events: HubEvent[]) => void>();
export function onAnyFeedEvents(listener: (events: HubEvent[]) => void): () => void {
  everyFeed.add(listener);
  return () => everyFeed.delete(listener);
}

export class ProjectFeed {
  private ws: WebSocket | null = null;
  private attempts = 0;
  private stopped = false;
  /** Paging the log after resync_required (the hub sends nothing live until the resume that follows). */
  private catchingUp = false;
  private renewTimer: ReturnType<typeof setInterval> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly projectId: string,
    /** The seq of the last event already reflected in what is shown. */
    private lastSeq: number,
    private readonly onBatch: (events: HubEvent[]) => void,
    private readonly onStatus: (status: FeedStatus) => void,
    private readonly onPermissionLogged?: (frame: PermissionLoggedFrame) => void,
  ) {}

  private onEvents(events: HubEvent[]) {
    this.onBatch(events);
    everyFeed.forEach((listener) => listener(events));
  }

  start() {
    this.stopped = false;
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearInterval(this.renewTimer);
    clearTimeout(this.retryTimer);
    this.ws?.close(1000, "done");
    this.onStatus("closed");
  }

  private connect() {
    const token = currentAccessToken();
    if (this.stopped) return;
    if (!token) return this.reconnect(true);
    this.onStatus(this.attempts === 0 ? "connecting" : "reconnecting");
    const url = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/api/v1/projects/${this.projectId}/ws?since=${this.lastSeq}`;
    const ws = new WebSocket(url, ["bearer", token]);
    this.ws = ws;
    this.catchingUp = false;
    ws.onmessage = (e) => this.onFrame(ws, JSON.parse(String(e.data)));
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      clearInterval(this.renewTimer);
      if (this.stopped) return;
      // Access to the project ended, or the project is gone: reconnecting would only be refused.
      if (e.code === CLOSE_REVOKED || e.code === CLOSE_GONE) return this.onStatus("closed");
      this.reconnect(true);
    };
    this.renewTimer = setInterval(() => {
      void refresh().then(
        (r) => r === "ok" && ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ type: "auth", access_token: currentAccessToken() })),
      );
    }, RENEW_MS);
  }

  /**
   * Connects again after a growing pause (at once the first time), with a
   * fresh token: a socket refused for an expired token closes like any drop.
   */
  private reconnect(renew: boolean) {
    this.onStatus("reconnecting");
    const delay = this.attempts === 0 ? 0 : Math.min(MAX_BACKOFF_MS, 250 * 2 ** this.attempts);
    this.attempts++;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(async () => {
      if (this.stopped) return;
      const refreshed = renew ? await refresh() : "ok";
      if (refreshed === "signed-out") return this.onStatus("closed");
      if (refreshed === "unavailable") return this.reconnect(true);
      this.connect();
    }, delay);
  }

  private onFrame(
    ws: WebSocket,
    frame:
      EventFrame | PermissionLoggedFrame | { type: "resumed"; last_seq: number } | { type: "resync_required"; since: number; head: number } | { type: string },
  ) {
    if (frame.type === "event") {
      this.apply(frame as EventFrame);
    } else if (frame.type === "permission_logged") {
      this.onPermissionLogged?.(frame as PermissionLoggedFrame);
    } else if (frame.type === "resumed") {
      this.attempts = 0;
      this.onStatus("live");
    } else if (frame.type === "resync_required" && !this.catchingUp) {
      void this.catchUp(ws);
    }
  }

  private apply(e: EventFrame) {
    if (e.seq <= this.lastSeq) return;
    this.lastSeq = e.seq;
    this.onEvents([{ ...e, event_type: e.event_type }]);
  }

  /**
   * Too far behind for the socket: page the log, then resume on the socket
   * from where the log ended. The hub holds live events back meanwhile and
   * sends them with that resume's replay, after the backlog, in seq order.
   * A failed page drops the socket, and the reconnection starts over from the
   * last seq applied, so nothing is skipped.
   */
  private async catchUp(ws: WebSocket) {
    this.catchingUp = true;
    try {
      for (;;) {
        const page = await ok(
          hub.GET("/api/v1/projects/{id}/events", { params: { path: { id: this.projectId }, query: { since: String(this.lastSeq), limit: 1000 } } }),
        );
        if (this.ws !== ws) return;
        if (page.events.length === 0) break;
        this.onEvents(page.events.map(fromLog));
        this.lastSeq = page.next_since;
      }
      this.catchingUp = false;
      ws.send(JSON.stringify({ type: "resume", since: this.lastSeq }));
    } catch {
      if (this.ws === ws) ws.close(4000, "catching up failed");
    }
  }
}
