/**
 * The task shards: D1 bindings `DB` (also the directory), `DB_1`, `DB_2`… Each holds every table (the same
 * migrations); a project's tasks and all that hangs off them live on the shard its directory row names
 * (`projects.shard`), the directory's own rows (people, servers, keys, memberships) on `DB`. Every shard keeps a copy
 * of the directory rows its project rows point at (the project's row, the servers), so that its foreign keys and
 * cascades hold inside it: no key spans two databases.
 */
import { eq, inArray, sql } from "drizzle-orm";
import { inJsonList } from "./sql";
import { dbOf, type Db } from "./client";
import { countedD1 } from "./round-trips";
import { projects } from "./schema";
import { openShards, placeProject, SHARD_NAME, shardOrder } from "../domain/shard-placement";
import type { Env } from "../runtime/env";

export const DIRECTORY = "DB";

const bindings = (env: Env) => env as unknown as Record<string, unknown>;

/** The shards this Worker is bound to, in declared order. */
export function shardNames(env: Env): string[] {
  return Object.keys(bindings(env))
    .filter((k) => SHARD_NAME.test(k) && isD1(bindings(env)[k]))
    .sort(shardOrder);
}

const isD1 = (value: unknown) => typeof value === "object" && value !== null && typeof (value as D1Database).prepare === "function";

export const isShard = (env: Env, name: string) => SHARD_NAME.test(name) && isD1(bindings(env)[name]);

/** A shard's binding, its round trips counted against the work running (src/db/round-trips.ts). */
export function shardD1(env: Env, name: string): D1Database {
  const d1 = bindings(env)[name];
  if (!SHARD_NAME.test(name) || !isD1(d1)) throw new Error(`no D1 shard is bound as ${name}`);
  return countedD1(d1 as D1Database);
}

/** The D1 of a shard: the directory's binding as `env` holds it, or a further shard's (shardD1). */
export const d1Of = (env: Env, shard: string): D1Database => (shard === DIRECTORY ? env.DB : shardD1(env, shard));

/** A shard's drizzle instance. */
export const shardDb = (env: Env, name: string): Db => dbOf(shardD1(env, name));

/** The shard a project lives on, read from the directory; null for a project that does not exist. */
export async function projectShard(directory: Db, projectId: string): Promise<string | null> {
  const row = await directory.select({ shard: projects.shard }).from(projects).where(eq(projects.id, projectId)).get();
  return row?.shard ?? null;
}

/** The shards of these projects (all projects' shards when `projectIds` is null), each with its projects. */
export async function shardsOfProjects(directory: Db, projectIds: readonly string[] | null): Promise<Map<string, string[]>> {
  if (projectIds && projectIds.length === 0) return new Map();
  const rows = await directory
    .select({ id: projects.id, shard: projects.shard })
    .from(projects)
    // One JSON parameter, however many projects (D1 binds at most 100).
    .where(projectIds ? inJsonList(projects.id, [...projectIds]) : undefined)
    .all();
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.shard, [...(out.get(r.shard) ?? []), r.id]);
  return new Map([...out].sort(([a], [b]) => shardOrder(a, b)));
}

/** Where a new project goes: the open shard with the fewest projects. */
export async function chooseShard(env: Env, directory: Db): Promise<string> {
  const open = openShards(env.OPEN_SHARDS, shardNames(env));
  const rows = await directory
    .select({ shard: projects.shard, n: sql<number>`count(*)` })
    .from(projects)
    .where(inArray(projects.shard, open))
    .groupBy(projects.shard)
    .all();
  return placeProject(open, Object.fromEntries(rows.map((r) => [r.shard, r.n])));
}

/**
 * Runs `read` on each shard, in parallel, with the projects of it; their answers in shard order. A read across
 * projects asks only the shards the caller's projects live on.
 */
export async function onEachShard<T, P extends string[] | null>(
  env: Env,
  shards: Map<string, P>,
  read: (db: Db, projectIds: P, shard: string) => Promise<T>,
): Promise<T[]> {
  return Promise.all([...shards].map(([shard, ids]) => read(shardDb(env, shard), ids, shard)));
}

/** Each shard's answer to `read`, at once: for a row known by id alone (a session, a task), found on one of them. */
export function onEveryShard<T>(env: Env, read: (d1: D1Database, shard: string) => Promise<T>): Promise<T[]> {
  return Promise.all(shardNames(env).map((shard) => read(d1Of(env, shard), shard)));
}

/** The shard a project lives on, for its room: the directory's when the project is gone or names no bound shard. */
export async function homeOf(env: Env, projectId: string): Promise<string> {
  const row = await env.DB.prepare("SELECT shard FROM projects WHERE id = ?1").bind(projectId).first<{ shard: string }>();
  return row && isShard(env, row.shard) ? row.shard : DIRECTORY;
}

/** The D1 of the shard a project lives on (homeOf): where its rows are read outside its room. */
export async function homeD1(env: Env, projectId: string): Promise<D1Database> {
  return d1Of(env, await homeOf(env, projectId));
}

/**
 * Each project's shard as this isolate last learnt it (from the directory, or from its room's answer), for a write
 * whose project is known without a query: its reads before the room go to that shard. Kept a minute at most, so that
 * an isolate that missed a move learns of it (its room's next answer corrects it sooner).
 */
const SHARD_MEMORY_MS = 60_000;
const MAX_REMEMBERED_SHARDS = 10_000;
const shardOfProject = new Map<string, { shard: string; at: number }>();

export function rememberShard(projectId: string, shard: string) {
  if (shardOfProject.size >= MAX_REMEMBERED_SHARDS) shardOfProject.delete(shardOfProject.keys().next().value!);
  shardOfProject.set(projectId, { shard, at: Date.now() });
}

export function rememberedShard(projectId: string): string | undefined {
  const known = shardOfProject.get(projectId);
  return known && Date.now() - known.at < SHARD_MEMORY_MS ? known.shard : undefined;
}
