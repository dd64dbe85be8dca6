/**
 * What the project rooms hand a server's daemon: sent at once on its socket
 * when it is connected, otherwise kept in the link's storage (in order, at
 * most MAX_HELD_PUSHES) and sent once when it is back. What went out shortly
 * before a socket was replaced is kept again where it was not acted on
 * (recent-pushes.ts).
 */
import { logError } from "../runtime/log";
import type { DaemonPush } from "./pushes";
import { notActedOn, RecentPushes } from "./recent-pushes";

/** Pushes kept for a daemon that is away, at most: the oldest go first past this. */
const MAX_HELD_PUSHES = 1000;
const HELD = "push:";
/** Keys sort in push order. */
const heldKey = (n: number) => `${HELD}${String(n).padStart(12, "0")}`;

export interface PushQueuePort {
  /** The daemon's open socket, if any. */
  daemon(): WebSocket | undefined;
  /** When a daemon socket connected: it names the socket a push went out on. */
  connectedAt(ws: WebSocket): number;
  storage: DurableObjectStorage;
  db: D1Database;
  serverId: string | undefined;
}

export class PushQueue {
  private readonly recent = new RecentPushes();

  constructor(private readonly port: PushQueuePort) {}

  /** Hands the pushes to the daemon now, or keeps them until it connects again. */
  async push(pushes: DaemonPush[]) {
    const daemon = this.port.daemon();
    if (!daemon) return this.hold(pushes);
    for (const p of pushes) this.send(daemon, p);
  }

  /** The daemon's new socket replaced (or followed) another: what may have died with the old one is kept again. */
  async reconnected() {
    const recent = this.recent.take();
    try {
      await this.hold(await notActedOn(this.port.db, recent));
    } catch (e) {
      // The daemon's new socket matters more than what may have been lost on the old one.
      logError("pushes sent before a socket was replaced could not be checked", { server_id: this.port.serverId, operation: "push" }, e);
    }
  }

  /** The daemon closed its socket itself: nothing sent on it was lost. */
  closedCleanly(ws: WebSocket) {
    this.recent.closedCleanly(this.port.connectedAt(ws));
  }

  /** What the daemon missed while away (of the pushes chosen), in order, then forgotten: it is sent once. */
  async sendHeld(which: (push: DaemonPush) => boolean) {
    const daemon = this.port.daemon();
    if (!daemon) return;
    const held = await this.port.storage.list<DaemonPush>({ prefix: HELD });
    const sent = [...held].filter(([, p]) => which(p));
    if (sent.length === 0) return;
    for (const [, p] of sent) this.send(daemon, p);
    await this.port.storage.delete(sent.map(([key]) => key));
  }

  private send(daemon: WebSocket, push: DaemonPush) {
    daemon.send(JSON.stringify(push));
    this.recent.note(push, this.port.connectedAt(daemon));
  }

  /** Keeps pushes for the daemon's next socket, in order, bounded. */
  private async hold(pushes: DaemonPush[]) {
    if (pushes.length === 0) return;
    const { storage } = this.port;
    let next = (await storage.get<number>("next-push")) ?? 0;
    const entries: Record<string, unknown> = {};
    for (const p of pushes) entries[heldKey(next++)] = p;
    await storage.put({ ...entries, "next-push": next });
    const held = await storage.list({ prefix: HELD });
    if (held.size > MAX_HELD_PUSHES) {
      const dropped = [...held.keys()].slice(0, held.size - MAX_HELD_PUSHES);
      await storage.delete(dropped);
      logError(
        "pushes dropped for a daemon away too long",
        { server_id: this.port.serverId, operation: "push" },
        new Error(`${dropped.length} held pushes dropped`),
      );
    }
  }
}
