/**
 * Room held on the servers a batch gives tasks to whose projects span shards, before it is sent
 * (src/domain/capacity-holds.ts): each such server's link, through which every room's holds on it pass one at a time,
 * holds room for the batch's tasks or answers the server's load across shards. A server whose projects all live on one
 * shard costs no call: the batch's own capacity check (assignment.ts) covers it.
 */
import { serversAcrossShards } from "../db/server-load";
import { shardNames } from "../db/shards";
import { tasksPerServer } from "../domain/capacity-holds";
import { logError } from "../runtime/log";
import type { RoomEnv } from "../runtime/room-env";
import { linkStub } from "../server-link/client";
import { ServersFull } from "./operations";

/**
 * How long this isolate goes by what it last read of a server's shards. A server whose projects come to span a second
 * shard (a project placed or moved there, its projects changed) is held through its link within this much.
 */
const SPAN_MEMORY_MS = 10_000;
const MAX_REMEMBERED = 10_000;
const spans = new Map<string, { across: boolean; at: number }>();

/** Of these servers, those whose projects span shards: read from the directory for those not known of late. */
async function acrossShards(env: RoomEnv, serverIds: string[]): Promise<string[]> {
  const now = Date.now();
  const unknown = serverIds.filter((id) => !(now - (spans.get(id)?.at ?? -Infinity) < SPAN_MEMORY_MS));
  if (unknown.length > 0) {
    const across = await serversAcrossShards(env, unknown);
    for (const id of unknown) {
      if (spans.size >= MAX_REMEMBERED) spans.delete(spans.keys().next().value!);
      spans.set(id, { across: across.has(id), at: now });
    }
  }
  return serverIds.filter((id) => spans.get(id)!.across);
}

/**
 * Holds room for a batch's assignments (`fills`, a server per task) on the servers that need it, with `env` the
 * directory's; undefined when none does. Throws ServersFull, after letting go of what it held, when a server has no
 * room: a link that cannot be reached counts its server as full.
 */
export async function holdRoom(env: RoomEnv, projectId: string, fills: readonly string[]): Promise<{ release(): Promise<void> } | undefined> {
  if (shardNames(env).length < 2) return undefined;
  const tasks = tasksPerServer(fills);
  const servers = await acrossShards(env, [...tasks.keys()]);
  if (servers.length === 0) return undefined;
  const answers = await Promise.all(
    servers.map(async (id) => {
      const answer = await linkStub(env, id)
        .holdRoom(projectId, tasks.get(id)!)
        .catch((e: unknown) => {
          logError("holding room on a server failed", { project_id: projectId, server_id: id, operation: "hold" }, e);
          return { load: Infinity };
        });
      return { id, answer };
    }),
  );
  const held = answers.flatMap(({ id, answer }) => ("hold" in answer ? [{ id, hold: answer.hold }] : []));
  const release = async () => {
    await Promise.all(held.map(({ id, hold }) => linkStub(env, id).releaseRoom(hold)));
  };
  const full = answers.flatMap(({ id, answer }) => ("load" in answer ? [[id, answer.load] as const] : []));
  if (full.length === 0) return { release };
  await release().catch((e: unknown) => logError("releasing held room failed", { project_id: projectId, operation: "hold" }, e));
  throw new ServersFull(new Map(full));
}
