/**
 * One agent's question to another (the daemon's `ask_agent`): the task's agent
 * asks the agent of another session of the project, which answers it through
 * the interventions API. The asking task keeps working meanwhile, so the
 * question never holds it; the answer goes back to the asking session.
 */
import { eq, inArray } from "drizzle-orm";
import { interventions, OPEN_SESSION_STATUSES, sessions } from "../../db/schema";
import type { InterventionRow } from "../../views/tasks";
import type { ProblemData, RoomActor } from "../commands";
import { statement } from "../statements";
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
    ]),
  };
};

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
