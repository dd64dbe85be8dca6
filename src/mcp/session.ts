/**
 * McpSession: one per 2025-era MCP session (named by its Mcp-Session-Id), holding what a stateless request cannot:
 * the client's resource subscriptions, the tasks it made, and its open GET stream. It hears the projects it watches as
 * a dashboard does (the room's dashboard socket, as the session's owner) and tells the stream
 * `notifications/resources/updated` for each subscribed resource an event touches, and `elicitation/create` for each
 * question an agent puts to people about a task the client made (when it answers forms). Requests only ask it whether
 * the session is still the caller's; tool calls and reads never come here.
 */
import { DurableObject } from "cloudflare:workers";
import { logError } from "../runtime/log";
import { CLOSE } from "../room/sockets";
import type { ProjectRoom } from "../room/project-room";
import { elicitationRequest, questionIn, type OpenQuestion } from "./session-questions";

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
/** The most tasks one session puts the questions of to its client. */
const MAX_FOLLOWED = 200;
const encoder = new TextEncoder();

const sseMessage = (message: unknown) => encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);

export class McpSession extends DurableObject<SessionEnv> {
  private owner: SessionOwner | null = null;
  private subscriptions = new Map<string, Subscription>();
  private streams = new Set<WritableStreamDefaultWriter<Uint8Array>>();
  private rooms = new Map<string, WebSocket>();
  /** Whether the client answers forms (it declared elicitation at initialisation). */
  private elicits = false;
  /** The tasks its tool calls made, whose questions are put to it, by task id; and the questions it has not answered yet. */
  private followed = new Map<string, string>();
  private questions = new Map<string, OpenQuestion>();
  /** When the idle alarm was last pushed back (in memory: a woken session pushes it back at its first use). */
  private lastTouched = 0;

  constructor(ctx: DurableObjectState, env: SessionEnv) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.owner = (await ctx.storage.get<SessionOwner>("owner")) ?? null;
      this.subscriptions = new Map(Object.entries((await ctx.storage.get<Record<string, Subscription>>("subscriptions")) ?? {}));
      this.elicits = (await ctx.storage.get<boolean>("elicits")) ?? false;
      this.followed = new Map(Object.entries((await ctx.storage.get<Record<string, string>>("followed")) ?? {}));
      this.questions = new Map(Object.entries((await ctx.storage.get<Record<string, OpenQuestion>>("questions")) ?? {}));
    });
  }

  /** Makes the session its opener's (at initialisation), noting whether its client answers forms. */
  async claim(owner: SessionOwner, elicits = false) {
    this.owner = owner;
    this.elicits = elicits;
    await this.ctx.storage.put({ owner, elicits });
    await this.touched();
  }

  /** A task the client made through a tool: when it answers forms, the agent's questions about it are put to it. */
  async follow(key: string, taskId: string, projectId: string): Promise<boolean> {
    if (!this.owns(key)) return false;
    if (!this.elicits || this.followed.size >= MAX_FOLLOWED) return true;
    this.followed.set(taskId, projectId);
    await this.ctx.storage.put("followed", Object.fromEntries(this.followed));
    await this.watch(projectId);
    return true;
  }

  /** The question an answer names, taken once (undefined when the session never asked it, or it was answered since). */
  async takeQuestion(key: string, interventionId: string): Promise<OpenQuestion | undefined> {
    const q = this.owns(key) ? this.questions.get(interventionId) : undefined;
    if (q) await this.closeQuestion(interventionId);
    return q;
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
    // The project's room is let go once nothing of it is followed: no subscription, and no task whose questions are put to the client.
    const stillHeard = (projectId: string) =>
      [...this.subscriptions.values()].some((s) => s.projectId === projectId) || [...this.followed.values()].includes(projectId);
    if (gone && !stillHeard(gone.projectId)) this.unwatch(gone.projectId);
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
    for (const projectId of new Set(this.followed.values())) await this.watch(projectId);
    // Questions asked while no stream was open are put to the next one that opens (each stream is asked every open one).
    for (const q of this.questions.values()) void this.write(writer, sseMessage(elicitationRequest(q)));
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
      let frame: { type?: string; task_id?: string; event_type?: string; data?: Record<string, unknown> } | null = null;
      try {
        frame = JSON.parse(typeof e.data === "string" ? e.data : new TextDecoder().decode(e.data as ArrayBuffer));
      } catch {
        return;
      }
      if (frame?.type !== "event") return;
      this.announce(projectId, frame.task_id);
      void this.hearQuestion(frame);
    });
    ws.addEventListener("close", (e) => {
      if (this.rooms.get(projectId) !== ws) return;
      this.rooms.delete(projectId);
      // Expired while still in use: opened again. Refused (access revoked, project deleted): its subscriptions end.
      if (e.code === CLOSE.tokenExpired && this.streams.size > 0) void this.watch(projectId);
      else if (e.code === CLOSE.unauthorized || e.code === CLOSE.revoked) void this.dropProject(projectId);
    });
  }

  /** An event about a followed task's questions: a new one is put to every open stream, an answered one forgotten. */
  private async hearQuestion(frame: { task_id?: string; event_type?: string; data?: Record<string, unknown> }) {
    const heard = questionIn(frame, new Set(this.followed.keys()));
    if (heard?.closed) return this.closeQuestion(heard.closed);
    if (!heard?.asked) return;
    this.questions.set(heard.asked.interventionId, heard.asked);
    await this.ctx.storage.put("questions", Object.fromEntries(this.questions));
    const bytes = sseMessage(elicitationRequest(heard.asked));
    for (const writer of this.streams) void this.write(writer, bytes);
  }

  private async closeQuestion(interventionId: string) {
    if (!this.questions.delete(interventionId)) return;
    await this.ctx.storage.put("questions", Object.fromEntries(this.questions));
  }

  private async dropProject(projectId: string) {
    for (const [uri, sub] of this.subscriptions) if (sub.projectId === projectId) this.subscriptions.delete(uri);
    for (const [taskId, of] of this.followed) if (of === projectId) this.followed.delete(taskId);
    await this.ctx.storage.put("followed", Object.fromEntries(this.followed));
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
    this.followed.clear();
    this.questions.clear();
    this.owner = null;
    await this.ctx.storage.deleteAll();
    await this.ctx.storage.deleteAlarm();
  }
}
