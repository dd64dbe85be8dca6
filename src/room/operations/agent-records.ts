/** What agents leave on the record: notes, progress, questions and their expiry, logs, and presence. */
import { and, eq, isNotNull, lte, sql } from "drizzle-orm";
import { agentLogs, interventions, taskNotes } from "../../db/schema";
import { inJsonList } from "../../db/sql";
import { statement } from "../statements";
import { answerOnly, loadTask, recordEvents, taskWrite, type Cmd, type OpContext, type OpOutcome } from "./kernel";
import { notAllowed, notFound } from "./refusals";

export async function note(ctx: OpContext, cmd: Cmd<"note">): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const noteId = crypto.randomUUID();
  const row = { id: noteId, taskId: task.id, projectId: ctx.projectId, author: ctx.actor.label, content: cmd.content, urgent: cmd.urgent, createdAt: ctx.now };
  return {
    taskId: task.id,
    // The note as written, so that the caller answers it without reading it back.
    data: { note_id: noteId, note: row },
    statements: [statement(ctx.d1, ctx.db.insert(taskNotes).values(row))],
    events: recordEvents(ctx, [
      {
        type: "note_added",
        taskId: task.id,
        data: { note_id: noteId, urgent: cmd.urgent, content: cmd.content, ...(cmd.notifyDependents ? { notify_dependents: true } : {}) },
      },
    ]),
  };
}

/** event:progress from the task's agent: stored on the task and published. */
export async function progress(ctx: OpContext, cmd: Cmd<"progress">): Promise<OpOutcome> {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  if (ctx.actor.kind !== "agent" || task.assignedServerId !== ctx.actor.serverId) {
    return notAllowed("Only the agent the task is assigned to reports its progress");
  }
  return taskWrite(ctx, task, { progress: cmd.progress, progressMessage: cmd.message }, [
    { type: "task_progress", taskId: task.id, data: { progress: cmd.progress, message: cmd.message } },
  ]);
}

/** A question from an agent, about a task or not; with `waiting`, the agent expects the answer on its socket. */
export async function ask(ctx: OpContext, cmd: Cmd<"ask">): Promise<OpOutcome> {
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
    ],
    events: recordEvents(ctx, [
      {
        type: "intervention_requested",
        taskId: cmd.taskId,
        data: { intervention_id: id, intervention_type: "question", question: cmd.question, blocking: false },
      },
    ]),
  };
}

/** What an agent logged (event:log, event:error, non-JSON output); errors about a task also go in the event log. */
export async function agentLog(ctx: OpContext, cmd: Cmd<"agent_log">): Promise<OpOutcome> {
  if (ctx.actor.kind !== "agent") return notAllowed("Only agents log here");
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
  const events =
    cmd.level === "error" && cmd.taskId
      ? [{ type: "agent_error" as const, taskId: cmd.taskId, data: { error: cmd.message, context: cmd.context ?? null } }]
      : [];
  return { taskId: cmd.taskId ?? "", statements, events: recordEvents(ctx, events) };
}

/** Questions whose asker stopped waiting (request:ask-user): timed out, and the agents told. */
export async function expireQuestions(ctx: OpContext): Promise<OpOutcome> {
  const expired = await ctx.db
    .select({ id: interventions.id, serverId: interventions.serverId, correlationId: interventions.correlationId, taskId: interventions.taskId })
    .from(interventions)
    .where(
      and(
        eq(interventions.projectId, ctx.projectId),
        eq(interventions.status, "pending"),
        isNotNull(interventions.expiresAt),
        lte(interventions.expiresAt, ctx.now),
      ),
    );
  if (expired.length === 0) return answerOnly("", { expired: 0 });
  return {
    taskId: "",
    data: { expired: expired.length },
    notices: expired.flatMap(({ serverId, correlationId }) =>
      serverId && correlationId ? [{ kind: "timeout" as const, serverId, correlationId, message: "Nobody answered in time" }] : [],
    ),
    statements: [
      statement(
        ctx.d1,
        sql`UPDATE interventions SET status = 'timed_out' WHERE ${inJsonList(
          interventions.id,
          expired.map((e) => e.id),
        )} AND status = 'pending'`,
      ),
    ],
    events: recordEvents(
      ctx,
      expired.map((e) => ({ type: "intervention_timed_out" as const, taskId: e.taskId, data: { intervention_id: e.id } })),
    ),
  };
}

export const presence = async (ctx: OpContext, cmd: Cmd<"presence">): Promise<OpOutcome> => ({
  taskId: "",
  statements: [],
  events: recordEvents(ctx, [
    { type: cmd.online ? "server_online" : "server_offline", taskId: null, data: { server_id: cmd.serverId, server_name: cmd.serverName } },
  ]),
});

export const serverRemoved = async (ctx: OpContext, cmd: Cmd<"server_removed">): Promise<OpOutcome> => ({
  taskId: "",
  statements: [],
  events: recordEvents(ctx, [{ type: "server_removed", taskId: null, data: { server_id: cmd.serverId, server_name: cmd.serverName } }]),
});
