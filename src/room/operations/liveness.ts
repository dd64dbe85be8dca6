/**
 * The liveness rules' flags, each decided again here from fresh reads, in the
 * batch that writes it: a task's stall (`stalled_at`) and a waiting task no
 * server can take (`unassignable_at`). A second wake-up finds the flag written
 * and raises nothing; the task's version guard keeps a concurrent change out.
 */
import { serverCandidates } from "../../db/server-candidates";
import { latestOf, stallDecision, stallReason, unassignableDecision } from "../../domain/liveness";
import { rankServers } from "../../domain/matching";
import type { Requirements } from "../../protocol/orchestratia-v1";
import { runningTasks, stallFacts, waitingTasks } from "../liveness-reads";
import { answerOnly, loadTask, taskWrite, type Planner } from "./kernel";
import { askPerson } from "./lifecycle";
import { notFound } from "./refusals";

export const flagStalled: Planner<"flag_stalled"> = async (ctx, cmd) => {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const { stall_minutes: minutes, stall_action: action } = await ctx.settings();
  const [facts] = minutes === null || task.status !== "running" ? [] : await runningTasks(ctx.d1, ctx.projectId, task.id);
  if (!facts || minutes === null) return answerOnly(task.id, { raised: false });
  const decision = stallDecision(stallFacts(facts, task.startedAt, task.stalledAt), minutes, Date.parse(cmd.at));
  if (!decision.raise) return answerOnly(task.id, { raised: false });
  const reason = stallReason(decision.silentMinutes, minutes, facts.session_id !== null);
  const event = {
    type: "task_stalled" as const,
    taskId: task.id,
    data: {
      reason,
      action,
      stall_minutes: minutes,
      last_sign_of_life: new Date(decision.lastSignOfLife).toISOString(),
      server_id: facts.server_id,
      server_name: facts.server_name,
      last_heartbeat: facts.last_heartbeat,
      session_id: facts.session_id,
      last_output: facts.last_output,
    },
  };
  // The flag records when it was written: a sign of life after it starts a new silence.
  const set = { stalledAt: ctx.now };
  const plan =
    action === "needs_human"
      ? askPerson(
          ctx,
          task,
          { question: `Stalled: ${reason}. Answer to send it back to work, or cancel it.`, context: undefined, interventionType: "help" },
          { set, events: [event] },
        )
      : taskWrite(ctx, task, set, [event]);
  return { ...plan, data: { raised: true } };
};

export const flagUnassignable: Planner<"flag_unassignable"> = async (ctx, cmd) => {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const { unassignable_minutes: minutes } = await ctx.settings();
  const [facts] = minutes === null ? [] : await waitingTasks(ctx.d1, ctx.projectId, task.id);
  if (!facts || minutes === null) return answerOnly(task.id, { flagged: false });
  const matches = rankServers((task.requirements ?? {}) as Requirements, await serverCandidates(ctx.db, ctx.projectId), task.rejectedBy);
  const waitingSince = new Date(latestOf([facts.created_at, facts.last_wait_event])!).toISOString();
  const decision = unassignableDecision({ waitingSince, flaggedAt: task.unassignableAt, matches }, minutes, Date.parse(cmd.at));
  if (!decision.flag) return answerOnly(task.id, { flagged: false });
  const reason = decision.servers.length
    ? `no server serving the project can take it (by its requirements) after ${decision.waitingMinutes} minutes waiting`
    : `no server serves the project, after ${decision.waitingMinutes} minutes waiting`;
  const event = {
    type: "task_unassignable" as const,
    taskId: task.id,
    data: { reason, unassignable_minutes: minutes, waiting_since: waitingSince, requirements: task.requirements, servers: decision.servers },
  };
  return { ...taskWrite(ctx, task, { unassignableAt: ctx.now }, [event]), data: { flagged: true } };
};
