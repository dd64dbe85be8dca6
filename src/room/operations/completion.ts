/**
 * How a task ends: completed, with its cascade in the same batch, or failed
 * or cancelled, which leaves its downstream blocked and frees its server.
 */
import { sql } from "drizzle-orm";
import { canonicalJson, contentOfPointers } from "../../domain/canonical-json";
import { checkContracts, resolveDownstream } from "../../domain/cascade";
import { ACTIVE, allowedActions, FINISHED, type TaskStatus } from "../../domain/lifecycle";
import { eventsOfTasksIn, taskWithId } from "../../db/task-events";
import { guardHolds, statement, type EventDraft, type TaskRow, type VersionGuard } from "../statements";
import { assignmentEvents, assignmentStatements, filledServers, planAutoAssign } from "./assignment";
import { partyOf, statusEvent, taskWrite, transition, type Cmd, type OpContext, type OpOutcome, type WritePlan } from "./kernel";
import { type RoomActor } from "../commands";
import { HUB_ACTOR } from "../../runtime/room-rpc";
import { invalidTransition, notFound, resultConflict } from "./refusals";
import { errorBlock } from "../../protocol/task-format";
import { escalationContext, type EnvelopeOutcome } from "../../protocol/agent-envelope";
import { askPerson, helpWith } from "./lifecycle";
import { silentResultReason } from "../../domain/liveness";
import type { TaskWithDownstream } from "../task-reads";
import { completeAgain, openToWorker, reviewOnCompletion, reviewRefusal } from "./reviews";
import { reviewTaskRefusal } from "./review-task-guard";

/**
 * Open questions of a task that ends are cancelled; those an agent waits on (ask-user) come back so it can be told.
 * Most tasks end with none open: then there is nothing to write.
 */
const cancelOpenQuestions = (ctx: OpContext, { task, openQuestions }: TaskWithDownstream, guard: VersionGuard) =>
  openQuestions
    ? [
        statement(
          ctx.d1,
          sql`UPDATE interventions SET status = 'cancelled' WHERE task_id = ${task.id} AND status = 'pending' AND ${guardHolds(guard)}
              RETURNING server_id AS waiting_server_id, correlation_id AS waiting_correlation_id`,
        ),
      ]
    : [];

/** What the agent's last commit changed, kept on the task when the completion's CLI measured it. */
const diffStatsOf = (cmd: Cmd<"complete">): Partial<TaskRow> => (cmd.gitDiffStats ? { gitDiffStats: cmd.gitDiffStats } : {});

/**
 * Completion and its cascade, in one batch: the contract check, resolution of
 * downstream dependencies, unblocking, auto-assignment. A fixed number of
 * queries whatever the fan-out.
 */
export async function complete(ctx: OpContext, cmd: Cmd<"complete">): Promise<OpOutcome> {
  const loaded = await ctx.reads.taskWithDownstream(cmd.taskId);
  if (!loaded) return notFound("Task");
  const { task, links } = loaded;
  const party = partyOf(ctx.actor, task);
  // A task its review sent back to its worker takes the worker's next completion as the review's next attempt.
  if (openToWorker(task)) return completeAgain(ctx, task, cmd);
  // DataRef pointers compare by content: each completion stores its large parts anew. Only compared off the hot path.
  const sameResult = () =>
    canonicalJson([task.result, task.response], contentOfPointers) === canonicalJson([cmd.result, cmd.response ?? null], contentOfPointers);
  if (task.status === "done" && party.kind === "agent") {
    // Completing again is a no-op when the result is the same, a conflict when it is not.
    return sameResult() ? { taskId: task.id, statements: [], unchanged: true } : resultConflict();
  }
  // An output envelope that failed the task, sent again by its assignee, is the same answer, not a late result.
  if (task.status === "failed" && cmd.envelope && party.kind === "agent" && party.isAssignee && sameResult()) {
    return { taskId: task.id, statements: [], unchanged: true };
  }
  if ((task.status === "failed" || task.status === "cancelled") && ctx.actor.kind === "agent" && (await heldBy(ctx, task, ctx.actor.serverId))) {
    return keepLateResult(ctx, task, ctx.actor, cmd);
  }
  // A completion kept while it waits on a person (require_result), sent again by its assignee, is the same answer.
  if (task.status === "needs_human" && task.result !== null && party.kind === "agent" && party.isAssignee && sameResult()) {
    return { taskId: task.id, statements: [], unchanged: true };
  }
  const next = transition(ctx, task, "complete");
  if (typeof next !== "string") return next;
  if (cmd.envelope && cmd.envelope.status !== "done") return endAsEnvelopeSays(ctx, loaded, cmd.result, cmd.envelope, cmd.response, diffStatsOf(cmd));
  const refused = reviewRefusal(task, cmd.result);
  if (refused) return refused;
  const silent = (await ctx.settings()).require_result ? silentResultReason(cmd.result) : null;
  if (silent) return completionWithoutResult(ctx, task, cmd, silent);
  const review = await reviewOnCompletion(ctx, task, cmd.gitDiffStats);

  const resolution = resolveDownstream(cmd.result, cmd.structured, links);
  const assignments = await planAutoAssign(ctx, resolution.unblocked, task.assignedServerId);
  const events: EventDraft[] = [
    statusEvent("task_completed", task, next, { summary: typeof cmd.result.summary === "string" ? cmd.result.summary : null, structured: cmd.structured }),
    ...cmd.warnings.map((warning) => ({ type: "schema_warning" as const, taskId: task.id, data: { warning } })),
    ...checkContracts(cmd.result, cmd.structured, task.structuredSpec).map((f) => ({ type: f.type, taskId: task.id, data: f.data })),
    ...resolution.missingInputs.map((m) => ({
      type: "contract_missing" as const,
      taskId: m.taskId,
      data: {
        contract_key: m.contractKey,
        upstream_task_id: task.id,
        detail: "the upstream result has no such contract; the input dependency resolved without data",
      },
    })),
    ...resolution.incompleteInputs.map(({ taskId, contractKey, type, ...delivered }) => ({
      type,
      taskId,
      data: {
        contract_key: contractKey,
        upstream_task_id: task.id,
        ...delivered,
        detail: `the input dependency resolved on a ${delivered.status} contract: resolved_inputs.${contractKey} carries its status`,
      },
    })),
    ...resolution.unblocked.map((id) => ({ type: "task_unblocked" as const, taskId: id, data: { resolved_by: task.id } })),
    ...assignmentEvents(assignments),
    ...(review?.events ?? []),
  ];
  const plan = taskWrite(
    ctx,
    task,
    {
      status: next,
      result: cmd.result,
      resultStructured: cmd.structured,
      ...responseOf(cmd),
      completedAt: ctx.now,
      deadlineAt: null,
      warnings: [...task.warnings, ...cmd.warnings],
      ...diffStatsOf(cmd),
      ...review?.set,
    },
    events,
    (guard) => [...cancelOpenQuestions(ctx, loaded, guard), ...assignmentStatements(ctx, assignments, guard), ...(review?.statements(guard) ?? [])],
  );
  return {
    ...plan,
    // Only a dependent given to a session has a daemon to tell (one not known to have none is looked up).
    ...(links.some((l) => l.dependencyType !== "related" && l.sessionId !== null) ? { toDependents: true as const } : {}),
    fills: filledServers(assignments),
    effects: { ...plan.effects, resolved: task.id, unblocked: resolution.unblocked, assignments },
  };
}

/**
 * A task that ends without completing (failed, cancelled) leaves its
 * downstream tasks pending and blocked — no implicit retry — and tells each
 * of them; the capacity it held goes to waiting tasks.
 */
export async function endWithoutCompleting(
  ctx: OpContext,
  loaded: TaskWithDownstream,
  next: TaskStatus,
  event: EventDraft,
  set: Partial<TaskRow>,
): Promise<WritePlan> {
  const { task, links } = loaded;
  const affected = [...new Set(links.filter((l) => l.dependencyType !== "related" && !FINISHED.includes(l.taskStatus)).map((l) => l.taskId))];
  // Only a task counted against its server's capacity frees some when it ends.
  const assignments = task.assignedServerId && ACTIVE.includes(task.status) ? await planAutoAssign(ctx, [], task.assignedServerId) : [];
  const plan = taskWrite(
    ctx,
    task,
    { status: next, completedAt: ctx.now, deadlineAt: null, ...set },
    [
      event,
      ...affected.map((id) => ({ type: "dependency_failed" as const, taskId: id, data: { upstream_task_id: task.id, upstream_status: next } })),
      ...assignmentEvents(assignments),
    ],
    (guard) => [...cancelOpenQuestions(ctx, loaded, guard), ...assignmentStatements(ctx, assignments, guard)],
  );
  return { ...plan, fills: filledServers(assignments), effects: { ...plan.effects, assignments } };
}

/** Fails a task: by its agent, or by the room when its timeout passes (code TIMEOUT). */
export async function fail(ctx: OpContext, cmd: Cmd<"fail">): Promise<OpOutcome> {
  const loaded = await ctx.reads.taskWithDownstream(cmd.taskId);
  if (!loaded) return notFound("Task");
  const { task } = loaded;
  // Only the hub's own timeout skips the lifecycle's check of who may fail the task: an agent's error block may say TIMEOUT too.
  const timedOut = cmd.code === "TIMEOUT" && ctx.actor.kind === "person" && ctx.actor.label === HUB_ACTOR.label;
  const next = timedOut && task.status === "running" ? "failed" : transition(ctx, task, "fail");
  if (typeof next !== "string") return next;
  const failure = failureOf(task, next, cmd);
  return endWithoutCompleting(ctx, loaded, next, failure.event, failure.set);
}

/** A Task Response's artifacts and metadata, for the task to keep (left as they are when the command brought none). */
const responseOf = (cmd: { response?: Record<string, unknown> | null }): Partial<TaskRow> => (cmd.response ? { response: cmd.response } : {});

/** What a failure writes: the error block, its event, and as the result `{error, code}` — or what the agent sent instead. */
function failureOf(
  task: TaskRow,
  next: TaskStatus,
  f: Pick<Cmd<"fail">, "error" | "code" | "details" | "recoverable" | "response">,
  sent?: Record<string, unknown>,
) {
  const result = { error: f.error, ...(f.code ? { code: f.code } : {}) };
  const error = errorBlock(f.error, f.code, f.details, f.recoverable);
  return {
    event: statusEvent("task_failed", task, next, { ...result, recoverable: error.recoverable }),
    set: { result: sent ?? result, resultStructured: false, errorCode: f.code, error, ...responseOf(f) } satisfies Partial<TaskRow>,
  };
}

/**
 * An agent envelope that does not proceed (seeds/agent-envelope.md): `retry`
 * or `success: false` fails the task as recoverable, keeping the envelope as
 * its result (and `kept`, what the agent's commit changed); `escalate` asks a
 * person for help, as the agent's /help would, with what the agent produced
 * and noted as the question's context.
 */
async function endAsEnvelopeSays(
  ctx: OpContext,
  loaded: TaskWithDownstream,
  envelope: Record<string, unknown>,
  outcome: Exclude<EnvelopeOutcome, { status: "done" }>,
  response: Cmd<"complete">["response"],
  kept: Partial<TaskRow>,
) {
  const { task } = loaded;
  if (outcome.status === "needs_human") {
    return helpWith(ctx, task, { question: outcome.question, context: escalationContext(envelope), interventionType: "help" });
  }
  const failure = failureOf(task, "failed", { error: outcome.message, code: outcome.code, recoverable: true, response }, envelope);
  return endWithoutCompleting(ctx, loaded, "failed", failure.event, { ...failure.set, ...kept });
}

export async function cancel(ctx: OpContext, cmd: Cmd<"cancel">): Promise<OpOutcome> {
  const loaded = await ctx.reads.taskWithDownstream(cmd.taskId);
  if (!loaded) return notFound("Task");
  const { task } = loaded;
  const next = transition(ctx, task, "cancel");
  if (typeof next !== "string") return next;
  const review = reviewTaskRefusal(ctx, task, "cancel");
  if (review) return review;
  return endWithoutCompleting(
    ctx,
    loaded,
    next,
    statusEvent("task_cancelled", task, next, { reason: cmd.reason, assigned_server_id: task.assignedServerId }),
    {},
  );
}

/** Whether the agent's server held the task at some point: its last assignee, one that rejected it, or one it was assigned to before. */
async function heldBy(ctx: OpContext, task: TaskRow, serverId: string): Promise<boolean> {
  if (task.assignedServerId === serverId || task.rejectedBy.includes(serverId)) return true;
  const row = await ctx.d1
    .prepare(
      `SELECT 1 AS held FROM ${eventsOfTasksIn(taskWithId("?1"), "?3")}
       WHERE e.type = 'task_assigned' AND e.data ->> '$.server_id' = ?2 LIMIT 1`,
    )
    .bind(task.id, serverId, task.projectId)
    .first<{ held: number }>();
  return row !== null;
}

/**
 * "Duplicate or late results are valid and expected" (compute protocol): a
 * result for a task that already failed or was cancelled changes nothing of
 * its outcome, but is kept on the task (the latest one) with who sent it and
 * when; the agent is still told 409.
 */
function keepLateResult(ctx: OpContext, task: TaskRow, actor: Extract<RoomActor, { kind: "agent" }>, cmd: Cmd<"complete">): WritePlan {
  const lateResult = {
    result: cmd.result,
    structured: cmd.structured,
    server_id: actor.serverId,
    server_name: actor.serverName,
    received_at: ctx.now,
    ...(cmd.response ? { response: cmd.response } : {}),
  };
  const plan = taskWrite(ctx, task, { lateResult }, [
    {
      type: "late_result_received",
      taskId: task.id,
      data: {
        status: task.status,
        server_id: actor.serverId,
        server_name: actor.serverName,
        summary: typeof cmd.result.summary === "string" ? cmd.result.summary : null,
      },
    },
  ]);
  const refusal = invalidTransition(
    task.status,
    `Cannot complete a task that is ${task.status}; the result was kept on the task as late_result`,
    allowedActions(task.status),
  );
  return { ...plan, refusal: { ...refusal, extensions: { ...refusal.extensions, late_result_kept: true } } };
}

/**
 * A completion with nothing in its result while the project requires one (require_result): the task waits on a person
 * instead of ending, the result kept on it for them to see, and its dependents stay blocked. The question says why;
 * answering it sends the task back to its agent to complete it again (or a person cancels it).
 */
function completionWithoutResult(ctx: OpContext, task: TaskRow, cmd: Cmd<"complete">, reason: string): WritePlan {
  const question = `Completed without a result: ${reason}. The result it sent is kept on the task. Answer to send it back to its agent to complete again with a summary, or cancel it.`;
  return askPerson(
    ctx,
    task,
    { question, context: undefined, interventionType: "help" },
    {
      set: { result: cmd.result, resultStructured: cmd.structured, ...responseOf(cmd), warnings: [...task.warnings, ...cmd.warnings], ...diffStatsOf(cmd) },
      events: [
        { type: "completion_without_result", taskId: task.id, data: { reason, server_id: task.assignedServerId } },
        ...cmd.warnings.map((warning) => ({ type: "schema_warning" as const, taskId: task.id, data: { warning } })),
      ],
    },
  );
}
