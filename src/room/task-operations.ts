/**
 * Each room operation reads what it needs, checks the lifecycle, and returns
 * either a refusal or the statements of one batch. Nothing here writes: the
 * room runs the batch, so an operation lands whole or not at all.
 */
import { and, eq, inArray, isNotNull, lte, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { agentLogs, interventions, taskDependencies, taskNotes, tasks } from "../db/schema";
import { inJsonList } from "../db/sql";
import { canonicalJson, contentOfPointers } from "../domain/canonical-json";
import { checkContracts, planAssignments, resolveDownstream, type Assignment, type DownstreamLink } from "../domain/cascade";
import { isBlocked, resolveDependency } from "../domain/dependencies";
import { cycleThrough } from "../domain/dependency-graph";
import { ACTIVE, checkTransition, FINISHED, type TaskAction, type TaskStatus } from "../domain/lifecycle";
import { rankServers } from "../domain/matching";
import type { Requirements } from "../protocol/orchestratia-v1";
import { assignmentEvents, assignStatement, capacityCheck } from "./assignment";
import type { ProblemData, RoomActor, RoomCommand } from "./commands";
import { ASSIGN_BATCH, type Blocker, type PlanEffects, type TaskReads } from "./task-reads";
import { appendEvents, chunkRows, guardAfter, guardHolds, statement, updateTask, type EventDraft, type TaskRow, type VersionGuard } from "./statements";

export interface OpContext {
  db: Db;
  d1: D1Database;
  projectId: string;
  actor: RoomActor;
  now: string;
  reads: TaskReads;
  /**
   * Whether the operation offers waiting tasks to servers as it goes. Off
   * when other projects' rooms kept filling the servers it planned for: the
   * operation itself then commits, and the room offers the tasks again after.
   */
  offerWaiting: boolean;
}

export interface WritePlan {
  taskId: string;
  statements: D1PreparedStatement[];
  /** Index of the guarded task update in `statements`, if any: it must have changed one row. */
  guardedUpdate?: number;
  data?: Record<string, unknown>;
  /** A deadline this operation set, for the room's alarm. */
  deadline?: string;
  /** What later operations of the same group must see of this one. */
  effects?: PlanEffects;
}

export type OpOutcome = WritePlan | ProblemData;

export const isProblem = (o: OpOutcome): o is ProblemData => "code" in o && "status" in o;

const notFound = (what: string): ProblemData => ({ status: 404, code: "NOT_FOUND", detail: `${what} not found` });

async function loadTask(ctx: OpContext, taskId: string): Promise<TaskRow | undefined> {
  return ctx.db.query.tasks.findFirst({ where: and(eq(tasks.id, taskId), eq(tasks.projectId, ctx.projectId)) });
}

function partyOf(actor: RoomActor, task: TaskRow) {
  return actor.kind === "person" ? ({ kind: "person" } as const) : ({ kind: "agent", isAssignee: task.assignedServerId === actor.serverId } as const);
}

/** Checks the lifecycle table; a refusal names the current status and what is allowed. */
function transition(ctx: OpContext, task: TaskRow, action: TaskAction, requirePlan = false): TaskStatus | ProblemData {
  const check = checkTransition(task.status, action, partyOf(ctx.actor, task), requirePlan);
  if (check.ok) return check.next;
  return check.reason === "invalid_transition"
    ? { status: 409, code: "INVALID_TRANSITION", detail: check.detail, extensions: { current_status: task.status, allowed_actions: check.allowed } }
    : { status: 403, code: "NOT_ALLOWED", detail: check.detail };
}

/** A task change plus its events, all applying only if the task still has the version read. */
function taskWrite(ctx: OpContext, task: TaskRow, set: Partial<TaskRow>, events: EventDraft[], extra: (guard: VersionGuard) => D1PreparedStatement[] = () => []): WritePlan {
  const guard = guardAfter(task);
  return {
    taskId: task.id,
    guardedUpdate: 0,
    effects: { task: { before: task, after: { ...task, ...set, version: task.version + 1, updatedAt: ctx.now } } },
    statements: [
      updateTask(ctx.db, ctx.d1, task, set, ctx.now),
      ...extra(guard),
      appendEvents(ctx.d1, ctx.projectId, ctx.actor.label, events, ctx.now, guard),
    ],
  };
}

const statusEvent = (type: string, task: TaskRow, next: TaskStatus, data: Record<string, unknown> = {}): EventDraft => ({
  type,
  taskId: task.id,
  data: { status: next, previous_status: task.status, ...data },
});

/** Open questions of a task that ends are cancelled; those an agent waits on (ask-user) come back so it can be told. */
const cancelPendingInterventions = (ctx: OpContext, task: TaskRow, guard: VersionGuard) => [
  statement(
    ctx.d1,
    sql`UPDATE interventions SET status = 'cancelled' WHERE task_id = ${task.id} AND status = 'pending' AND ${guardHolds(guard)}
        RETURNING server_id AS waiting_server_id, correlation_id AS waiting_correlation_id`,
  ),
];

function blockedProblem(blockers: Blocker[]): ProblemData {
  return {
    status: 409,
    code: "UNRESOLVED_DEPENDENCIES",
    detail: `The task is blocked by ${blockers.length} unresolved ${blockers.length === 1 ? "dependency" : "dependencies"}: ${blockers.map((b) => b.depends_on_task_id).join(", ")}`,
    extensions: { unresolved: blockers },
  };
}

const deadlineFrom = (task: TaskRow, now: string) =>
  task.timeoutSeconds ? new Date(Date.parse(now) + task.timeoutSeconds * 1000).toISOString() : null;

async function create(ctx: OpContext, cmd: Extract<RoomCommand, { op: "create" }>): Promise<OpOutcome> {
  const { db, projectId, now } = ctx;
  const id = crypto.randomUUID();
  const depIds = [...new Set(cmd.dependencies.map((d) => d.depends_on_task_id))];
  if (depIds.length !== cmd.dependencies.length) {
    return { status: 422, code: "VALIDATION_FAILED", detail: "dependencies: a task is listed twice", errors: [{ path: "dependencies", message: "must not list a task twice" }] };
  }
  const upstreams = new Map<string, TaskRow>();
  for (const ids of chunkRows(depIds, 1)) {
    const rows = await db.select().from(tasks).where(and(eq(tasks.projectId, projectId), inArray(tasks.id, ids)));
    for (const row of rows) upstreams.set(row.id, row);
  }
  const missing = depIds.filter((d) => !upstreams.has(d));
  if (missing.length) {
    return {
      status: 422,
      code: "VALIDATION_FAILED",
      detail: `dependencies: no task ${missing.join(", ")} in this project`,
      errors: missing.map((m) => ({ path: "dependencies", message: `no task ${m} in this project` })),
    };
  }

  const deps = cmd.dependencies.map((d) => {
    const up = upstreams.get(d.depends_on_task_id)!;
    const resolution = resolveDependency(d.dependency_type, d.contract_key ?? null, up);
    return {
      taskId: id,
      dependsOnTaskId: d.depends_on_task_id,
      projectId,
      dependencyType: d.dependency_type,
      contractKey: d.contract_key ?? null,
      resolved: resolution.resolved,
      resolvedAt: resolution.resolved ? now : null,
      createdAt: now,
    };
  });
  const t = cmd.task;
  const row = {
    id,
    projectId,
    title: t.title,
    spec: t.spec,
    type: t.type,
    priority: t.priority,
    status: "pending" as const,
    targetRepo: t.targetRepo,
    targetBranch: t.targetBranch,
    acceptanceCriteria: t.acceptanceCriteria,
    structuredSpec: t.structuredSpec,
    requirements: t.requirements,
    requirePlan: t.requirePlan,
    timeoutSeconds: t.timeoutSeconds,
    sourceSessionId: t.sourceSessionId,
    createdBy: ctx.actor.label,
    warnings: t.warnings,
    createdAt: now,
    updatedAt: now,
  };
  const events: EventDraft[] = [
    { type: "task_created", taskId: id, data: { title: t.title, status: "pending", priority: t.priority, blocked: isBlocked(deps) } },
    ...t.warnings.map((warning) => ({ type: "schema_warning", taskId: id, data: { warning } })),
  ];
  return {
    taskId: id,
    statements: [
      statement(ctx.d1, db.insert(tasks).values(row)),
      ...chunkRows(deps, 8).map((chunk) => statement(ctx.d1, db.insert(taskDependencies).values(chunk))),
      appendEvents(ctx.d1, projectId, ctx.actor.label, events, now, null),
    ],
  };
}

async function update(ctx: OpContext, cmd: Extract<RoomCommand, { op: "update" }>): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const next = transition(ctx, task, "update");
  if (typeof next !== "string") return next;
  const { warnings, ...changes } = cmd.changes;
  const fields = Object.keys(cmd.changes).filter((k) => k !== "warnings");
  // A new timeout on work already under way counts from when it started.
  const working = task.startedAt && (task.status === "running" || task.status === "needs_human");
  const deadline =
    changes.timeoutSeconds !== undefined && working
      ? changes.timeoutSeconds
        ? new Date(Date.parse(task.startedAt!) + changes.timeoutSeconds * 1000).toISOString()
        : null
      : undefined;
  const events: EventDraft[] = [
    { type: "task_updated", taskId: task.id, data: { fields } },
    ...(warnings ?? []).map((warning) => ({ type: "schema_warning", taskId: task.id, data: { warning } })),
  ];
  const plan = taskWrite(
    ctx,
    task,
    { ...changes, ...(warnings?.length ? { warnings: [...task.warnings, ...warnings] } : {}), ...(deadline !== undefined ? { deadlineAt: deadline } : {}) },
    events,
  );
  return deadline ? { ...plan, deadline } : plan;
}

async function assign(ctx: OpContext, cmd: Extract<RoomCommand, { op: "assign" }>): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const requirePlan = cmd.requirePlan || task.requirePlan;
  const status = transition(ctx, task, "assign", requirePlan);
  if (typeof status !== "string") return status;
  const { target } = cmd;
  return taskWrite(
    ctx,
    task,
    { status, assignedServerId: target.serverId, targetSessionId: target.sessionId, requirePlan },
    [
      statusEvent("task_assigned", task, status, {
        server_id: target.serverId,
        server_name: target.serverName,
        session_id: target.sessionId,
        session_name: target.sessionName,
        require_plan: requirePlan,
      }),
    ],
  );
}

/** start and approve-plan both put the task to work: refused while it is blocked, and its clock starts. */
async function beginWork(ctx: OpContext, taskId: string, action: "start" | "approve_plan"): Promise<OpOutcome> {
  const loaded = await ctx.reads.taskWithBlockers(taskId);
  if (!loaded) return notFound("Task");
  const { task, blockers } = loaded;
  const next = transition(ctx, task, action);
  if (typeof next !== "string") return next;
  if (blockers.length) return blockedProblem(blockers);
  const deadline = deadlineFrom(task, ctx.now);
  const plan = taskWrite(ctx, task, { status: next, startedAt: task.startedAt ?? ctx.now, deadlineAt: deadline }, [
    statusEvent(action === "start" ? "task_started" : "plan_approved", task, next),
  ]);
  return deadline ? { ...plan, deadline } : plan;
}

async function submitPlan(ctx: OpContext, cmd: Extract<RoomCommand, { op: "plan" }>): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const next = transition(ctx, task, "plan");
  if (typeof next !== "string") return next;
  return taskWrite(ctx, task, { status: next, plan: cmd.plan }, [statusEvent("plan_submitted", task, next)]);
}

async function revisePlan(ctx: OpContext, cmd: Extract<RoomCommand, { op: "revise_plan" }>): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const next = transition(ctx, task, "revise_plan");
  if (typeof next !== "string") return next;
  return taskWrite(ctx, task, { status: next, planFeedback: cmd.feedback }, [statusEvent("plan_revision_requested", task, next, { feedback: cmd.feedback })]);
}

/**
 * Auto-assignment for this operation: the waiting tasks (those it unblocks
 * included) go to the best servers. `freedServer` no longer counts the task
 * this operation finishes. One query, whatever the number of tasks.
 */
async function planAutoAssign(ctx: OpContext, unblocked: string[], freedServer: string | null): Promise<Assignment[]> {
  if (!ctx.offerWaiting) return [];
  const { waiting, candidates } = await ctx.reads.assignmentContext(ASSIGN_BATCH, unblocked);
  if (waiting.length === 0) return [];
  return planAssignments(
    waiting,
    candidates.map((c) => (c.id === freedServer ? { ...c, activeTasks: Math.max(0, c.activeTasks - 1) } : c)),
  );
}

const assignmentStatements = (ctx: OpContext, plan: Assignment[], guard: VersionGuard) =>
  plan.length ? [assignStatement(ctx, plan, guard), capacityCheck(ctx, plan, guard)] : [];

/**
 * Completion and its cascade, in one batch: the contract check, resolution of
 * downstream dependencies, unblocking, auto-assignment. A fixed number of
 * queries whatever the fan-out.
 */
async function complete(ctx: OpContext, cmd: Extract<RoomCommand, { op: "complete" }>): Promise<OpOutcome> {
  const loaded = await ctx.reads.taskWithDownstream(cmd.taskId);
  if (!loaded) return notFound("Task");
  const { task, links } = loaded;
  if (task.status === "done" && partyOf(ctx.actor, task).kind === "agent") {
    // Completing again is a no-op when the result is the same, a conflict when it is not.
    // DataRef pointers compare by content: each completion stores its large parts anew.
    if (canonicalJson(task.result, contentOfPointers) === canonicalJson(cmd.result, contentOfPointers)) return { taskId: task.id, statements: [], data: { noop: true } };
    return { status: 409, code: "RESULT_CONFLICT", detail: "The task is already done with a different result" };
  }
  const next = transition(ctx, task, "complete");
  if (typeof next !== "string") return next;

  const resolution = resolveDownstream(cmd.result, cmd.structured, links);
  const assignments = await planAutoAssign(ctx, resolution.unblocked, task.assignedServerId);
  const events: EventDraft[] = [
    statusEvent("task_completed", task, next, { summary: typeof cmd.result.summary === "string" ? cmd.result.summary : null, structured: cmd.structured }),
    ...cmd.warnings.map((warning) => ({ type: "schema_warning", taskId: task.id, data: { warning } })),
    ...checkContracts(cmd.result, cmd.structured, task.structuredSpec).map((f) => ({ type: f.type, taskId: task.id, data: f.data })),
    ...resolution.missingInputs.map((m) => ({
      type: "contract_missing",
      taskId: m.taskId,
      data: { contract_key: m.contractKey, upstream_task_id: task.id, detail: "the upstream result has no such contract; the input dependency resolved without data" },
    })),
    ...resolution.unblocked.map((id) => ({ type: "task_unblocked", taskId: id, data: { resolved_by: task.id } })),
    ...assignmentEvents(assignments),
  ];
  const plan = taskWrite(
    ctx,
    task,
    { status: next, result: cmd.result, resultStructured: cmd.structured, completedAt: ctx.now, deadlineAt: null, warnings: [...task.warnings, ...cmd.warnings] },
    events,
    (guard) => [
      ...cancelPendingInterventions(ctx, task, guard),
      statement(ctx.d1, sql`UPDATE task_dependencies SET resolved = 1, resolved_at = ${ctx.now} WHERE depends_on_task_id = ${task.id} AND resolved = 0 AND ${guardHolds(guard)}`),
      ...assignmentStatements(ctx, assignments, guard),
    ],
  );
  return { ...plan, effects: { ...plan.effects, resolved: task.id, unblocked: resolution.unblocked, assignments } };
}

/**
 * A task that ends without completing (failed, cancelled) leaves its
 * downstream tasks pending and blocked — no implicit retry — and tells each
 * of them; the capacity it held goes to waiting tasks.
 */
async function endWithoutCompleting(ctx: OpContext, task: TaskRow, links: DownstreamLink[], next: TaskStatus, event: EventDraft, set: Partial<TaskRow>): Promise<WritePlan> {
  const affected = [...new Set(links.filter((l) => l.dependencyType !== "related" && !FINISHED.includes(l.taskStatus)).map((l) => l.taskId))];
  // Only a task counted against its server's capacity frees some when it ends.
  const assignments = task.assignedServerId && ACTIVE.includes(task.status) ? await planAutoAssign(ctx, [], task.assignedServerId) : [];
  return taskWrite(
    ctx,
    task,
    { status: next, completedAt: ctx.now, deadlineAt: null, ...set },
    [
      event,
      ...affected.map((id) => ({ type: "dependency_failed", taskId: id, data: { upstream_task_id: task.id, upstream_status: next } })),
      ...assignmentEvents(assignments),
    ],
    (guard) => [...cancelPendingInterventions(ctx, task, guard), ...assignmentStatements(ctx, assignments, guard)],
  );
}

/** Fails a task: by its agent, or by the room when its timeout passes (code TIMEOUT). */
async function fail(ctx: OpContext, cmd: Extract<RoomCommand, { op: "fail" }>): Promise<OpOutcome> {
  const loaded = await ctx.reads.taskWithDownstream(cmd.taskId);
  if (!loaded) return notFound("Task");
  const { task, links } = loaded;
  const next = cmd.code === "TIMEOUT" && task.status === "running" ? "failed" : transition(ctx, task, "fail");
  if (typeof next !== "string") return next;
  const result = { error: cmd.error, ...(cmd.code ? { code: cmd.code } : {}) };
  return endWithoutCompleting(ctx, task, links, next, statusEvent("task_failed", task, next, result), { result, resultStructured: false, errorCode: cmd.code });
}

async function help(ctx: OpContext, cmd: Extract<RoomCommand, { op: "help" }>): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const next = transition(ctx, task, "help");
  if (typeof next !== "string") return next;
  const interventionId = crypto.randomUUID();
  const plan = taskWrite(
    ctx,
    task,
    { status: next },
    [statusEvent("intervention_requested", task, next, { intervention_id: interventionId, intervention_type: cmd.interventionType, question: cmd.question })],
    (guard) => [
      statement(ctx.d1, 
        sql`INSERT INTO interventions (id, task_id, project_id, intervention_type, question, context, status, asked_by, target_session_id, created_at)
            SELECT ${interventionId}, ${task.id}, ${ctx.projectId}, ${cmd.interventionType}, ${cmd.question},
                   ${cmd.context === undefined ? null : JSON.stringify(cmd.context)}, 'pending', ${ctx.actor.label}, ${cmd.targetSessionId}, ${ctx.now}
            WHERE ${guardHolds(guard)}`,
      ),
    ],
  );
  return { ...plan, data: { intervention_id: interventionId } };
}

async function respond(ctx: OpContext, cmd: Extract<RoomCommand, { op: "respond" }>): Promise<OpOutcome> {
  const intervention = await ctx.db.query.interventions.findFirst({
    where: and(eq(interventions.id, cmd.interventionId), eq(interventions.projectId, ctx.projectId)),
  });
  if (!intervention) return notFound("Intervention");
  if (ctx.actor.kind === "agent" && intervention.interventionType !== "question") {
    return { status: 403, code: "NOT_ALLOWED", detail: `Agents can answer only question interventions; this one is ${intervention.interventionType}` };
  }
  if (intervention.status !== "pending") {
    return { status: 409, code: "INTERVENTION_CLOSED", detail: `The intervention is already ${intervention.status}`, extensions: { current_status: intervention.status } };
  }
  const answer = (guard: VersionGuard) =>
    statement(
      ctx.d1,
      sql`UPDATE interventions SET status = 'responded', response = ${cmd.response}, responded_by = ${ctx.actor.label}, responded_at = ${ctx.now}
          WHERE id = ${intervention.id} AND status = 'pending' AND ${guardHolds(guard)}`,
    );
  // An agent waiting on request:ask-user gets the answer on its socket once this commits.
  const data = {
    intervention_id: intervention.id,
    ...(intervention.correlationId && intervention.serverId
      ? { deliver: { serverId: intervention.serverId, correlationId: intervention.correlationId, answer: cmd.response, answeredAt: ctx.now } }
      : {}),
  };
  if (!intervention.taskId) {
    const event = { type: "intervention_responded", taskId: null, data: { intervention_id: intervention.id, response: cmd.response } };
    return { taskId: "", statements: [answer(null), appendEvents(ctx.d1, ctx.projectId, ctx.actor.label, [event], ctx.now, null)], data };
  }
  const task = (await loadTask(ctx, intervention.taskId))!;
  const next = transition(ctx, task, "respond");
  if (typeof next !== "string") return next;
  const stillPending = await ctx.db
    .select({ id: interventions.id })
    .from(interventions)
    .where(and(eq(interventions.taskId, task.id), eq(interventions.status, "pending")));
  // The task resumes when its last open question is answered.
  const status: TaskStatus = stillPending.length > 1 ? task.status : next;
  return {
    ...taskWrite(ctx, task, { status }, [statusEvent("intervention_responded", task, status, { intervention_id: intervention.id, response: cmd.response })], (guard) => [answer(guard)]),
    data,
    // Back at work: its timeout clock (which kept running while it waited) must be watched again.
    ...(status === "running" && task.deadlineAt ? { deadline: task.deadlineAt } : {}),
  };
}

async function retry(ctx: OpContext, cmd: Extract<RoomCommand, { op: "retry" }>): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const next = transition(ctx, task, "retry");
  if (typeof next !== "string") return next;
  return taskWrite(
    ctx,
    task,
    { status: next, result: null, resultStructured: false, errorCode: null, assignedServerId: null, targetSessionId: null, startedAt: null, completedAt: null, deadlineAt: null },
    [statusEvent("task_retried", task, next, { previous_error: task.result?.error ?? null })],
  );
}

async function cancel(ctx: OpContext, cmd: Extract<RoomCommand, { op: "cancel" }>): Promise<OpOutcome> {
  const loaded = await ctx.reads.taskWithDownstream(cmd.taskId);
  if (!loaded) return notFound("Task");
  const { task, links } = loaded;
  const next = transition(ctx, task, "cancel");
  if (typeof next !== "string") return next;
  return endWithoutCompleting(ctx, task, links, next, statusEvent("task_cancelled", task, next, { reason: cmd.reason, assigned_server_id: task.assignedServerId }), {});
}

async function note(ctx: OpContext, cmd: Extract<RoomCommand, { op: "note" }>): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const noteId = crypto.randomUUID();
  return {
    taskId: task.id,
    data: { note_id: noteId },
    statements: [
      statement(ctx.d1, ctx.db.insert(taskNotes).values({ id: noteId, taskId: task.id, projectId: ctx.projectId, author: ctx.actor.label, content: cmd.content, urgent: cmd.urgent, createdAt: ctx.now })),
      appendEvents(ctx.d1, ctx.projectId, ctx.actor.label, [{ type: "note_added", taskId: task.id, data: { note_id: noteId, urgent: cmd.urgent, content: cmd.content } }], ctx.now, null),
    ],
  };
}

/** The seed's auto-assign: a pending task with requirements goes to the best-scoring server, if any qualifies. */
async function autoAssign(ctx: OpContext, cmd: Extract<RoomCommand, { op: "auto_assign" }>): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  if (task.status !== "pending") {
    return { status: 409, code: "INVALID_TRANSITION", detail: `Auto-assign needs a pending task; this one is ${task.status}`, extensions: { current_status: task.status } };
  }
  if (!task.requirements) return { status: 422, code: "NO_REQUIREMENTS", detail: "The task has no requirements to match servers against; assign it by hand" };
  if (!ctx.offerWaiting) return { status: 409, code: "CONCURRENT_CHANGE", detail: "Other projects kept filling the matching servers while this was planned; retry" };
  const { candidates } = await ctx.reads.assignmentContext(0);
  const [best] = rankServers(task.requirements as Requirements, candidates);
  if (!best || best.score < 0) return { taskId: task.id, statements: [], data: { status: "no_match" } };
  const assignment = { taskId: task.id, match: best, requirePlan: task.requirePlan };
  return {
    ...taskWrite(ctx, task, { status: task.requirePlan ? "planning" : "assigned", assignedServerId: best.server_id, targetSessionId: null }, assignmentEvents([assignment]), (guard) => [
      capacityCheck(ctx, [assignment], guard),
    ]),
    data: { status: "assigned", server_id: best.server_id, server_name: best.server_name, match_score: best.score },
  };
}

/** Auto-assigns waiting tasks, e.g. when a server comes online or gains capacity. */
async function sweep(ctx: OpContext): Promise<OpOutcome> {
  const assignments = await planAutoAssign(ctx, [], null);
  if (assignments.length === 0) return { taskId: "", statements: [], data: { assigned: 0 } };
  return {
    taskId: "",
    statements: [...assignmentStatements(ctx, assignments, null), appendEvents(ctx.d1, ctx.projectId, ctx.actor.label, assignmentEvents(assignments), ctx.now, null)],
    data: { assigned: assignments.length },
  };
}

async function addDependency(ctx: OpContext, cmd: Extract<RoomCommand, { op: "add_dependency" }>): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const upstream = await loadTask(ctx, cmd.dependency.depends_on_task_id);
  if (!upstream) {
    return { status: 422, code: "VALIDATION_FAILED", detail: "depends_on_task_id: no such task in this project", errors: [{ path: "depends_on_task_id", message: "no such task in this project" }] };
  }
  const edges = await ctx.db
    .select({ taskId: taskDependencies.taskId, dependsOnTaskId: taskDependencies.dependsOnTaskId })
    .from(taskDependencies)
    .where(eq(taskDependencies.projectId, ctx.projectId));
  const cycle = cycleThrough(edges, task.id, upstream.id);
  if (cycle) {
    return { status: 409, code: "DEPENDENCY_CYCLE", detail: `This dependency would close a cycle: ${cycle.join(" → ")}`, extensions: { cycle } };
  }
  const { dependency_type: type, contract_key } = cmd.dependency;
  const resolution = resolveDependency(type, contract_key ?? null, upstream);
  const row = {
    taskId: task.id,
    dependsOnTaskId: upstream.id,
    projectId: ctx.projectId,
    dependencyType: type,
    contractKey: contract_key ?? null,
    resolved: resolution.resolved,
    resolvedAt: resolution.resolved ? ctx.now : null,
    createdAt: ctx.now,
  };
  const { projectId: _p, taskId: _t, dependsOnTaskId: _d, createdAt: _c, ...changes } = row;
  return {
    taskId: task.id,
    statements: [
      statement(ctx.d1, ctx.db.insert(taskDependencies).values(row).onConflictDoUpdate({ target: [taskDependencies.taskId, taskDependencies.dependsOnTaskId], set: changes })),
      appendEvents(
        ctx.d1,
        ctx.projectId,
        ctx.actor.label,
        [{ type: "dependency_added", taskId: task.id, data: { depends_on_task_id: upstream.id, dependency_type: type, contract_key: contract_key ?? null, resolved: resolution.resolved } }],
        ctx.now,
        null,
      ),
    ],
  };
}

async function removeDependency(ctx: OpContext, cmd: Extract<RoomCommand, { op: "remove_dependency" }>): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const deps = await ctx.db.select().from(taskDependencies).where(eq(taskDependencies.taskId, task.id));
  const removed = deps.find((d) => d.dependsOnTaskId === cmd.dependsOnTaskId);
  if (!removed) return notFound("Dependency");
  const rest = deps.filter((d) => d !== removed);
  const unblocks = isBlocked(deps) && !isBlocked(rest) && !FINISHED.includes(task.status);
  const assignments = unblocks ? await planAutoAssign(ctx, [task.id], null) : [];
  return {
    taskId: task.id,
    statements: [
      statement(ctx.d1, ctx.db.delete(taskDependencies).where(and(eq(taskDependencies.taskId, task.id), eq(taskDependencies.dependsOnTaskId, removed.dependsOnTaskId)))),
      ...assignmentStatements(ctx, assignments, null),
      appendEvents(
        ctx.d1,
        ctx.projectId,
        ctx.actor.label,
        [
          { type: "dependency_removed", taskId: task.id, data: { depends_on_task_id: removed.dependsOnTaskId, dependency_type: removed.dependencyType } },
          ...(unblocks ? [{ type: "task_unblocked", taskId: task.id, data: { resolved_by: null } }] : []),
          ...assignmentEvents(assignments),
        ],
        ctx.now,
        null,
      ),
    ],
  };
}

/** event:progress from the task's agent: stored on the task and published. */
async function progress(ctx: OpContext, cmd: Extract<RoomCommand, { op: "progress" }>): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  if (ctx.actor.kind !== "agent" || task.assignedServerId !== ctx.actor.serverId) {
    return { status: 403, code: "NOT_ALLOWED", detail: "Only the agent the task is assigned to reports its progress" };
  }
  return taskWrite(ctx, task, { progress: cmd.progress, progressMessage: cmd.message }, [
    { type: "task_progress", taskId: task.id, data: { progress: cmd.progress, message: cmd.message } },
  ]);
}

/** A question from an agent, about a task or not; with `waiting`, the agent expects the answer on its socket. */
async function ask(ctx: OpContext, cmd: Extract<RoomCommand, { op: "ask" }>): Promise<OpOutcome> {
  if (cmd.taskId && !(await loadTask(ctx, cmd.taskId))) return notFound("Task");
  const id = crypto.randomUUID();
  return {
    taskId: cmd.taskId ?? "",
    data: { intervention_id: id },
    ...(cmd.waiting ? { deadline: cmd.waiting.expiresAt } : {}),
    statements: [
      statement(
        ctx.d1,
        ctx.db.insert(interventions).values({
          id,
          taskId: cmd.taskId,
          projectId: ctx.projectId,
          interventionType: "question",
          question: cmd.question,
          context: cmd.context ?? null,
          options: cmd.options ?? null,
          status: "pending",
          askedBy: ctx.actor.label,
          serverId: cmd.waiting?.serverId ?? null,
          correlationId: cmd.waiting?.correlationId ?? null,
          expiresAt: cmd.waiting?.expiresAt ?? null,
          createdAt: ctx.now,
        }),
      ),
      appendEvents(
        ctx.d1,
        ctx.projectId,
        ctx.actor.label,
        [{ type: "intervention_requested", taskId: cmd.taskId, data: { intervention_id: id, intervention_type: "question", question: cmd.question, blocking: false } }],
        ctx.now,
        null,
      ),
    ],
  };
}

/** What an agent logged (event:log, event:error, non-JSON output); errors about a task also go in the event log. */
async function agentLog(ctx: OpContext, cmd: Extract<RoomCommand, { op: "agent_log" }>): Promise<OpOutcome> {
  if (ctx.actor.kind !== "agent") return { status: 403, code: "NOT_ALLOWED", detail: "Only agents log here" };
  if (cmd.taskId && !(await loadTask(ctx, cmd.taskId))) return notFound("Task");
  const statements = [
    statement(
      ctx.d1,
      ctx.db.insert(agentLogs).values({
        id: crypto.randomUUID(),
        projectId: ctx.projectId,
        serverId: ctx.actor.serverId,
        taskId: cmd.taskId,
        level: cmd.level,
        message: cmd.message,
        context: cmd.context ?? null,
        createdAt: ctx.now,
      }),
    ),
  ];
  if (cmd.level === "error" && cmd.taskId) {
    statements.push(appendEvents(ctx.d1, ctx.projectId, ctx.actor.label, [{ type: "agent_error", taskId: cmd.taskId, data: { error: cmd.message, context: cmd.context ?? null } }], ctx.now, null));
  }
  return { taskId: cmd.taskId ?? "", statements };
}

/** Questions whose asker stopped waiting: timed out, and the agents told. */
async function expireQuestions(ctx: OpContext): Promise<OpOutcome> {
  const expired = await ctx.db
    .select({ id: interventions.id, serverId: interventions.serverId, correlationId: interventions.correlationId, taskId: interventions.taskId })
    .from(interventions)
    .where(and(eq(interventions.projectId, ctx.projectId), eq(interventions.status, "pending"), isNotNull(interventions.expiresAt), lte(interventions.expiresAt, ctx.now)));
  if (expired.length === 0) return { taskId: "", statements: [], data: { expired: [] } };
  return {
    taskId: "",
    data: { expired },
    statements: [
      statement(ctx.d1, sql`UPDATE interventions SET status = 'timed_out' WHERE ${inJsonList(interventions.id, expired.map((e) => e.id))} AND status = 'pending'`),
      appendEvents(ctx.d1, ctx.projectId, ctx.actor.label, expired.map((e) => ({ type: "intervention_timed_out", taskId: e.taskId, data: { intervention_id: e.id } })), ctx.now, null),
    ],
  };
}

const presence = (ctx: OpContext, cmd: Extract<RoomCommand, { op: "presence" }>): OpOutcome => ({
  taskId: "",
  statements: [
    appendEvents(ctx.d1, ctx.projectId, ctx.actor.label, [{ type: cmd.online ? "server_online" : "server_offline", taskId: null, data: { server_id: cmd.serverId, server_name: cmd.serverName } }], ctx.now, null),
  ],
});

export function planOperation(ctx: OpContext, cmd: RoomCommand): Promise<OpOutcome> {
  switch (cmd.op) {
    case "create":
      return create(ctx, cmd);
    case "update":
      return update(ctx, cmd);
    case "assign":
      return assign(ctx, cmd);
    case "start":
      return beginWork(ctx, cmd.taskId, "start");
    case "approve_plan":
      return beginWork(ctx, cmd.taskId, "approve_plan");
    case "plan":
      return submitPlan(ctx, cmd);
    case "revise_plan":
      return revisePlan(ctx, cmd);
    case "complete":
      return complete(ctx, cmd);
    case "fail":
      return fail(ctx, cmd);
    case "help":
      return help(ctx, cmd);
    case "respond":
      return respond(ctx, cmd);
    case "retry":
      return retry(ctx, cmd);
    case "cancel":
      return cancel(ctx, cmd);
    case "note":
      return note(ctx, cmd);
    case "auto_assign":
      return autoAssign(ctx, cmd);
    case "sweep":
      return sweep(ctx);
    case "add_dependency":
      return addDependency(ctx, cmd);
    case "remove_dependency":
      return removeDependency(ctx, cmd);
    case "progress":
      return progress(ctx, cmd);
    case "ask":
      return ask(ctx, cmd);
    case "agent_log":
      return agentLog(ctx, cmd);
    case "expire_questions":
      return expireQuestions(ctx);
    case "presence":
      return Promise.resolve(presence(ctx, cmd));
  }
}
