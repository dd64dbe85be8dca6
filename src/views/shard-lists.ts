/**
 * Lists across the shards the projects live on, each shard read at once and the answers merged: a page of tasks
 * (newest first by the key the cursor holds, so the next page is asked of every shard with one cursor), sessions, a
 * row known by id alone.
 */
import { dbOf, type Db } from "../db/client";
import { DIRECTORY, onEachShard, shardDb, shardNames, shardsOfProjects } from "../db/shards";
import { encodeCursor } from "../domain/page-cursor";
import type { Env } from "../runtime/env";
import { listTasks, type TaskFilter } from "./task-queries";
import type { TaskView } from "./tasks";
import { listSessions, type SessionFilter } from "./session-queries";

/** The shards of these projects (every shard for null), each with its projects; the directory's read by `db`. */
async function shardsFor(env: Env, projectIds: readonly string[] | null): Promise<Map<string, string[] | null>> {
  return projectIds === null ? new Map(shardNames(env).map((s) => [s, null])) : shardsOfProjects(dbOf(env.DB), projectIds);
}

/** Sessions in these projects (null: every project), newest first, over their shards. */
export async function listSessionsOnShards(env: Env, db: Db, projectIds: readonly string[] | null, filter: SessionFilter) {
  if (shardNames(env).length === 1) return listSessions(db, projectIds, filter);
  const lists = await onEachShard(env, await shardsFor(env, projectIds), (shardDb, ids, shard) =>
    listSessions(shard === DIRECTORY ? db : shardDb, ids, filter),
  );
  return lists.flat().sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0));
}

/** The first answer `read` finds on a shard (the directory's first, in the request's session), with that shard. */
export async function findOnShards<T>(env: Env, db: Db, read: (db: Db) => Promise<T | undefined>): Promise<{ found: T; shard: string } | undefined> {
  const first = await read(db);
  if (first !== undefined) return { found: first, shard: DIRECTORY };
  const others = shardNames(env).filter((s) => s !== DIRECTORY);
  const found = await Promise.all(others.map((s) => read(shardDb(env, s))));
  const at = found.findIndex((f) => f !== undefined);
  return at < 0 ? undefined : { found: found[at]!, shard: others[at]! };
}

/** `db` reads the directory's shard (the request's session); the other shards are read at their binding. */
export async function listTasksOnShards(env: Env, db: Db, f: TaskFilter): Promise<{ tasks: TaskView[]; next_cursor: string | null }> {
  if (shardNames(env).length === 1) return listTasks(db, f);
  // Every shard, for a caller of every project; else only the shards its projects live on.
  const shards = await shardsFor(env, f.projectIds);
  const pages = await onEachShard(env, shards, (shardDb, projectIds, shard) => listTasks(shard === DIRECTORY ? db : shardDb, { ...f, projectIds }));
  const keyOf = (t: TaskView) => (f.newestBy === "updated" ? t.updated_at : t.created_at);
  const merged = pages.flatMap((p) => p.tasks).sort((a, b) => (keyOf(a) === keyOf(b) ? (a.id < b.id ? 1 : -1) : keyOf(a) < keyOf(b) ? 1 : -1));
  const page = merged.slice(0, f.limit);
  const more = merged.length > f.limit || pages.some((p) => p.next_cursor !== null);
  const last = page.at(-1);
  return { tasks: page, next_cursor: more && last ? encodeCursor(keyOf(last), last.id) : null };
}
