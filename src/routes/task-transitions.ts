/**
 * A task's lifecycle moves that the room decides (the lifecycle table says
 * who may make which): cancel, start, complete, fail, approve, reject, retry.
 */
import { failRequest, failureOf } from "../protocol/task-format";
import { readJson } from "../http/body";
import type { HubContext } from "../http/context";
import { cancelBody } from "../protocol/hub-api";
import { runInRoom, runInRoomForView } from "../room/client";
import { pointedTo } from "../datarefs/pointers";
import { discardOffloaded } from "../middleware/request-offloads";
import { taskSchema } from "../views/tasks";
import { rejectBody } from "../protocol/compute-protocol";
import { completeBody } from "../protocol/task-response";
import { completionCommand } from "./task-completion";
import type { UsageBlock } from "../domain/usage";
import { recordUsageBlock } from "../usage/record-block";
import { takenBack, type TaskSurface } from "./task-surface";
import { taskFor } from "./task-access";

/** Runs a body-less or simple transition and answers the task as it is afterwards. */
export async function transition(c: HubContext, taskId: string, command: (id: string, projectId: string) => Promise<Parameters<typeof runInRoom>[2]>) {
  return (await transitionWith(c, taskId, async (id, projectId) => ({ command: await command(id, projectId) }))).view;
}

/** A transition whose command comes with usage to count once it has committed (a completion's usage block). */
async function transitionWith(
  c: HubContext,
  taskId: string,
  made: (id: string, projectId: string) => Promise<{ command: Parameters<typeof runInRoom>[2]; usage?: UsageBlock }>,
) {
  const task = await taskFor(c, taskId, "write");
  const { command, usage } = await made(task.id, task.projectId);
  const { result, view } = await runInRoomForView(c, task.projectId, command);
  // Completing again with the same result changes nothing: the copy of its large parts just stored is not needed, nor is its usage counted again.
  if (result.unchanged) await discardOffloaded(c, pointedTo([view.result, view.response]));
  else if (usage) await recordUsageBlock(c, view, usage);
  return { view };
}

export const startTask = (c: HubContext, id: string) => transition(c, id, async (taskId) => ({ op: "start", taskId }));

/** `result`, or a task-format Task Response: completed with its artifacts and metadata, or failed with its error block. */
export const completeTask = async (c: HubContext, id: string) =>
  (await transitionWith(c, id, (taskId, projectId) => completionCommand(c, taskId, projectId))).view;

/** `error` is text (the official CLI) or a task-format error block {code, message, details?, recoverable?}. */
export const failTask = (c: HubContext, id: string) =>
  transition(c, id, async (taskId) => ({ op: "fail", taskId, ...failureOf((await readJson(c, failRequest)).error) }));

/** DELETE /:id : cancelled. */
export function cancelRoute({ r, describe, write, taskId }: TaskSurface) {
  r.delete(
    "/:id",
    describe({
      id: "cancelTask",
      summary: "Cancel a task",
      description:
        "Cancel a task (→ `cancelled`).\n\n" +
        "From any unfinished status, by anyone who may write to the project; a finished task is 409 `INVALID_TRANSITION`. The body is optional.",
      body: cancelBody,
      bodyRequired: false,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await transition(c, taskId(c), async (id) => ({ op: "cancel", taskId: id, reason: (await readJson(c, cancelBody)).reason ?? null }))),
  );
}

/** POST /:id/start : running. */
export function startRoute({ r, describe, write, taskId }: TaskSurface) {
  r.post(
    "/:id/start",
    describe({
      id: "startTask",
      summary: "Start a task",
      description:
        "Start work on an assigned task (→ `running`).\n\n" +
        `By the assignee, from \`assigned\`; 409 \`UNRESOLVED_DEPENDENCIES\` while the task is blocked, 409 \`TASK_AWAITING_APPROVAL\` while it waits for a person's approval. ${takenBack}`,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await startTask(c, taskId(c))),
  );
}

/** POST /:id/complete : done, with its result. */
export function completeRoute({ r, describe, write, taskId }: TaskSurface) {
  r.post(
    "/:id/complete",
    describe({
      id: "completeTask",
      summary: "Complete a task",
      description:
        "Complete a running task with its result (→ `done`).\n\n" +
        "By the assignee, from `running`. `result` is a task-result/v1 object, a legacy object, or a string (kept as " +
        "`{summary, completed_by}`); contract entries without a `status` are fulfilled data. An output envelope (`success` and `recommendation`) " +
        "decides the outcome: `proceed` with success → `done`; `retry` or `success: false` → `failed` (recoverable); `escalate` → `needs_human`.\n\n" +
        "Completing again with the same result is a no-op (200); with another, 409 `RESULT_CONFLICT`. A result for a failed or cancelled task is " +
        `409 but kept as \`late_result\`. ${takenBack}`,
      body: completeBody,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await completeTask(c, taskId(c))),
  );
}

/** POST /:id/fail : failed. */
export function failRoute({ r, describe, write, taskId }: TaskSurface) {
  r.post(
    "/:id/fail",
    describe({
      id: "failTask",
      summary: "Fail a task",
      description:
        "Fail a task (→ `failed`).\n\n" +
        "By the assignee, from `assigned`, `planning`, `plan_review`, `running` or `needs_human`. `error` is text, or a task-format error block " +
        "`{code, message, details?, recoverable?}` kept as the task's `error` (its `code` as `error_code`); without it the task fails " +
        `"without a reason". ${takenBack}`,
      body: failRequest,
      bodyRequired: false,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await failTask(c, taskId(c))),
  );
}

/** POST /:id/approve (people): an agent's task may go ahead. */
export function approveRoute({ r, describe, write, taskId }: TaskSurface) {
  r.post(
    "/:id/approve",
    describe({
      id: "approveTask",
      summary: "Approve a task",
      description:
        "Let a task an agent created go ahead, in a project that approves agents' tasks (`settings.approve_agent_tasks`).\n\n" +
        "Members and admins of the project. Clears `awaiting_approval` (event `task_approved`): a pending task is offered to auto-assignment " +
        "at once; the daemon of the session it is given to is sent a plain `task_assigned`, and starts its agent on it. A task that is not " +
        "awaiting approval is 409 `NOT_AWAITING_APPROVAL`; a finished one, 409 `INVALID_TRANSITION`.",
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await transition(c, taskId(c), async (id) => ({ op: "approve", taskId: id }))),
  );
}

/** POST /:id/reject : declined by its assignee. */
export function rejectRoute({ r, describe, write, taskId }: TaskSurface) {
  r.post(
    "/:id/reject",
    describe({
      id: "rejectTask",
      summary: "Reject a task",
      description:
        "Decline an assigned task (`assigned` or `planning` → `pending`).\n\n" +
        `By the assignee (compute protocol): the assignment is cleared, and auto-assignment never offers the task to this server again. ${takenBack}`,
      body: rejectBody,
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await transition(c, taskId(c), async (id) => ({ op: "reject", taskId: id, reason: (await readJson(c, rejectBody)).reason }))),
  );
}

/** POST /:id/retry : a failed task runs again. */
export function retryRoute({ r, describe, write, taskId }: TaskSurface) {
  r.post(
    "/:id/retry",
    describe({
      id: "retryTask",
      summary: "Retry a task",
      description:
        "Run a failed task again (`failed` → `pending`).\n\n" +
        "People only (an agent is 403 `NOT_ALLOWED`). The result, error and assignment are cleared and `retry_count` goes up; servers that rejected it stay passed over.",
      responses: { 200: taskSchema },
    }),
    write,
    async (c) => c.json(await transition(c, taskId(c), async (id) => ({ op: "retry", taskId: id }))),
  );
}
