/**
 * One Durable Object per server: the official daemon's own channel (`/ws/server`, API.md "The official daemon's
 * channel"), people's terminals on the server's sessions, and room held for the rooms' batches giving it tasks when its
 * projects span shards (capacity-ledger.ts). The Worker checks the daemon's first message (its API key) and then
 * connects the socket here, so a link only ever holds authenticated daemons, each on the key it proved; terminals are
 * accepted here once the Worker has checked the person's token and access. One live daemon socket per server: a new
 * one replaces the old. Sockets hibernate.
 */
import { DurableObject } from "cloudflare:workers";
import { logError } from "../runtime/log";
import type { RoomActor, RoomCommand } from "../room/commands";
import type { RoomReachingEnv } from "../runtime/room-rpc";
import { recordAsServer } from "./server-events";
import { sendJson } from "../http/websockets";
import { handleDaemonFrame, type DaemonFrameHandlers } from "./daemon-dispatch";
import { DAEMON_CLOSE, parseDaemonFrame } from "./daemon-frames";
import type { DaemonPush } from "./pushes";
import { CapacityLedger, type HoldAnswer } from "./capacity-ledger";
import { FileTransfers, type TransferOffer, type TransferPeer, type TransferRequest, type TransferView } from "./file-transfers";
import {
  acceptDaemon,
  acceptPersonTunnel,
  acceptViewer,
  DAEMON_TAG,
  forgetSpentTokens,
  HELD_FALLBACK_MS,
  tunnelTag,
  type DaemonAttachment,
  type LinkDoors,
} from "./link-doors";
import { LinkGrants } from "./link-grants";
import { LinkSessions, type SessionStart } from "./link-sessions";
import { PendingRequests, type Waited } from "./pending-requests";
import { PushQueue } from "./push-queue";
import { fsFrame, type FsAnswer, type FsRequest } from "./session-files";
import { execOutcomeOf, PendingExecs, type ExecOutcome } from "./remote-exec";
import { Scrollback } from "./scrollback";
import { terminalAccess } from "./terminal-access";
import { Terminals, VIEWER_TAG, viewerTag } from "./terminals";
import { TUNNEL_ACCESS_RECHECK_MS } from "./tunnel-state";
import { Tunnels, type TunnelPeer, type TunnelRecord } from "./tunnels";

export { SESSION_START_TIMEOUT_MS, type SessionStart } from "./link-sessions";

const kindOf = (ws: WebSocket) => (ws.deserializeAttachment() as { kind?: string } | null)?.kind;
const isDaemon = (ws: WebSocket) => kindOf(ws) === "daemon";
const connectedAt = (ws: WebSocket) => (ws.deserializeAttachment() as DaemonAttachment).connectedAt;

/** The links reach each other too: a file goes from the sender's link to the receiver's. */
interface LinkEnv extends RoomReachingEnv {
  SERVER_LINK: DurableObjectNamespace<ServerLink>;
}

export class ServerLink extends DurableObject<LinkEnv> {
  private readonly scrollback = new Scrollback(this.ctx.storage);
  private readonly sessions: LinkSessions = new LinkSessions({
    env: this.env,
    storage: this.ctx.storage,
    scrollback: this.scrollback,
    terminals: () => this.terminals,
    pushes: () => this.pushes,
    serverId: () => this.serverId(),
    daemonConnected: () => this.daemon() !== undefined,
    toDaemon: (frame) => this.toDaemon(frame),
    daemonError: (ws, code, detail) => this.daemonError(ws, code, detail),
    scheduleAlarm: (at) => this.scheduleAlarm(at),
  });
  private readonly terminals = new Terminals({
    viewers: (sessionId) => this.ctx.getWebSockets(viewerTag(sessionId)),
    scrollback: this.scrollback,
    statusOf: (sessionId) => this.sessions.statusOf(sessionId),
    toDaemon: (frame) => this.toDaemon(frame),
    access: async (viewer) => terminalAccess(this.env.DB, viewer.userId, await this.serverId(), viewer.projectId),
  });
  private readonly pushes = new PushQueue({
    daemon: () => this.daemon(),
    connectedAt,
    storage: this.ctx.storage,
    db: this.env.DB,
    serverId: this.ctx.id.name,
  });
  private readonly capacity = new CapacityLedger(this.env, this.ctx.storage, () => this.serverId());
  private readonly execs = new PendingExecs();
  private readonly fsRequests = new PendingRequests<FsAnswer>();
  private readonly transfers = new FileTransfers({
    toDaemon: (frame) => this.toDaemon(frame),
    // Both sessions on this server: the transfer never leaves this link.
    peer: (serverId): TransferPeer => (serverId === this.ctx.id.name ? this : this.env.SERVER_LINK.get(this.env.SERVER_LINK.idFromName(serverId))),
    record: (projectId, event, data) => this.recordAs(projectId, { op: "remote_use", event, data }),
    storage: this.ctx.storage,
    scheduleAlarm: (at) => this.scheduleAlarm(at),
  });
  private readonly tunnels = new Tunnels({
    serverId: () => this.serverId(),
    daemonConnected: () => this.daemon() !== undefined,
    toDaemon: (frame) => this.toDaemon(frame),
    toDaemonText: (text) => {
      const daemon = this.daemon();
      daemon?.send(text);
      return daemon !== undefined;
    },
    peer: (serverId): TunnelPeer => this.env.SERVER_LINK.get(this.env.SERVER_LINK.idFromName(serverId)),
    person: (tunnelId) => this.ctx.getWebSockets(tunnelTag(tunnelId))[0],
    mayType: async (userId, projectId) => (await terminalAccess(this.env.DB, userId, await this.serverId(), projectId)).write,
    record: (projectId, event, data) => this.recordAs(projectId, { op: "access_use", event, data }),
    storage: this.ctx.storage,
  });
  private readonly grants = new LinkGrants({
    db: this.env.DB,
    storage: this.ctx.storage,
    tunnels: this.tunnels,
    serverId: () => this.serverId(),
    toDaemon: (frame) => this.toDaemon(frame),
    daemonError: (ws, code, detail) => this.daemonError(ws, code, detail),
    pushTo: (serverId, pushes) => this.env.SERVER_LINK.get(this.env.SERVER_LINK.idFromName(serverId)).push(pushes),
    recordAs: (projectId, command, actor) => this.recordAs(projectId, command, actor),
    scheduleAlarm: (at) => this.scheduleAlarm(at),
  });
  private readonly doors: LinkDoors = {
    ctx: this.ctx,
    sessions: this.sessions,
    scrollback: this.scrollback,
    terminals: this.terminals,
    tunnels: this.tunnels,
    pushes: this.pushes,
    daemon: () => this.daemon(),
    scheduleAlarm: (at) => this.scheduleAlarm(at),
  };
  private readonly frameHandlers: DaemonFrameHandlers = {
    serverId: this.ctx.id.name,
    sessions: this.sessions,
    terminals: this.terminals,
    transfers: this.transfers,
    tunnels: this.tunnels,
    grants: this.grants,
    execs: this.execs,
    fsRequests: this.fsRequests,
    daemonError: (ws, code, detail) => this.daemonError(ws, code, detail),
  };

  constructor(ctx: DurableObjectState, env: LinkEnv) {
    super(ctx, env);
    // Tunnels outlive the link's hibernation: frames for them are known before the first one is handled.
    void ctx.blockConcurrencyWhile(() => this.tunnels.load());
  }

  /** Accepts a daemon the Worker has authenticated, or a person's terminal on one of the server's sessions. */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade") !== "websocket") return new Response("expected a WebSocket upgrade", { status: 426 });
    const path = new URL(request.url).pathname;
    if (path === "/terminal") return acceptViewer(request, this.doors);
    if (path === "/tunnel") return acceptPersonTunnel(request, this.doors);
    return acceptDaemon(request, this.doors);
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer) {
    const kind = kindOf(ws);
    if (kind === "tunnel") return this.tunnels.fromPerson((ws.deserializeAttachment() as { tunnelId: string }).tunnelId, message);
    if (kind !== "daemon") return this.terminals.onMessage(ws, message);
    const frame = parseDaemonFrame(message);
    if (!frame.ok) return this.daemonError(ws, "INVALID_MESSAGE", frame.detail);
    try {
      await handleDaemonFrame(this.frameHandlers, ws, frame.type, frame.frame, message);
    } catch (e) {
      // One frame's failure (D1 unreachable, say) is the daemon's to retry, never the link's end.
      logError("daemon frame failed", { server_id: this.ctx.id.name, operation: frame.type }, e);
      this.daemonError(ws, "INTERNAL_ERROR", `the hub could not handle ${frame.type}`);
    }
  }

  private daemonError(ws: WebSocket, code: string, detail: string) {
    sendJson(ws, { type: "error", code, detail });
  }

  override async webSocketError(ws: WebSocket, error: unknown) {
    logError("link socket failed", { server_id: this.ctx.id.name, operation: "link_socket", viewer: !isDaemon(ws) }, error);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string) {
    const kind = kindOf(ws);
    if (kind === "tunnel") await this.tunnels.personGone((ws.deserializeAttachment() as { tunnelId: string }).tunnelId);
    else if (kind !== "daemon") this.terminals.closed(ws);
    else {
      if (code === 1000 || code === 1001) this.pushes.closedCleanly(ws);
      // What the daemon was running or relaying cannot finish now.
      this.execs.daemonGone();
      this.fsRequests.daemonGone();
      await this.transfers.daemonGone();
      await this.tunnels.daemonGone();
    }
    try {
      ws.close(code, reason);
    } catch {
      // Already closed.
    }
  }

  /**
   * Sessions the daemon never answered fail; viewers whose token expired are closed; pushes held for sessions the
   * daemon did not report go out; ended sessions' scrollback is forgotten after its retention; people's tunnels check
   * their access again; rooms refused room here are offered it once the server has some.
   */
  override async alarm() {
    const now = Date.now();
    let next: number | null = null;
    // Each part answers when it is next due, or null.
    const later = (at: number | null) => (next = at === null ? next : next === null ? at : Math.min(next, at));
    later(await this.sessions.sweep(now));
    const daemon = this.ctx.getWebSockets(DAEMON_TAG)[0];
    if (daemon) {
      const since = (daemon.deserializeAttachment() as DaemonAttachment).connectedAt;
      if (now - since >= HELD_FALLBACK_MS) await this.pushes.sendHeld(() => true);
      else later(since + HELD_FALLBACK_MS);
    }
    later(this.terminals.closeExpired(this.ctx.getWebSockets(VIEWER_TAG), now));
    later(await this.transfers.sweep(now));
    later(await this.grants.expire(now));
    // A person's tunnel lasts past its token: whether they may still type there is checked again every so often.
    if (this.tunnels.hasPersonTunnels()) await this.tunnels.checkAccess(null, null);
    if (this.tunnels.hasPersonTunnels()) later(now + TUNNEL_ACCESS_RECHECK_MS);
    await forgetSpentTokens(this.ctx.storage, now);
    later(await this.capacity.look(now));
    // Work done above may have set an earlier alarm meanwhile: keep whichever comes first.
    if (next !== null) await this.scheduleAlarm(next);
  }

  private async scheduleAlarm(at: number) {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  private async serverId(): Promise<string> {
    const id = this.ctx.id.name ?? (await this.ctx.storage.get<string>("server-id"));
    if (!id) throw new Error("a ServerLink is reached only by idFromName(serverId)");
    return id;
  }

  private daemon(): WebSocket | undefined {
    return this.ctx.getWebSockets(DAEMON_TAG).find((ws) => ws.readyState === WebSocket.OPEN);
  }

  private toDaemon(frame: DaemonPush): boolean {
    const daemon = this.daemon();
    if (!daemon) return false;
    daemon.send(JSON.stringify(frame));
    return true;
  }

  // ── RPC from the Worker and the project rooms ───────────────────────────

  /** Asks the daemon to start a session a person opened; false when it is not connected (link-sessions.ts). */
  async startSession(start: SessionStart): Promise<boolean> {
    return this.sessions.start(start);
  }

  /** A person closed (or killed) a session: the daemon is told (now, or when it is back), and so are its viewers. */
  async endSession(sessionId: string, mode: "close" | "kill") {
    await this.sessions.end(sessionId, mode);
  }

  /** Hands the daemon what concerns its sessions: at once when it is connected, otherwise kept until it connects again, then sent once. */
  async push(pushes: DaemonPush[]) {
    await this.pushes.push(pushes);
  }

  /**
   * Tells the connected daemon something it only needs to hear live, and nothing otherwise: used for
   * `approval_rules_updated`, since the daemon fetches its rules again on every connect anyway.
   */
  async notifyConnected(push: DaemonPush): Promise<boolean> {
    return this.toDaemon(push);
  }

  /** Closes a person's terminals in these projects (null: all), and the tunnels they may no longer hold, after their access changed. */
  async disconnectUser(userId: string, projectIds: string[] | null) {
    this.terminals.disconnect(this.ctx.getWebSockets(VIEWER_TAG), userId, projectIds, "your access to this project changed");
    await this.tunnels.checkAccess(userId, projectIds);
  }

  /** A project was deleted: its terminals and tunnels close. */
  async closeProject(projectId: string) {
    this.terminals.disconnect(this.ctx.getWebSockets(VIEWER_TAG), null, [projectId], "the project was deleted");
    await this.tunnels.projectGone(projectId);
  }

  /** Room held for a room's batch giving the server `tasks` while its projects span shards, released once the batch is done. */
  holdRoom(projectId: string, tasks: number): Promise<HoldAnswer> {
    return this.capacity.hold(projectId, tasks);
  }

  releaseRoom(holdId: string): Promise<void> {
    return this.capacity.release(holdId);
  }

  /** Whether the server's daemon is connected here now. */
  async connected(): Promise<boolean> {
    return this.daemon() !== undefined;
  }

  /**
   * The key was revoked or replaced: its socket closes at once, and a daemon
   * still connecting with it is refused.
   */
  async revokeKey(keyHash: string, reason: string) {
    await this.ctx.storage.put(`revoked-key:${keyHash}`, Date.now());
    for (const ws of this.ctx.getWebSockets(DAEMON_TAG)) {
      if ((ws.deserializeAttachment() as DaemonAttachment).keyHash === keyHash) ws.close(DAEMON_CLOSE.revoked, reason);
    }
  }

  // ── Remote exec and file transfer (API.md "Remote exec and agent-to-agent file transfer") ──

  /** Runs a command through the daemon (hub.py `_handle_remote_exec`) and waits for its answer, at most `timeoutMs`. */
  async remoteExec(run: { requestId: string; command: string; sessionId: string; timeoutMs: number }): Promise<ExecOutcome> {
    if (!this.daemon()) return { kind: "offline" };
    const outcome = this.execs.wait(run.requestId, run.timeoutMs);
    this.toDaemon({ type: "remote_exec", request_id: run.requestId, command: run.command, session_id: run.sessionId });
    return execOutcomeOf(await outcome);
  }

  /** A `remote_exec_result` too large for the daemon's socket, handed over (cut) by the Worker. */
  async execAnswered(frame: Record<string, unknown>) {
    this.execs.answeredBy(frame);
  }

  /** Asks the daemon about a session's files (hub.py `_handle_fs_request`) and waits for its answer, at most `timeoutMs`; null when it is not connected. */
  async sessionFiles(request: FsRequest, timeoutMs: number): Promise<Waited<FsAnswer> | null> {
    if (!this.daemon()) return null;
    const answer = this.fsRequests.wait(request.requestId, timeoutMs);
    this.toDaemon(fsFrame(request));
    return answer;
  }

  /** An answer about files the Worker could not pass on as a frame (too large), handed over in its stead. */
  async filesAnswered(requestId: string, answer: FsAnswer) {
    this.fsRequests.answered(requestId, answer);
  }

  /** The calling server's daemon sends a file to another session: `sender_offline` or `receiver_offline` when a daemon is not connected. */
  async startTransfer(request: TransferRequest): Promise<"started" | "sender_offline" | "receiver_offline"> {
    if (!this.daemon()) return "sender_offline";
    return (await this.transfers.start(request)) ? "started" : "receiver_offline";
  }

  async transferStatus(transferId: string): Promise<TransferView | null> {
    return this.transfers.status(transferId);
  }

  /** How many chunk bytes this link has had on their way to a receiver's link at once, at most. */
  async transferMemory(): Promise<{ peakInFlightBytes: number }> {
    return { peakInFlightBytes: this.transfers.peakInFlightBytes };
  }

  // The receiver's side, called by the sender's link.
  async offerTransfer(offer: TransferOffer): Promise<boolean> {
    return this.transfers.offer(offer);
  }

  async toReceiver(transferId: string, frame: string, ends = false) {
    this.transfers.toReceiver(transferId, frame, ends, this.daemon());
  }

  // The sender's side, called by the receiver's link.
  async fromReceiver(transferId: string, frame: Record<string, unknown>) {
    await this.transfers.fromReceiver(transferId, frame);
  }

  /** Records an event of this server's in a project's log, as its agent (or as the hub). */
  private async recordAs(projectId: string, command: RoomCommand & { event: string }, actor?: RoomActor) {
    await recordAsServer(this.env, this.ctx.storage, await this.serverId(), projectId, command, actor);
  }

  // ── SSH access grants and tunnels (API.md "SSH access grants and tunnels") ──

  /** How much frame text one tunnel of this link's has had on its way to the other link at once, at most. */
  async tunnelMemory(): Promise<{ peakQueuedBytes: number }> {
    return { peakQueuedBytes: this.tunnels.peakQueuedBytes };
  }

  /** The source's link opened a tunnel to this server's daemon. */
  async acceptTunnel(record: TunnelRecord): Promise<boolean> {
    return this.tunnels.accept(record);
  }

  /** Frames of the other daemon of a tunnel, in order. */
  async tunnelFrames(tunnelId: string, fromServerId: string, frames: string[]) {
    await this.tunnels.arrived(tunnelId, fromServerId, frames);
  }

  /** A grant whose source is this server was made: the daemon hears it now if connected, and it expires on time. */
  async grantMade(grantId: string, expiresAt: number, push: DaemonPush) {
    await this.grants.made(grantId, expiresAt, push);
  }

  /** A grant whose source is this server ended: its tunnels close, and the daemon stops listening. */
  async grantEnded(grantId: string, reason: string, push: DaemonPush) {
    await this.grants.ended(grantId, reason, push);
  }
}
