/**
 * What a project's committed events tell the daemons whose sessions they
 * concern, in the frames `hub.py` reads (`ws_receive_loop`), by server.
 */
import type { CommittedEvent } from "../room/statements";

export type DaemonPush = Record<string, unknown> & { type: string };

export function daemonPushes(events: readonly CommittedEvent[]): Map<string, DaemonPush[]> {
  const byServer = new Map<string, DaemonPush[]>();
  const add = (serverId: unknown, push: DaemonPush) => {
    if (typeof serverId !== "string") return;
    byServer.set(serverId, [...(byServer.get(serverId) ?? []), push]);
  };
  for (const e of events) {
    const d = e.data;
    // A task given to a session triggers the agent working in it.
    if (e.type === "task_assigned" && typeof d.session_id === "string") {
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
    }
  }
  return byServer;
}
