/**
 * Lists across the shards the projects live on, each shard read at once and the answers merged: a page of tasks
 * (newest first by the key the cursor holds, so the next page is asked of every shard with one cursor), sessions, a
 * row known by id alone.
 */
import { eq } from "drizzle-orm";
import { dbOf, type Db, type SessionRow } from "../db/client";
import { sessions } from "../db/schema";
import { DIRECTORY, isShard, onEachShard, projectShard, shardDb, shardNames, shardsOfProjects } from "../db/shards";
import { encodeCursor } from "../domain/page-cursor";
import type { Env } from "../runtime/env";
import { listTasks, type TaskFilter } from "./task-queries";
import type { TaskView } from "./tasks";
import { listSessions, type SessionFilter } from "./session-queries";

/**
 * The shards of these projects, each with its projects; for null (a caller of every project) every project the
 * directory places on a bound shard, so that a project's old rows left on another shard by a move under way are not
 * read twice.
 */
async function shardsFor(env: Env, projectIds: readonly string[] | null): Promise<Map<string, string[]>> {
  const shards = await shardsOfProjects(dbOf(env.DB), projectIds);
  return new Map([...shards].filter(([shard]) => isShard(env, shard)));
}

/** `read` on each shard these projects (null: every project) live on, with its projects, at once. */
export async function readOnShards<T>(
  env: Env,
  db: Db,
  projectIds: readonly string[] | null,
  read: (db: Db, projectIds: string[] | null, shard: string) => Promise<T>,
): Promise<T[]> {
  if (shardNames(env).length === 1) return [await read(db, projectIds ? [...projectIds] : null, DIRECTORY)];
  return onEachShard(env, await shardsFor(env, projectIds), (shardDb, ids, shard) => read(shard === DIRECTORY ? db : shardDb, ids, shard));
}

/** Sessions in these projects (null: every project), newest first, over their shards. */
export async function listSessionsOnShards(env: Env, db: Db, projectIds: readonly string[] | null, filter: SessionFilter) {
  if (shardNames(env).length === 1) return listSessions(db, projectIds, filter);
  const lists = await onEachShard(env, await shardsFor(env, projectIds), (shardDb, ids, shard) =>
    listSessions(shard === DIRECTORY ? db : shardDb, ids, filter),
  );
  return lists.flat().sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0));
}

/**
 * The answer `read` finds on a shard (every shard asked at once; the directory's in the request's session), with that
 * shard. A row found on several (its project moving, its old copy not yet deleted) is taken from the shard the directory
 * names for its project, when `projectOf` says which project that is.
 */
export async function findOnShards<T>(
  env: Env,
  db: Db,
  read: (db: Db) => Promise<T | undefined>,
  projectOf?: (found: T) => string,
): Promise<{ found: T; shard: string } | undefined> {
  const names = shardNames(env);
  const answers = await Promise.all(names.map((s) => read(s === DIRECTORY ? db : shardDb(env, s))));
  const found = names.flatMap((shard, i) => (answers[i] === undefined ? [] : [{ found: answers[i] as T, shard }]));
  if (found.length <= 1 || !projectOf) return found[0];
  const home = await projectShard(dbOf(env.DB), projectOf(found[0]!.found));
  return found.find((f) => f.shard === home) ?? found[0];
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

/** A session by its id alone, from the shard its project lives on (undefined when no shard has it). */
export async function sessionOnShards(env: Env, db: Db, sessionId: string): Promise<SessionRow | undefined> {
  const read = (d: Db) => d.query.sessions.findFirst({ where: eq(sessions.id, sessionId) });
  return (await findOnShards(env, db, read, (s) => s.projectId))?.found;
}
