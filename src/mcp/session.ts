/**
 * McpSession: one per MCP session (named by its Mcp-Session-Id), holding what a stateless request cannot: the
 * client's resource subscriptions and its open GET stream. It hears the projects it watches as a dashboard does (the
 * room's dashboard socket, as the session's owner) and tells the stream `notifications/resources/updated` for each
 * subscribed resource an event touches. Tool calls and reads never come here.
 */
import { DurableObject } from "cloudflare:workers";
import { logError } from "../runtime/log";
import { CLOSE } from "../room/sockets";
import type { ProjectRoom } from "../room/project-room";

/** What a session reaches: the projects' rooms, whose events it hears. */
interface SessionEnv {
  PROJECT_ROOM: DurableObjectNamespace<ProjectRoom>;
}

/** Who opened the session: only they may use it. `roomUserId` is who the room's dashboard socket is opened as. */
export interface SessionOwner {
  key: string;
  roomUserId: string;
}

interface Subscription {
  projectId: string;
  /** The task it follows; null for a project's board (every task of it). */
  taskId: string | null;
}

/**
 * A session nobody used for this long is forgotten; its room sockets are opened to expire as long after its last use
 * (each subscription was checked against the caller's access when made, and a person removed from a project has the
 * room close their sockets at once).
 */
const IDLE_MS = 24 * 60 * 60 * 1000;
/** A session in use pushes its idle alarm back at most this often, not at every request. */
const TOUCH_EVERY_MS = 60 * 60 * 1000;
const KEEP_ALIVE_MS = 25_000;
const encoder = new TextEncoder();

const sseMessage = (message: unknown) => encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);

export class McpSession extends DurableObject<SessionEnv> {
  private owner: SessionOwner | null = null;
  private subscriptions = new Map<string, Subscription>();
  private streams = new Set<WritableStreamDefaultWriter<Uint8Array>>();
  private rooms = new Map<string, WebSocket>();
  /** When the idle alarm was last pushed back (in memory: a woken session pushes it back at its first use). */
  private lastTouched = 0;

  constructor(ctx: DurableObjectState, env: SessionEnv) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.owner = (await ctx.storage.get<SessionOwner>("owner")) ?? null;
      this.subscriptions = new Map(Object.entries((await ctx.storage.get<Record<string, Subscription>>("subscriptions")) ?? {}));
    });
  }

  /** Makes the session its opener's (at initialisation). */
  async claim(owner: SessionOwner) {
    this.owner = owner;
    await this.ctx.storage.put("owner", owner);
    await this.touched();
  }

  /** Whether `key` may still use the session (at every request naming it); each use keeps it from lapsing. */
  async inUse(key: string): Promise<boolean> {
    if (!this.owns(key)) return false;
    if (Date.now() - this.lastTouched > TOUCH_EVERY_MS) await this.touched();
    return true;
  }

  /** Whether `key` may use the session; a session never claimed, or ended, is nobody's. */
  private owns(key: string) {
    return this.owner !== null && this.owner.key === key;
  }

  async subscribe(key: string, uri: string, subscription: Subscription): Promise<boolean> {
    if (!this.owns(key)) return false;
    this.subscriptions.set(uri, subscription);
    await this.saveSubscriptions();
    await this.watch(subscription.projectId);
    return true;
  }

  async unsubscribe(key: string, uri: string): Promise<boolean> {
    if (!this.owns(key)) return false;
    const gone = this.subscriptions.get(uri);
    this.subscriptions.delete(uri);
    await this.saveSubscriptions();
    if (gone && ![...this.subscriptions.values()].some((s) => s.projectId === gone.projectId)) this.unwatch(gone.projectId);
    return true;
  }

  /** DELETE /mcp: the session ends, its stream closes and its projects are no longer watched. */
  async end(key: string): Promise<boolean> {
    if (!this.owns(key)) return false;
    await this.forget();
    return true;
  }

  /** GET /mcp: the session's stream of notifications (the Worker checked the caller and names them in X-Mcp-Owner). */
  override async fetch(request: Request): Promise<Response> {
    if (!this.owns(request.headers.get("X-Mcp-Owner") ?? "")) return new Response(null, { status: 404 });
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    this.streams.add(writer);
    const keepAlive = setInterval(() => void this.write(writer, encoder.encode(": keep-alive\n\n")), KEEP_ALIVE_MS);
    void writer.closed.finally(() => clearInterval(keepAlive)).catch(() => {});
    for (const s of this.subscriptions.values()) await this.watch(s.projectId);
    await this.touched();
    return new Response(readable, { headers: { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" } });
  }

  override async alarm() {
    await this.forget();
  }

  private async write(writer: WritableStreamDefaultWriter<Uint8Array>, bytes: Uint8Array) {
    try {
      await writer.write(bytes);
    } catch {
      // The client went away: its stream is dropped.
      this.streams.delete(writer);
    }
  }

  /** An event of a watched project: each subscribed resource it touches is announced on every open stream. */
  private announce(projectId: string, taskId: string | undefined) {
    if (!taskId) return;
    for (const [uri, s] of this.subscriptions) {
      if (s.projectId !== projectId || (s.taskId !== null && s.taskId !== taskId)) continue;
      const bytes = sseMessage({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri } });
      for (const writer of this.streams) void this.write(writer, bytes);
    }
  }

  /** Opens the project room's dashboard socket, once, as the session's owner. */
  private async watch(projectId: string) {
    if (this.rooms.has(projectId) || !this.owner) return;
    const room = this.env.PROJECT_ROOM.get(this.env.PROJECT_ROOM.idFromName(projectId));
    const expires = Math.floor((Date.now() + IDLE_MS) / 1000);
    const answer = await room.fetch("https://room/dashboard", {
      headers: { Upgrade: "websocket", "X-User-Id": this.owner.roomUserId, "X-Token-Expires": String(expires) },
    });
    const ws = answer.webSocket;
    if (!ws) {
      logError("an MCP session could not watch a project", { project_id: projectId, operation: "mcp_watch" }, new Error(`room answered ${answer.status}`));
      return;
    }
    ws.accept();
    this.rooms.set(projectId, ws);
    ws.addEventListener("message", (e) => {
      let frame: { type?: string; task_id?: string } | null = null;
      try {
        frame = JSON.parse(typeof e.data === "string" ? e.data : new TextDecoder().decode(e.data as ArrayBuffer));
      } catch {
        return;
      }
      if (frame?.type === "event") this.announce(projectId, frame.task_id);
    });
    ws.addEventListener("close", (e) => {
      if (this.rooms.get(projectId) !== ws) return;
      this.rooms.delete(projectId);
      // Expired while still in use: opened again. Refused (access revoked, project deleted): its subscriptions end.
      if (e.code === CLOSE.tokenExpired && this.streams.size > 0) void this.watch(projectId);
      else if (e.code === CLOSE.unauthorized || e.code === CLOSE.revoked) void this.dropProject(projectId);
    });
  }

  private async dropProject(projectId: string) {
    for (const [uri, sub] of this.subscriptions) if (sub.projectId === projectId) this.subscriptions.delete(uri);
    await this.saveSubscriptions();
  }

  private unwatch(projectId: string) {
    const ws = this.rooms.get(projectId);
    this.rooms.delete(projectId);
    ws?.close(1000, "no subscription left");
  }

  private async saveSubscriptions() {
    await this.ctx.storage.put("subscriptions", Object.fromEntries(this.subscriptions));
    await this.touched();
  }

  private async touched() {
    this.lastTouched = Date.now();
    await this.ctx.storage.setAlarm(this.lastTouched + IDLE_MS);
  }

  private async forget() {
    for (const writer of this.streams) void writer.close().catch(() => {});
    this.streams.clear();
    for (const projectId of [...this.rooms.keys()]) this.unwatch(projectId);
    this.subscriptions.clear();
    this.owner = null;
    await this.ctx.storage.deleteAll();
    await this.ctx.storage.deleteAlarm();
  }
}
