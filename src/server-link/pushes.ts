/**
 * What a project's committed events tell the daemons whose sessions they
 * concern, in the frames `hub.py` reads (`ws_receive_loop`), by server.
 */
import type { CommittedEvent } from "../room/statements";

export type DaemonPush = Record<string, unknown> & { type: string };

/** The session a task is given to, and its server (read for events that do not carry them). */
export interface SessionTarget {
  serverId: string;
  serverName: string;
  sessionId: string;
}

/** Events that reach the daemon of the task's session, once its target is known. */
export const TARGETED_EVENTS: ReadonlySet<string> = new Set(["plan_approved", "plan_revision_requested", "intervention_responded", "note_added", "task_updated"]);

/** The push an event makes to its task's session, if any. */
function pushOf(e: CommittedEvent, target: SessionTarget): DaemonPush | null {
  const base = { session_id: target.sessionId, task_id: e.task_id };
  const d = e.data;
  switch (e.type) {
    case "plan_approved":
      return { type: "plan_approved", ...base };
    case "plan_revision_requested":
      return { type: "plan_revision", ...base, feedback: d.feedback ?? "" };
    case "intervention_responded":
      return { type: "intervention_response", ...base, response: d.response ?? "" };
    case "note_added":
      // The agent in the session wrote it: nothing to tell it.
      if (e.actor === `agent:${target.serverName}`) return null;
      return { type: "task_note", ...base, content: d.content ?? "", urgent: d.urgent === true, author: e.actor };
    case "task_updated":
      return { type: "task_updated", ...base };
    default:
      return null;
  }
}

export function daemonPushes(events: readonly CommittedEvent[], targets: ReadonlyMap<string, SessionTarget> = new Map()): Map<string, DaemonPush[]> {
  const byServer = new Map<string, DaemonPush[]>();
  const add = (serverId: string, push: DaemonPush) => byServer.set(serverId, [...(byServer.get(serverId) ?? []), push]);
  for (const e of events) {
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
    const target = e.task_id ? targets.get(e.task_id) : undefined;
    const push = target && pushOf(e, target);
    if (target && push) add(target.serverId, push);
  }
  return byServer;
}
