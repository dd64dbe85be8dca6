/**
 * Following a task through the project's room: a stream of its A2A states, and a blocking send's wait. Both read the
 * room's events after the task's snapshot, so no change between the read and the socket is missed or told twice.
 */
import { TaskState, type StreamResponse } from "@a2a-js/sdk";
import type { TaskStatus } from "../domain/lifecycle";
import type { WorkerEnv } from "../runtime/worker-env";
import type { TaskView } from "../views/tasks";
import { artifactsOf, contextIdOf, statusOf } from "./messages";
import type { ProjectTasks } from "./project-tasks";
import { eventsAfter, type Listener } from "./room-events";
import { a2aStateOf, endsStream } from "./states";

/** How long a blocking SendMessage waits for its task to finish or ask something (A2A_BLOCKING_WAIT_SECONDS); then it answers the task as it is. */
const DEFAULT_BLOCKING_WAIT_SECONDS = 25;

/** Where a task's changes are heard: the project's room, opened as the caller, until the client goes. */
export interface TaskWatch {
  env: WorkerEnv;
  projectId: string;
  tasks: ProjectTasks;
  listener: Listener;
  gone: AbortSignal;
}

/** A blocking send waits only for a task an agent has: one nobody took yet has nothing to wait for. */
export const worthWaiting = (task: TaskView) => task.assigned_server_id !== null && !endsStream(a2aStateOf(task.status));

/** Waits (at most A2A_BLOCKING_WAIT_SECONDS) until the task finishes or asks something. */
export async function waitForRest(w: TaskWatch, task: TaskView, since: number) {
  const done = new AbortController();
  const events = eventsAfter(w.env, w.projectId, since, w.listener, AbortSignal.any([done.signal, w.gone]));
  const deadline = Date.now() + (Number(w.env.A2A_BLOCKING_WAIT_SECONDS) || DEFAULT_BLOCKING_WAIT_SECONDS) * 1000;
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), Math.max(0, deadline - Date.now()))));
      const next = await Promise.race([events.next(), timeout]);
      clearTimeout(timer);
      if (next === "timeout" || next.done) return;
      const e = next.value;
      if (e.resynced || (e.task_id === task.id && typeof e.data.status === "string" && endsStream(a2aStateOf(e.data.status as TaskStatus)))) return;
    }
  } finally {
    // Let go of a read still waiting (after the timeout), so that closing the socket does not wait for an event.
    done.abort();
    await events.return(undefined);
  }
}

/**
 * The task now, then each change of its A2A state as the room's events show it (after `since`), in order and once:
 * a finished task's artifacts, then its status. Ends at a state `endsAt` names.
 */
export async function* follow(
  w: TaskWatch,
  task: TaskView,
  since: number,
  endsAt: (state: TaskState) => boolean,
  historyLength?: number,
): AsyncGenerator<StreamResponse, void, undefined> {
  const first = await w.tasks.a2aTask(task, historyLength);
  yield { payload: { $case: "task", value: first } };
  let state = first.status!.state;
  if (endsAt(state)) return;
  for await (const event of eventsAfter(w.env, w.projectId, since, w.listener, w.gone)) {
    const isStatus = event.task_id === task.id && typeof event.data.status === "string";
    if (!isStatus && !event.resynced) continue;
    const fresh = await w.tasks.linked(await w.tasks.read(task.id));
    // An event's own status says what the task became then; after a resync only the task as it is now is known.
    const next = a2aStateOf(isStatus ? (event.data.status as TaskStatus) : fresh.status);
    if (next === state) continue;
    state = next;
    const asked = (await w.tasks.interventionsOf([task.id])).get(task.id) ?? [];
    const now = statusOf(fresh, asked);
    const ids = { taskId: task.id, contextId: contextIdOf(fresh), metadata: undefined };
    if (state === TaskState.TASK_STATE_COMPLETED)
      for (const artifact of artifactsOf(fresh)) yield { payload: { $case: "artifactUpdate", value: { ...ids, artifact, append: false, lastChunk: true } } };
    const status = { state, message: now.state === state ? now.message : undefined, timestamp: event.created_at || now.timestamp };
    yield { payload: { $case: "statusUpdate", value: { ...ids, status } } };
    if (endsAt(state)) return;
  }
}
