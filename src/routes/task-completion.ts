/**
 * The room command a `complete` asks for: the core protocol's result, or a
 * task-format Task Response — completed (its artifacts and metadata kept
 * beside the result) or failed (the task fails with its error block).
 */
import { and, eq } from "drizzle-orm";
import { tasks } from "../db/schema";
import { normaliseResult } from "../domain/results";
import { readJson } from "../http/body";
import type { HubContext } from "../http/context";
import { fieldError, validationFailed } from "../http/problem";
import { offloaderFor } from "../middleware/request-offloads";
import { OFFLOAD_DEPTH } from "../datarefs/offload";
import { completeBody, outcomeOf, responseBlocksOf, type CompleteBody } from "../protocol/task-response";
import { usageOfCompletion } from "../protocol/usage-block";
import type { UsageBlock } from "../domain/usage";
import { roomActor } from "../room/client";
import type { RoomCommand } from "../room/commands";

/** The command, and the usage the completion reported (counted once the task has completed). */
export async function completionCommand(c: HubContext, taskId: string, projectId: string): Promise<{ command: RoomCommand; usage?: UsageBlock }> {
  const body = await readJson(c, completeBody);
  if (body.id !== undefined) await assertResponseIsFor(c, taskId, projectId, body.id);
  const usage = usageOfCompletion(body);
  if (usage.errors) throw validationFailed(usage.errors);
  return { command: await commandOf(c, body, taskId, projectId), ...(usage.block ? { usage: usage.block } : {}) };
}

async function commandOf(c: HubContext, body: CompleteBody, taskId: string, projectId: string): Promise<RoomCommand> {
  const offload = offloaderFor(c, projectId, roomActor(c).label);
  const response = (await offload(responseBlocksOf(body) ?? undefined, OFFLOAD_DEPTH.response)) as Record<string, unknown> | undefined;
  const outcome = outcomeOf(body);
  if (outcome.failed) return { op: "fail", taskId, ...outcome.failed, response };
  const p = c.var.principal!;
  const normalised = normaliseResult(outcome.result, p.kind === "server" ? p.server.name : p.user.email);
  if (!normalised.ok) throw validationFailed(normalised.errors);
  return {
    op: "complete",
    taskId,
    result: (await offload(normalised.result, OFFLOAD_DEPTH.result)) as Record<string, unknown>,
    structured: normalised.structured,
    warnings: normalised.warnings,
    ...(normalised.envelope ? { envelope: normalised.envelope } : {}),
    ...(body.git_diff_stats ? { gitDiffStats: body.git_diff_stats } : {}),
    response,
  };
}

/** A Task Response names the task it answers: its client id (the request's `id`) or the hub's id. */
async function assertResponseIsFor(c: HubContext, taskId: string, projectId: string, id: string) {
  if (id === taskId) return;
  const task = await c.var.db.query.tasks.findFirst({ where: and(eq(tasks.id, taskId), eq(tasks.projectId, projectId)), columns: { clientId: true } });
  // A task that is not there is the room's to refuse (404).
  if (task && task.clientId !== id) throw fieldError("id", "is not this task's id: a Task Response names its task by the request's id (or the hub's id)");
}
