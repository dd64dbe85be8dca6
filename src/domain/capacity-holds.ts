/**
 * A server's capacity across shards: each shard's rooms check a server's load on their own shard only, so a server
 * whose projects live on several shards has its link hold room for a batch's tasks before the batch commits. A hold
 * is granted while the server's active tasks on every shard, with the holds still live, leave room for it.
 */

/**
 * How long a hold lasts unless released: past the longest a D1 batch may run (30 s), so that a hold never lapses
 * while the batch it covers may still commit. A room that stopped before releasing it only delays others by this much.
 */
export const HOLD_MS = 35_000;

/** Room held on a server for one room's batch: `tasks` of its assignments, until `until` (ms). */
export interface Hold {
  id: string;
  projectId: string;
  tasks: number;
  until: number;
}

/** The holds not yet lapsed at `now`. */
export const liveHolds = (holds: readonly Hold[], now: number) => holds.filter((h) => h.until > now);

/**
 * Whether a hold of `tasks` fits: the server's active tasks on every shard (`active`), with the tasks of the live holds
 * (`holds`), plus these must not pass its limit. `load` is what the server carries now: a refused room plans with it.
 */
export function holdFits(active: number, limit: number, holds: readonly Hold[], tasks: number): { fits: boolean; load: number } {
  const load = active + holds.reduce((sum, h) => sum + h.tasks, 0);
  return { fits: load + tasks <= limit, load };
}

/** How many tasks a batch gives each server (`fills` names a server once per task). */
export function tasksPerServer(fills: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const id of fills) out.set(id, (out.get(id) ?? 0) + 1);
  return out;
}

/** The shards a server's projects live on (a project moving counts its target too): rows of (shard, moving_to). */
export function shardCount(rows: readonly { shard: string; moving_to: string | null }[]): number {
  return new Set(rows.flatMap((r) => (r.moving_to ? [r.shard, r.moving_to] : [r.shard]))).size;
}

/** A server needs holds only when its projects live on more than one shard: on one, the room's own check suffices. */
export const needsHolds = (shards: number) => shards > 1;

/**
 * When a link that refused rooms looks again whether the server has room for them: soon after the refusal, then less
 * often while it stays full (`looks` times already).
 */
export const FIRST_LOOK_MS = 1_000;
export const LAST_LOOK_MS = 60_000;
export const nextLookIn = (looks: number) => Math.min(LAST_LOOK_MS, FIRST_LOOK_MS * 2 ** looks);
