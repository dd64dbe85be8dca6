/** The task lifecycle: creating and editing tasks, putting them to work, plans, retries, and asking and answering people. */
import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import { interventions, taskDependencies, tasks } from "../../db/schema";
import { isBlocked, resolveDependency } from "../../domain/dependencies";
import type { TaskStatus } from "../../domain/lifecycle";
import { qualified } from "../../db/sql";
import { logHead } from "../../db/task-events";
import { chunkRows, guardHolds, statement, type EventDraft, type TaskRow, type VersionGuard } from "../statements";
import {
  loadTask,
  recordEvents,
  statusEvent,
  taskWrite,
  transition,
  type AgentNotice,
  type Cmd,
  type OpContext,
  type OpOutcome,
  type WritePlan,
} from "./kernel";
import { beginTrace, parseTraceparent } from "../../protocol/trace-context";
import { awaitingApproval, blocked, clientIdTaken, interventionClosed, invalidField, notFound, taskImmutable, unknownDependencies } from "./refusals";
import { immutableFieldsChanged } from "../../protocol/compute-protocol";
import { agentMayAnswer, answerRecorded } from "./agent-questions";
import { budgetRefusal } from "./budget-holds";
import { reviewTaskRefusal } from "./review-task-guard";
import { newTaskRow } from "./task-rows";

const deadlineFrom = (task: TaskRow, now: string) => (task.timeoutSeconds ? new Date(Date.parse(now) + task.timeoutSeconds * 1000).toISOString() : null);

export async function create(ctx: OpContext, cmd: Cmd<"create">): Promise<OpOutcome> {
  const { db, projectId, now } = ctx;
  const origin = cmd.task.origin ?? {};
  if (origin.clientId) {
    // A task-format request names its task: the same request again finds it, another one under that id is refused.
    const existing = await db.query.tasks.findFirst({
      where: and(eq(tasks.projectId, projectId), eq(tasks.clientId, origin.clientId)),
      columns: { id: true, clientRequestHash: true },
    });
    if (existing)
      return existing.clientRequestHash === origin.clientRequestHash
        ? { taskId: existing.id, statements: [], unchanged: true }
        : clientIdTaken(origin.clientId);
  }
  const id = crypto.randomUUID();
  const depIds = [...new Set(cmd.dependencies.map((d) => d.depends_on_task_id))];
  if (depIds.length !== cmd.dependencies.length) {
    return invalidField("dependencies", "must not list a task twice", "dependencies: a task is listed twice");
  }
  const upstreams = new Map<string, TaskRow>();
  for (const ids of chunkRows(depIds, 1)) {
    const rows = await db
      .select()
      .from(tasks)
      // The unary + keeps SQLite from reading the project's index (every task of the project) instead of each id's row.
      .where(and(inArray(tasks.id, ids), sql`+${qualified(tasks.projectId)} = ${projectId}`));
    for (const row of rows) upstreams.set(row.id, row);
  }
  const missing = depIds.filter((d) => !upstreams.has(d));
  if (missing.length) {
    return unknownDependencies(missing);
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
  // Given to an agent as it is created: not in a scope a budget holds (the project, or a graph it joins by its dependencies).
  const held = origin.assignTo ? await budgetRefusal(ctx, depIds, "assigned") : undefined;
  if (held) return held;
  const blocked = isBlocked(deps);
  // Only the tasks agents create wait for a person's approval (a person's create never reads the settings).
  const awaiting = ctx.actor.kind === "agent" && (await ctx.settings()).approve_agent_tasks;
  const target = origin.assignTo;
  const status: TaskStatus = target ? (t.requirePlan ? "planning" : "assigned") : "pending";
  const trace = parseTraceparent(origin.traceparent) ?? beginTrace();
  const row = newTaskRow(ctx, id, t, { status, blocked, awaiting, trace, origin });
  const events: EventDraft[] = [
    {
      type: "task_created",
      taskId: id,
      traceparent: trace.traceparent,
      data: {
        title: t.title,
        status,
        priority: t.priority,
        blocked,
        ...(origin.clientId ? { client_id: origin.clientId } : {}),
        ...(awaiting ? { awaiting_approval: true } : {}),
      },
    },
    ...(awaiting ? [{ type: "task_awaiting_approval" as const, taskId: id, data: { title: t.title, created_by: ctx.actor.label } }] : []),
    ...t.warnings.map((warning) => ({ type: "schema_warning" as const, taskId: id, data: { warning } })),
    ...(target
      ? [
          {
            type: "task_assigned" as const,
            taskId: id,
            data: {
              status,
              previous_status: "pending",
              server_id: target.serverId,
              server_name: target.serverName,
              session_id: target.sessionId,
              session_name: target.sessionName,
              require_plan: t.requirePlan,
              title: t.title,
              priority: t.priority,
              from_session_name: null,
              ...(awaiting ? { pending_approval: true } : {}),
            },
          },
        ]
      : []),
  ];
  return {
    taskId: id,
    statements: [
      statement(ctx.d1, db.insert(tasks).values({ ...row, logFrom: logHead(ctx.projectId) })),
      ...chunkRows(deps, 8).map((chunk) => statement(ctx.d1, db.insert(taskDependencies).values(chunk))),
    ],
    events: recordEvents(ctx, events),
  };
}

export async function update(ctx: OpContext, cmd: Cmd<"update">): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const next = transition(ctx, task, "update");
  if (typeof next !== "string") return next;
  const review = reviewTaskRefusal(ctx, task, "update");
  if (review) return review;
  const { warnings, ...changes } = cmd.changes;
  const locked = immutableFieldsChanged(
    task.status,
    { spec: task.spec, structured_spec: task.structuredSpec, requirements: task.requirements, type: task.type, payload: task.payload },
    { spec: changes.spec, structured_spec: changes.structuredSpec, requirements: changes.requirements, type: changes.type, payload: changes.payload },
  );
  if (locked.length) return taskImmutable(task.status, locked);
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
    ...(warnings ?? []).map((warning) => ({ type: "schema_warning" as const, taskId: task.id, data: { warning } })),
  ];
  const plan = taskWrite(
    ctx,
    task,
    { ...changes, ...(warnings?.length ? { warnings: [...task.warnings, ...warnings] } : {}), ...(deadline !== undefined ? { deadlineAt: deadline } : {}) },
    events,
  );
  return deadline ? { ...plan, deadline } : plan;
}

/** start and approve-plan both put the task to work: refused while it is blocked, and its clock starts. */
export async function beginWork(ctx: OpContext, taskId: string, action: "start" | "approve_plan"): Promise<OpOutcome> {
  const loaded = await ctx.reads.taskWithBlockers(taskId);
  if (!loaded) return notFound("Task");
  const { task, blockers } = loaded;
  const next = transition(ctx, task, action);
  if (typeof next !== "string") return next;
  if (task.awaitingApproval) return awaitingApproval("started");
  if (blockers.length) return blocked(blockers);
  const held = await budgetRefusal(ctx, [task.id], action === "start" ? "started" : "started by approving its plan");
  if (held) return held;
  const deadline = deadlineFrom(task, ctx.now);
  const plan = taskWrite(ctx, task, { status: next, startedAt: task.startedAt ?? ctx.now, deadlineAt: deadline }, [
    statusEvent(action === "start" ? "task_started" : "plan_approved", task, next),
  ]);
  return deadline ? { ...plan, deadline } : plan;
}

export async function submitPlan(ctx: OpContext, cmd: Cmd<"plan">): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const next = transition(ctx, task, "plan");
  if (typeof next !== "string") return next;
  if (task.awaitingApproval) return awaitingApproval("planned");
  return taskWrite(ctx, task, { status: next, plan: cmd.plan }, [statusEvent("plan_submitted", task, next)]);
}

export async function revisePlan(ctx: OpContext, cmd: Cmd<"revise_plan">): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const next = transition(ctx, task, "revise_plan");
  if (typeof next !== "string") return next;
  return taskWrite(ctx, task, { status: next, planFeedback: cmd.feedback }, [statusEvent("plan_revision_requested", task, next, { feedback: cmd.feedback })]);
}

/** A person's retry: pending again, editable again; the servers that rejected it stay excluded (rejected_by is kept). */
export async function retry(ctx: OpContext, cmd: Cmd<"retry">): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const next = transition(ctx, task, "retry");
  if (typeof next !== "string") return next;
  return taskWrite(
    ctx,
    task,
    {
      status: next,
      result: null,
      resultStructured: false,
      gitDiffStats: null,
      errorCode: null,
      error: null,
      response: null,
      retryCount: task.retryCount + 1,
      assignedServerId: null,
      targetSessionId: null,
      assignedAt: null,
      startedAt: null,
      completedAt: null,
      deadlineAt: null,
    },
    [statusEvent("task_retried", task, next, { previous_error: task.result?.error ?? task.error?.message ?? null })],
  );
}

export async function help(ctx: OpContext, cmd: Cmd<"help">): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  return task ? helpWith(ctx, task, cmd) : notFound("Task");
}

/** Asks a person about the task as the operation read it (in a group, as the operations before it left it). */
export function helpWith(ctx: OpContext, task: TaskRow, cmd: Omit<Cmd<"help">, "op" | "taskId">): OpOutcome {
  const next = transition(ctx, task, "help");
  if (typeof next !== "string") return next;
  return askPerson(ctx, task, cmd);
}

/**
 * Moves the task to needs_human with an open question (the way a person answers it, in the inbox or Telegram, sends
 * it back to work), with `also` written in the same guarded batch. The lifecycle is the caller's to have checked.
 */
export function askPerson(
  ctx: OpContext,
  task: TaskRow,
  cmd: Omit<Cmd<"help">, "op" | "taskId">,
  also: { set?: Partial<TaskRow>; events?: EventDraft[] } = {},
): WritePlan {
  const next: TaskStatus = "needs_human";
  const interventionId = crypto.randomUUID();
  const plan = taskWrite(
    ctx,
    task,
    { ...also.set, status: next },
    [
      ...(also.events ?? []),
      statusEvent("intervention_requested", task, next, { intervention_id: interventionId, intervention_type: cmd.interventionType, question: cmd.question }),
    ],
    (guard) => [
      statement(
        ctx.d1,
        sql`INSERT INTO interventions (id, task_id, project_id, intervention_type, question, context, status, asked_by, created_at)
            SELECT ${interventionId}, ${task.id}, ${ctx.projectId}, ${cmd.interventionType}, ${cmd.question},
                   ${cmd.context === undefined ? null : JSON.stringify(cmd.context)}, 'pending', ${ctx.actor.label}, ${ctx.now}
            WHERE ${guardHolds(guard)}`,
      ),
    ],
  );
  return { ...plan, data: { intervention_id: interventionId }, effects: { ...plan.effects, asked: task.id } };
}

export async function respond(ctx: OpContext, cmd: Cmd<"respond">): Promise<OpOutcome> {
  const intervention = await ctx.db.query.interventions.findFirst({
    where: and(eq(interventions.id, cmd.interventionId), eq(interventions.projectId, ctx.projectId)),
  });
  if (!intervention) return notFound("Intervention");
  if (ctx.actor.kind === "agent") {
    const refusal = await agentMayAnswer(ctx, ctx.actor.serverId, intervention);
    if (refusal) return refusal;
  }
  if (intervention.status !== "pending") {
    return interventionClosed(intervention.status);
  }
  const answer = (guard: VersionGuard) =>
    statement(
      ctx.d1,
      sql`UPDATE interventions SET status = 'responded', response = ${cmd.response}, responded_by = ${ctx.actor.label}, responded_at = ${ctx.now}
          WHERE id = ${intervention.id} AND status = 'pending' AND ${guardHolds(guard)}`,
    );
  const data = { intervention_id: intervention.id };
  // An agent waiting on request:ask-user gets the answer on its socket once this commits.
  const notices: AgentNotice[] =
    intervention.correlationId && intervention.serverId
      ? [{ kind: "answer", serverId: intervention.serverId, correlationId: intervention.correlationId, answer: cmd.response, answeredAt: ctx.now }]
      : [];
  const answered = { intervention_id: intervention.id, response: cmd.response };
  // A question outside any task, or one agent's question to another (which never held its task), changes no task.
  if (!intervention.taskId || intervention.targetSessionId) {
    const event = { type: "intervention_responded" as const, taskId: intervention.taskId, data: answered };
    const note = await answerRecorded(ctx, intervention, cmd.response);
    return {
      taskId: intervention.taskId ?? "",
      statements: [answer(null), ...(note ? [note.statement] : [])],
      events: recordEvents(ctx, [event, ...(note ? [note.event] : [])]),
      data,
      notices,
    };
  }
  const task = (await loadTask(ctx, intervention.taskId))!;
  const next = transition(ctx, task, "respond");
  if (typeof next !== "string") return next;
  const stillHolding = await ctx.db
    .select({ id: interventions.id })
    .from(interventions)
    .where(and(eq(interventions.taskId, task.id), eq(interventions.status, "pending"), isNull(interventions.targetSessionId)));
  // The task resumes when the last open question holding it is answered.
  const status: TaskStatus = stillHolding.length > 1 ? task.status : next;
  return {
    ...taskWrite(ctx, task, { status }, [statusEvent("intervention_responded", task, status, answered)], (guard) => [answer(guard)]),
    data,
    notices,
    // Back at work: its timeout clock (which kept running while it waited) must be watched again.
    ...(status === "running" && task.deadlineAt ? { deadline: task.deadlineAt } : {}),
  };
}
