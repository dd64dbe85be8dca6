/** Changing a task's fields (those that are fixed once it has left `pending` are refused then). */
import { readJson } from "../http/body";
import type { HubContext } from "../http/context";
import { updateTaskBody } from "../protocol/hub-api";
import { type TaskChanges } from "../room/commands";
import { runInRoomForView } from "../room/client";
import { OFFLOAD_DEPTH } from "../datarefs/offload";
import { taskSchema } from "../views/tasks";
import type { TaskSurface } from "./task-surface";
import { taskFor, offloadFor } from "./task-access";
import { protocolWarnings } from "./task-creation";

async function updateTask(c: HubContext, taskId: string) {
  const task = await taskFor(c, taskId, "write");
  const body = await readJson(c, updateTaskBody);
  const warnings = protocolWarnings(body);
  const changes: TaskChanges = {
    ...(body.title !== undefined ? { title: body.title } : {}),
    ...(body.spec !== undefined ? { spec: body.spec } : {}),
    ...(body.type !== undefined ? { type: body.type } : {}),
    ...(body.priority !== undefined ? { priority: body.priority } : {}),
    ...(body.target_repo !== undefined ? { targetRepo: body.target_repo } : {}),
    ...(body.target_branch !== undefined ? { targetBranch: body.target_branch } : {}),
    ...(body.acceptance_criteria !== undefined ? { acceptanceCriteria: body.acceptance_criteria } : {}),
    ...(body.structured_spec !== undefined
      ? { structuredSpec: (await offloadFor(c, task.projectId)(body.structured_spec, OFFLOAD_DEPTH.spec)) as Record<string, unknown> | null }
      : {}),
    ...(body.requirements !== undefined ? { requirements: body.requirements } : {}),
    ...(body.require_plan !== undefined ? { requirePlan: body.require_plan } : {}),
    ...(body.timeout_seconds !== undefined ? { timeoutSeconds: body.timeout_seconds } : {}),
    ...(body.payload !== undefined ? { payload: body.payload } : {}),
    ...(warnings.length ? { warnings } : {}),
  };
  return (await runInRoomForView(c, task.projectId, { op: "update", taskId: task.id, changes })).view;
}

/** PUT /:id : the task's fields. */
export function updateRoute({ r, describe, write, taskId }: TaskSurface) {
  r.put(
    "/:id",
    describe({
      id: "updateTask",
      summary: "Update a task",
      description:
        "Change a task's fields.\n\n" +
        "Only the fields sent change (at least one). Once the task has left `pending`, `spec`, `structured_spec`, `requirements`, `type` and " +
        "`payload` are immutable: a different value is 409 `TASK_IMMUTABLE` (sending the current value again is no change).",
      body: updateTaskBody,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await updateTask(c, taskId(c))),
  );
}
