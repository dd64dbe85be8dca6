/** Events of a server's in a project's log, recorded by its link through the project's room. */
import { logDebug } from "../runtime/log";
import type { RoomActor, RoomCommand } from "../room/commands";
import { executeInRoom, type RoomReachingEnv } from "../runtime/room-rpc";

/** Records an event of the server's in a project's log, as its agent (or as `actor`, the hub). */
export async function recordAsServer(
  env: RoomReachingEnv,
  storage: DurableObjectStorage,
  serverId: string,
  projectId: string,
  command: RoomCommand & { event: string },
  actor?: RoomActor,
) {
  const serverName = (await storage.get<string>("server-name")) ?? "";
  const result = await executeInRoom(env, projectId, actor ?? { kind: "agent", serverId, serverName, label: `agent:${serverName}` }, command);
  if (!result.ok) logDebug("event not recorded", { server_id: serverId, project_id: projectId, operation: command.event, detail: result.problem.detail });
}
