/**
 * What a project's committed events tell the daemons whose sessions they
 * concern, in the frames `hub.py` reads (`ws_receive_loop`), by server.
 *
 * A task's sessions are the one it is given to (its target) and the one that
 * created it (its source, often an orchestrator). `task_approved` has no
 * counterpart here: the hub has no approval gate before a task may start
 * (`task_assigned` always says `pending_approval: false`); a plan's approval
 * is `plan_approved`.
 */
import type { CommittedEvent } from "../room/statements";

export type DaemonPush = Record<string, unknown> & { type: string };

/** The session a push is for. */
export const sessionOfPush = (p: DaemonPush) =>
  typeof p.session_id === "string" ? p.session_id : typeof p.target_session_id === "string" ? p.target_session_id : null;

/**
 * Text carried to the daemon is cut to this many characters: the daemon
 * reads frames of at most 1 MiB (and `json.dumps` may escape each character
 * to six bytes).
 */
const MAX_PUSHED_TEXT = 64 * 1024;
const cut = (value: unknown) => {
  const s = typeof value === "string" ? value : "";
  return s.length > MAX_PUSHED_TEXT ? `${s.slice(0, MAX_PUSHED_TEXT)}…` : s;
};

/** A session and its server. */
export interface SessionRef {
  serverId: string;
  serverName: string;
  sessionId: string;
}

/** What the pushes of a task's events need to know of it. */
export interface TaskSessions {
  title: string;
  target: SessionRef | null;
  source: SessionRef | null;
}

/** Events that reach the daemon of the task's session, once its target is known. */
const TO_TARGET = new Set(["plan_approved", "plan_revision_requested", "intervention_responded", "note_added", "task_updated", "task_cancelled"]);
/** Events that tell the session that created the task how it ended. */
const TO_SOURCE = new Set(["task_completed", "task_failed", "task_cancelled"]);

/** Events whose pushes need the task's sessions read first. */
export const needsTaskSessions = (e: CommittedEvent) => e.task_id !== null && (TO_TARGET.has(e.type) || TO_SOURCE.has(e.type));

/** Events whose pushes their own data says all of: a task given to a session, a question asked of one. */
export const pushedAsRecorded = (e: CommittedEvent) =>
  (e.type === "task_assigned" && typeof e.data.session_id === "string") ||
  (e.type === "intervention_requested" && typeof e.data.target_session_id === "string");

/** `@name` mentions in a note: each open session of that name in the project hears of it. */
export const mentionsIn = (content: unknown): string[] =>
  typeof content === "string" ? [...new Set([...content.matchAll(/(?:^|[^\w@])@([A-Za-z0-9][\w.-]{0,199})/g)].map((m) => m[1]!.replace(/[.-]+$/, "")))] : [];

const sameSession = (a: SessionRef | null, b: SessionRef | null) => a !== null && b !== null && a.sessionId === b.sessionId;

/** The push an event makes to its task's target session, if any. */
function toTarget(e: CommittedEvent, target: SessionRef, task: TaskSessions): DaemonPush | null {
  const base = { session_id: target.sessionId, task_id: e.task_id };
  const d = e.data;
  switch (e.type) {
    case "plan_approved":
      return { type: "plan_approved", ...base };
    case "plan_revision_requested":
      return { type: "plan_revision", ...base, feedback: cut(d.feedback) };
    case "intervention_responded":
      return { type: "intervention_response", ...base, response: cut(d.response) };
    case "note_added":
      // The agent in the session wrote it: nothing to tell it.
      if (e.actor === `agent:${target.serverName}`) return null;
      return { type: "task_note", ...base, content: cut(d.content), urgent: d.urgent === true, author: e.actor };
    case "task_updated":
      return { type: "task_updated", ...base };
    case "task_cancelled":
      // Its creator is told apart (below); the session working on it learns it is over.
      return sameSession(target, task.source) ? null : statusUpdate(e, target, task.title);
    default:
      return null;
  }
}

function statusUpdate(e: CommittedEvent, to: SessionRef, title: string): DaemonPush {
  const status = e.type.replace("task_", "");
  const d = e.data;
  const summary = typeof d.summary === "string" ? d.summary : typeof d.error === "string" ? d.error : typeof d.reason === "string" ? d.reason : "";
  return { type: "task_status_update", session_id: to.sessionId, task_id: e.task_id, title, status, status_label: status, summary: cut(summary) };
}

/** The push an event makes to the session that created the task, if any. */
function toSource(e: CommittedEvent, source: SessionRef, task: TaskSessions): DaemonPush | null {
  // A session that finished or dropped its own task knows.
  if (sameSession(source, task.target) && e.actor === `agent:${source.serverName}`) return null;
  if (e.type === "task_cancelled" && !e.actor.startsWith("agent:")) {
    return {
      type: "task_rejected",
      session_id: source.sessionId,
      task_id: e.task_id,
      title: task.title,
      reason: typeof e.data.reason === "string" && e.data.reason ? cut(e.data.reason) : "No reason given",
    };
  }
  return statusUpdate(e, source, task.title);
}

export function daemonPushes(
  events: readonly CommittedEvent[],
  tasks: ReadonlyMap<string, TaskSessions> = new Map(),
  mentioned: ReadonlyMap<string, SessionRef[]> = new Map(),
): Map<string, DaemonPush[]> {
  const byServer = new Map<string, DaemonPush[]>();
  for (const e of events) {
    // Every push about a task carries its trace, so the agent's work joins it.
    const add = (serverId: string, push: DaemonPush | null) =>
      push && byServer.set(serverId, [...(byServer.get(serverId) ?? []), e.traceparent ? { ...push, traceparent: e.traceparent } : push]);
    const d = e.data;
    // A task given to a session triggers the agent working in it.
    if (e.type === "task_assigned" && typeof d.session_id === "string" && typeof d.server_id === "string") {
      add(d.server_id, {
        type: "task_assigned",
        session_id: d.session_id,
        task_id: e.task_id,
        title: d.title ?? "",
        priority: d.priority ?? "normal",
        require_plan: d.require_plan === true,
        pending_approval: false,
        from_session_name: d.from_session_name ?? "Unknown",
      });
      continue;
    }
    // A question one agent asks another: the asked session's daemon puts it in that agent's inbox.
    if (e.type === "intervention_requested" && typeof d.target_session_id === "string" && typeof d.target_server_id === "string") {
      add(d.target_server_id, {
        type: "intervention_for_session",
        target_session_id: d.target_session_id,
        question: cut(d.question),
        source: typeof d.source === "string" ? d.source : "",
        intervention_id: d.intervention_id,
      });
      continue;
    }
    const task = e.task_id ? tasks.get(e.task_id) : undefined;
    if (task?.target && TO_TARGET.has(e.type)) add(task.target.serverId, toTarget(e, task.target, task));
    if (task?.source && TO_SOURCE.has(e.type)) add(task.source.serverId, toSource(e, task.source, task));
    if (e.type === "note_added") {
      for (const name of mentionsIn(d.content)) {
        for (const s of mentioned.get(name) ?? []) {
          if (sameSession(s, task?.target ?? null)) continue;
          add(s.serverId, {
            type: "note_for_session",
            target_session_id: s.sessionId,
            task_id: e.task_id,
            content: cut(d.content),
            author: e.actor,
            mentioned_via: "mention",
          });
        }
      }
    }
  }
  return byServer;
}
