/**
 * A server's load as its link sees it across shards (src/domain/capacity-holds.ts): its limit from the directory, its
 * active tasks on every shard, and how many shards its projects live on.
 */
import { sql } from "drizzle-orm";
import { dbOf } from "./client";
import { activeTasksOf, maxTasksOf } from "./server-candidates";
import { onEveryShard } from "./shards";
import { needsHolds, shardCount } from "../domain/capacity-holds";
import type { Env } from "../runtime/env";

/**
 * The server's limit (from the directory's row) and its active tasks summed over every shard, read in parallel; null
 * for a server gone from the directory. Every shard, not only its projects': a task given to it in a project it no
 * longer serves still takes its room.
 */
export async function serverLoad(env: Env, serverId: string): Promise<{ limit: number; active: number } | null> {
  const id = sql`${serverId}`;
  const [limit, active] = await Promise.all([
    dbOf(env.DB).get<{ n: number } | undefined>(sql`SELECT ${maxTasksOf(sql`s`)} AS n FROM servers s WHERE s.id = ${id}`),
    onEveryShard(env, (d1) => dbOf(d1).get<{ n: number } | undefined>(sql`SELECT ${activeTasksOf(id)} AS n`)),
  ]);
  if (!limit) return null;
  return { limit: limit.n, active: active.reduce((sum, r) => sum + (r?.n ?? 0), 0) };
}

/** Of these servers, those whose projects live on more than one shard (their holds go through their links). One query, on the directory. */
export async function serversAcrossShards(env: Env, serverIds: readonly string[]): Promise<Set<string>> {
  const rows = await dbOf(env.DB).all<{ server_id: string; shard: string; moving_to: string | null }>(
    sql`SELECT DISTINCT s.id AS server_id, p.shard, p.moving_to FROM servers s
        JOIN projects p ON s.project_ids IS NULL OR p.id IN (SELECT value FROM json_each(s.project_ids))
        WHERE s.id IN (SELECT value FROM json_each(${JSON.stringify(serverIds)}))`,
  );
  const byServer = Map.groupBy(rows, (r) => r.server_id);
  return new Set([...byServer].filter(([, of]) => needsHolds(shardCount(of))).map(([id]) => id));
}
