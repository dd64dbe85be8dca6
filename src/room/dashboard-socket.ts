/**
 * The dashboard side of a ProjectRoom's sockets: live events in seq order,
 * resume after a drop (replayed in the room's queue, between operations, so
 * none is skipped or sent twice), token renewal, and closing at the token's
 * expiry. A socket told to page the log (resync_required) gets nothing live
 * until it resumes, so that resume's replay comes first, then live events.
 * A socket opened without `since` may still send a `resume` as its first
 * message: it gets nothing live until then, or until RESUME_GRACE_MS have
 * passed, when what committed meanwhile is replayed to it before it goes live.
 */
import { InvalidToken, verifyAccessToken } from "../auth/jwt";
import type { Db } from "../db/client";
import { isSeq } from "../domain/seq";
import type { Env } from "../runtime/env";
import { eventView } from "../views/events";
import { eventBacklog, eventsAfter, maySeeProject } from "./room-queries";
import { FrameRate, sendJson } from "../http/websockets";
import { attachmentOf, CLOSE, eventFrame, type DashboardAttachment, type DashboardFrame } from "./sockets";
import type { CommittedEvent } from "./statements";

const REPLAY_PAGE = 500;
/** The longest backlog a socket replays inside the room's queue. */
const MAX_REPLAY = 5000;
const DASHBOARD_FRAMES_PER_SECOND = 20;
/** How long after opening without `since` a socket's live events wait for a `resume` message. */
export const RESUME_GRACE_MS = 1000;

/** What the dashboard protocol needs of its room. */
export interface DashboardRoomPort {
  projectId: string;
  env: Env;
  db: Db;
  /** The directory (people, memberships): the room's shard holds its project's rows only. */
  directory: D1Database;
  /** The room's open dashboard sockets. */
  sockets(): WebSocket[];
  /** Runs work in the room's queue, between operations. */
  serialise<T>(work: () => Promise<T>): Promise<T>;
  scheduleAlarm(at: number): Promise<void>;
}

const send = (ws: WebSocket, frame: DashboardFrame) => sendJson(ws, frame);

/**
 * What the room keeps in memory for each open dashboard, so that publishing
 * an event reads no attachment, allocates nothing and looks nothing up per
 * socket. Rebuilt from the attachments when a woken room first needs it.
 */
interface Dashboard {
  readonly ws: WebSocket;
  readonly userId: string;
  /** When its access token expires (ms since epoch). */
  expiresAt: number;
  /** Replaying missed events: live events reach it through the replay instead. */
  replaying: boolean;
  /** Told to page the log (resync_required): live events wait for its resume, whose replay brings them in order. */
  held: boolean;
  /** Opened without `since`, and neither resumed nor past its grace (`until`): the first seq it missed meanwhile (0 for none). */
  awaitingResume: { missedFrom: number; until: number } | null;
  /** The seq range it has received live (0 and 0 for none), so a later resume sends none of it twice. */
  firstLive: number;
  lastLive: number;
}

export class DashboardProtocol {
  private readonly rate = new FrameRate(DASHBOARD_FRAMES_PER_SECOND);
  /** The open dashboards; null until first needed after the room woke (sockets outlive a hibernating room). */
  private index: Map<WebSocket, Dashboard> | null = null;

  constructor(private readonly room: DashboardRoomPort) {}

  /** A socket the room has just accepted; with `since`, it replays before it goes live (the gap-free way in). */
  async accepted(ws: WebSocket, attachment: DashboardAttachment, since: number | null) {
    ws.serializeAttachment(attachment);
    const d = dashboardOf(ws, attachment);
    this.dashboards().set(ws, d);
    if (since !== null) void this.startReplay(ws, since);
    else {
      d.awaitingResume = { missedFrom: 0, until: Date.now() + RESUME_GRACE_MS };
      // A room never idle may run its timer late: the next publish past the grace ends it too.
      setTimeout(() => this.graceOver(d), RESUME_GRACE_MS);
    }
    await this.room.scheduleAlarm(attachment.expiresAt);
  }

  async onMessage(ws: WebSocket, message: string | ArrayBuffer) {
    if (this.closedAtExpiry(this.dashboard(ws), Date.now())) return;
    if (this.rate.exceeded(ws))
      return send(ws, { type: "error", code: "INVALID_REQUEST", message: `at most ${DASHBOARD_FRAMES_PER_SECOND} frames per second` });
    let frame: unknown;
    try {
      frame = JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message));
    } catch {
      frame = null;
    }
    if (typeof frame !== "object" || frame === null || Array.isArray(frame))
      return send(ws, { type: "error", code: "INVALID_REQUEST", message: "frames are JSON objects" });
    const { type, since, access_token } = frame as { type?: unknown; since?: unknown; access_token?: unknown };
    if (type === "resume") {
      if (!isSeq(since)) return send(ws, { type: "error", code: "INVALID_REQUEST", message: "resume needs since: a non-negative integer" });
      if (this.dashboard(ws).replaying) return send(ws, { type: "error", code: "INVALID_REQUEST", message: "a resume is already running on this socket" });
      await this.startReplay(ws, since);
      return;
    }
    if (type === "auth" && typeof access_token === "string") return this.renewToken(ws, access_token);
    send(ws, { type: "error", code: "INVALID_MESSAGE_TYPE", message: `unknown message type ${JSON.stringify(type)}` });
  }

  closed(ws: WebSocket) {
    this.index?.delete(ws);
    this.rate.forget(ws);
  }

  /** Committed events go to every live dashboard, in seq order; none after its token expired. Each frame is built once. */
  publish(committed: CommittedEvent[]) {
    if (committed.length === 0) return;
    const frames = committed.map(eventFrame);
    const first = committed[0]!.seq;
    const last = committed.at(-1)!.seq;
    const now = Date.now();
    for (const d of this.dashboards().values()) {
      if (d.awaitingResume) {
        d.awaitingResume.missedFrom ||= first;
        // These events committed: the replay that ends the grace brings them, after what was missed before.
        if (now >= d.awaitingResume.until) this.graceOver(d);
        continue;
      }
      if (d.replaying || d.held || this.closedAtExpiry(d, now)) continue;
      try {
        for (const frame of frames) d.ws.send(frame);
        if (d.firstLive === 0) d.firstLive = first;
        d.lastLive = last;
      } catch {
        // Closed without its close handler having run (one the room closed itself): it needs no more frames.
        this.index?.delete(d.ws);
      }
    }
  }

  /** A frame outside the event log to every dashboard whose token is still good (replaying or not: it carries no seq). */
  announce(frame: DashboardFrame) {
    const now = Date.now();
    for (const d of this.dashboards().values()) if (!this.closedAtExpiry(d, now)) send(d.ws, frame);
  }

  /** Closes a person's dashboards here: their access to the project ended (removed, demoted, deleted). */
  disconnectUser(userId: string) {
    for (const d of this.dashboards().values()) {
      if (d.userId === userId) d.ws.close(CLOSE.unauthorized, "access to this project was revoked");
    }
  }

  /** Closes dashboards whose access token has expired; returns when the next one expires. */
  closeExpired(now: number): number | null {
    let next: number | null = null;
    for (const d of this.dashboards().values()) {
      if (!this.closedAtExpiry(d, now)) next = next === null ? d.expiresAt : Math.min(next, d.expiresAt);
    }
    return next;
  }

  /** The open dashboards, read from the sockets' attachments once after the room woke. */
  private dashboards(): Map<WebSocket, Dashboard> {
    if (this.index === null) {
      this.index = new Map();
      for (const ws of this.room.sockets()) this.index.set(ws, dashboardOf(ws, attachmentOf(ws) as DashboardAttachment));
    }
    return this.index;
  }

  /** One dashboard's record; a socket the room no longer lists gets a detached one, which nothing publishes to. */
  private dashboard(ws: WebSocket): Dashboard {
    return this.dashboards().get(ws) ?? dashboardOf(ws, attachmentOf(ws) as DashboardAttachment);
  }

  /** From now until the replay has caught up, live events reach this socket through the replay. */
  private startReplay(ws: WebSocket, since: number, answered = true) {
    const d = this.dashboard(ws);
    d.replaying = true;
    d.awaitingResume = null;
    if (d.held) this.hold(d, false);
    return this.room.serialise(() => this.replay(d, since, answered));
  }

  /** No resume came in time: what the socket missed while it waited comes first (with no `resumed`, as none was asked), then live events. */
  private graceOver(d: Dashboard) {
    const waited = d.awaitingResume;
    if (!waited || this.index?.get(d.ws) !== d) return;
    d.awaitingResume = null;
    if (waited.missedFrom > 0) void this.startReplay(d.ws, waited.missedFrom - 1, false);
  }

  /** Holds live events back from a socket until it resumes, or lets them through again; kept in its attachment, which outlives the room's sleep. */
  private hold(d: Dashboard, held: boolean) {
    d.held = held;
    d.ws.serializeAttachment({ ...(attachmentOf(d.ws) as DashboardAttachment), held } satisfies DashboardAttachment);
  }

  /**
   * Sends every event after `since` that this socket has not had live, then
   * hands it back to live publishing. Runs in the queue, so no event commits
   * in between.
   */
  private async replay(d: Dashboard, since: number, answered: boolean) {
    const { ws } = d;
    const live = d.firstLive === 0 ? null : { first: d.firstLive, last: d.lastLive };
    try {
      // A replay runs between writes: a backlog too long for that is read from GET /events instead.
      const backlog = await eventBacklog(this.room.env.DB, this.room.projectId, since);
      // Events of archived tasks are read from the archive by GET /events, not replayed here.
      if (backlog && (backlog.n > MAX_REPLAY || backlog.archived)) {
        // Nothing live until it resumes: what commits while it pages the log comes with that resume's replay, in order.
        this.hold(d, true);
        send(ws, {
          type: "resync_required",
          since,
          head: backlog.head,
          detail: `${backlog.archived ? "events after since are archived" : `more than ${MAX_REPLAY} events behind`}: page GET /events from since, then resume from the last seq read`,
        });
        return;
      }
      let after = since;
      for (;;) {
        const page = await eventsAfter(this.room.db, this.room.projectId, after, REPLAY_PAGE);
        if (this.closedAtExpiry(d, Date.now())) return;
        for (const e of page) {
          // The log holds only the events rooms appended, so its types are EventTypes.
          if (!live || e.seq < live.first || e.seq > live.last) ws.send(eventFrame({ ...eventView(e), data: e.data } as CommittedEvent));
        }
        after = page.at(-1)?.seq ?? after;
        if (page.length < REPLAY_PAGE) break;
      }
      if (after > since) {
        d.firstLive = Math.min(live?.first ?? since + 1, since + 1);
        d.lastLive = after;
      }
      if (answered) send(ws, { type: "resumed", last_seq: after });
    } catch {
      // The socket closed while replaying.
    } finally {
      d.replaying = false;
    }
  }

  /**
   * A dashboard may present a fresh access token to keep its socket past the
   * old token's expiry — if the person may still see the project.
   */
  private async renewToken(ws: WebSocket, token: string) {
    const attachment = attachmentOf(ws) as DashboardAttachment;
    try {
      const identity = await verifyAccessToken(this.room.env, token);
      if (!("userId" in identity) || identity.userId !== attachment.userId) throw new InvalidToken("the token is for someone else");
      if (!(await maySeeProject(this.room.directory, this.room.projectId, identity.userId))) {
        ws.close(CLOSE.unauthorized, "access to this project was revoked");
        return;
      }
      const expiresAt = identity.expiresAt * 1000;
      // Read again: a resume may have changed the attachment while the token was checked.
      ws.serializeAttachment({ ...(attachmentOf(ws) as DashboardAttachment), expiresAt } satisfies DashboardAttachment);
      this.dashboard(ws).expiresAt = expiresAt;
      await this.room.scheduleAlarm(expiresAt);
      send(ws, { type: "auth_ok", expires_at: new Date(expiresAt).toISOString() });
    } catch (e) {
      send(ws, { type: "error", code: "UNAUTHORIZED", message: e instanceof InvalidToken ? e.message : "the token could not be checked" });
    }
  }

  /**
   * Closes a dashboard whose access token has expired, at the first frame
   * that would reach it after the expiry; the alarm closes idle ones.
   */
  private closedAtExpiry(d: Dashboard, now: number): boolean {
    if (d.expiresAt > now) return false;
    if (d.ws.readyState === WebSocket.OPEN) d.ws.close(CLOSE.tokenExpired, "access token expired; reconnect with a fresh one");
    return true;
  }
}

const dashboardOf = (ws: WebSocket, attachment: DashboardAttachment): Dashboard => ({
  ws,
  userId: attachment.userId,
  expiresAt: attachment.expiresAt,
  replaying: false,
  held: attachment.held === true,
  awaitingResume: null,
  firstLive: 0,
  lastLive: 0,
});
