/**
 * One Durable Object per server: the official daemon's own channel
 * (`/ws/server`, API.md "The official daemon's channel") and people's
 * terminals on the server's sessions. The Worker checks the daemon's first
 * message (its API key) and then connects the socket here, so a link only
 * ever holds authenticated daemons, each on the key it proved; terminals are
 * accepted here once the Worker has checked the person's token and access.
 * One live daemon socket per server: a new one replaces the old. Sockets
 * hibernate.
 */
import { DurableObject } from "cloudflare:workers";
import { logDebug, logError } from "../log";
import { isFinalSession } from "../domain/session-lifecycle";
import { HUB_ACTOR, type AccessEvent, type RemoteUseEvent, type RoomActor, type RoomCommand, type SessionChange } from "../room/commands";
import { revokeSourcePush, revokeTargetPush } from "../grants/grant-pushes";
import { endGrant, grantById, isLive } from "../grants/grant-store";
import { grantEventData } from "../views/access-grants";
import { executeInRoom, type RoomReachingEnv } from "../room/rpc-port";
import { sendJson } from "../room/sockets";
import { DAEMON_CLOSE, parseDaemonFrame, sessionIdOf, sessionReportOf, tmuxPrefixOf } from "./daemon-frames";
import { sessionOfPush, type DaemonPush } from "./pushes";
import { notActedOn, RecentPushes } from "./recent-pushes";
import { FileTransfers, type TransferOffer, type TransferPeer, type TransferRequest, type TransferView } from "./file-transfers";
import { PendingRequests, type Waited } from "./pending-requests";
import { fsAnswerOf, fsFrame, type FsAnswer, type FsRequest } from "./session-files";
import { execOutcomeOf, PendingExecs, type ExecOutcome } from "./remote-exec";
import { Scrollback } from "./scrollback";
import { terminalAccess } from "./terminal-access";
import { Terminals, VIEWER_TAG, viewerTag } from "./terminals";
import { TUNNEL_ACCESS_RECHECK_MS } from "./tunnel-state";
import { Tunnels, type TunnelPeer, type TunnelRecord } from "./tunnels";

const DAEMON_TAG = "daemon";
/** Pushes kept for a daemon that is away, at most: the oldest go first past this. */
const MAX_HELD_PUSHES = 1000;
const HELD = "push:";
/** Keys sort in push order. */
const heldKey = (n: number) => `${HELD}${String(n).padStart(12, "0")}`;
/** How long the daemon has to answer a session_start before the session is marked failed. */
export const SESSION_START_TIMEOUT_MS = 60_000;
const STARTING = "start:";
/** How long after a daemon connects the pushes held for sessions it has not reported go out anyway. */
const HELD_FALLBACK_MS = 30_000;
/** How long an ended session's scrollback stays for viewers. */
const SCROLLBACK_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const ENDED = "ended:";
/** Sessions remembered at most (ids a daemon names that are not this server's are remembered too). */
const MAX_KNOWN = 10_000;

interface DaemonAttachment {
  kind: "daemon";
  serverId: string;
  /** sha256 of the key the daemon authenticated with: revoking or replacing it closes this socket. */
  keyHash: string;
  connectedAt: number;
}

/** A session of this server, as far as the link needs to know it. */
interface KnownSession {
  id: string;
  projectId: string;
  status: string;
}

/** What a person's start asks the daemon to do (the fields hub.py reads from session_start). */
export interface SessionStart {
  sessionId: string;
  projectId: string;
  serverName: string;
  workingDirectory: string | null;
  agentType: string | null;
  role: "worker" | "orchestrator";
  cols: number;
  rows: number;
}

/** A person's tunnel socket (`/ws/tunnel`), tagged by its tunnel. */
const TUNNEL_TAG = "tunnel";
const tunnelTag = (tunnelId: string) => `tunnel:${tunnelId}`;
/** When each grant of this server's (as the source) expires: the alarm ends it then. */
const GRANT_EXPIRY = "grant-expiry:";

const kindOf = (ws: WebSocket) => (ws.deserializeAttachment() as { kind?: string } | null)?.kind;
const isDaemon = (ws: WebSocket) => kindOf(ws) === "daemon";

/** The links reach each other too: a file goes from the sender's link to the receiver's. */
interface LinkEnv extends RoomReachingEnv {
  SERVER_LINK: DurableObjectNamespace<ServerLink>;
}

export class ServerLink extends DurableObject<LinkEnv> {
  private readonly scrollback = new Scrollback(this.ctx.storage);
  /** Sessions looked up: null for an id that is not this server's. */
  private readonly known = new Map<string, KnownSession | null>();
  private readonly lookups = new Map<string, Promise<KnownSession | null>>();
  private readonly terminals = new Terminals({
    viewers: (sessionId) => this.ctx.getWebSockets(viewerTag(sessionId)),
    scrollback: this.scrollback,
    statusOf: async (sessionId) => (this.known.get(sessionId) ?? (await this.lookup(sessionId)))?.status,
    toDaemon: (frame) => this.toDaemon(frame),
    access: async (viewer) => terminalAccess(this.env.DB, viewer.userId, await this.serverId(), viewer.projectId),
  });
  private readonly recentPushes = new RecentPushes();
  private readonly execs = new PendingExecs();
  private readonly fsRequests = new PendingRequests<FsAnswer>();
  private readonly transfers = new FileTransfers({
    toDaemon: (frame) => this.toDaemon(frame),
    // Both sessions on this server: the transfer never leaves this link.
    peer: (serverId): TransferPeer => (serverId === this.ctx.id.name ? this : this.env.SERVER_LINK.get(this.env.SERVER_LINK.idFromName(serverId))),
    record: (projectId, event, data) => this.recordRemoteUse(projectId, event, data),
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

  constructor(ctx: DurableObjectState, env: LinkEnv) {
    super(ctx, env);
    // Tunnels outlive the link's hibernation: frames for them are known before the first one is handled.
    void ctx.blockConcurrencyWhile(() => this.tunnels.load());
  }

  /** Accepts a daemon the Worker has authenticated, or a person's terminal on one of the server's sessions. */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade") !== "websocket") return new Response("expected a WebSocket upgrade", { status: 426 });
    const path = new URL(request.url).pathname;
    if (path === "/terminal") return this.acceptViewer(request);
    if (path === "/tunnel") return this.acceptPersonTunnel(request);
    return this.acceptDaemon(request);
  }

  private async acceptDaemon(request: Request) {
    const serverId = request.headers.get("X-Server-Id");
    const serverName = request.headers.get("X-Server-Name");
    const keyHash = request.headers.get("X-Key-Hash");
    if (!serverId || !serverName || !keyHash) return new Response("expected an authenticated daemon upgrade", { status: 426 });
    if (await this.ctx.storage.get(`revoked-key:${keyHash}`)) return new Response("the API key has been revoked", { status: 401 });
    await this.ctx.storage.put({ "server-id": serverId, "server-name": serverName });
    for (const old of this.ctx.getWebSockets(DAEMON_TAG)) old.close(DAEMON_CLOSE.replaced, "another connection of this server replaced this one");
    // What went out on the old socket shortly before may have died with it: kept again where it was not acted on (pushes
    // made meanwhile are kept too, as no socket is open).
    await this.hold(await notActedOn(this.env.DB, this.recentPushes.take()));
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [DAEMON_TAG]);
    server.serializeAttachment({ kind: "daemon", serverId, keyHash, connectedAt: Date.now() } satisfies DaemonAttachment);
    server.send(JSON.stringify({ type: "auth_ok", server_id: serverId }));
    // What the daemon missed that concerns no session (a revoked grant's key to remove) goes at once; what concerns a
    // session goes once the daemon has reported it back (before that, a daemon that restarted would not know the
    // session yet); whatever is left after a while goes anyway.
    await this.sendHeld((p) => sessionOfPush(p) === null);
    await this.scheduleAlarm(Date.now() + HELD_FALLBACK_MS);
    return new Response(null, { status: 101, webSocket: client });
  }

  private async acceptViewer(request: Request) {
    const sessionId = request.headers.get("X-Session-Id") ?? "";
    const userId = request.headers.get("X-User-Id") ?? "";
    const expiresAt = Number(request.headers.get("X-Token-Expires")) * 1000;
    const session = await this.lookup(sessionId);
    if (!session || !userId || !Number.isFinite(expiresAt)) return new Response("Session not found", { status: 404 });
    await this.scrollback.load(session.id);
    const protocol = request.headers.get("X-Subprotocol");
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [VIEWER_TAG, viewerTag(sessionId)]);
    // The scrollback is loaded (lookup), so the replay and the live output after it follow each other with nothing between.
    this.terminals.joined(
      server,
      { kind: "viewer", sessionId, projectId: session.projectId, userId, writer: request.headers.get("X-Writer") === "true", expiresAt },
      session.status,
    );
    await this.scheduleAlarm(expiresAt);
    return new Response(null, { status: 101, webSocket: client, ...(protocol ? { headers: { "Sec-WebSocket-Protocol": protocol } } : {}) });
  }

  /** A person's `orchestratia-connect` socket, its token checked by the Worker: the daemon opens the session machine's port. */
  private async acceptPersonTunnel(request: Request) {
    const tunnelId = request.headers.get("X-Tunnel-Id") ?? "";
    const sessionId = request.headers.get("X-Session-Id") ?? "";
    const tokenId = request.headers.get("X-Token-Id") ?? "";
    const tokenExpires = Number(request.headers.get("X-Token-Expires")) * 1000;
    const session = await this.lookup(sessionId);
    if (!session || isFinalSession(session.status)) return new Response("Session not found", { status: 404 });
    // A token opens one tunnel: the session's link remembers it until it expires.
    if (!tokenId || (await this.ctx.storage.get(`used-token:${tokenId}`))) return new Response("the connect token was used already", { status: 409 });
    // A token is spent only on a tunnel the daemon was asked to open: one refused for an absent daemon may be tried again.
    if (!this.daemon()) return new Response("the server's daemon is not connected", { status: 409 });
    await this.ctx.storage.put(`used-token:${tokenId}`, tokenExpires);
    await this.scheduleAlarm(tokenExpires);
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [TUNNEL_TAG, tunnelTag(tunnelId)]);
    server.serializeAttachment({ kind: "tunnel", tunnelId });
    const opened = await this.tunnels.openForPerson({
      id: tunnelId,
      side: "person",
      grantId: null,
      projectId: session.projectId,
      peerServerId: null,
      userId: request.headers.get("X-User-Id"),
      sessionId,
      targetPort: Number(request.headers.get("X-Target-Port")) || 22,
      openedAt: Date.now(),
    });
    if (!opened) {
      server.close(4009, "the server's daemon is not connected");
      return new Response("the server's daemon is not connected", { status: 409 });
    }
    server.send(JSON.stringify({ type: "auth_ok", tunnel_id: tunnelId }));
    await this.scheduleAlarm(Date.now() + TUNNEL_ACCESS_RECHECK_MS);
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer) {
    const kind = kindOf(ws);
    if (kind === "tunnel") return this.tunnels.fromPerson((ws.deserializeAttachment() as { tunnelId: string }).tunnelId, message);
    if (kind !== "daemon") return this.terminals.onMessage(ws, message);
    const frame = parseDaemonFrame(message);
    if (!frame.ok) return this.daemonError(ws, "INVALID_MESSAGE", frame.detail);
    try {
      await this.fromDaemon(ws, frame.type, frame.frame, message);
    } catch (e) {
      // One frame's failure (D1 unreachable, say) is the daemon's to retry, never the link's end.
      logError("daemon frame failed", { server_id: this.ctx.id.name, operation: frame.type }, e);
      this.daemonError(ws, "INTERNAL_ERROR", `the hub could not handle ${frame.type}`);
    }
  }

  private async fromDaemon(ws: WebSocket, type: string, frame: Record<string, unknown>, message: string | ArrayBuffer) {
    switch (type) {
      case "remote_exec_result":
        if (!this.execs.answeredBy(frame)) logDebug("remote_exec_result nobody waits for", { server_id: this.ctx.id.name, operation: type });
        return;
      case "fs_list_dir_result":
      case "fs_read_file_result":
      case "fs_write_file_result":
      case "fs_stat_result":
      // A stat of something that exists: hub.py's envelope takes fs_handler's `type` (session-files.ts).
      case "file":
      case "dir":
      case "symlink":
        if (!this.fsRequests.answered(frame.request_id, fsAnswerOf(frame)))
          logDebug(`${type} nobody waits for`, { server_id: this.ctx.id.name, operation: type });
        return;
      // Handled without awaiting anything first, so chunks are passed on in the order they came.
      case "file_chunk":
      case "file_complete":
      case "file_accept":
      case "file_ack":
      case "file_error": {
        const text = typeof message === "string" ? message : new TextDecoder().decode(message);
        const handled =
          ((type === "file_chunk" || type === "file_complete" || type === "file_error") && this.transfers.fromSender(type, frame, text)) ||
          ((type === "file_accept" || type === "file_ack" || type === "file_error") && this.transfers.fromReceivingDaemon(type, frame));
        if (!handled) this.daemonError(ws, "UNKNOWN_TRANSFER", `${type}: no transfer ${String(frame.transfer_id)} of this server's`);
        return;
      }
      case "s2s_tunnel_open":
        return this.openTunnel(ws, frame);
      // Handled without awaiting anything first, so a tunnel's frames are passed on in the order they came.
      case "tunnel_ready":
      case "tunnel_error":
      case "tunnel_data":
      case "tunnel_close":
      case "tunnel_closed": {
        const text = typeof message === "string" ? message : new TextDecoder().decode(message);
        if (!this.tunnels.fromDaemon(type, frame, text))
          this.daemonError(ws, "UNKNOWN_TUNNEL", `${type}: no tunnel ${String(frame.tunnel_id)} of this server's`);
        return;
      }
      case "ping":
        return ws.send(JSON.stringify({ type: "pong" }));
      case "session_output":
        return this.output(ws, frame);
      case "session_started":
      case "session_error":
      case "session_closed": {
        const session = await this.ownSession(ws, frame, type);
        if (session) await this.report(session, sessionReportOf(type, frame)!);
        return;
      }
      case "session_recovered":
        return this.recovered(ws, frame);
      case "session_screen":
      case "scrollback_captured": {
        const session = await this.ownSession(ws, frame, type);
        const lines = Array.isArray(frame.lines) ? frame.lines.filter((l) => typeof l === "string") : [];
        if (session)
          this.terminals.relay(session.id, {
            type: type === "session_screen" ? "screen" : "scrollback",
            lines,
            ...(typeof frame.error === "string" ? { error: frame.error } : {}),
          });
        return;
      }
      default:
        // Kinds this hub does not take part in (tunnels, file transfer, governance, …).
        logDebug("daemon message ignored", { server_id: this.ctx.id.name, operation: type });
    }
  }

  /** Terminal output: kept in the scrollback and relayed to the session's viewers, in the order the daemon sent it. */
  private async output(ws: WebSocket, frame: Record<string, unknown>) {
    const data = frame.data;
    if (typeof data !== "string") return this.daemonError(ws, "INVALID_MESSAGE", "session_output needs session_id and base64 data");
    const sessionId = sessionIdOf(frame);
    // A known session is handled without awaiting, so output frames cannot overtake one another.
    const session = sessionId
      ? (this.known.get(sessionId) ?? (await this.ownSession(ws, frame, "session_output")))
      : await this.ownSession(ws, frame, "session_output");
    if (!session) return;
    let bytes: Uint8Array;
    try {
      bytes = Uint8Array.fromBase64(data);
    } catch {
      return this.daemonError(ws, "INVALID_MESSAGE", "session_output.data: base64");
    }
    if (bytes.byteLength === 0) return;
    // An ended session's ring was let go; late output still belongs in it.
    if (!this.scrollback.isLoaded(session.id)) await this.scrollback.load(session.id);
    this.scrollback.append(session.id, bytes);
    this.terminals.output(session.id, data, bytes.byteLength);
  }

  /** The session a daemon's frame names, when it is one of this server's; otherwise the daemon is told. */
  private async ownSession(ws: WebSocket, frame: Record<string, unknown>, type: string): Promise<KnownSession | null> {
    const sessionId = sessionIdOf(frame);
    if (!sessionId) {
      this.daemonError(ws, "INVALID_MESSAGE", `${type} needs session_id`);
      return null;
    }
    const session = this.known.get(sessionId) ?? (await this.lookup(sessionId));
    if (!session) this.daemonError(ws, "UNKNOWN_SESSION", `${type}: no session ${sessionId} on this server`);
    return session;
  }

  /** A session of this server (read once, with its scrollback), or null. */
  private lookup(sessionId: string): Promise<KnownSession | null> {
    const known = this.known.get(sessionId);
    if (known !== undefined) return Promise.resolve(known);
    let pending = this.lookups.get(sessionId);
    if (!pending) {
      pending = (async () => {
        const serverId = await this.serverId();
        const row = await this.env.DB.prepare("SELECT id, project_id, status FROM sessions WHERE id = ?1 AND server_id = ?2")
          .bind(sessionId, serverId)
          .first<{ id: string; project_id: string; status: string }>();
        const session = row ? { id: row.id, projectId: row.project_id, status: row.status } : null;
        if (session) await this.scrollback.load(session.id);
        if (this.known.size >= MAX_KNOWN) this.known.clear();
        this.known.set(sessionId, session);
        return session;
      })().finally(() => this.lookups.delete(sessionId));
      this.lookups.set(sessionId, pending);
    }
    return pending;
  }

  /**
   * A tmux session the daemon found after it restarted, named from the
   * session's id: matched back to its session, which the daemon then uses
   * again (`session_recovered_ack`).
   */
  private async recovered(ws: WebSocket, frame: Record<string, unknown>) {
    const tmuxName = typeof frame.tmux_name === "string" ? frame.tmux_name : "";
    const row = await this.env.DB.prepare(
      `SELECT id FROM sessions WHERE server_id = ?1 AND (tmux_name = ?2 OR substr(id, 1, 12) = ?3)
       ORDER BY created_at DESC LIMIT 1`,
    )
      .bind(await this.serverId(), tmuxName, tmuxPrefixOf(tmuxName) ?? "")
      .first<{ id: string }>();
    const session = row && (await this.lookup(row.id));
    if (!session) return logDebug("recovered session not known", { server_id: this.ctx.id.name, operation: "session_recovered", tmux_name: tmuxName });
    if (isFinalSession(session.status)) {
      // Ended while the daemon was away: its agent is stopped (the daemon still knows it by its tmux name).
      ws.send(JSON.stringify({ type: "session_kill", session_id: tmuxName }));
      return;
    }
    ws.send(JSON.stringify({ type: "session_recovered_ack", tmux_name: tmuxName, session_id: session.id }));
    await this.report(session, { ...sessionReportOf("session_started", frame)!, tmuxName });
  }

  /** Records what became of a session (in its project's room, with its event) and tells its viewers. */
  private async report(session: KnownSession, change: SessionChange) {
    await this.ctx.storage.delete(`${STARTING}${session.id}`);
    if (change.status === "running") await this.sendHeld((p) => sessionOfPush(p) === session.id);
    const serverId = await this.serverId();
    const serverName = (await this.ctx.storage.get<string>("server-name")) ?? "";
    const actor: RoomActor = { kind: "agent", serverId, serverName, label: `agent:${serverName}` };
    const result = await executeInRoom(this.env, session.projectId, actor, { op: "session_status", sessionId: session.id, serverName, change });
    if (!result.ok)
      return logDebug("session report refused", {
        server_id: serverId,
        project_id: session.projectId,
        session_id: session.id,
        operation: "session_report",
        detail: result.problem.detail,
      });
    const now = result.data?.session as { status: string; exitCode: number | null; error: string | null } | undefined;
    // The hub ended it (closed, or it never started in time), yet its agent runs: it is stopped, as nobody could reach it.
    if (now && isFinalSession(now.status) && change.status === "running") this.toDaemon({ type: "session_kill", session_id: session.id });
    if (!now || result.unchanged) return;
    this.statusChanged(session.id, now.status, { exit_code: now.exitCode, error: now.error });
  }

  private statusChanged(sessionId: string, status: string, details: { exit_code?: number | null; error?: string | null } = {}) {
    const known = this.known.get(sessionId);
    if (known) known.status = status;
    if (isFinalSession(status)) {
      // Its scrollback stays for late viewers a while; the alarm forgets it then.
      this.scrollback.forget(sessionId);
      void this.ctx.storage
        .put(`${ENDED}${sessionId}`, Date.now() + SCROLLBACK_RETENTION_MS)
        .then(() => this.scheduleAlarm(Date.now() + SCROLLBACK_RETENTION_MS));
    }
    this.terminals.relay(sessionId, {
      type: "status",
      status,
      ...Object.fromEntries(Object.entries(details).filter(([, v]) => v !== null && v !== undefined)),
    });
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
      if (code === 1000 || code === 1001) this.recentPushes.closedCleanly((ws.deserializeAttachment() as DaemonAttachment).connectedAt);
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
   * Sessions the daemon never answered fail; viewers whose token expired are
   * closed; pushes held for sessions the daemon did not report go out; ended
   * sessions' scrollback is forgotten after its retention; people's tunnels
   * check their access again.
   */
  override async alarm() {
    const now = Date.now();
    let next: number | null = null;
    const later = (at: number) => (next = next === null ? at : Math.min(next, at));
    for (const [key, deadline] of await this.ctx.storage.list<number>({ prefix: STARTING })) {
      if (deadline > now) {
        later(deadline);
        continue;
      }
      const session = await this.lookup(key.slice(STARTING.length));
      if (session) await this.report(session, { status: "error", error: `The daemon did not start the session within ${SESSION_START_TIMEOUT_MS / 1000} s` });
      else await this.ctx.storage.delete(key);
    }
    for (const [key, until] of await this.ctx.storage.list<number>({ prefix: ENDED })) {
      if (until > now) {
        later(until);
        continue;
      }
      const sessionId = key.slice(ENDED.length);
      await this.scrollback.drop(sessionId);
      await this.ctx.storage.delete(key);
    }
    const daemon = this.ctx.getWebSockets(DAEMON_TAG)[0];
    if (daemon) {
      const since = (daemon.deserializeAttachment() as DaemonAttachment).connectedAt;
      if (now - since >= HELD_FALLBACK_MS) await this.sendHeld(() => true);
      else later(since + HELD_FALLBACK_MS);
    }
    const viewers = this.terminals.closeExpired(this.ctx.getWebSockets(VIEWER_TAG), now);
    if (viewers !== null) later(viewers);
    const transfers = await this.transfers.sweep(now);
    if (transfers !== null) later(transfers);
    const grants = await this.expireGrants(now);
    if (grants !== null) later(grants);
    // A person's tunnel lasts past its token: whether they may still type there is checked again every so often.
    if (this.tunnels.hasPersonTunnels()) await this.tunnels.checkAccess(null, null);
    if (this.tunnels.hasPersonTunnels()) later(now + TUNNEL_ACCESS_RECHECK_MS);
    const usedTokens = await this.ctx.storage.list<number>({ prefix: "used-token:" });
    const spent = [...usedTokens].filter(([, until]) => until <= now).map(([key]) => key);
    if (spent.length > 0) await this.ctx.storage.delete(spent);
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

  /**
   * Asks the daemon to start a session a person opened; false when the
   * daemon is not connected. The session fails if the daemon does not
   * answer in time.
   */
  async startSession(start: SessionStart): Promise<boolean> {
    if (!this.daemon()) return false;
    await this.ctx.storage.put("server-name", start.serverName);
    this.known.set(start.sessionId, { id: start.sessionId, projectId: start.projectId, status: "starting" });
    await this.scrollback.load(start.sessionId);
    const deadline = Date.now() + SESSION_START_TIMEOUT_MS;
    await this.ctx.storage.put(`${STARTING}${start.sessionId}`, deadline);
    await this.scheduleAlarm(deadline);
    return this.toDaemon({
      type: "session_start",
      session_id: start.sessionId,
      working_directory: start.workingDirectory,
      cols: start.cols,
      rows: start.rows,
      project_id: start.projectId,
      // Left out, the daemon detects the agent from the working directory.
      ...(start.agentType ? { agent_type: start.agentType } : {}),
      role: start.role,
    });
  }

  /** A person closed (or killed) a session: the daemon is told (now, or when it is back), and so are its viewers. */
  async endSession(sessionId: string, mode: "close" | "kill") {
    await this.ctx.storage.delete(`${STARTING}${sessionId}`);
    await this.push([{ type: mode === "kill" ? "session_kill" : "session_close", session_id: sessionId }]);
    this.statusChanged(sessionId, "closed");
  }

  /**
   * Hands the daemon what concerns its sessions: at once when it is
   * connected, otherwise kept (in order, bounded) until it connects again,
   * then sent once.
   */
  async push(pushes: DaemonPush[]) {
    const daemon = this.daemon();
    if (!daemon) return this.hold(pushes);
    for (const p of pushes) this.sendPush(daemon, p);
  }

  private sendPush(daemon: WebSocket, push: DaemonPush) {
    daemon.send(JSON.stringify(push));
    this.recentPushes.note(push, (daemon.deserializeAttachment() as DaemonAttachment).connectedAt);
  }

  /** Keeps pushes for the daemon's next socket, in order, bounded. */
  private async hold(pushes: DaemonPush[]) {
    if (pushes.length === 0) return;
    let next = (await this.ctx.storage.get<number>("next-push")) ?? 0;
    const entries: Record<string, unknown> = {};
    for (const p of pushes) entries[heldKey(next++)] = p;
    await this.ctx.storage.put({ ...entries, "next-push": next });
    const held = await this.ctx.storage.list({ prefix: HELD });
    if (held.size > MAX_HELD_PUSHES) {
      const dropped = [...held.keys()].slice(0, held.size - MAX_HELD_PUSHES);
      await this.ctx.storage.delete(dropped);
      logError(
        "pushes dropped for a daemon away too long",
        { server_id: this.ctx.id.name, operation: "push" },
        new Error(`${dropped.length} held pushes dropped`),
      );
    }
  }

  /**
   * Tells the connected daemon something it only needs to hear live, and nothing otherwise: used for
   * `approval_rules_updated`, since the daemon fetches its rules again on every connect anyway.
   */
  async notifyConnected(push: DaemonPush): Promise<boolean> {
    const daemon = this.daemon();
    daemon?.send(JSON.stringify(push));
    return daemon !== undefined;
  }

  /** What the daemon missed while away (of the sessions chosen), in order, then forgotten: it is sent once. */
  private async sendHeld(which: (push: DaemonPush) => boolean) {
    const daemon = this.daemon();
    if (!daemon) return;
    const held = await this.ctx.storage.list<DaemonPush>({ prefix: HELD });
    const sent = [...held].filter(([, p]) => which(p));
    if (sent.length === 0) return;
    for (const [, p] of sent) this.sendPush(daemon, p);
    await this.ctx.storage.delete(sent.map(([key]) => key));
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

  private recordRemoteUse(projectId: string, event: RemoteUseEvent, data: Record<string, unknown>) {
    return this.recordAs(projectId, { op: "remote_use", event, data });
  }

  /** Records an event of this server's in a project's log, as its agent (or as the hub). */
  private async recordAs(projectId: string, command: RoomCommand & { event: string }, actor?: RoomActor) {
    const serverId = await this.serverId();
    const serverName = (await this.ctx.storage.get<string>("server-name")) ?? "";
    const result = await executeInRoom(this.env, projectId, actor ?? { kind: "agent", serverId, serverName, label: `agent:${serverName}` }, command);
    if (!result.ok) logDebug("event not recorded", { server_id: serverId, project_id: projectId, operation: command.event, detail: result.problem.detail });
  }

  // ── SSH access grants and tunnels (API.md "SSH access grants and tunnels") ──

  /**
   * The daemon's `s2s_tunnel_open`: only for a live grant whose source is this
   * server, and a tunnel id not in use; otherwise it is closed at once
   * (`tunnel_close`) and nothing reaches the target.
   */
  private async openTunnel(ws: WebSocket, frame: Record<string, unknown>) {
    const tunnelId = typeof frame.tunnel_id === "string" ? frame.tunnel_id : "";
    const grantId = typeof frame.grant_id === "string" ? frame.grant_id : "";
    if (!/^[0-9a-f-]{36}$/.test(tunnelId)) return this.daemonError(ws, "INVALID_MESSAGE", "s2s_tunnel_open needs tunnel_id (a UUID) and grant_id");
    const refuse = (code: string, reason: string) => {
      this.daemonError(ws, code, reason);
      sendJson(ws, { type: "tunnel_close", tunnel_id: tunnelId, reason });
    };
    if (this.tunnels.has(tunnelId)) return refuse("TUNNEL_REFUSED", `tunnel ${tunnelId} is in use already`);
    const grant = /^[0-9a-f-]{36}$/.test(grantId) ? await grantById(this.env.DB, grantId) : null;
    if (!grant || grant.source_server_id !== (await this.serverId())) return refuse("UNKNOWN_GRANT", `no access grant ${grantId} of this server's`);
    if (!isLive(grant)) return refuse("GRANT_ENDED", `access grant ${grantId} has ${grant.status === "revoked" ? "been revoked" : "expired"}`);
    const record: TunnelRecord = {
      id: tunnelId,
      side: "source",
      grantId,
      projectId: grant.project_id,
      peerServerId: grant.target_server_id,
      userId: null,
      sessionId: null,
      targetPort: grant.target_port,
      openedAt: Date.now(),
    };
    if (!(await this.tunnels.openFromSource(record, grant.target_server_id)))
      refuse("DAEMON_OFFLINE", `the daemon of server "${grant.target_server_name}" is not connected`);
  }

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

  /** A grant whose source is this server was made: the daemon hears it now if connected (else at its next reconciliation), and it expires on time. */
  async grantMade(grantId: string, expiresAt: number, push: DaemonPush) {
    await this.ctx.storage.put(`${GRANT_EXPIRY}${grantId}`, expiresAt);
    await this.scheduleAlarm(expiresAt);
    this.toDaemon(push);
  }

  /** A grant whose source is this server ended: its tunnels close, and the daemon stops listening. */
  async grantEnded(grantId: string, reason: string, push: DaemonPush) {
    await this.ctx.storage.delete(`${GRANT_EXPIRY}${grantId}`);
    await this.tunnels.grantEnded(grantId, reason);
    this.toDaemon(push);
  }

  /** Grants of this server's past their expiry end (event `access_expired`, both daemons told); answers when to look again. */
  private async expireGrants(now: number): Promise<number | null> {
    let next: number | null = null;
    for (const [key, at] of await this.ctx.storage.list<number>({ prefix: GRANT_EXPIRY })) {
      if (at > now) {
        next = next === null ? at : Math.min(next, at);
        continue;
      }
      const grantId = key.slice(GRANT_EXPIRY.length);
      const ended = await endGrant(this.env.DB, grantId, "expired");
      if (ended) {
        await this.recordAs(ended.project_id, { op: "access_use", event: "access_expired" satisfies AccessEvent, data: grantEventData(ended) }, HUB_ACTOR);
        await this.env.SERVER_LINK.get(this.env.SERVER_LINK.idFromName(ended.target_server_id)).push([revokeTargetPush(grantId)]);
        await this.grantEnded(grantId, "the access grant expired", revokeSourcePush(grantId));
      } else await this.ctx.storage.delete(key);
    }
    return next;
  }
}
