/**
 * Presence: a server is present in a project while its heartbeat is fresh
 * (API.md: within 90 s) or one of its agent sockets is connected to the
 * project's room. Crossing that line either way appends server_online /
 * server_offline. Both checks run in the room's queue, so a connect and a
 * disconnect of the same server cannot interleave.
 */
import { isOnline, ONLINE_WINDOW_MS } from "../domain/presence";
import type { RoomEnv } from "../runtime/room-env";
import { HUB_ACTOR } from "../runtime/room-rpc";
import { earliest } from "./earliest";
import { lastHeartbeat } from "./room-queries";
import type { RoomWriter } from "./room-writer";

export class RoomPresence {
  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: RoomEnv,
    private readonly writer: RoomWriter,
    private readonly agentSockets: (serverId?: string) => WebSocket[],
  ) {}

  markPresent(serverId: string, serverName: string) {
    return this.writer.serialise(async () => {
      if (await this.ctx.storage.get(`present:${serverId}`)) return;
      await this.ctx.storage.put(`present:${serverId}`, serverName);
      await this.writer.apply({ actor: HUB_ACTOR, command: { op: "presence", serverId, serverName, online: true }, withView: false });
    });
  }

  /** Takes the server offline here if it is neither connected nor beating; otherwise says when to look again. */
  checkAbsent(serverId: string, except?: WebSocket): Promise<number | null> {
    return this.writer.serialise(async () => {
      const name = await this.ctx.storage.get<string>(`present:${serverId}`);
      if (!name || this.agentSockets(serverId).some((ws) => ws !== except)) return null;
      const heartbeat = await lastHeartbeat(this.env.DB, serverId);
      if (heartbeat && isOnline(heartbeat)) return Date.parse(heartbeat) + ONLINE_WINDOW_MS;
      await this.ctx.storage.delete(`present:${serverId}`);
      await this.writer.apply({ actor: HUB_ACTOR, command: { op: "presence", serverId, serverName: name, online: false }, withView: false });
      return null;
    });
  }

  /** The server was removed: it is no longer watched here (its removal has its own event, so no server_offline follows). */
  forget(serverId: string) {
    return this.writer.serialise(() => this.ctx.storage.delete(`present:${serverId}`));
  }

  /** Present servers whose heartbeat lapsed with no socket connected go offline; returns when to look again. */
  async sweepPresence(): Promise<number | null> {
    let next: number | null = null;
    for (const key of (await this.ctx.storage.list<string>({ prefix: "present:" })).keys()) {
      next = earliest([next, await this.checkAbsent(key.slice("present:".length))]);
    }
    return next;
  }
}
