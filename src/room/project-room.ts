/**
 * One Durable Object per project, named by the project's id: the single writer of that project's tasks (its RoomWriter)
 * and the fan-out of its events to dashboards and agents (DashboardProtocol, AgentProtocol). This shell holds the
 * entry points, presence and the alarm.
 */
import { DurableObject } from "cloudflare:workers";
import { ONLINE_WINDOW_MS } from "../domain/presence";
import type { RoomEnv } from "../runtime/room-env";
import { linkPointers } from "../datarefs/pointers";
import { logError } from "../runtime/log";
import { wakeLane } from "../integrations/client";
import { countedD1 } from "../db/round-trips";
import { DIRECTORY, homeOf, shardD1 } from "../db/shards";
import { movingProblem, RoomMove } from "./room-move";
import { mentionsIn, needsTaskSessions, pushedAsRecorded, reachesDependents } from "../server-link/pushes";
import { tellAgents } from "./agent-notices";
import { AgentProtocol, AUTH_GRACE_MS } from "./agent-socket";
import { notify } from "./agent-answers";
import { requestTimeoutMs, SHUTDOWN_GRACE_MS } from "../protocol/agent-orchestrator-messages";
import { type ProblemData, type RoomActor, type RoomCommand, type RoomResult } from "./commands";
import { DashboardProtocol } from "./dashboard-socket";
import { pushToDaemons } from "./daemon-push";
import { RoomLiveness } from "./liveness";
import { fireDueSchedules } from "./schedule-firing";
import { RoomKeys } from "./room-keys";
import { RoomPresence } from "./room-presence";
import { AgentGraces } from "./agent-graces";
import { queuedDueWork } from "./due-work";
import { RoomArchiving } from "./archiving";
import { followUp, reviewFollowUps } from "./review-followups";
import { stepOf, strandedReviews } from "./review-sweep";
import { wakeModelReviewer, type ReviewJob } from "../integrations/code-review/wake";
import type { Committed } from "./committed";
import { RoomWriter } from "./room-writer";
import { holdRoom } from "./room-holds";
import { UsageIntake, type UsageTally } from "./usage-intake";
import type { UsagePoint } from "../domain/usage";
import type { CommittedEvent } from "./statements";
import type { TaskStatus } from "../domain/lifecycle";
import { leaseSeconds, LEASED_STATUSES } from "../protocol/compute-protocol";
import { livenessBounds } from "../protocol/agent-liveness";
import { pingAgents } from "./agent-heartbeat";
import { AGENT_TAG, attachmentOf, CLOSE, DASHBOARD_TAG, type AgentAttachment, type DashboardAttachment } from "./sockets";

export class ProjectRoom extends DurableObject<RoomEnv> {
  // Set before the room takes any request (see the constructor).
  private projectId!: string;
  private writer!: RoomWriter;
  private dashboards!: DashboardProtocol;
  private agents!: AgentProtocol;
  private keys!: RoomKeys;
  private presence!: RoomPresence;
  private usage!: UsageIntake;
  private liveness!: RoomLiveness;
  private archiving!: RoomArchiving;
  /** The pushes to daemons under way, in commit order. */
  private pushing: Promise<void> = Promise.resolve();
  private readonly graces = new AgentGraces(this.ctx);
  /** The env with the directory as DB (people, memberships, the project's own row); `this.env.DB` is its shard once open. */
  private readonly base: RoomEnv = this.env;
  private move!: RoomMove;
  private shard = DIRECTORY;
  private opened = 0; // openings: a writer of an earlier one (a shard left) refuses what was still queued on it, to be sent again

  constructor(ctx: DurableObjectState, env: RoomEnv) {
    // D1's rows read and written by the room's calls are counted against the turn that makes them (RoomWriter).
    super(ctx, { ...env, DB: countedD1(env.DB) });
    // Answered by the runtime without waking the object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair('{"type":"ping"}', '{"type":"pong"}'));
    // The room is its project, reached only by idFromName(projectId) (ctx.id.name); a copy in storage serves an instance
    // woken without its name (alarms waking a cold instance) and rooms from before the name was given.
    void ctx.blockConcurrencyWhile(async () => {
      const named = ctx.id.name;
      const stored = await ctx.storage.get<string>("projectId");
      if (named && named !== stored) await ctx.storage.put("projectId", named);
      const projectId = named ?? stored;
      if (!projectId) throw new Error("a ProjectRoom is reached only by idFromName(projectId)");
      this.move = new RoomMove(ctx.storage, this.base, projectId, (shard) => this.open(projectId, shard));
      // A move cut short goes on from where it was kept.
      if (await this.move.load()) await ctx.storage.setAlarm(Date.now());
      this.open(projectId, await homeOf(this.base, projectId));
    });
  }

  /** The room opened on its project's shard (read once from the directory; a move reopens it on the new one). */
  private open(projectId: string, shard: string) {
    this.shard = shard;
    const opening = ++this.opened;
    this.usage?.stop(); // the last shard's intake and archiver go no further there (their work waits for the new ones)
    this.archiving?.retire();
    this.env = shard === DIRECTORY ? this.base : { ...this.base, DB: shardD1(this.base, shard) };
    const { ctx, env } = this;
    this.projectId = projectId;
    this.writer = new RoomWriter(env.DB, projectId, shard === DIRECTORY ? null : this.base.DB, {
      beforeTurn: () => this.graces.closeLateAgents(Date.now()),
      refusal: async (actor) => (this.opened !== opening ? movingProblem(this.shard) : (this.move.refusal() ?? this.keys.refusal(actor))),
      afterCommit: (committed) => this.afterCommit(committed),
      holdRoom: (fills) => holdRoom(this.base, projectId, fills),
    });
    const { db } = this.writer;
    this.keys = new RoomKeys(ctx.storage, db);
    this.liveness = new RoomLiveness(this.writer, env.DB, projectId, (at) => this.scheduleAlarm(at));
    this.usage = new UsageIntake(ctx.storage, this.writer, (at) => this.scheduleAlarm(at));
    this.archiving = new RoomArchiving(
      ctx.storage,
      env,
      projectId,
      this.writer,
      (at) => this.scheduleAlarm(at),
      () => this.move.underway,
    );
    this.presence = new RoomPresence(ctx, env, this.writer, (serverId) => this.graces.agentSockets(serverId));
    this.dashboards = new DashboardProtocol({
      projectId,
      env,
      db,
      directory: this.base.DB,
      sockets: () => ctx.getWebSockets(DASHBOARD_TAG),
      serialise: (work) => this.writer.serialise(work),
      scheduleAlarm: (at) => this.scheduleAlarm(at),
    });
    this.agents = new AgentProtocol({
      projectId,
      db,
      requestTimeoutMs: requestTimeoutMs(env.AGENT_REQUEST_TIMEOUT_SECONDS),
      run: (actor, command) => this.writer.execute({ actor, command, withView: false }),
      keyRevoked: (keyHash) => this.keys.revoked(keyHash),
      withDownloadUrls: (base, value) => linkPointers(env, db, base, value, { project: projectId }),
      arrived: async (serverId, serverName) => {
        await this.presence.markPresent(serverId, serverName);
        // Its socket is pinged on the alarm's schedule from now on.
        await this.scheduleAlarm(Date.now() + livenessBounds(this.env).pingMs);
      },
      left: async (serverId, except) => {
        const recheck = await this.presence.checkAbsent(serverId, except);
        if (recheck !== null) await this.scheduleAlarm(recheck + 1000);
      },
    });
  }

  // ── entry points (RPC from the Worker) ───────────────────────────────────

  /**
   * Runs one operation; with `view`, also answers the task as its batch left it (read in that batch). `requestId`
   * names the HTTP request that asked, in the operation's log line. A bookmark is of one database: the Worker's
   * requests carry the directory's; another shard is named instead, and read at its primary.
   */
  async execute(actor: RoomActor, command: RoomCommand, options: { view?: boolean; requestId?: string } = {}): Promise<RoomResult> {
    const result = await this.writer.execute({ actor, command, withView: options.view ?? false, requestId: options.requestId });
    return this.env.DB === this.base.DB ? result : { ...result, bookmark: undefined, shard: this.shard };
  }

  /** An admin moves the project (room-move.ts), once no archiver run is under way; the alarm goes on. Another move refuses it. */
  async moveTo(source: string, target: string): Promise<ProblemData | undefined> {
    const refused = await this.archiving.withoutRuns(() => this.writer.serialise(() => this.move.begin(source, target)));
    if (!refused) await this.scheduleAlarm(Date.now());
    return refused;
  }

  /** The move's next steps, for up to `ms`, in the room's queue; whether more are left. */
  moveOn(ms = 2000, rows?: number): Promise<boolean> {
    return this.move.run((work) => this.writer.serialise(work), ms, rows);
  }

  /** The liveness rules' flags due at `now` (the alarm's look, on demand), in the room's queue; the alarm is set for the next. */
  async checkLiveness(now = Date.now()) {
    const next = await this.writer.serialise(() => this.liveness.check(now));
    if (next !== null) await this.scheduleAlarm(Math.max(next, Date.now() + 1000));
  }

  /** Usage points for the project's roll-ups: kept here before this answers, and counted within a second or so. */
  recordUsage(points: UsagePoint[]): Promise<{ deltas: number; tally: UsageTally }> {
    return this.usage.accept(points);
  }

  /** The server was removed from the hub: no longer watched here. */
  async forgetServer(serverId: string) {
    await this.presence.forget(serverId);
  }

  /** A heartbeat brought the server online: present here, and watched until its heartbeats stop. */
  async serverHeartbeat(serverId: string, serverName: string) {
    await this.presence.markPresent(serverId, serverName);
    await this.scheduleAlarm(Date.now() + ONLINE_WINDOW_MS + 1000);
  }

  /** From now on this API key writes nothing here: asked before D1 revokes or replaces it, in the queue, so that every
   * write by the key this room took has committed when this answers. */
  refuseKey(keyHash: string): Promise<void> {
    return this.writer.serialise(() => this.keys.revoke(keyHash));
  }

  /** Tells the agents using a server's old key to stop (the key was revoked or replaced) and closes their sockets;
   * sockets on a new key stay. The key is remembered so that a socket still authenticating with it is refused. */
  async shutdownServer(serverId: string, keyHash: string, reason: string, why: "revoked" | "replaced" = "revoked") {
    await this.keys.revoke(keyHash);
    const sockets = this.graces.agentSockets(serverId).filter((ws) => (attachmentOf(ws) as AgentAttachment).keyHash === keyHash);
    const closingAt = this.graces.shutDown(sockets, reason, SHUTDOWN_GRACE_MS[why]);
    if (closingAt !== null) await this.scheduleAlarm(closingAt);
  }

  /** A DataRef upload was offered: clean it up if it never completes. */
  async watchUpload(expiresAt: string) {
    await this.scheduleAlarm(Date.parse(expiresAt) + 1000);
  }

  /** A project deleted: everyone connected to it is told and disconnected at once (there is nothing left to finish). */
  async closeAll(reason: string) {
    // The project's tasks went with it: forgotten now, so that no operation queued meanwhile plans on a row held of
    // them, and again between operations, so that no group in flight brings them back.
    this.writer.forgetTasks();
    void this.writer.serialise(async () => this.writer.forgetTasks());
    for (const ws of this.ctx.getWebSockets()) {
      if (attachmentOf(ws)?.kind === "agent") notify(ws, "notify:shutdown", { gracePeriod: SHUTDOWN_GRACE_MS["project-deleted"], reason });
      ws.close(CLOSE.revoked, reason);
    }
  }

  /** The Worker wrote entries to the project's permission log: its dashboards hear of them (nothing is written here). */
  async permissionsLogged(count: number, newestCreatedAt: string) {
    this.dashboards.announce({ type: "permission_logged", count, newest_created_at: newestCreatedAt });
  }

  /** Closes a person's dashboards here: their access to the project ended. */
  async disconnectUser(userId: string) {
    this.dashboards.disconnectUser(userId);
  }

  /** What committed goes to dashboards, agents and daemons, and its deadlines to the alarm. */
  private async afterCommit({ events, notices, deadlines, outbox, sessionless, withDependents }: Committed) {
    this.dashboards.publish(events);
    // Integrations deliver on their own objects, never in the room's turn.
    for (const target of outbox) this.ctx.waitUntil(wakeLane(this.env, target, this.shard, this.projectId));
    tellAgents(this.graces.agentSockets(), events, notices);
    // Daemons are told outside the room's turn (their links are other objects); only tasks the batch did not write have sessions to look up.
    const sessionsOf = (e: CommittedEvent) => needsTaskSessions(e) && !sessionless.has(e.task_id!);
    const toDependents = (e: CommittedEvent) => reachesDependents(e, withDependents);
    if (events.some((e) => sessionsOf(e) || pushedAsRecorded(e) || toDependents(e) || mentionsIn(e.type === "note_added" ? e.data.content : null).length > 0)) {
      // One after another, so a daemon hears of its sessions' events in the order they committed.
      this.pushing = this.pushing
        .then(() => pushToDaemons(this.env, this.projectId, events, sessionsOf, toDependents))
        .catch((e) => logError("pushing to daemons failed", { project_id: this.projectId, operation: "push_to_daemons" }, e));
      this.ctx.waitUntil(this.pushing);
    }
    for (const command of reviewFollowUps(events)) this.ctx.waitUntil(followUp(this.writer, this.projectId, command, this.wakeModel));
    for (const deadline of deadlines) await this.scheduleAlarm(Date.parse(deadline));
    await this.liveness.watch(events);
    // A task given to a server, or put to work there, is watched by its lease from now on.
    if (events.some((e) => e.task_id && LEASED_STATUSES.includes(e.data.status as TaskStatus))) await this.scheduleAlarm(Date.now() + this.leaseMs());
  }

  private leaseMs = () => leaseSeconds(this.env.ASSIGNMENT_LEASE_SECONDS) * 1000;

  /** Handles the schedules due at `now` (the alarm passes its clock), each slot once; sleeps until the next slot, and answers when (ms). */
  async fireSchedules(now: number): Promise<number | null> {
    const next = await this.writer.serialise(() => fireDueSchedules(this.writer, this.projectId, now));
    if (next !== null) await this.scheduleAlarm(Math.max(next, Date.now() + 1000));
    return next;
  }

  private readonly wakeModel = (job: ReviewJob) => wakeModelReviewer(this.env, job);

  /** The hourly sweep found review steps here a lost follow-up left undone: make them again. */
  async resumeReviews(now = Date.now()) {
    for (const row of await strandedReviews(this.env.DB, this.projectId, now)) await followUp(this.writer, this.projectId, stepOf(row), this.wakeModel);
  }

  /** The hourly sweep found rows here due for the archive: a few batches now, the rest on the alarm (true when more remain). */
  archive(): Promise<boolean> {
    return this.archiving.run();
  }

  /** Builds a history export (routes/exports.ts) in the background: its row says when it is ready. */
  async startExport(exportId: string) {
    this.ctx.waitUntil(this.archiving.export(exportId).catch((e) => logError("export failed", { project_id: this.projectId, operation: "export" }, e)));
  }

  /** The hourly sweep found a task here past its lease: look now. */
  async wakeForLeases() {
    await this.scheduleAlarm(Date.now());
  }

  // ── sockets ──────────────────────────────────────────────────────────────

  /** Accepts a socket the Worker has already authenticated (it forwards only upgrades it checked, with the caller's identity). */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("Upgrade") !== "websocket") return new Response("expected a WebSocket upgrade", { status: 426 });
    const { 0: client, 1: server } = new WebSocketPair();
    if (new URL(request.url).pathname === "/agent") {
      const serverId = request.headers.get("X-Server-Id");
      const serverName = request.headers.get("X-Server-Name");
      const keyHash = request.headers.get("X-Key-Hash");
      if (keyHash && (await this.keys.revoked(keyHash))) return new Response("the API key has been revoked", { status: 401 });
      this.ctx.acceptWebSocket(server, [AGENT_TAG]);
      const hubBase = request.headers.get("X-Hub-Base");
      server.serializeAttachment({
        kind: "agent",
        serverId,
        serverName,
        keyHash,
        hubBase,
        subscriptions: [],
        connectedAt: Date.now(),
      } satisfies AgentAttachment);
      if (serverId && serverName) await this.agents.connected(server, serverId, serverName);
      else {
        // Timers and alarms wait while the room is kept busy, so every turn of the room also looks (closeLateAgents);
        // the timer covers an idle room, the alarm a restarted one.
        const deadline = Date.now() + AUTH_GRACE_MS;
        this.graces.authDeadlines.set(server, deadline);
        setTimeout(() => this.graces.closeLateAgents(Date.now()), AUTH_GRACE_MS);
        await this.scheduleAlarm(deadline);
      }
      return new Response(null, { status: 101, webSocket: client });
    }
    this.ctx.acceptWebSocket(server, [DASHBOARD_TAG]);
    const since = request.headers.get("X-Resume-Since");
    const attachment: DashboardAttachment = {
      kind: "dashboard",
      userId: request.headers.get("X-User-Id")!,
      expiresAt: Number(request.headers.get("X-Token-Expires")) * 1000,
    };
    await this.dashboards.accepted(server, attachment, since === null ? null : Number(since));
    const protocol = request.headers.get("X-Subprotocol");
    return new Response(null, { status: 101, webSocket: client, headers: protocol ? { "Sec-WebSocket-Protocol": protocol } : {} });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer) {
    const kind = attachmentOf(ws)?.kind;
    if (kind === "agent") await this.agents.onMessage(ws, message);
    else if (kind === "dashboard") await this.dashboards.onMessage(ws, message);
  }

  override async webSocketError(ws: WebSocket) {
    await this.webSocketClose(ws, 1011, "socket error");
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string) {
    this.dashboards.closed(ws);
    this.graces.authDeadlines.delete(ws);
    if (attachmentOf(ws)?.kind === "agent") await this.agents.disconnected(ws);
    try {
      ws.close(code, reason);
    } catch {
      // Already closed.
    }
  }

  // ── alarm ────────────────────────────────────────────────────────────────

  private async scheduleAlarm(at: number) {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || at < current) await this.ctx.storage.setAlarm(at);
  }

  /** Closes expired, unauthenticated and silent sockets (pinging the others), does the queued work that is due
   * (due-work.ts), flushes usage, archives and takes lapsed servers offline; then sleeps until the next is due. */
  override async alarm() {
    try {
      await this.dueWork();
    } catch (e) {
      // Thrown on, so that the runtime runs the alarm again.
      logError("room alarm failed", { project_id: this.projectId, operation: "alarm" }, e);
      throw e;
    }
  }

  private async dueWork() {
    if (await this.moveOn()) await this.scheduleAlarm(Date.now() + 100);
    // Sockets first: closing them needs no turn of the queue.
    const nextExpiry = this.dashboards.closeExpired(Date.now());
    const nextAuth = this.graces.closeUnauthenticatedAgents(Date.now());
    const nextShutdown = this.graces.closeLateAgents(Date.now());
    const nextPing = pingAgents(this.ctx, this.graces.agentSockets(), Date.now(), livenessBounds(this.env));
    const wakeAt = await this.writer.serialise(() =>
      queuedDueWork({
        env: this.env,
        projectId: this.projectId,
        writer: this.writer,
        leaseMs: this.leaseMs(),
        sockets: this.graces.agentSockets(),
        liveness: this.liveness,
        socketsDue: [nextExpiry, nextAuth, nextShutdown, nextPing],
      }),
    );
    void this.usage.flush().then((at) => (at === null ? undefined : this.scheduleAlarm(at)));
    this.ctx.waitUntil(this.archiving.onAlarm());
    // scheduleAlarm keeps an earlier alarm set meanwhile (a new socket, a heartbeat).
    if (wakeAt !== null) await this.scheduleAlarm(Math.max(wakeAt, Date.now() + 1000));
    // Presence writes its events through the queue itself, so it runs after the queued work above.
    const next = await this.presence.sweepPresence();
    if (next !== null) await this.scheduleAlarm(next + 1000);
  }
}
