/**
 * One Durable Object per server: the official daemon's own channel
 * (`/ws/server`, API.md "The official daemon's channel"). The Worker checks
 * the daemon's first message (its API key) and then connects the socket here,
 * so a link only ever holds authenticated daemons, each on the key it proved.
 * One live socket per server: a new one replaces the old. Sockets hibernate.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { logError } from "../log";
import { DAEMON_CLOSE, frameBytes, MAX_DAEMON_FRAME_BYTES, parseDaemonFrame } from "./daemon-frames";
import type { DaemonPush } from "./pushes";

const DAEMON_TAG = "daemon";
/** Pushes kept for a daemon that is away, at most: the oldest go first past this. */
const MAX_HELD_PUSHES = 1000;
const HELD = "push:";
/** Keys sort in push order. */
const heldKey = (n: number) => `${HELD}${String(n).padStart(12, "0")}`;

interface DaemonAttachment {
  serverId: string;
  /** sha256 of the key the daemon authenticated with: revoking or replacing it closes this socket. */
  keyHash: string;
  connectedAt: number;
}

const attachmentOf = (ws: WebSocket) => ws.deserializeAttachment() as DaemonAttachment;

export class ServerLink extends DurableObject<Env> {
  /** Accepts a daemon the Worker has authenticated, replacing the server's previous socket. */
  override async fetch(request: Request): Promise<Response> {
    const serverId = request.headers.get("X-Server-Id");
    const keyHash = request.headers.get("X-Key-Hash");
    if (request.headers.get("Upgrade") !== "websocket" || !serverId || !keyHash) return new Response("expected an authenticated daemon upgrade", { status: 426 });
    if (await this.ctx.storage.get(`revoked-key:${keyHash}`)) return new Response("the API key has been revoked", { status: 401 });
    for (const old of this.ctx.getWebSockets(DAEMON_TAG)) old.close(DAEMON_CLOSE.replaced, "another connection of this server replaced this one");
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [DAEMON_TAG]);
    server.serializeAttachment({ serverId, keyHash, connectedAt: Date.now() } satisfies DaemonAttachment);
    server.send(JSON.stringify({ type: "auth_ok", server_id: serverId }));
    await this.sendHeld(server);
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer) {
    if (frameBytes(message) > MAX_DAEMON_FRAME_BYTES) return ws.close(DAEMON_CLOSE.tooBig, `frames are at most ${MAX_DAEMON_FRAME_BYTES} bytes`);
    const frame = parseDaemonFrame(message);
    if (!frame.ok) return ws.send(JSON.stringify({ type: "error", code: "INVALID_MESSAGE", detail: frame.detail }));
    switch (frame.type) {
      case "ping":
        return ws.send(JSON.stringify({ type: "pong" }));
      default:
        // Kinds this hub does not take part in (tunnels, file transfer, governance, …) are ignored.
        return;
    }
  }

  override async webSocketError(ws: WebSocket, error: unknown) {
    logError("daemon socket failed", { server_id: attachmentOf(ws)?.serverId }, error);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string) {
    try {
      ws.close(code, reason);
    } catch {
      // Already closed.
    }
  }

  /**
   * Hands the daemon what concerns its sessions: at once when it is
   * connected, otherwise kept (in order, bounded) until it connects again,
   * then sent once.
   */
  async push(pushes: DaemonPush[]) {
    const daemon = this.ctx.getWebSockets(DAEMON_TAG).find((ws) => ws.readyState === WebSocket.OPEN);
    if (daemon) {
      for (const p of pushes) daemon.send(JSON.stringify(p));
      return;
    }
    let next = (await this.ctx.storage.get<number>("next-push")) ?? 0;
    const entries: Record<string, unknown> = {};
    for (const p of pushes) entries[heldKey(next++)] = p;
    await this.ctx.storage.put({ ...entries, "next-push": next });
    const held = await this.ctx.storage.list({ prefix: HELD });
    if (held.size > MAX_HELD_PUSHES) {
      const dropped = [...held.keys()].slice(0, held.size - MAX_HELD_PUSHES);
      await this.ctx.storage.delete(dropped);
      logError("pushes dropped for a daemon away too long", { server_id: this.ctx.id.name }, new Error(`${dropped.length} held pushes dropped`));
    }
  }

  /** What the daemon missed while away, in order, then forgotten: it is sent once. */
  private async sendHeld(daemon: WebSocket) {
    const held = await this.ctx.storage.list<DaemonPush>({ prefix: HELD });
    if (held.size === 0) return;
    for (const p of held.values()) daemon.send(JSON.stringify(p));
    await this.ctx.storage.delete([...held.keys()]);
  }

  /** Whether the server's daemon is connected here now. */
  async connected(): Promise<boolean> {
    return this.ctx.getWebSockets(DAEMON_TAG).length > 0;
  }

  /**
   * The key was revoked or replaced: its socket closes at once, and a daemon
   * still connecting with it is refused.
   */
  async revokeKey(keyHash: string, reason: string) {
    await this.ctx.storage.put(`revoked-key:${keyHash}`, Date.now());
    for (const ws of this.ctx.getWebSockets(DAEMON_TAG)) {
      if (attachmentOf(ws).keyHash === keyHash) ws.close(DAEMON_CLOSE.revoked, reason);
    }
  }
}
