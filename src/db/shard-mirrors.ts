/**
 * The directory rows a shard keeps copies of, so that its own foreign keys and cascades hold inside it: its projects'
 * rows (tasks, sessions, events… hang from them, and go when the copy is deleted) and the servers (tasks and sessions
 * name them). The directory's row is the truth; the copies are written after it, at the few places those rows change.
 * The directory `DB` is the first shard too: its rows are their own copies.
 */
import { DIRECTORY, shardD1, shardNames } from "./shards";
import { upsertStatements, type Row } from "./row-copy";
import type { Env } from "../runtime/env";

const others = (env: Env) => shardNames(env).filter((s) => s !== DIRECTORY);

async function directoryRow(env: Env, table: "projects" | "servers", id: string): Promise<Row | null> {
  return env.DB.prepare(`SELECT * FROM ${table} WHERE id = ?1`).bind(id).first<Row>();
}

/** The project's row copied to its shard (after it was created or changed in the directory). */
export async function mirrorProject(env: Env, project: { id: string; shard: string }, shard = project.shard) {
  if (shard === DIRECTORY) return;
  const row = await directoryRow(env, "projects", project.id);
  if (row) await shardD1(env, shard).batch(upsertStatements(shardD1(env, shard), "projects", ["id"], [row]));
}

/** The project's copy on `shard` deleted, and with it every row of the project there (their cascades). */
export async function dropProjectCopy(env: Env, shard: string, projectId: string) {
  if (shard === DIRECTORY) return;
  await shardD1(env, shard).prepare("DELETE FROM projects WHERE id = ?1").bind(projectId).run();
}

/** A server's row copied to every other shard (after it was registered or changed), or its copies deleted when it is gone. */
export async function mirrorServer(env: Env, serverId: string) {
  const row = await directoryRow(env, "servers", serverId);
  await Promise.all(
    others(env).map((shard) => {
      const d1 = shardD1(env, shard);
      return row ? d1.batch(upsertStatements(d1, "servers", ["id"], [row])) : d1.prepare("DELETE FROM servers WHERE id = ?1").bind(serverId).run();
    }),
  );
}

/** The settings the project's room wrote on its shard's copy, written to the directory's row. */
export async function settingsToDirectory(env: Env, project: { id: string; shard: string }) {
  if (project.shard === DIRECTORY) return;
  const copy = await shardD1(env, project.shard).prepare("SELECT settings, updated_at FROM projects WHERE id = ?1").bind(project.id).first<Row>();
  if (copy) await env.DB.prepare("UPDATE projects SET settings = ?2, updated_at = ?3 WHERE id = ?1").bind(project.id, copy.settings, copy.updated_at).run();
}

/**
 * How far the shards' copy of a server's heartbeat may lag the directory's: rooms on other shards read it to see the
 * server online (90 s) and its leases live (minutes), so a copy per half minute serves them without a write to every
 * shard on every heartbeat.
 */
export const HEARTBEAT_MIRROR_MS = 30_000;

/** Whether a heartbeat at `now` after one at `before` is copied to the shards: once per HEARTBEAT_MIRROR_MS. */
export const heartbeatToMirror = (before: string | null, now: string) =>
  before === null || Math.floor(Date.parse(before) / HEARTBEAT_MIRROR_MS) !== Math.floor(Date.parse(now) / HEARTBEAT_MIRROR_MS);

/** Every server's row copied to every other shard: the hourly sweep's repair of a copy a failed write left stale. */
export async function mirrorServers(env: Env) {
  const { results } = await env.DB.prepare("SELECT * FROM servers").all<Row>();
  if (results.length === 0) return;
  await Promise.all(others(env).map((shard) => shardD1(env, shard).batch(upsertStatements(shardD1(env, shard), "servers", ["id"], results))));
}
