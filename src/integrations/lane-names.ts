/**
 * How a chat's lane is named. A Telegram chat or a Slack channel may hear of projects on several shards; each shard
 * holds the outbox rows of its projects, so a chat has a lane per shard it is owed deliveries on: named by its id on the
 * directory (as ever), by `id@shard` on another shard.
 */
import { DIRECTORY } from "../db/shards";

export const chatLaneName = (id: string, shard: string) => (shard === DIRECTORY ? id : `${id}@${shard}`);

/** The chat's id and the shard whose outbox its lane drains. */
export function chatLaneOf(name: string): { id: string; shard: string } {
  const at = name.lastIndexOf("@");
  return at < 0 ? { id: name, shard: DIRECTORY } : { id: name.slice(0, at), shard: name.slice(at + 1) };
}
