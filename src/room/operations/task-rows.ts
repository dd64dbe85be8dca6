/** A new task's row as a create writes it: one task, or each task of a template's graph. */
import type { TaskStatus } from "../../domain/lifecycle";
import { delegatedTo } from "../../protocol/task-format";
import type { NewTask } from "../commands";
import type { OpContext } from "./kernel";

export interface NewRowState {
  status: TaskStatus;
  /** As the triggers on its dependencies would set it, so that inserting them writes the task no second time. */
  blocked: boolean;
  awaiting: boolean;
  trace: { traceId: string; traceparent: string };
  origin: NonNullable<NewTask["origin"]>;
  /** The run (a template's firing) the task is part of. */
  runId?: string;
}

export function newTaskRow(ctx: OpContext, id: string, t: NewTask, s: NewRowState) {
  const { origin } = s;
  const target = origin.assignTo;
  const { now } = ctx;
  return {
    id,
    projectId: ctx.projectId,
    title: t.title,
    spec: t.spec,
    type: t.type,
    priority: t.priority,
    status: s.status,
    targetRepo: t.targetRepo,
    targetBranch: t.targetBranch,
    acceptanceCriteria: t.acceptanceCriteria,
    structuredSpec: t.structuredSpec,
    requirements: t.requirements,
    requirePlan: t.requirePlan,
    blocked: s.blocked,
    awaitingApproval: s.awaiting,
    timeoutSeconds: t.timeoutSeconds,
    sourceSessionId: t.sourceSessionId,
    createdBy: ctx.actor.label,
    warnings: t.warnings,
    clientId: origin.clientId ?? null,
    clientRequestHash: origin.clientRequestHash ?? null,
    payload: origin.payload === undefined ? null : origin.payload,
    context: origin.context ?? null,
    // Given to its routing.target as it is created, the task has that agent at the end of its delegation chain.
    routing: target && origin.clientId ? delegatedTo(origin.routing ?? null, target.sessionName ?? target.serverName) : (origin.routing ?? null),
    observability: origin.observability ?? null,
    extensions: origin.extensions ?? null,
    assignedServerId: target?.serverId ?? null,
    targetSessionId: target?.sessionId ?? null,
    assignedAt: target ? now : null,
    traceId: s.trace.traceId,
    traceparent: s.trace.traceparent,
    runId: s.runId ?? null,
    reviewOf: origin.review?.of ?? null,
    reviewAttempt: origin.review?.attempt ?? 0,
    rejectedBy: origin.review?.notServer ? [origin.review.notServer] : [],
    createdAt: now,
    updatedAt: now,
  };
}
