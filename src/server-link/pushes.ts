/**
 * What a project's committed events tell the daemons whose sessions they
 * concern, in the frames `hub.py` reads (`ws_receive_loop`), by server.
 *
 * A task's sessions are the one it is given to (its target) and the one that
 * created it (its source, often an orchestrator); the sessions working on the
 * tasks that depend on it hear of its completion, and of notes marked for them.
 * hub.py draws its "pending approval" and "task rejected" boxes by writing them
 * to the session's PTY, where they reach the agent as keystrokes; so a task
 * waiting for a person's approval (operations/approval.ts) is not pushed at
 * all, its approval is pushed as a plain `task_assigned`, and a person's
 * cancellation is told to the task's creator as `task_status_update` (typed as
 * one line). A plan's approval is `plan_approved`; a review below the pass score, `code_review_fix_request`.
 */
import type { CommittedEvent } from "../room/statements";
import { askedQuestion, ASK_NOTE_VIA } from "../domain/agent-asks";
import { typedLine } from "./typed-line";

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

/** A note recording an ask or its answer (operations/agent-questions.ts): the daemon is told by intervention_for_session or intervention_response. */
const recordsAnAsk = (e: CommittedEvent) => e.type === "note_added" && (ASK_NOTE_VIA as readonly unknown[]).includes(e.data.via);

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

/** The sessions working on the unfinished tasks that depend on a task, with what their notes name of it. */
export interface Dependents {
  title: string;
  /** The upstream's own session, which hears of its task directly. */
  upstreamSessionId: string | null;
  sessions: SessionRef[];
}

/** Events that reach the daemon of the task's session, once its target is known. */
const TO_TARGET = new Set([
  "task_approved",
  "plan_approved",
  "plan_revision_requested",
  "intervention_responded",
  "note_added",
  "task_updated",
  "task_cancelled",
  "review_warned",
  "review_failed",
]);
/** Events that tell the session that created the task how it ended. */
const TO_SOURCE = new Set(["task_completed", "task_failed", "task_cancelled"]);

/** Events whose pushes need the task's sessions read first. */
export const needsTaskSessions = (e: CommittedEvent) => e.task_id !== null && (TO_TARGET.has(e.type) || TO_SOURCE.has(e.type));

/** Events whose pushes their own data says all of: a task given to a session, a question asked of one. */
export const pushedAsRecorded = (e: CommittedEvent) =>
  (e.type === "task_assigned" && typeof e.data.session_id === "string" && e.data.pending_approval !== true) ||
  (e.type === "intervention_requested" && typeof e.data.target_session_id === "string");

/** Events the sessions working on the task's dependents hear of: its completion (when it has dependents), a note marked for them. */
export const reachesDependents = (e: CommittedEvent, withDependents: ReadonlySet<string>) =>
  e.task_id !== null && ((e.type === "task_completed" && withDependents.has(e.task_id)) || (e.type === "note_added" && e.data.notify_dependents === true));

/** What a dependent's session is told of its upstream (the daemon shows it as `[upstream] …`). */
function upstreamNews(e: CommittedEvent, title: string): string {
  const named = `upstream task "${title}" (#${e.task_id!.slice(0, 8)})`;
  if (e.type === "note_added") return `Note on ${named}: ${typeof e.data.content === "string" ? e.data.content : ""}`;
  const summary = typeof e.data.summary === "string" && e.data.summary ? `: ${e.data.summary}` : ".";
  return `The ${named} is done${summary}`;
}

/** `@name` mentions in a note: each open session of that name in the project hears of it. */
export const mentionsIn = (content: unknown): string[] =>
  typeof content === "string" ? [...new Set([...content.matchAll(/(?:^|[^\w@])@([A-Za-z0-9][\w.-]{0,199})/g)].map((m) => m[1]!.replace(/[.-]+$/, "")))] : [];

const sameSession = (a: SessionRef | null, b: SessionRef | null) => a !== null && b !== null && a.sessionId === b.sessionId;

/** The push an event makes to its task's target session, if any. */
function toTarget(e: CommittedEvent, target: SessionRef, task: TaskSessions): DaemonPush | null {
  const base = { session_id: target.sessionId, task_id: e.task_id };
  const d = e.data;
  switch (e.type) {
    case "task_approved":
      // Told nothing while it waited: now given to the session as if just assigned (hub.py starts its agent on it, in plan mode if asked).
      return {
        type: "task_assigned",
        ...base,
        title: task.title,
        priority: d.priority ?? "normal",
        require_plan: d.require_plan === true,
        pending_approval: false,
        from_session_name: d.from_session_name ?? "Unknown",
      };
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
    case "review_warned":
    case "review_failed":
      // hub.py presses Escape, then types the prompt into the worker's agent (one line: the room made it so).
      return d.fix_requested === true
        ? { type: "code_review_fix_request", ...base, prompt: cut(d.prompt), attempt: d.round, max_retries: d.max_retries, score: d.score }
        : null;
    case "task_cancelled":
      // Its creator is told apart (below); the session working on it learns it is over.
      return sameSession(target, task.source) ? null : statusUpdate(e, target, task.title);
    default:
      return null;
  }
}

/** hub.py types `Task '<title>' (#<id>) <status_label>. Summary: <summary> Run …` after an Escape: title and summary go as one line each. */
function statusUpdate(e: CommittedEvent, to: SessionRef, title: string): DaemonPush {
  const status = e.type.replace("task_", "");
  const d = e.data;
  const summary = typeof d.summary === "string" ? d.summary : typeof d.error === "string" ? d.error : typeof d.reason === "string" ? d.reason : "";
  return {
    type: "task_status_update",
    session_id: to.sessionId,
    task_id: e.task_id,
    title: typedLine(title),
    status,
    status_label: status,
    summary: cut(typedLine(summary)),
  };
}

/** The push an event makes to the session that created the task, if any: how it ended, whoever ended it. */
function toSource(e: CommittedEvent, source: SessionRef, task: TaskSessions): DaemonPush | null {
  // A session that finished or dropped its own task knows.
  if (sameSession(source, task.target) && e.actor === `agent:${source.serverName}`) return null;
  return statusUpdate(e, source, task.title);
}

export function daemonPushes(
  events: readonly CommittedEvent[],
  tasks: ReadonlyMap<string, TaskSessions> = new Map(),
  mentioned: ReadonlyMap<string, SessionRef[]> = new Map(),
  dependents: ReadonlyMap<string, Dependents> = new Map(),
): Map<string, DaemonPush[]> {
  const byServer = new Map<string, DaemonPush[]>();
  for (const e of events) {
    // Every push about a task carries its trace, so the agent's work joins it.
    const add = (serverId: string, push: DaemonPush | null) =>
      push && byServer.set(serverId, [...(byServer.get(serverId) ?? []), e.traceparent ? { ...push, traceparent: e.traceparent } : push]);
    const d = e.data;
    // A task given to a session triggers the agent working in it.
    if (e.type === "task_assigned" && typeof d.session_id === "string" && typeof d.server_id === "string") {
      // One waiting for approval is pushed when approved (task_approved above), never before: hub.py would type a box into the agent.
      if (d.pending_approval === true) continue;
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
        // hub.py shows only the question (as `[ask from <source>] …`), so it says how to answer it, on the same line.
        question: askedQuestion(cut(d.question), String(d.intervention_id)),
        source: typeof d.source === "string" ? d.source : "",
        intervention_id: d.intervention_id,
      });
      continue;
    }
    // Its agent hears of it already (the question queued in its inbox, the answer typed): the note is for notes://inbox.
    if (recordsAnAsk(e)) continue;
    const task = e.task_id ? tasks.get(e.task_id) : undefined;
    if (task?.target && TO_TARGET.has(e.type)) add(task.target.serverId, toTarget(e, task.target, task));
    if (task?.source && TO_SOURCE.has(e.type)) add(task.source.serverId, toSource(e, task.source, task));
    // Sessions told of a note or a completion by note_for_session, each once.
    const told = new Set<string>();
    if (e.type === "note_added") {
      for (const name of mentionsIn(d.content)) {
        for (const s of mentioned.get(name) ?? []) {
          if (sameSession(s, task?.target ?? null)) continue;
          told.add(s.sessionId);
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
    const upstream = e.task_id ? dependents.get(e.task_id) : undefined;
    if (upstream && (e.type === "task_completed" || (e.type === "note_added" && d.notify_dependents === true))) {
      const content = cut(upstreamNews(e, upstream.title));
      for (const s of upstream.sessions) {
        if (s.sessionId === upstream.upstreamSessionId || told.has(s.sessionId)) continue;
        told.add(s.sessionId);
        add(s.serverId, {
          type: "note_for_session",
          target_session_id: s.sessionId,
          task_id: e.task_id,
          content,
          author: e.actor,
          mentioned_via: "dependency",
        });
      }
    }
  }
  return byServer;
}
