/**
 * One Durable Object per project: the single writer of that project's tasks
 * and the fan-out of its events to WebSockets.
 *
 * Operations arrive over RPC and run strictly one at a time through a promise
 * chain, because awaiting D1 lets other requests interleave (input gates only
 * cover the object's own storage). Each operation is one db.batch; its events
 * are published to sockets after the batch commits, still inside the queue,
 * so a dashboard's replay (also queued) meets live events with no gap and no
 * duplicate.
 */
import { DurableObject } from "cloudflare:workers";
import { and, asc, eq, gt, isNotNull, lte, min } from "drizzle-orm";
import { InvalidToken, verifyAccessToken } from "../auth/jwt";
import { createDb, type Db } from "../db/client";
import { taskViewsInBatch } from "../db/task-queries";
import { events, tasks } from "../db/schema";
import type { Env } from "../env";
import { eventView } from "../views/events";
import { isOnline, ONLINE_WINDOW_MS } from "../domain/presence";
import { blobKey } from "../blobs";
import { isSeq } from "../domain/seq";
import { withDownloadUrls } from "../offload";
import { HUB_ACTOR, type RoomActor, type RoomAnswer, type RoomCommand, type RoomResult } from "./commands";
import { AgentProtocol, AUTH_GRACE_MS, notify, respond, respondError } from "./agent-socket";
import { AGENT_TAG, attachmentOf, CLOSE, DASHBOARD_TAG, eventFrame, FrameRate, sendJson, type AgentAttachment, type DashboardAttachment } from "./sockets";
import { overCapacity } from "./assignment";
import { committedEvents, type CommittedEvent } from "./statements";
import { isProblem, planOperation, type OpContext, type OpOutcome } from "./task-operations";
import { d1Reads, GroupReads, type TaskReads } from "./task-reads";

/** Operations the room plans together and commits in one batch: the hot path of agents at work. */
const GROUPED: ReadonlySet<RoomCommand["op"]> = new Set(["start", "complete"]);
/** The most operations one batch carries (D1 counts each statement against an invocation's queries). */
const MAX_GROUP = 32;
/**
 * How often an operation is planned after another project's room filled a
 * server it assigned to; the last time without offering waiting tasks.
 */
const MAX_PLANS = 3;
const REPLAY_PAGE = 500;
/** The longest backlog a socket replays inside the room's queue. */
const MAX_REPLAY = 5000;
const DASHBOARD_FRAMES_PER_SECOND = 20;
/** How long past its URL's expiry an upload that started in time may still be streaming. */
const UPLOAD_GRACE_MS = 60 * 60 * 1000;

interface Operation {
  actor: RoomActor;
  command: RoomCommand;
  /** The caller answers with the task's view: read in the commit's batch. */
  withView: boolean;
}
/** An operation that threw: its caller gets the error, the others of its group their answers. */
interface Failure {
  failure: unknown;
}

export class ProjectRoom extends DurableObject<Env> {
  private readonly db: Db;
  private queue: Promise<unknown> = Promise.resolve();
  /** Operations waiting for the group that runs at the room's next turn. */
  private readonly gathering: { operation: Operation; resolve: (r: RoomResult) => void; reject: (e: unknown) => void }[] = [];
  /** D1 round trips of the operation running now (operations never overlap). */
  private d1Queries = 0;
  private projectId: string | undefined;
  /** Dashboards replaying missed events: live events reach them through the replay instead. */
  private readonly replaying = new Set<WebSocket>();
  private readonly dashboardRate = new FrameRate(DASHBOARD_FRAMES_PER_SECOND);
  /** The seq range each dashboard has received live, so a later resume sends none of it twice. */
  private readonly delivered = new Map<WebSocket, { first: number; last: number }>();
  /** When each dashboard's access token expires: asked at every frame sent, so kept out of the attachment's copy. */
  private readonly expiries = new Map<WebSocket, number>();
  /** Agent sockets still to send their API key, by when their grace ends (in arrival order, so in deadline order). */
  private readonly authDeadlines = new Map<WebSocket, number>();
  private readonly agents: AgentProtocol;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = createDb(env.DB, () => this.d1Queries++);
    // Answered by the runtime without waking the object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair('{"type":"ping"}', '{"type":"pong"}'));
    const room = this;
    this.agents = new AgentProtocol({
      get projectId() {
        return room.projectId!;
      },
      db: this.db,
      run: (actor, command) => this.execute(this.projectId!, actor, command),
      keyRevoked: (keyHash) => this.keyRevoked(keyHash),
      withDownloadUrls: (base, value) => withDownloadUrls(this.env, base, value),
      arrived: (serverId, serverName) => this.markPresent(serverId, serverName),
      left: async (serverId, except) => {
        const recheck = await this.checkAbsent(serverId, except);
        if (recheck !== null) await this.scheduleAlarm(recheck + 1000);
      },
    });
  }

  // ── presence ─────────────────────────────────────────────────────────────
  // A server is present in this project while its heartbeat is fresh (API.md: within 90 s) or one of its
  // agent sockets is connected here. Crossing that line either way appends server_online / server_offline.

  // Both checks run in the queue, so a connect and a disconnect of the same server cannot interleave.

  private markPresent(serverId: string, serverName: string) {
    return this.serialise(async () => {
      if (await this.ctx.storage.get(`present:${serverId}`)) return;
      await this.ctx.storage.put(`present:${serverId}`, serverName);
      await this.apply(this.projectId!, HUB_ACTOR, { op: "presence", serverId, serverName, online: true });
    });
  }

  /** Takes the server offline here if it is neither connected nor beating; otherwise says when to look again. */
  private checkAbsent(serverId: string, except?: WebSocket): Promise<number | null> {
    return this.serialise(async () => {
      const name = await this.ctx.storage.get<string>(`present:${serverId}`);
      if (!name || this.agentSockets(serverId).some((ws) => ws !== except)) return null;
      const row = await this.env.DB.prepare("SELECT last_heartbeat FROM servers WHERE id = ?1").bind(serverId).first<{ last_heartbeat: string | null }>();
      if (row && isOnline(row.last_heartbeat)) return Date.parse(row.last_heartbeat!) + ONLINE_WINDOW_MS;
      await this.ctx.storage.delete(`present:${serverId}`);
      await this.apply(this.projectId!, HUB_ACTOR, { op: "presence", serverId, serverName: name, online: false });
      return null;
    });
  }

  /** A heartbeat brought the server online: present here, and watched until its heartbeats stop. */
  async serverHeartbeat(projectId: string, serverId: string, serverName: string) {
    await this.rememberProject(projectId);
    await this.markPresent(serverId, serverName);
    await this.scheduleAlarm(Date.now() + ONLINE_WINDOW_MS + 1000);
  }

  /** Present servers whose heartbeat lapsed with no socket connected go offline; returns when to look again. */
  private async sweepPresence(): Promise<number | null> {
    let next: number | null = null;
    for (const key of (await this.ctx.storage.list<string>({ prefix: "present:" })).keys()) {
      const recheck = await this.checkAbsent(key.slice("present:".length));
      if (recheck !== null) next = next === null ? recheck : Math.min(next, recheck);
    }
    return next;
  }

  /** Authenticated agent sockets, of one server or all. */
  private agentSockets(serverId?: string): WebSocket[] {
    return this.ctx.getWebSockets(AGENT_TAG).filter((ws) => {
      const a = attachmentOf(ws) as AgentAttachment | null;
      return a?.serverId && (serverId === undefined || a.serverId === serverId);
    });
  }

  /** Runs `work` after every operation queued before it; a failure does not stop the queue. */
  private serialise<T>(work: () => Promise<T>): Promise<T> {
    const turn = () => {
      this.closeLateAgents(Date.now());
      return work();
    };
    const run = this.queue.then(turn, turn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Runs one operation; `withView` also answers the task as its batch left it (read in that batch). */
  async execute(projectId: string, actor: RoomActor, command: RoomCommand, withView = false): Promise<RoomResult> {
    if (GROUPED.has(command.op)) return this.joinGroup(projectId, { actor, command, withView });
    return this.serialise(async () => {
      const [result] = await this.measured(1, async () => [await this.apply(projectId, actor, command, withView)]);
      return result as RoomResult;
    });
  }

  /** Runs operations, reporting what they cost together: D1 round trips and time. */
  private async measured(operations: number, run: () => Promise<(RoomAnswer | Failure)[]>): Promise<(RoomResult | Failure)[]> {
    const started = performance.now();
    this.d1Queries = 0;
    const answers = await run();
    const metrics = { d1Queries: this.d1Queries, ms: performance.now() - started, operations };
    return answers.map((answer) => ("failure" in answer ? answer : { ...answer, metrics }));
  }

  /**
   * Starts and completions wait for the room's next turn together: the first
   * to arrive queues the turn, and those arriving before it comes ride along.
   */
  private joinGroup(projectId: string, operation: Operation): Promise<RoomResult> {
    return new Promise((resolve, reject) => {
      this.gathering.push({ operation, resolve, reject });
      if (this.gathering.length === 1) void this.serialise(() => this.runGroup(projectId));
    });
  }

  private async runGroup(projectId: string) {
    const members = this.gathering.splice(0, MAX_GROUP);
    if (this.gathering.length > 0) void this.serialise(() => this.runGroup(projectId));
    try {
      const results = await this.measured(members.length, () => this.applyGroup(projectId, members.map((m) => m.operation)));
      members.forEach((m, i) => {
        const result = results[i]!;
        if ("failure" in result) m.reject(result.failure);
        else m.resolve(result);
      });
    } catch (e) {
      for (const m of members) m.reject(e);
    }
  }

  /**
   * Plans the operations one after another, each seeing what those before it
   * change (GroupReads), and commits them in one batch: one read and one
   * write for the whole group. Each answers exactly as it would alone.
   *
   * Only this room writes the project's tasks, so a guarded update fails in
   * a group only when its tasks were deleted with the project, and then the
   * later operations' guards fail too.
   */
  private async applyGroup(projectId: string, operations: Operation[]): Promise<(RoomAnswer | Failure)[]> {
    if (operations.length === 1) {
      try {
        return await this.replanned(projectId, operations[0]!.command, (offerWaiting) => this.commitGroup(projectId, operations, offerWaiting));
      } catch (failure) {
        return [{ failure }];
      }
    }
    try {
      return await this.commitGroup(projectId, operations, true);
    } catch {
      // The batch rolled back whole: each runs alone, so a failure is only its own.
      const answers: (RoomAnswer | Failure)[] = [];
      for (const operation of operations) answers.push(...(await this.applyGroup(projectId, [operation])));
      return answers;
    }
  }

  /** Plans the operations one after another on the group's reads, and commits them together. */
  private async commitGroup(projectId: string, operations: Operation[], offerWaiting: boolean): Promise<RoomAnswer[]> {
    await this.rememberProject(projectId);
    this.d1Queries++;
    const taskIds = operations.map((o) => (o.command as { taskId: string }).taskId);
    const reads = await GroupReads.load(this.db, projectId, taskIds, operations.some((o) => o.command.op === "complete"));
    const outcomes: OpOutcome[] = [];
    for (const { actor, command } of operations) {
      const outcome = await planOperation(this.opContext(projectId, actor, reads, offerWaiting), command);
      if (!isProblem(outcome)) reads.record(outcome.effects);
      outcomes.push(outcome);
    }
    return this.commit(outcomes, operations.map((o) => o.withView));
  }

  private async apply(projectId: string, actor: RoomActor, command: RoomCommand, withView = false): Promise<RoomAnswer> {
    await this.rememberProject(projectId);
    return this.replanned(projectId, command, async (offerWaiting) => {
      const [answer] = await this.commit([await planOperation(this.opContext(projectId, actor, undefined, offerWaiting), command)], [withView]);
      return answer!;
    });
  }

  /**
   * Plans and commits an operation, and plans it again from fresh reads when
   * another project's room filled a server it assigned to; the last time
   * without offering waiting tasks, which the room then offers in its next turn.
   */
  private async replanned<T>(projectId: string, command: RoomCommand, attempt: (offerWaiting: boolean) => Promise<T>): Promise<T> {
    for (let plan = 1; ; plan++) {
      const offerWaiting = plan < MAX_PLANS;
      try {
        const result = await attempt(offerWaiting);
        if (!offerWaiting && command.op !== "sweep") this.offerWaitingSoon(projectId);
        return result;
      } catch (e) {
        if (!overCapacity(e) || !offerWaiting) throw e;
      }
    }
  }

  /** After an operation committed without offering waiting tasks, they are offered in the room's next turn. */
  private offerWaitingSoon(projectId: string) {
    this.serialise(() => this.apply(projectId, HUB_ACTOR, { op: "sweep" })).catch((e) => console.error("offering waiting tasks failed", e));
  }

  /**
   * Commits planned operations in one batch, publishes what committed, and
   * answers each: with the task's view, read at the end of the same batch,
   * where the caller asked for it.
   */
  private async commit(outcomes: OpOutcome[], withView: readonly boolean[] = []): Promise<RoomAnswer[]> {
    const writes = outcomes.flatMap((o) => (isProblem(o) ? [] : o.statements));
    const viewIds = [...new Set(outcomes.flatMap((o, i) => (withView[i] && !isProblem(o) && o.statements.length > 0 ? [o.taskId] : [])))];
    const views = viewIds.length > 0 ? taskViewsInBatch(this.db, this.env.DB, viewIds) : undefined;
    const batched = writes.length > 0 ? await this.batch(views ? [...writes, views.statement] : writes) : [];
    const results = batched.slice(0, writes.length);
    const viewOf = new Map((views ? views.read(batched.at(-1)!) : []).map((v) => [v.id, v]));
    let offset = 0;
    const answers = outcomes.map((outcome, i): RoomAnswer => {
      if (isProblem(outcome)) return { ok: false, problem: outcome };
      const own = results.slice(offset, (offset += outcome.statements.length));
      if (outcome.guardedUpdate !== undefined && own[outcome.guardedUpdate]!.results.length !== 1) {
        // Only this room writes the project's tasks, so this means the task was deleted or changed underneath.
        return { ok: false, problem: { status: 409, code: "CONCURRENT_CHANGE", detail: "The task changed while this request was being handled; retry" } };
      }
      const view = withView[i] ? viewOf.get(outcome.taskId) : undefined;
      return { ok: true, taskId: outcome.taskId, ...(outcome.data ? { data: outcome.data } : {}), ...(view ? { view } : {}) };
    });
    if (results.length > 0) {
      this.publish(committedEvents(results));
      this.tellAbandonedAskers(results);
    }
    for (const [i, outcome] of outcomes.entries()) {
      if (isProblem(outcome) || !answers[i]!.ok) continue;
      const deliver = outcome.data?.deliver as { serverId: string; correlationId: string; answer: string; answeredAt: string } | undefined;
      if (deliver) {
        for (const ws of this.agentSockets(deliver.serverId)) respond(ws, deliver.correlationId, { answer: deliver.answer, metadata: { answeredAt: deliver.answeredAt } });
      }
      if (outcome.deadline) await this.scheduleAlarm(Date.parse(outcome.deadline));
    }
    return answers;
  }

  /** Agents waiting on a question whose task just ended hear that no answer will come. */
  private tellAbandonedAskers(results: D1Result[]) {
    for (const row of results.flatMap((r) => r.results as { waiting_server_id?: string | null; waiting_correlation_id?: string | null }[])) {
      if (!row.waiting_server_id || !row.waiting_correlation_id) continue;
      for (const ws of this.agentSockets(row.waiting_server_id)) respondError(ws, row.waiting_correlation_id, "TIMEOUT", "Closed unanswered: its task ended");
    }
  }

  /** The writes of one operation (or group): one D1 transaction, one round trip. */
  private batch(statements: D1PreparedStatement[]) {
    this.d1Queries++;
    return this.env.DB.batch(statements);
  }

  private opContext(projectId: string, actor: RoomActor, reads: TaskReads = d1Reads(this.db, projectId), offerWaiting = true): OpContext {
    return { db: this.db, d1: this.env.DB, projectId, actor, now: new Date().toISOString(), reads, offerWaiting };
  }

  /** The alarm needs to know the project; stored once, remembered in memory. */
  private async rememberProject(projectId: string) {
    if (this.projectId === projectId) return;
    if ((await this.ctx.storage.get<string>("projectId")) !== projectId) await this.ctx.storage.put("projectId", projectId);
    this.projectId = projectId;
  }

  private async scheduleAlarm(at: number) {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || at < current) await this.ctx.storage.setAlarm(at);
  }

  // ── sockets ──────────────────────────────────────────────────────────────

  /** Committed events go to every live dashboard, in seq order. */
  private publish(committed: CommittedEvent[]) {
    if (committed.length === 0) return;
    const frames = committed.map(eventFrame);
    const first = committed[0]!.seq;
    const last = committed.at(-1)!.seq;
    const now = Date.now();
    for (const ws of this.ctx.getWebSockets(DASHBOARD_TAG)) {
      if (this.replaying.has(ws) || this.closedAtExpiry(ws, now)) continue;
      try {
        for (const frame of frames) ws.send(frame);
        const range = this.delivered.get(ws);
        this.delivered.set(ws, { first: range?.first ?? first, last });
      } catch {
        // Closed: its close handler cleans up.
      }
    }
    this.notifyAgents(committed);
  }

  /** What agents hear of committed events: their assignments and cancellations, and the tasks they subscribed to. */
  private notifyAgents(committed: CommittedEvent[]) {
    const sockets = this.agentSockets();
    if (sockets.length === 0) return;
    for (const ws of sockets) {
      const a = attachmentOf(ws) as AgentAttachment;
      for (const e of committed) {
        if (e.type === "task_assigned" && e.data.server_id === a.serverId) {
          notify(ws, "notify:task-assigned", { taskId: e.task_id, message: "Task assigned. Use request:get-task to view details." });
        }
        if (e.type === "task_cancelled" && e.data.assigned_server_id === a.serverId) {
          notify(ws, "notify:task-cancelled", { taskId: e.task_id, reason: e.data.reason ?? "Cancelled" });
        }
        if (e.task_id && a.subscriptions.includes(e.task_id)) notify(ws, "notify:task-event", { taskId: e.task_id, event: e });
      }
    }
  }

  /**
   * Tells the agents using a server's old key to stop (the key was revoked or
   * replaced) and closes their sockets; sockets on a new key stay. The key is
   * remembered so that a socket still authenticating with it is refused.
   */
  async shutdownServer(serverId: string, keyHash: string, reason: string) {
    await this.ctx.storage.put(`revoked-key:${keyHash}`, Date.now());
    for (const ws of this.agentSockets(serverId)) {
      if ((attachmentOf(ws) as AgentAttachment).keyHash !== keyHash) continue;
      notify(ws, "notify:shutdown", { gracePeriod: 0, reason });
      ws.close(CLOSE.revoked, reason);
    }
  }

  /** A DataRef upload was offered: clean it up if it never completes. */
  async watchUpload(projectId: string, expiresAt: string) {
    await this.rememberProject(projectId);
    await this.scheduleAlarm(Date.parse(expiresAt) + 1000);
  }

  /**
   * Forgets DataRefs whose upload never completed (and any bytes a broken
   * upload left). Uploads still streaming get an hour past their URL's expiry.
   * Returns when the next one is due.
   */
  private async cleanUpUploads(projectId: string): Promise<number | null> {
    const now = Date.now();
    const { results } = await this.env.DB.prepare(
      `DELETE FROM datarefs WHERE project_id = ?1 AND status != 'complete'
         AND ((status = 'pending' AND upload_expires_at <= ?2) OR (status = 'uploading' AND upload_expires_at <= ?3))
       RETURNING id`,
    )
      .bind(projectId, new Date(now).toISOString(), new Date(now - UPLOAD_GRACE_MS).toISOString())
      .all<{ id: string }>();
    if (results.length) await this.env.BLOBS.delete(results.map((r) => blobKey(projectId, r.id)));
    const next = await this.env.DB.prepare("SELECT MIN(upload_expires_at) AS at FROM datarefs WHERE project_id = ?1 AND status != 'complete'")
      .bind(projectId)
      .first<{ at: string | null }>();
    return next?.at ? Math.max(Date.parse(next.at), now) + 1000 : null;
  }

  /** A project deleted: everyone connected to it is told and disconnected. */
  async closeAll(reason: string) {
    for (const ws of this.ctx.getWebSockets()) {
      if (attachmentOf(ws)?.kind === "agent") notify(ws, "notify:shutdown", { gracePeriod: 0, reason });
      ws.close(CLOSE.revoked, reason);
    }
  }

  private keyRevoked = async (keyHash: string) => (await this.ctx.storage.get(`revoked-key:${keyHash}`)) !== undefined;

  /**
   * Accepts a socket the Worker has already authenticated (it forwards only
   * upgrades it checked, with the caller's identity in headers).
   */
  override async fetch(request: Request): Promise<Response> {
    const projectId = request.headers.get("X-Project-Id");
    if (!projectId || request.headers.get("Upgrade") !== "websocket") return new Response("expected a WebSocket upgrade", { status: 426 });
    await this.rememberProject(projectId);
    const { 0: client, 1: server } = new WebSocketPair();
    if (new URL(request.url).pathname === "/agent") {
      const serverId = request.headers.get("X-Server-Id");
      const serverName = request.headers.get("X-Server-Name");
      const keyHash = request.headers.get("X-Key-Hash");
      if (keyHash && (await this.keyRevoked(keyHash))) return new Response("the API key has been revoked", { status: 401 });
      this.ctx.acceptWebSocket(server, [AGENT_TAG]);
      const hubBase = request.headers.get("X-Hub-Base");
      server.serializeAttachment({ kind: "agent", serverId, serverName, keyHash, hubBase, subscriptions: [], connectedAt: Date.now() } satisfies AgentAttachment);
      if (serverId && serverName) await this.agents.connected(server, serverId, serverName);
      else {
        // Timers and alarms wait while the room is kept busy, so every turn of the room also looks (closeLateAgents);
        // the timer covers an idle room, the alarm a restarted one.
        const deadline = Date.now() + AUTH_GRACE_MS;
        this.authDeadlines.set(server, deadline);
        setTimeout(() => this.closeLateAgents(Date.now()), AUTH_GRACE_MS);
        await this.scheduleAlarm(deadline);
      }
      return new Response(null, { status: 101, webSocket: client });
    }
    const expiresAt = Number(request.headers.get("X-Token-Expires")) * 1000;
    // Connecting with ?since=N replays before the socket goes live: the gap-free way in.
    const since = request.headers.get("X-Resume-Since");
    if (since !== null) this.replaying.add(server);
    this.ctx.acceptWebSocket(server, [DASHBOARD_TAG]);
    server.serializeAttachment({ kind: "dashboard", userId: request.headers.get("X-User-Id")!, expiresAt } satisfies DashboardAttachment);
    if (since !== null) this.startReplay(server, Number(since));
    await this.scheduleAlarm(expiresAt);
    const protocol = request.headers.get("X-Subprotocol");
    return new Response(null, { status: 101, webSocket: client, headers: protocol ? { "Sec-WebSocket-Protocol": protocol } : {} });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer) {
    const attachment = attachmentOf(ws);
    if (attachment?.kind === "agent") {
      await this.agents.onMessage(ws, message);
      return;
    }
    if (attachment?.kind !== "dashboard" || this.closedAtExpiry(ws, Date.now())) return;
    if (this.dashboardRate.exceeded(ws)) return sendJson(ws, { type: "error", code: "INVALID_REQUEST", message: `at most ${DASHBOARD_FRAMES_PER_SECOND} frames per second` });
    let frame: { type?: unknown; since?: unknown; access_token?: unknown };
    try {
      frame = JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message));
    } catch {
      frame = null as never;
    }
    if (typeof frame !== "object" || frame === null || Array.isArray(frame)) {
      return sendJson(ws, { type: "error", code: "INVALID_REQUEST", message: "frames are JSON objects" });
    }
    if (frame.type === "resume") {
      const since = frame.since;
      if (!isSeq(since)) return sendJson(ws, { type: "error", code: "INVALID_REQUEST", message: "resume needs since: a non-negative integer" });
      if (this.replaying.has(ws)) return sendJson(ws, { type: "error", code: "INVALID_REQUEST", message: "a resume is already running on this socket" });
      await this.startReplay(ws, since);
      return;
    }
    if (frame.type === "auth" && typeof frame.access_token === "string") return this.renewToken(ws, attachment, frame.access_token);
    sendJson(ws, { type: "error", code: "INVALID_MESSAGE_TYPE", message: `unknown message type ${JSON.stringify(frame.type)}` });
  }

  /** From now until the replay has caught up, live events reach this socket through the replay. */
  private startReplay(ws: WebSocket, since: number) {
    this.replaying.add(ws);
    return this.serialise(() => this.replay(ws, since));
  }

  /**
   * Sends every event after `since` that this socket has not had live, then
   * hands it back to live publishing. Runs in the queue, so no event commits
   * in between.
   */
  private async replay(ws: WebSocket, since: number) {
    const live = this.delivered.get(ws);
    try {
      // A replay runs between writes: a backlog too long for that is read from GET /events instead.
      const backlog = await this.env.DB.prepare("SELECT COUNT(*) AS n, MAX(seq) AS head FROM events WHERE project_id = ?1 AND seq > ?2")
        .bind(this.projectId, since)
        .first<{ n: number; head: number | null }>();
      if (backlog && backlog.n > MAX_REPLAY) {
        sendJson(ws, { type: "resync_required", since, head: backlog.head, detail: `more than ${MAX_REPLAY} events behind: page GET /events from since, then resume from the last seq read` });
        return;
      }
      let after = since;
      for (;;) {
        const page = await this.db
          .select()
          .from(events)
          .where(and(eq(events.projectId, this.projectId!), gt(events.seq, after)))
          .orderBy(asc(events.seq))
          .limit(REPLAY_PAGE);
        if (this.closedAtExpiry(ws, Date.now())) return;
        for (const e of page) {
          if (!live || e.seq < live.first || e.seq > live.last) ws.send(eventFrame({ ...eventView(e), data: e.data }));
        }
        after = page.at(-1)?.seq ?? after;
        if (page.length < REPLAY_PAGE) break;
      }
      if (after > since) this.delivered.set(ws, { first: Math.min(live?.first ?? since + 1, since + 1), last: after });
      sendJson(ws, { type: "resumed", last_seq: after });
    } catch {
      // The socket closed while replaying.
    } finally {
      this.replaying.delete(ws);
    }
  }

  /** Closes a person's dashboards here: their access to the project ended (removed, demoted, deleted). */
  async disconnectUser(userId: string) {
    for (const ws of this.ctx.getWebSockets(DASHBOARD_TAG)) {
      if ((attachmentOf(ws) as DashboardAttachment).userId === userId) ws.close(CLOSE.unauthorized, "access to this project was revoked");
    }
  }

  /**
   * A dashboard may present a fresh access token to keep its socket past the
   * old token's expiry — if the person may still see the project.
   */
  private async renewToken(ws: WebSocket, attachment: DashboardAttachment, token: string) {
    try {
      const identity = await verifyAccessToken(this.env, token);
      if (!("userId" in identity) || identity.userId !== attachment.userId) throw new InvalidToken("the token is for someone else");
      const access = await this.env.DB.prepare(
        "SELECT u.role, (SELECT 1 FROM project_members pm WHERE pm.project_id = ?1 AND pm.user_id = u.id) AS member FROM users u WHERE u.id = ?2",
      )
        .bind(this.projectId, identity.userId)
        .first<{ role: string; member: number | null }>();
      if (!access || (access.role !== "admin" && access.member === null)) {
        ws.close(CLOSE.unauthorized, "access to this project was revoked");
        return;
      }
      ws.serializeAttachment({ ...attachment, expiresAt: identity.expiresAt * 1000 } satisfies DashboardAttachment);
      this.expiries.set(ws, identity.expiresAt * 1000);
      await this.scheduleAlarm(identity.expiresAt * 1000);
      sendJson(ws, { type: "auth_ok", expires_at: new Date(identity.expiresAt * 1000).toISOString() });
    } catch (e) {
      sendJson(ws, { type: "error", code: "UNAUTHORIZED", message: e instanceof InvalidToken ? e.message : "the token could not be checked" });
    }
  }

  override async webSocketError(ws: WebSocket) {
    await this.webSocketClose(ws, 1011, "socket error");
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string) {
    this.replaying.delete(ws);
    this.delivered.delete(ws);
    this.expiries.delete(ws);
    this.authDeadlines.delete(ws);
    this.dashboardRate.forget(ws);
    if (attachmentOf(ws)?.kind === "agent") await this.agents.disconnected(ws);
    try {
      ws.close(code, reason);
    } catch {
      // Already closed.
    }
  }

  /** When a dashboard's access token expires (ms since epoch). */
  private expiryOf(ws: WebSocket): number {
    let at = this.expiries.get(ws);
    if (at === undefined) this.expiries.set(ws, (at = (attachmentOf(ws) as DashboardAttachment).expiresAt));
    return at;
  }

  /**
   * Closes a dashboard whose access token has expired, at the first frame
   * that would reach it after the expiry; the alarm closes idle ones.
   */
  private closedAtExpiry(ws: WebSocket, now: number): boolean {
    if (this.expiryOf(ws) > now) return false;
    if (ws.readyState === WebSocket.OPEN) ws.close(CLOSE.tokenExpired, "access token expired; reconnect with a fresh one");
    return true;
  }

  /** Closes dashboards whose access token has expired; returns when the next one expires. */
  private closeExpiredDashboards(now: number): number | null {
    let next: number | null = null;
    for (const ws of this.ctx.getWebSockets(DASHBOARD_TAG)) {
      if (!this.closedAtExpiry(ws, now)) next = next === null ? this.expiryOf(ws) : Math.min(next, this.expiryOf(ws));
    }
    return next;
  }

  /** Closes agent sockets whose grace to send their API key has ended; cheap enough for every turn of the room. */
  private closeLateAgents(now: number) {
    for (const [ws, deadline] of this.authDeadlines) {
      if (deadline > now) return;
      this.authDeadlines.delete(ws);
      if (!(attachmentOf(ws) as AgentAttachment).serverId && ws.readyState === WebSocket.OPEN) ws.close(CLOSE.unauthorized, "no API key within 10 s");
    }
  }

  /** Closes agent sockets that never sent their API key; returns when the next one's grace ends. */
  private closeUnauthenticatedAgents(now: number): number | null {
    let next: number | null = null;
    for (const ws of this.ctx.getWebSockets(AGENT_TAG)) {
      const a = attachmentOf(ws) as AgentAttachment;
      if (a.serverId) continue;
      if (a.connectedAt + AUTH_GRACE_MS <= now) ws.close(CLOSE.unauthorized, "no API key within 10 s");
      else next = next === null ? a.connectedAt + AUTH_GRACE_MS : Math.min(next, a.connectedAt + AUTH_GRACE_MS);
    }
    return next;
  }

  /** request:ask-user questions nobody answered in time: TIMEOUT to the asker. Returns when the next one expires. */
  private async expireQuestions(projectId: string): Promise<number | null> {
    const answer = await this.apply(projectId, HUB_ACTOR, { op: "expire_questions" });
    const expired = (answer.ok ? answer.data?.expired : []) as { serverId: string | null; correlationId: string | null }[];
    for (const q of expired) {
      if (!q.serverId || !q.correlationId) continue;
      for (const ws of this.agentSockets(q.serverId)) respondError(ws, q.correlationId, "TIMEOUT", "Nobody answered in time");
    }
    const next = await this.env.DB.prepare("SELECT MIN(expires_at) AS at FROM interventions WHERE project_id = ?1 AND status = 'pending' AND expires_at IS NOT NULL")
      .bind(projectId)
      .first<{ at: string | null }>();
    return next?.at ? Date.parse(next.at) : null;
  }

  // ── alarm ────────────────────────────────────────────────────────────────

  /**
   * Fails running tasks whose timeout has passed (code TIMEOUT; never retried
   * implicitly) and closes sockets whose token expired, then sleeps until the
   * next of either.
   */
  override async alarm() {
    const projectId = this.projectId ?? (await this.ctx.storage.get<string>("projectId"));
    if (!projectId) return;
    this.projectId = projectId;
    // Sockets first: closing them needs no turn of the queue.
    const nextExpiry = this.closeExpiredDashboards(Date.now());
    const nextAuth = this.closeUnauthenticatedAgents(Date.now());
    await this.serialise(async () => {
      const now = new Date().toISOString();
      const overdue = await this.db
        .select({ id: tasks.id, timeoutSeconds: tasks.timeoutSeconds })
        .from(tasks)
        .where(and(eq(tasks.projectId, projectId), eq(tasks.status, "running"), isNotNull(tasks.deadlineAt), lte(tasks.deadlineAt, now)));
      for (const task of overdue) {
        await this.apply(projectId, HUB_ACTOR, { op: "fail", taskId: task.id, error: `Timed out after ${task.timeoutSeconds} s`, code: "TIMEOUT" });
      }
      const [nextDeadline] = await this.db
        .select({ at: min(tasks.deadlineAt) })
        .from(tasks)
        .where(and(eq(tasks.projectId, projectId), eq(tasks.status, "running"), isNotNull(tasks.deadlineAt)));
      const nextQuestion = await this.expireQuestions(projectId);
      const nextUpload = await this.cleanUpUploads(projectId);
      const wakeAt = [nextDeadline?.at ? Date.parse(nextDeadline.at) : null, nextExpiry, nextQuestion, nextAuth, nextUpload].filter((t): t is number => t !== null);
      // scheduleAlarm keeps an earlier alarm set meanwhile (a new socket, a heartbeat).
      if (wakeAt.length) await this.scheduleAlarm(Math.max(Math.min(...wakeAt), Date.now() + 1000));
    });
    // Presence writes its events through the queue itself, so it runs after the queued work above.
    const next = await this.sweepPresence();
    if (next !== null) await this.scheduleAlarm(next + 1000);
  }
}
