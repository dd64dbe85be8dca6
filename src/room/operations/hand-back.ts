/**
 * Dispatched tasks coming back (seeds/compute-protocol.md): an agent rejects
 * the task it was given, or the room takes it back when its server has been
 * silent past the lease. Either way nothing is retried implicitly: the task
 * is pending again (and offered like any waiting task), or, for work under way
 * that an agent took with it, failed explicitly with AGENT_LOST.
 */
import { eq } from "drizzle-orm";
import { servers } from "../../db/schema";
import { AGENT_LOST, leaseDecision } from "../../protocol/compute-protocol";
import { errorBlock } from "../../protocol/task-format";
import type { TaskStatus } from "../../domain/lifecycle";
import type { EventDraft, TaskRow } from "../statements";
import type { Blocker } from "../task-reads";
import { pendingAndOffered } from "./assignment";
import { endWithoutCompleting } from "./completion";
import { answerOnly, statusEvent, transition, type OpContext, type Planner } from "./kernel";
import { notFound } from "./refusals";

/** Puts a dispatched task back to pending, its assignment cleared, and offers it with the other waiting tasks; never to `notTo`. */
const backToPending = (ctx: OpContext, task: TaskRow, blockers: Blocker[], set: Partial<TaskRow>, event: EventDraft, notTo: string[]) =>
  pendingAndOffered(ctx, task, blockers.length === 0 && !task.awaitingApproval, notTo, { targetSessionId: null, startedAt: null, deadlineAt: null, ...set }, [
    event,
  ]);

/** The assignee declines an assigned or planning task; its server is never offered the task again. */
export const reject: Planner<"reject"> = async (ctx, cmd) => {
  const loaded = await ctx.reads.taskWithBlockers(cmd.taskId);
  if (!loaded) return notFound("Task");
  const { task, blockers } = loaded;
  const next = transition(ctx, task, "reject");
  if (typeof next !== "string") return next;
  // The lifecycle table lets only the assignee reject, and only agents are assignees.
  const { serverId, serverName } = ctx.actor as Extract<typeof ctx.actor, { kind: "agent" }>;
  const rejectedBy = [...new Set([...task.rejectedBy, serverId])];
  return backToPending(
    ctx,
    task,
    blockers,
    { rejectedBy },
    statusEvent("task_rejected", task, next, { reason: cmd.reason, server_id: serverId, server_name: serverName }),
    rejectedBy,
  );
};

/** The lease lapsed, as the alarm saw it: decided again here, in the room's turn, so a completion cannot slip between. */
export const expireLease: Planner<"expire_lease"> = async (ctx, cmd) => {
  const loaded = await ctx.reads.taskWithDownstream(cmd.taskId);
  if (!loaded) return notFound("Task");
  const { task } = loaded;
  const server = task.assignedServerId
    ? await ctx.db.query.servers.findFirst({ where: eq(servers.id, task.assignedServerId), columns: { name: true, lastHeartbeat: true } })
    : undefined;
  if (!server) return answerOnly(task.id, { action: "keep" });
  const decision = leaseDecision({
    status: task.status,
    assignedAt: task.assignedAt,
    lastHeartbeat: server.lastHeartbeat,
    connected: cmd.connected,
    now: Date.parse(ctx.now),
    leaseMs: cmd.leaseSeconds * 1000,
  });
  const lost = { server_id: task.assignedServerId, server_name: server.name, last_heartbeat: server.lastHeartbeat, lease_seconds: cmd.leaseSeconds };
  if (decision.action === "keep") return answerOnly(task.id, { action: "keep" });
  const message = `The agent on ${server.name} disappeared: no heartbeat or connection for ${cmd.leaseSeconds} s`;
  return handBackLost(ctx, loaded, decision.action, { reason: "lease_expired", lost, message });
};

/** What a removed server's task becomes: nothing was under way yet (requeued), or work was (failed, recoverable). */
const ON_REMOVAL: Partial<Record<TaskStatus, "requeue" | "fail">> = {
  assigned: "requeue",
  planning: "requeue",
  plan_review: "requeue",
  running: "fail",
  needs_human: "fail",
};

/** An admin removed the task's server: the task comes back as a lost agent's does. */
export const releaseTask: Planner<"release_task"> = async (ctx, cmd) => {
  const loaded = await ctx.reads.taskWithDownstream(cmd.taskId);
  if (!loaded) return notFound("Task");
  const action = loaded.task.assignedServerId === cmd.serverId ? ON_REMOVAL[loaded.task.status] : undefined;
  if (!action) return answerOnly(loaded.task.id, { action: "keep" });
  const lost = { server_id: cmd.serverId, server_name: cmd.serverName };
  return handBackLost(ctx, loaded, action, { reason: "server_removed", lost, message: `The server ${cmd.serverName} was removed from the hub` });
};

/** Requeues the task of a server that is gone (never offered to it again), or fails it with AGENT_LOST. */
async function handBackLost(
  ctx: OpContext,
  loaded: NonNullable<Awaited<ReturnType<OpContext["reads"]["taskWithDownstream"]>>>,
  action: "requeue" | "fail",
  why: { reason: string; lost: Record<string, unknown>; message: string },
) {
  const { task } = loaded;
  if (action === "requeue") {
    const blockers = (await ctx.reads.taskWithBlockers(task.id))?.blockers ?? [];
    const retryCount = task.retryCount + 1;
    return backToPending(
      ctx,
      task,
      blockers,
      { retryCount },
      statusEvent("task_requeued", task, "pending", { reason: why.reason, retry_count: retryCount, ...why.lost }),
      [...task.rejectedBy, task.assignedServerId!],
    );
  }
  const result = { error: why.message, code: AGENT_LOST };
  return endWithoutCompleting(ctx, loaded, "failed", statusEvent("task_failed", task, "failed", { ...result, recoverable: true }), {
    result,
    resultStructured: false,
    errorCode: AGENT_LOST,
    error: errorBlock(why.message, AGENT_LOST, why.lost, true),
  });
}
