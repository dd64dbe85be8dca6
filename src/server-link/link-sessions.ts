/**
 * The server's sessions as its link knows them: which ids are its own (read
 * once from D1), what the daemon reports of them (recorded in the project's
 * room, told to the session's viewers), their terminal output (kept in the
 * scrollback, relayed in order), and the starts and ends people ask for.
 */
import { onEveryShard } from "../db/shards";
import { logDebug, logError } from "../runtime/log";
import { isFinalSession } from "../domain/session-lifecycle";
import type { RoomActor, SessionChange } from "../room/commands";
import { executeInRoom, type RoomReachingEnv } from "../runtime/room-rpc";
import { sessionIdOf, sessionReportOf, tmuxPrefixOf } from "./daemon-frames";
import { sessionOfPush, type DaemonPush } from "./pushes";
import type { PushQueue } from "./push-queue";
import type { Scrollback } from "./scrollback";
import type { Terminals } from "./terminals";

/** How long the daemon has to answer a session_start before the session is marked failed. */
export const SESSION_START_TIMEOUT_MS = 60_000;
const STARTING = "start:";
/** How long an ended session's scrollback stays for viewers. */
const SCROLLBACK_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const ENDED = "ended:";
/** Sessions remembered at most (ids a daemon names that are not this server's are remembered too). */
const MAX_KNOWN = 10_000;

/** A session of this server, as far as the link needs to know it. */
export interface KnownSession {
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

export interface LinkSessionsPort {
  env: RoomReachingEnv;
  storage: DurableObjectStorage;
  scrollback: Scrollback;
  terminals: () => Terminals;
  pushes: () => PushQueue;
  serverId(): Promise<string>;
  daemonConnected(): boolean;
  toDaemon(frame: DaemonPush): boolean;
  daemonError(ws: WebSocket, code: string, detail: string): void;
  scheduleAlarm(at: number): Promise<void>;
}

/** How often a session's output time is written at most: well under any stall_minutes (at least one). */
const OUTPUT_NOTE_MS = 30_000;

export class LinkSessions {
  /** Sessions looked up: null for an id that is not this server's. */
  private readonly known = new Map<string, KnownSession | null>();
  private readonly lookups = new Map<string, Promise<KnownSession | null>>();
  /** When each session's output was last written to D1 (sessions.last_output_at). */
  private readonly outputNoted = new Map<string, number>();

  constructor(private readonly port: LinkSessionsPort) {}

  /** The session's status as last known, looked up if need be. */
  async statusOf(sessionId: string): Promise<string | undefined> {
    return (this.known.get(sessionId) ?? (await this.lookup(sessionId)))?.status;
  }

  /** A session of this server (read once, with its scrollback), or null. */
  lookup(sessionId: string): Promise<KnownSession | null> {
    const known = this.known.get(sessionId);
    if (known !== undefined) return Promise.resolve(known);
    let pending = this.lookups.get(sessionId);
    if (!pending) {
      pending = (async () => {
        const serverId = await this.port.serverId();
        // Sessions live on their project's shard: each is asked, one holds it.
        const found = await onEveryShard(this.port.env, (d1) =>
          d1
            .prepare("SELECT id, project_id, status FROM sessions WHERE id = ?1 AND server_id = ?2")
            .bind(sessionId, serverId)
            .first<{ id: string; project_id: string; status: string }>(),
        );
        const row = found.find((r) => r !== null);
        const session = row ? { id: row.id, projectId: row.project_id, status: row.status } : null;
        if (session) await this.port.scrollback.load(session.id);
        if (this.known.size >= MAX_KNOWN) this.known.clear();
        this.known.set(sessionId, session);
        return session;
      })().finally(() => this.lookups.delete(sessionId));
      this.lookups.set(sessionId, pending);
    }
    return pending;
  }

  /** The session a daemon's frame names, when it is one of this server's; otherwise the daemon is told. */
  async own(ws: WebSocket, frame: Record<string, unknown>, type: string): Promise<KnownSession | null> {
    const sessionId = sessionIdOf(frame);
    if (!sessionId) {
      this.port.daemonError(ws, "INVALID_MESSAGE", `${type} needs session_id`);
      return null;
    }
    const session = this.known.get(sessionId) ?? (await this.lookup(sessionId));
    if (!session) this.port.daemonError(ws, "UNKNOWN_SESSION", `${type}: no session ${sessionId} on this server`);
    return session;
  }

  /** Terminal output: kept in the scrollback and relayed to the session's viewers, in the order the daemon sent it. */
  async output(ws: WebSocket, frame: Record<string, unknown>) {
    const data = frame.data;
    if (typeof data !== "string") return this.port.daemonError(ws, "INVALID_MESSAGE", "session_output needs session_id and base64 data");
    const sessionId = sessionIdOf(frame);
    // A known session is handled without awaiting, so output frames cannot overtake one another.
    const session = (sessionId ? this.known.get(sessionId) : undefined) ?? (await this.own(ws, frame, "session_output"));
    if (!session) return;
    let bytes: Uint8Array;
    try {
      bytes = Uint8Array.fromBase64(data);
    } catch {
      return this.port.daemonError(ws, "INVALID_MESSAGE", "session_output.data: base64");
    }
    if (bytes.byteLength === 0) return;
    const { scrollback } = this.port;
    // An ended session's ring was let go; late output still belongs in it.
    if (!scrollback.isLoaded(session.id)) await scrollback.load(session.id);
    scrollback.append(session.id, bytes);
    this.port.terminals().output(session.id, data, bytes.byteLength);
    this.noteOutput(session.id);
  }

  /**
   * The session showed output: its agent is at work, which the liveness rules read (sessions.last_output_at). Written
   * at most once a minute a session, and not awaited, so output frames never wait on D1; only this link writes it.
   */
  private noteOutput(sessionId: string) {
    const now = Date.now();
    if (now - (this.outputNoted.get(sessionId) ?? 0) < OUTPUT_NOTE_MS) return;
    this.outputNoted.set(sessionId, now);
    void onEveryShard(this.port.env, (d1) =>
      d1.prepare("UPDATE sessions SET last_output_at = ?2 WHERE id = ?1").bind(sessionId, new Date(now).toISOString()).run(),
    ).catch((e) => logError("noting a session's output failed", { session_id: sessionId, operation: "session_output" }, e));
  }

  /**
   * A tmux session the daemon found after it restarted, named from the
   * session's id: matched back to its session, which the daemon then uses
   * again (`session_recovered_ack`).
   */
  async recovered(ws: WebSocket, frame: Record<string, unknown>) {
    const tmuxName = typeof frame.tmux_name === "string" ? frame.tmux_name : "";
    const serverId = await this.port.serverId();
    const found = await onEveryShard(this.port.env, (d1) =>
      d1
        .prepare(
          `SELECT id, created_at FROM sessions WHERE server_id = ?1 AND (tmux_name = ?2 OR substr(id, 1, 12) = ?3)
           ORDER BY created_at DESC LIMIT 1`,
        )
        .bind(serverId, tmuxName, tmuxPrefixOf(tmuxName) ?? "")
        .first<{ id: string; created_at: string }>(),
    );
    // The newest over the shards.
    const row = found.reduce<{ id: string; created_at: string } | null>((a, b) => (b && (!a || b.created_at > a.created_at) ? b : a), null);
    const session = row && (await this.lookup(row.id));
    if (!session)
      return logDebug("recovered session not known", { server_id: await this.port.serverId(), operation: "session_recovered", tmux_name: tmuxName });
    if (isFinalSession(session.status)) {
      // Ended while the daemon was away: its agent is stopped (the daemon still knows it by its tmux name).
      ws.send(JSON.stringify({ type: "session_kill", session_id: tmuxName }));
      return;
    }
    ws.send(JSON.stringify({ type: "session_recovered_ack", tmux_name: tmuxName, session_id: session.id }));
    await this.report(session, { ...sessionReportOf("session_started", frame)!, tmuxName });
  }

  /** Records what became of a session (in its project's room, with its event) and tells its viewers. */
  async report(session: KnownSession, change: SessionChange) {
    await this.port.storage.delete(`${STARTING}${session.id}`);
    if (change.status === "running") await this.port.pushes().sendHeld((p) => sessionOfPush(p) === session.id);
    const serverId = await this.port.serverId();
    const serverName = (await this.port.storage.get<string>("server-name")) ?? "";
    const actor: RoomActor = { kind: "agent", serverId, serverName, label: `agent:${serverName}` };
    const result = await executeInRoom(this.port.env, session.projectId, actor, { op: "session_status", sessionId: session.id, serverName, change });
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
    if (now && isFinalSession(now.status) && change.status === "running") this.port.toDaemon({ type: "session_kill", session_id: session.id });
    if (!now || result.unchanged) return;
    this.statusChanged(session.id, now.status, { exit_code: now.exitCode, error: now.error });
  }

  private statusChanged(sessionId: string, status: string, details: { exit_code?: number | null; error?: string | null } = {}) {
    const known = this.known.get(sessionId);
    if (known) known.status = status;
    if (isFinalSession(status)) {
      // Its scrollback stays for late viewers a while; the alarm forgets it then.
      this.port.scrollback.forget(sessionId);
      void this.port.storage
        .put(`${ENDED}${sessionId}`, Date.now() + SCROLLBACK_RETENTION_MS)
        .then(() => this.port.scheduleAlarm(Date.now() + SCROLLBACK_RETENTION_MS));
    }
    this.port.terminals().relay(sessionId, {
      type: "status",
      status,
      ...Object.fromEntries(Object.entries(details).filter(([, v]) => v !== null && v !== undefined)),
    });
  }

  /**
   * Asks the daemon to start a session a person opened; false when the
   * daemon is not connected. The session fails if the daemon does not
   * answer in time.
   */
  async start(start: SessionStart): Promise<boolean> {
    if (!this.port.daemonConnected()) return false;
    await this.port.storage.put("server-name", start.serverName);
    this.known.set(start.sessionId, { id: start.sessionId, projectId: start.projectId, status: "starting" });
    await this.port.scrollback.load(start.sessionId);
    const deadline = Date.now() + SESSION_START_TIMEOUT_MS;
    await this.port.storage.put(`${STARTING}${start.sessionId}`, deadline);
    await this.port.scheduleAlarm(deadline);
    return this.port.toDaemon({
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
  async end(sessionId: string, mode: "close" | "kill") {
    await this.port.storage.delete(`${STARTING}${sessionId}`);
    await this.port.pushes().push([{ type: mode === "kill" ? "session_kill" : "session_close", session_id: sessionId }]);
    this.statusChanged(sessionId, "closed");
  }

  /** Sessions the daemon never answered fail, and ended sessions' scrollback is forgotten after its retention; answers when to look again. */
  async sweep(now: number): Promise<number | null> {
    let next: number | null = null;
    const later = (at: number) => (next = next === null ? at : Math.min(next, at));
    for (const [key, deadline] of await this.port.storage.list<number>({ prefix: STARTING })) {
      if (deadline > now) {
        later(deadline);
        continue;
      }
      const session = await this.lookup(key.slice(STARTING.length));
      if (session) await this.report(session, { status: "error", error: `The daemon did not start the session within ${SESSION_START_TIMEOUT_MS / 1000} s` });
      else await this.port.storage.delete(key);
    }
    for (const [key, until] of await this.port.storage.list<number>({ prefix: ENDED })) {
      if (until > now) {
        later(until);
        continue;
      }
      await this.port.scrollback.drop(key.slice(ENDED.length));
      await this.port.storage.delete(key);
    }
    return next;
  }
}
