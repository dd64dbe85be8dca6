/**
 * What the room's alarm does inside its queue: fails running tasks past their timeout (code TIMEOUT; never retried
 * implicitly), times out questions nobody answered, takes back tasks from servers silent past their lease, fires
 * schedules whose slot has come, forgets uploads that never completed and raises the liveness rules' flags; answers
 * when the next of these (or of the sockets' deadlines the alarm found) is due.
 */
import type { RoomEnv } from "../runtime/room-env";
import { HUB_ACTOR } from "../runtime/room-rpc";
import type { RoomCommand } from "./commands";
import { earliest } from "./earliest";
import { expireLeases, type LeaseSweep } from "./lease-sweep";
import type { RoomLiveness } from "./liveness";
import { nextDeadline, nextQuestionExpiry, overdueTasks } from "./room-queries";
import { fireDueSchedules } from "./schedule-firing";
import { cleanUpUploads } from "./upload-cleanup";

export interface DueWork extends LeaseSweep {
  env: RoomEnv;
  liveness: RoomLiveness;
  /** When the sockets' own deadlines fall (token expiry, authentication, shutdown, ping), as the alarm found them. */
  socketsDue: (number | null)[];
}

export async function queuedDueWork(due: DueWork): Promise<number | null> {
  const { env, projectId, writer } = due;
  const apply = (command: RoomCommand) => writer.apply({ actor: HUB_ACTOR, command, withView: false });
  for (const task of await overdueTasks(writer.db, projectId, new Date().toISOString())) {
    await apply({ op: "fail", taskId: task.id, error: `Timed out after ${task.timeoutSeconds} s`, code: "TIMEOUT" });
  }
  await apply({ op: "expire_questions" });
  const nextLease = await expireLeases(due);
  const nextSlot = await fireDueSchedules(writer, projectId, Date.now());
  return earliest([
    await nextDeadline(writer.db, projectId),
    nextLease,
    ...due.socketsDue,
    await nextQuestionExpiry(env.DB, projectId),
    await cleanUpUploads(env, projectId),
    await due.liveness.check(Date.now()),
    nextSlot,
  ]);
}
