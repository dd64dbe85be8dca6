/**
 * A project's live events over its WebSocket, gap-free across drops: every
 * (re)connection resumes from the last seq applied, a socket too far behind
 * pages GET /events instead, and the access token is renewed on the socket
 * before it expires.
 */
import { api, currentAccessToken, refresh } from "./api";
import type { HubEvent } from "./types";

export type FeedStatus = "connecting" | "live" | "reconnecting" | "closed";

/** How often the socket's token is renewed (access tokens last 15 minutes). */
const RENEW_MS = 10 * 60_000;
const MAX_BACKOFF_MS = 10_000;

interface EventFrame extends Omit<HubEvent, "event_type"> {
  type: "event";
  event_type: string;
}

export class ProjectFeed {
  private ws: WebSocket | null = null;
  private attempts = 0;
  private stopped = false;
  private renewTimer: ReturnType<typeof setInterval> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly projectId: string,
    /** The seq of the last event already reflected in what is shown. */
    private lastSeq: number,
    private readonly onEvents: (events: HubEvent[]) => void,
    private readonly onStatus: (status: FeedStatus) => void,
  ) {}

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
    if (!token) {
      void refresh().then((ok) => (ok ? this.connect() : this.onStatus("closed")));
      return;
    }
    this.onStatus(this.attempts === 0 ? "connecting" : "reconnecting");
    const url = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/api/v1/projects/${this.projectId}/ws?since=${this.lastSeq}`;
    const ws = new WebSocket(url, ["bearer", token]);
    this.ws = ws;
    ws.onmessage = (e) => this.onFrame(JSON.parse(String(e.data)));
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      clearInterval(this.renewTimer);
      if (this.stopped) return;
      if (e.code === 4003) return this.onStatus("closed"); // access to the project was revoked
      this.onStatus("reconnecting");
      // An expired token is renewed before reconnecting; other drops back off.
      const delay = e.code === 4001 ? 0 : Math.min(MAX_BACKOFF_MS, 250 * 2 ** this.attempts++);
      this.retryTimer = setTimeout(() => void (e.code === 4001 ? refresh() : Promise.resolve()).then(() => this.connect()), delay);
    };
    this.renewTimer = setInterval(() => {
      void refresh().then((ok) => ok && ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ type: "auth", access_token: currentAccessToken() })));
    }, RENEW_MS);
  }

  private onFrame(frame: EventFrame | { type: "resumed"; last_seq: number } | { type: "resync_required"; since: number; head: number } | { type: string }) {
    if (frame.type === "event") {
      const e = frame as EventFrame;
      if (e.seq <= this.lastSeq) return;
      this.lastSeq = e.seq;
      this.onEvents([{ ...e, event_type: e.event_type }]);
    } else if (frame.type === "resumed") {
      this.attempts = 0;
      this.onStatus("live");
    } else if (frame.type === "resync_required") {
      void this.catchUp();
    }
  }

  /** Too far behind for the socket: page the log, then resume on the socket from where the log ended. */
  private async catchUp() {
    for (;;) {
      const page = await api<{ events: (HubEvent & { type: string })[]; next_since: number }>(
        `/api/v1/projects/${this.projectId}/events?since=${this.lastSeq}&limit=1000`,
      );
      if (page.events.length === 0) break;
      this.onEvents(page.events.map((e) => ({ ...e, event_type: e.type })));
      this.lastSeq = page.next_since;
    }
    this.ws?.send(JSON.stringify({ type: "resume", since: this.lastSeq }));
  }
}
