/**
 * SSH access grants on the link of their source server (API.md "SSH access
 * grants and tunnels"): the daemon's `s2s_tunnel_open` is checked against the
 * live grant before anything reaches the target, and a grant ends on time
 * (the link's alarm), closing its tunnels and telling both daemons.
 */
import { type AccessEvent, type RoomActor, type RoomCommand } from "../room/commands";
import { HUB_ACTOR } from "../runtime/room-rpc";
import { revokeSourcePush, revokeTargetPush } from "../grants/grant-pushes";
import { endGrant, grantById, isLive } from "../grants/grant-store";
import { sendJson } from "../http/websockets";
import { grantEventData } from "../views/access-grants";
import type { DaemonPush } from "./pushes";
import type { TunnelRecord, Tunnels } from "./tunnels";

/** When each grant of this server's (as the source) expires: the alarm ends it then. */
const GRANT_EXPIRY = "grant-expiry:";
const UUID = /^[0-9a-f-]{36}$/;

export interface LinkGrantsPort {
  db: D1Database;
  storage: DurableObjectStorage;
  tunnels: Tunnels;
  serverId(): Promise<string>;
  toDaemon(frame: DaemonPush): boolean;
  daemonError(ws: WebSocket, code: string, detail: string): void;
  /** Hands pushes to another server's daemon. */
  pushTo(serverId: string, pushes: DaemonPush[]): Promise<void>;
  recordAs(projectId: string, command: RoomCommand & { event: string }, actor?: RoomActor): Promise<void>;
  scheduleAlarm(at: number): Promise<void>;
}

export class LinkGrants {
  constructor(private readonly port: LinkGrantsPort) {}

  /**
   * The daemon's `s2s_tunnel_open`: only for a live grant whose source is this
   * server, and a tunnel id not in use; otherwise it is closed at once
   * (`tunnel_close`) and nothing reaches the target.
   */
  async openTunnel(ws: WebSocket, frame: Record<string, unknown>) {
    const tunnelId = typeof frame.tunnel_id === "string" ? frame.tunnel_id : "";
    const grantId = typeof frame.grant_id === "string" ? frame.grant_id : "";
    if (!UUID.test(tunnelId)) return this.port.daemonError(ws, "INVALID_MESSAGE", "s2s_tunnel_open needs tunnel_id (a UUID) and grant_id");
    const refuse = (code: string, reason: string) => {
      this.port.daemonError(ws, code, reason);
      sendJson(ws, { type: "tunnel_close", tunnel_id: tunnelId, reason });
    };
    if (this.port.tunnels.has(tunnelId)) return refuse("TUNNEL_REFUSED", `tunnel ${tunnelId} is in use already`);
    const grant = UUID.test(grantId) ? await grantById(this.port.db, grantId) : null;
    if (!grant || grant.source_server_id !== (await this.port.serverId())) return refuse("UNKNOWN_GRANT", `no access grant ${grantId} of this server's`);
    if (!isLive(grant)) return refuse("GRANT_ENDED", `access grant ${grantId} has ${grant.status === "revoked" ? "been revoked" : "expired"}`);
    const record: TunnelRecord = {
      id: tunnelId,
      side: "source",
      grantId,
      projectId: grant.project_id,
      peerServerId: grant.target_server_id,
      userId: null,
      sessionId: null,
      targetPort: grant.target_port,
      openedAt: Date.now(),
    };
    if (!(await this.port.tunnels.openFromSource(record, grant.target_server_id)))
      refuse("DAEMON_OFFLINE", `the daemon of server "${grant.target_server_name}" is not connected`);
  }

  /** A grant whose source is this server was made: the daemon hears it now if connected (else at its next reconciliation), and it expires on time. */
  async made(grantId: string, expiresAt: number, push: DaemonPush) {
    await this.port.storage.put(`${GRANT_EXPIRY}${grantId}`, expiresAt);
    await this.port.scheduleAlarm(expiresAt);
    this.port.toDaemon(push);
  }

  /** A grant whose source is this server ended: its tunnels close, and the daemon stops listening. */
  async ended(grantId: string, reason: string, push: DaemonPush) {
    await this.port.storage.delete(`${GRANT_EXPIRY}${grantId}`);
    await this.port.tunnels.grantEnded(grantId, reason);
    this.port.toDaemon(push);
  }

  /** Grants of this server's past their expiry end (event `access_expired`, both daemons told); answers when to look again. */
  async expire(now: number): Promise<number | null> {
    let next: number | null = null;
    for (const [key, at] of await this.port.storage.list<number>({ prefix: GRANT_EXPIRY })) {
      if (at > now) {
        next = next === null ? at : Math.min(next, at);
        continue;
      }
      const grantId = key.slice(GRANT_EXPIRY.length);
      const ended = await endGrant(this.port.db, grantId, "expired");
      if (ended) {
        await this.port.recordAs(ended.project_id, { op: "access_use", event: "access_expired" satisfies AccessEvent, data: grantEventData(ended) }, HUB_ACTOR);
        await this.port.pushTo(ended.target_server_id, [revokeTargetPush(grantId)]);
        await this.ended(grantId, "the access grant expired", revokeSourcePush(grantId));
      } else await this.port.storage.delete(key);
    }
    return next;
  }
}
