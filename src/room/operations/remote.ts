/**
 * What agents do in each other's sessions (remote commands, files sent) is
 * recorded in the project's log; the work itself goes through the servers'
 * links, never through the room.
 */
import { recordEvents, type Planner } from "./kernel";
import { notAllowed } from "./refusals";

export const remoteUse: Planner<"remote_use"> = async (ctx, cmd) => {
  if (ctx.actor.kind !== "agent") return notAllowed("Only agents work in each other's sessions");
  return { taskId: "", statements: [], events: recordEvents(ctx, [{ type: cmd.event, taskId: null, data: cmd.data }]) };
};
