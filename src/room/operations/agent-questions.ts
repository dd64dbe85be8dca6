/**
 * One agent's question to another (the daemon's `ask_agent`): the task's agent
 * asks the agent of another session of the project, which answers it through
 * the interventions API. The asking task keeps working meanwhile, so the
 * question never holds it; the answer goes back to the asking session.
 *
 * An agent that works through the daemon's MCP tools reads `notes://inbox`,
 * its current task's notes: so the question is also a note of the asked
 * session's current task, and the answer a note of the asking task.
 */
import { and, desc, eq, inArray, notInArray } from "drizzle-orm";
import { interventions, OPEN_SESSION_STATUSES, sessions, taskNotes, tasks } from "../../db/schema";
import { answerNote, questionNote } from "../../domain/agent-asks";
import { FINISHED } from "../../domain/lifecycle";
import type { InterventionRow } from "../../views/tasks";
import type { ProblemData, RoomActor } from "../commands";
import { statement, type EventDraft } from "../statements";
import { loadTask, recordEvents, transition, type OpContext, type Planner } from "./kernel";
import { invalidField, notAllowed, notFound } from "./refusals";

export const askAgent: Planner<"ask_agent"> = async (ctx, cmd) => {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  // Asked where help may be asked: by the task's agent, while it works or waits on people. Its status stays.
  const allowed = transition(ctx, task, "help");
  if (typeof allowed !== "string") return allowed;
  const ids = task.targetSessionId ? [cmd.targetSessionId, task.targetSessionId] : [cmd.targetSessionId];
  const rows = await ctx.db
    .select({ id: sessions.id, name: sessions.name, projectId: sessions.projectId, status: sessions.status, serverId: sessions.serverId })
    .from(sessions)
    .where(inArray(sessions.id, ids));
  const target = rows.find((r) => r.id === cmd.targetSessionId);
  if (!target || target.projectId !== ctx.projectId || !(OPEN_SESSION_STATUSES as readonly string[]).includes(target.status)) {
    return invalidField("target_session_id", "names no open session in the task's project");
  }
  if (target.id === task.targetSessionId) return invalidField("target_session_id", "is the asking task's own session: name another one");
  // Who asks, as the daemon shows it in the target's inbox ("[ask from <source>]"): the asking session, else its server.
  const source = rows.find((r) => r.id === task.targetSessionId)?.name ?? (ctx.actor as Extract<RoomActor, { kind: "agent" }>).serverName;
  const interventionId = crypto.randomUUID();
  // The asked session's current task: the one given to it last (the daemon binds its MCP server to each it is given).
  const current = await ctx.db
    .select({ id: tasks.id })
    .from(tasks)
    .where(and(eq(tasks.projectId, ctx.projectId), eq(tasks.targetSessionId, target.id), notInArray(tasks.status, [...FINISHED])))
    .orderBy(desc(tasks.assignedAt))
    .limit(1)
    .get();
  const note = current ? askNote(ctx, current.id, "ask", interventionId, questionNote(source, cmd.question, interventionId)) : null;
  return {
    taskId: task.id,
    data: { intervention_id: interventionId },
    effects: { asked: task.id },
    statements: [
      statement(
        ctx.d1,
        ctx.db.insert(interventions).values({
          id: interventionId,
          taskId: task.id,
          projectId: ctx.projectId,
          interventionType: "question",
          question: cmd.question,
          context: cmd.context ?? null,
          status: "pending",
          askedBy: ctx.actor.label,
          targetSessionId: target.id,
          createdAt: ctx.now,
        }),
      ),
      ...(note ? [note.statement] : []),
    ],
    events: recordEvents(ctx, [
      {
        type: "intervention_requested",
        taskId: task.id,
        data: {
          intervention_id: interventionId,
          intervention_type: "question",
          question: cmd.question,
          target_session_id: target.id,
          target_session_name: target.name,
          target_server_id: target.serverId,
          source,
        },
      },
      ...(note ? [note.event] : []),
    ]),
  };
};

/** A note recording an ask or its answer on a task, and its event (`via` tells the pushes the daemon hears of it otherwise). */
function askNote(ctx: OpContext, taskId: string, via: "ask" | "answer", interventionId: string, content: string) {
  const row = { id: crypto.randomUUID(), taskId, projectId: ctx.projectId, author: ctx.actor.label, content, urgent: false, createdAt: ctx.now };
  const event: EventDraft = {
    type: "note_added",
    taskId,
    data: { note_id: row.id, urgent: false, content, via, intervention_id: interventionId },
  };
  return { statement: statement(ctx.d1, ctx.db.insert(taskNotes).values(row)), event };
}

/** The answer to one agent's question, as a note of the asking task, by the asked session (or the person who answered). */
export async function answerRecorded(ctx: OpContext, intervention: InterventionRow, response: string) {
  if (!intervention.taskId || !intervention.targetSessionId) return null;
  const asked =
    ctx.actor.kind === "agent"
      ? await ctx.db.query.sessions.findFirst({ where: eq(sessions.id, intervention.targetSessionId), columns: { name: true } })
      : undefined;
  const by = asked?.name ?? (ctx.actor.kind === "agent" ? ctx.actor.serverName : ctx.actor.label);
  return askNote(ctx, intervention.taskId, "answer", intervention.id, answerNote(by, intervention.id, response));
}

/**
 * Why an agent may not answer this intervention, if it may not: agents answer
 * only questions, and a question asked of a session only that session's agent.
 */
export async function agentMayAnswer(ctx: OpContext, serverId: string, intervention: InterventionRow): Promise<ProblemData | undefined> {
  if (intervention.interventionType !== "question") {
    return notAllowed(`Agents can answer only question interventions; this one is ${intervention.interventionType}`);
  }
  if (!intervention.targetSessionId) return undefined;
  const asked = await ctx.db.query.sessions.findFirst({ where: eq(sessions.id, intervention.targetSessionId), columns: { serverId: true } });
  return asked?.serverId === serverId ? undefined : notAllowed("This question was asked of another session: only its agent, or a person, answers it");
}
