/** What a batch's committed events tell the daemons: each server's frames, handed to its link. */
import type { RoomEnv } from "../runtime/room-env";
import { linkStub } from "../server-link/client";
import { daemonPushes, mentionsIn } from "../server-link/pushes";
import { dependentSessions, openSessionsNamed, taskSessions } from "./room-queries";
import type { CommittedEvent } from "./statements";

/** Hands each daemon what the committed events tell its sessions (read on the project's shard, `env.DB`). */
export async function pushToDaemons(
  env: RoomEnv,
  projectId: string,
  events: CommittedEvent[],
  sessionsOf: (e: CommittedEvent) => boolean,
  toDependents: (e: CommittedEvent) => boolean,
) {
  const taskIds = [...new Set(events.flatMap((e) => (sessionsOf(e) ? [e.task_id!] : [])))];
  const names = [...new Set(events.flatMap((e) => (e.type === "note_added" ? mentionsIn(e.data.content) : [])))];
  const upstreams = [...new Set(events.flatMap((e) => (toDependents(e) ? [e.task_id!] : [])))];
  const [tasks, mentioned, dependents] = await Promise.all([
    taskSessions(env.DB, taskIds),
    openSessionsNamed(env.DB, projectId, names),
    dependentSessions(env.DB, upstreams),
  ]);
  const pushes = daemonPushes(events, tasks, mentioned, dependents);
  await Promise.all([...pushes].map(([serverId, frames]) => linkStub(env, serverId).push(frames)));
}
