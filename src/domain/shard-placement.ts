/**
 * Which shard a new project goes to: of the shards open to new projects, the one holding the fewest projects (the
 * first declared on a tie). Counting projects rather than bytes keeps the choice a directory read; a shard that grew
 * large is closed to new projects by leaving it out of OPEN_SHARDS.
 */

/** A shard's binding: the directory's `DB` (also the first shard), then `DB_1`, `DB_2`… */
export const SHARD_NAME = /^DB(?:_[1-9][0-9]*)?$/;

/** The order shards are declared in: DB, DB_1, DB_2… DB_10. */
export const shardOrder = (a: string, b: string) => shardIndex(a) - shardIndex(b);
const shardIndex = (name: string) => (name === "DB" ? 0 : Number(name.slice(3)));

/** The shards named in OPEN_SHARDS that exist; DB when it names none. */
export function openShards(setting: string | undefined, existing: readonly string[]): string[] {
  const named = (setting ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => existing.includes(s));
  return named.length > 0 ? [...new Set(named)].sort(shardOrder) : ["DB"];
}

/** The open shard with the fewest projects (`counts` by binding; a shard missing from it holds none). */
export function placeProject(open: readonly string[], counts: Readonly<Record<string, number>>): string {
  let best = open[0] ?? "DB";
  for (const shard of open) if ((counts[shard] ?? 0) < (counts[best] ?? 0)) best = shard;
  return best;
}
