/**
 * The room held on this server for rooms' batches (src/domain/capacity-holds.ts), for a server whose projects span
 * shards. The link is the one place every room's hold on the server passes, one at a time: reading D1 opens the
 * object's input gate, so without the queue two holds could read the same load. Holds and the rooms refused are kept
 * in storage, so that a link that restarts still counts the holds it granted.
 */
import { HOLD_MS, holdFits, liveHolds, nextLookIn, type Hold } from "../domain/capacity-holds";
import { oneAtATime } from "../domain/one-at-a-time";
import { serverLoad } from "../db/server-load";
import { logError } from "../runtime/log";
import { executeInRoom, HUB_ACTOR, type RoomReachingEnv } from "../runtime/room-rpc";

/** The live holds; the projects whose rooms were refused since the server last had room; how often it was found full since. */
interface Ledger {
  holds: Hold[];
  refused: string[];
  looks: number;
}

const KEY = "capacity-holds";

export type HoldAnswer = { hold: string } | { load: number };

export class CapacityLedger {
  private readonly queue = oneAtATime();
  private ledger: Ledger | null = null;

  constructor(
    private readonly env: RoomReachingEnv,
    private readonly storage: DurableObjectStorage,
    private readonly serverId: () => Promise<string>,
  ) {}

  /**
   * Holds room for `tasks` more of the project's tasks, or answers the server's load when they do not fit (the room
   * then plans again with it); a refused room's waiting tasks are offered again once the server has room (`look`).
   */
  hold(projectId: string, tasks: number): Promise<HoldAnswer> {
    return this.queue(async () => {
      const now = Date.now();
      const ledger = await this.read();
      const holds = liveHolds(ledger.holds, now);
      const server = await serverLoad(this.env, await this.serverId());
      const { fits, load } = holdFits(server?.active ?? 0, server?.limit ?? 0, holds, tasks);
      if (!fits) {
        await this.write({ holds, refused: [...new Set([...ledger.refused, projectId])], looks: 0 });
        // The link's alarm (which looks here) is set for the look, unless it is due sooner for something else.
        const alarm = await this.storage.getAlarm();
        if (alarm === null || alarm > now + nextLookIn(0)) await this.storage.setAlarm(now + nextLookIn(0));
        return { load };
      }
      const hold: Hold = { id: crypto.randomUUID(), projectId, tasks, until: now + HOLD_MS };
      await this.write({ ...ledger, holds: [...holds, hold] });
      return { hold: hold.id };
    });
  }

  /** The batch a hold covered has committed (its tasks now count on their shard) or rolled back. */
  release(holdId: string): Promise<void> {
    return this.queue(async () => {
      const ledger = await this.read();
      if (ledger.holds.some((h) => h.id === holdId)) await this.write({ ...ledger, holds: ledger.holds.filter((h) => h.id !== holdId) });
    });
  }

  /**
   * The alarm's look at a server that refused rooms: once it has room, their waiting tasks are offered again (each
   * room's sweep holds room anew); while it is full, it looks again less and less often. When to look next, or null.
   */
  async look(now: number): Promise<number | null> {
    const due = await this.queue(async (): Promise<{ offer: string[] } | { next: number | null }> => {
      const ledger = await this.read();
      if (ledger.refused.length === 0) return { next: null };
      const holds = liveHolds(ledger.holds, now);
      const server = await serverLoad(this.env, await this.serverId());
      if (server && !holdFits(server.active, server.limit, holds, 1).fits) {
        await this.write({ holds, refused: ledger.refused, looks: ledger.looks + 1 });
        return { next: now + nextLookIn(ledger.looks + 1) };
      }
      await this.write({ holds, refused: [], looks: 0 });
      return { offer: server ? ledger.refused : [] };
    });
    if ("next" in due) return due.next;
    // Outside the queue: each sweep asks this link for a hold.
    const offered = await Promise.allSettled(due.offer.map((projectId) => executeInRoom(this.env, projectId, HUB_ACTOR, { op: "sweep" })));
    for (const o of offered) if (o.status === "rejected") logError("offering waiting tasks to a server with room failed", { operation: "sweep" }, o.reason);
    return null;
  }

  private async read(): Promise<Ledger> {
    return (this.ledger ??= (await this.storage.get<Ledger>(KEY)) ?? { holds: [], refused: [], looks: 0 });
  }

  private async write(ledger: Ledger) {
    this.ledger = ledger;
    await this.storage.put(KEY, ledger);
  }
}
