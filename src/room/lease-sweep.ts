/**
 * The room's take-back of tasks whose server stayed silent past the lease
 * (compute protocol: agent disappearance). Each is one expire_lease operation,
 * decided again from fresh reads, so that a completion is either before it or
 * refused after it. A daemon's socket is asked about only for a task that would
 * otherwise go.
 */
import { linkStub } from "../server-link/client";
import { leaseDecision } from "../protocol/compute-protocol";
import type { RoomEnv } from "../runtime/room-env";
import { HUB_ACTOR } from "../runtime/room-rpc";
import { earliest } from "./earliest";
import { leasedTasks } from "./room-queries";
import type { RoomWriter } from "./room-writer";
import { attachmentOf, type AgentAttachment } from "./sockets";

export interface LeaseSweep {
  env: RoomEnv;
  projectId: string;
  writer: RoomWriter;
  leaseMs: number;
  /** The room's authenticated agent sockets: a server with one open is alive. */
  sockets: WebSocket[];
}

/** Takes back what is past its lease (run in the room's queue); returns when to look again. */
export async function expireLeases({ env, projectId, writer, leaseMs, sockets }: LeaseSweep): Promise<number | null> {
  const withSocket = new Set(sockets.map((ws) => (attachmentOf(ws) as AgentAttachment).serverId));
  const daemons = new Map<string, Promise<boolean>>();
  const daemonConnected = (serverId: string) => {
    if (!daemons.has(serverId))
      daemons.set(
        serverId,
        linkStub(env, serverId)
          .connected()
          .catch(() => false),
      );
    return daemons.get(serverId)!;
  };
  let next: number | null = null;
  for (const t of await leasedTasks(env.DB, projectId)) {
    const facts = { status: t.status, assignedAt: t.assigned_at, lastHeartbeat: t.last_heartbeat, now: Date.now(), leaseMs };
    let connected = withSocket.has(t.server_id);
    let decision = leaseDecision({ ...facts, connected });
    if (decision.action !== "keep" && (await daemonConnected(t.server_id))) decision = leaseDecision({ ...facts, connected: (connected = true) });
    if (decision.action === "keep") next = earliest([next, decision.recheckAt]);
    else await writer.apply({ actor: HUB_ACTOR, command: { op: "expire_lease", taskId: t.id, connected, leaseSeconds: leaseMs / 1000 }, withView: false });
  }
  return next;
}
