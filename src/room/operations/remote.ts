/**
 * What agents do in each other's sessions (remote commands, files sent) is
 * recorded in the project's log; the work itself goes through the servers'
 * links, never through the room.
 */
import { HUB_ACTOR } from "../../runtime/room-rpc";
import type { RoomActor } from "../commands";
import { recordEvents, type Planner } from "./kernel";
import { notAllowed } from "./refusals";

/** The hub reads in a worker's session too: a model reviewer's `git diff` (integrations/code-review). */
const isHub = (actor: RoomActor) => actor.kind === "person" && actor.userId === (HUB_ACTOR as Extract<RoomActor, { kind: "person" }>).userId;

export const remoteUse: Planner<"remote_use"> = async (ctx, cmd) => {
  if (ctx.actor.kind !== "agent" && !isHub(ctx.actor)) return notAllowed("Only agents work in each other's sessions");
  return { taskId: "", statements: [], events: recordEvents(ctx, [{ type: cmd.event, taskId: null, data: cmd.data }]) };
};

/** A grant made, revoked or expired (by a person or the hub), a tunnel opened or closed (by a server's link): recorded as they happened. */
export const accessUse: Planner<"access_use"> = async (ctx, cmd) => ({
  taskId: "",
  statements: [],
  events: recordEvents(ctx, [{ type: cmd.event, taskId: null, data: cmd.data }]),
});
