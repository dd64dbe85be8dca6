/**
 * How Durable Objects that project rooms themselves reach (server links,
 * delivery lanes) reach a room in turn, without importing its class, whose
 * module imports theirs.
 */
import type { Env } from "./env";
import type { RoomActor, RoomCommand, RoomResult } from "../room/commands";

/** The hub itself, acting on a timer or a trigger (timeouts, auto-assignment after a heartbeat). */
export const HUB_ACTOR: RoomActor = { kind: "person", userId: "hub", label: "hub" };

export interface RoomReachingEnv extends Env {
  PROJECT_ROOM: DurableObjectNamespace;
}

/** Runs a command in a project's room. */
export async function executeInRoom(env: RoomReachingEnv, projectId: string, actor: RoomActor, command: RoomCommand): Promise<RoomResult> {
  const room = env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(projectId)) as unknown as {
    execute(actor: RoomActor, command: RoomCommand, options: { view?: boolean }): Promise<unknown>;
  };
  // RPC's type mapping cannot express `unknown` payloads; the value is exactly a RoomResult.
  return (await room.execute(actor, command, {})) as RoomResult;
}
