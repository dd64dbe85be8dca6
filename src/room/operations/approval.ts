/**
 * The approval gate: a project setting (off by default) under which the tasks
 * agents create wait for a person. Such a task keeps its status, but is marked
 * `awaiting_approval`: it is never auto-assigned, and is not started or planned
 * until a person approves it; it may be assigned by hand meanwhile, and its
 * session's daemon hears nothing of it yet. Approving it clears the mark, gives
 * it to that daemon as a plain `task_assigned` (server-link/pushes.ts), and
 * offers a pending one to auto-assignment at once.
 */
import { eq, sql } from "drizzle-orm";
import { sessions } from "../../db/schema";
import { FINISHED } from "../../domain/lifecycle";
import type { ProjectSettings } from "../../domain/project-settings";
import { statement } from "../statements";
import { pendingAndOffered } from "./assignment";
import { recordEvents, taskWrite, type Planner } from "./kernel";
import { invalidTransition, notAllowed, notAwaitingApproval, notFound } from "./refusals";

export const changeSettings: Planner<"change_settings"> = async (ctx, cmd) => {
  if (ctx.actor.kind !== "person") return notAllowed("Only people change a project's settings");
  const before = await ctx.settings();
  const after: ProjectSettings = { ...before, ...cmd.settings };
  const changed = (Object.keys(after) as (keyof ProjectSettings)[]).filter((k) => after[k] !== before[k]);
  if (changed.length === 0) return { taskId: "", statements: [], unchanged: true, data: { settings: after } };
  return {
    taskId: "",
    statements: [statement(ctx.d1, sql`UPDATE projects SET settings = ${JSON.stringify(after)}, updated_at = ${ctx.now} WHERE id = ${ctx.projectId}`)],
    events: recordEvents(ctx, [{ type: "project_settings_changed", taskId: null, data: { settings: after, changed } }]),
    data: { settings: after },
    settings: after,
  };
};

export const approve: Planner<"approve"> = async (ctx, cmd) => {
  if (ctx.actor.kind !== "person") return notAllowed("Only people approve a task");
  const loaded = await ctx.reads.taskWithBlockers(cmd.taskId);
  if (!loaded) return notFound("Task");
  const { task, blockers } = loaded;
  if (FINISHED.includes(task.status)) return invalidTransition(task.status, `Cannot approve a task that is ${task.status}`);
  if (!task.awaitingApproval) return notAwaitingApproval();
  // What its session's daemon is told on approval is the assignment it was not told of while the task waited.
  const from =
    task.targetSessionId && task.sourceSessionId
      ? await ctx.db.query.sessions.findFirst({ where: eq(sessions.id, task.sourceSessionId), columns: { name: true } })
      : undefined;
  const approved = {
    type: "task_approved" as const,
    taskId: task.id,
    data: {
      status: task.status,
      session_id: task.targetSessionId,
      server_id: task.assignedServerId,
      priority: task.priority,
      require_plan: task.requirePlan,
      from_session_name: from?.name ?? null,
    },
  };
  // A pending task is offered at once, as if it had just come in; one given to a server or session already goes ahead there.
  if (task.status === "pending") return pendingAndOffered(ctx, task, blockers.length === 0, task.rejectedBy, { awaitingApproval: false }, [approved]);
  return taskWrite(ctx, task, { awaitingApproval: false }, [approved]);
};
