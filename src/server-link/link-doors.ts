/**
 * The sockets a server's link accepts, each checked by the Worker first: the
 * daemon's own (authenticated by its API key; a new one replaces the old), a
 * person's terminal on one of the server's sessions, and a person's
 * `orchestratia-connect` tunnel to the session's machine.
 */
import { isFinalSession } from "../domain/session-lifecycle";
import { DAEMON_CLOSE } from "./daemon-frames";
import type { LinkSessions } from "./link-sessions";
import { sessionOfPush } from "./pushes";
import type { PushQueue } from "./push-queue";
import type { Scrollback } from "./scrollback";
import { VIEWER_TAG, viewerTag, type Terminals } from "./terminals";
import { TUNNEL_ACCESS_RECHECK_MS } from "./tunnel-state";
import type { Tunnels } from "./tunnels";

export const DAEMON_TAG = "daemon";
/** A person's tunnel socket (`/ws/tunnel`), tagged by its tunnel. */
export const TUNNEL_TAG = "tunnel";
export const tunnelTag = (tunnelId: string) => `tunnel:${tunnelId}`;
/** How long after a daemon connects the pushes held for sessions it has not reported go out anyway. */
export const HELD_FALLBACK_MS = 30_000;

export interface DaemonAttachment {
  kind: "daemon";
  serverId: string;
  /** sha256 of the key the daemon authenticated with: revoking or replacing it closes this socket. */
  keyHash: string;
  connectedAt: number;
}

/** What the link's doors need of it. */
export interface LinkDoors {
  ctx: DurableObjectState;
  sessions: LinkSessions;
  scrollback: Scrollback;
  terminals: Terminals;
  tunnels: Tunnels;
  pushes: PushQueue;
  daemon(): WebSocket | undefined;
  scheduleAlarm(at: number): Promise<void>;
}

export async function acceptDaemon(request: Request, door: LinkDoors) {
  const serverId = request.headers.get("X-Server-Id");
  const serverName = request.headers.get("X-Server-Name");
  const keyHash = request.headers.get("X-Key-Hash");
  if (!serverId || !serverName || !keyHash) return new Response("expected an authenticated daemon upgrade", { status: 426 });
  if (await door.ctx.storage.get(`revoked-key:${keyHash}`)) return new Response("the API key has been revoked", { status: 401 });
  await door.ctx.storage.put({ "server-id": serverId, "server-name": serverName });
  for (const old of door.ctx.getWebSockets(DAEMON_TAG)) old.close(DAEMON_CLOSE.replaced, "another connection of this server replaced this one");
  // What went out on the old socket shortly before may have died with it: kept again where it was not acted on (pushes
  // made meanwhile are kept too, as no socket is open).
  await door.pushes.reconnected();
  const { 0: client, 1: server } = new WebSocketPair();
  door.ctx.acceptWebSocket(server, [DAEMON_TAG]);
  server.serializeAttachment({ kind: "daemon", serverId, keyHash, connectedAt: Date.now() } satisfies DaemonAttachment);
  server.send(JSON.stringify({ type: "auth_ok", server_id: serverId }));
  // What the daemon missed that concerns no session (a revoked grant's key to remove) goes at once; what concerns a
  // session goes once the daemon has reported it back (before that, a daemon that restarted would not know the
  // session yet); whatever is left after a while goes anyway.
  await door.pushes.sendHeld((p) => sessionOfPush(p) === null);
  await door.scheduleAlarm(Date.now() + HELD_FALLBACK_MS);
  return new Response(null, { status: 101, webSocket: client });
}

export async function acceptViewer(request: Request, door: LinkDoors) {
  const sessionId = request.headers.get("X-Session-Id") ?? "";
  const userId = request.headers.get("X-User-Id") ?? "";
  const expiresAt = Number(request.headers.get("X-Token-Expires")) * 1000;
  const session = await door.sessions.lookup(sessionId);
  if (!session || !userId || !Number.isFinite(expiresAt)) return new Response("Session not found", { status: 404 });
  await door.scrollback.load(session.id);
  const protocol = request.headers.get("X-Subprotocol");
  const { 0: client, 1: server } = new WebSocketPair();
  door.ctx.acceptWebSocket(server, [VIEWER_TAG, viewerTag(sessionId)]);
  // The scrollback is loaded (lookup), so the replay and the live output after it follow each other with nothing between.
  door.terminals.joined(
    server,
    { kind: "viewer", sessionId, projectId: session.projectId, userId, writer: request.headers.get("X-Writer") === "true", expiresAt },
    session.status,
  );
  await door.scheduleAlarm(expiresAt);
  return new Response(null, { status: 101, webSocket: client, ...(protocol ? { headers: { "Sec-WebSocket-Protocol": protocol } } : {}) });
}

/** A person's `orchestratia-connect` socket, its token checked by the Worker: the daemon opens the session machine's port. */
export async function acceptPersonTunnel(request: Request, door: LinkDoors) {
  const tunnelId = request.headers.get("X-Tunnel-Id") ?? "";
  const sessionId = request.headers.get("X-Session-Id") ?? "";
  const tokenId = request.headers.get("X-Token-Id") ?? "";
  const tokenExpires = Number(request.headers.get("X-Token-Expires")) * 1000;
  const session = await door.sessions.lookup(sessionId);
  if (!session || isFinalSession(session.status)) return new Response("Session not found", { status: 404 });
  // A token opens one tunnel: the session's link remembers it until it expires.
  if (!tokenId || (await door.ctx.storage.get(`used-token:${tokenId}`))) return new Response("the connect token was used already", { status: 409 });
  // A token is spent only on a tunnel the daemon was asked to open: one refused for an absent daemon may be tried again.
  if (!door.daemon()) return new Response("the server's daemon is not connected", { status: 409 });
  await door.ctx.storage.put(`used-token:${tokenId}`, tokenExpires);
  await door.scheduleAlarm(tokenExpires);
  const { 0: client, 1: server } = new WebSocketPair();
  door.ctx.acceptWebSocket(server, [TUNNEL_TAG, tunnelTag(tunnelId)]);
  server.serializeAttachment({ kind: "tunnel", tunnelId });
  const opened = await door.tunnels.openForPerson({
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
  await door.scheduleAlarm(Date.now() + TUNNEL_ACCESS_RECHECK_MS);
  return new Response(null, { status: 101, webSocket: client });
}

/** Connect tokens past their expiry need no remembering: they could not be used again anyway. */
export async function forgetSpentTokens(storage: DurableObjectStorage, now: number) {
  const used = await storage.list<number>({ prefix: "used-token:" });
  const spent = [...used].filter(([, until]) => until <= now).map(([key]) => key);
  if (spent.length > 0) await storage.delete(spent);
}
