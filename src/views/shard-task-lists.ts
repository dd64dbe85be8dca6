/**
 * A page of tasks across the shards the projects live on: each shard's page read at once, merged newest first by
 * the same key the cursor holds, so the next page is asked of every shard with one cursor.
 */
import { dbOf, type Db } from "../db/client";
import { DIRECTORY, onEachShard, shardNames, shardsOfProjects } from "../db/shards";
import { encodeCursor } from "../domain/page-cursor";
import type { Env } from "../runtime/env";
import { listTasks, type TaskFilter } from "./task-queries";
import type { TaskView } from "./tasks";

/** `db` reads the directory's shard (the request's session); the other shards are read at their binding. */
export async function listTasksOnShards(env: Env, db: Db, f: TaskFilter): Promise<{ tasks: TaskView[]; next_cursor: string | null }> {
  if (shardNames(env).length === 1) return listTasks(db, f);
  // Every shard, for a caller of every project; else only the shards its projects live on.
  const shards = f.projectIds === null ? new Map(shardNames(env).map((s) => [s, null])) : await shardsOfProjects(dbOf(env.DB), f.projectIds);
  const pages = await onEachShard(env, shards, (shardDb, projectIds, shard) => listTasks(shard === DIRECTORY ? db : shardDb, { ...f, projectIds }));
  const keyOf = (t: TaskView) => (f.newestBy === "updated" ? t.updated_at : t.created_at);
  const merged = pages.flatMap((p) => p.tasks).sort((a, b) => (keyOf(a) === keyOf(b) ? (a.id < b.id ? 1 : -1) : keyOf(a) < keyOf(b) ? 1 : -1));
  const page = merged.slice(0, f.limit);
  const more = merged.length > f.limit || pages.some((p) => p.next_cursor !== null);
  const last = page.at(-1);
  return { tasks: page, next_cursor: more && last ? encodeCursor(keyOf(last), last.id) : null };
}
