/**
 * A batch of usage points joins the project's roll-ups (API.md "Usage, budgets and telemetry"): each point attributed
 * to the task its session was working on at the point's time (or the task it names), and added, in one batch, to the
 * task's, the session's and the day's totals, with the budgets it spends on and one `usage_recorded` event. The
 * batch's id goes in first, so a batch sent again after a restart fails whole instead of counting twice.
 */
import { and, eq, inArray, isNull, or, gte, sql } from "drizzle-orm";
import { sessions, tasks, usageBatches } from "../../db/schema";
import { USAGE_MEASURES, type UsageAmounts, type UsagePoint } from "../../domain/usage";
import { rollUp, taskAt, type SessionTask, type UsageRollup } from "../../domain/usage-rollup";
import { chunkRows, statement, type EventDraft } from "../statements";
import { spendOnBudgets } from "./budgets";
import { recordEvents, type Cmd, type OpContext, type OpOutcome } from "./kernel";
import { notAllowed } from "./refusals";

/** The most tasks a `usage_recorded` event lists (the roll-ups hold them all). */
const EVENT_TASKS = 50;

export async function recordUsage(ctx: OpContext, cmd: Cmd<"record_usage">): Promise<OpOutcome> {
  if (ctx.actor.kind !== "person" || ctx.actor.userId !== "hub") return notAllowed("Usage is recorded by the hub's own intake");
  if (cmd.retry) {
    const [done] = await ctx.db
      .select({ id: usageBatches.batchId })
      .from(usageBatches)
      .where(and(eq(usageBatches.projectId, ctx.projectId), eq(usageBatches.batchId, cmd.batchId)));
    if (done) return { taskId: "", statements: [], unchanged: true };
  }
  const attributed = await attribute(ctx, cmd.points);
  const rollup = rollUp(attributed);
  const budgets = await spendOnBudgets(ctx, rollup);
  const events: EventDraft[] = [usageEvent(rollup), ...budgets.events];
  return {
    taskId: "",
    statements: [
      statement(ctx.d1, ctx.db.insert(usageBatches).values({ projectId: ctx.projectId, batchId: cmd.batchId, recordedAt: ctx.now })),
      ...rollupStatements(ctx, rollup),
      ...budgets.statements,
    ],
    events: recordEvents(ctx, events),
    data: { points: rollup.points, unattributed: rollup.unattributed },
    budgets: budgets.rows,
    ...(budgets.touchesTasks ? {} : { leavesTasksAlone: true as const }),
  };
}

/** Each point with its task: the one it names (if it is this project's), else its session's at the point's time. */
async function attribute(ctx: OpContext, points: readonly UsagePoint[]) {
  const named = [...new Set(points.flatMap((p) => (p.taskId ? [p.taskId] : [])))];
  const sessionIds = [...new Set(points.flatMap((p) => (p.sessionId && !p.taskId ? [p.sessionId] : [])))];
  const since = points.reduce((min, p) => (p.at < min ? p.at : min), ctx.now);
  const known = new Set<string>();
  for (const ids of chunkRows(named, 1)) {
    const rows = await ctx.db
      .select({ id: tasks.id })
      .from(tasks)
      .where(and(eq(tasks.projectId, ctx.projectId), inArray(tasks.id, ids)));
    for (const r of rows) known.add(r.id);
  }
  const windows: SessionTask[] = [];
  const ownSessions = new Set<string>();
  for (const ids of chunkRows(sessionIds, 1)) {
    const rows = await ctx.db
      .select({
        sessionId: sessions.id,
        taskId: tasks.id,
        began: sql<string | null>`COALESCE(${tasks.startedAt}, ${tasks.assignedAt})`,
        completedAt: tasks.completedAt,
      })
      .from(sessions)
      .leftJoin(tasks, and(eq(tasks.targetSessionId, sessions.id), or(isNull(tasks.completedAt), gte(tasks.completedAt, since))))
      .where(and(eq(sessions.projectId, ctx.projectId), inArray(sessions.id, ids)));
    for (const r of rows) {
      ownSessions.add(r.sessionId);
      if (r.taskId && r.began) windows.push({ sessionId: r.sessionId, taskId: r.taskId, began: r.began, completedAt: r.completedAt });
    }
  }
  // A session or task of another project (or one deleted meanwhile) is not this project's to count: the point stays on the project alone.
  return points.map((p) => {
    const sessionId = p.sessionId && (ownSessions.has(p.sessionId) || p.taskId) ? p.sessionId : null;
    const taskId = p.taskId ? (known.has(p.taskId) ? p.taskId : null) : sessionId ? taskAt(windows, sessionId, p.at) : null;
    return { point: { ...p, sessionId }, taskId };
  });
}

/** `INSERT ... ON CONFLICT DO UPDATE` adding amounts to a roll-up row, keyed by `key`. */
function addTo(ctx: OpContext, table: string, key: Record<string, string>, amounts: UsageAmounts) {
  const keyColumns = Object.keys(key);
  const columns = [...keyColumns, ...USAGE_MEASURES, "updated_at"];
  const values = [...Object.values(key), ...USAGE_MEASURES.map((m) => amounts[m]), ctx.now];
  const conflict = keyColumns.filter((c) => c !== "project_id" || table === "usage_daily");
  const sets = [...USAGE_MEASURES.map((m) => `${m} = ${m} + excluded.${m}`), "updated_at = excluded.updated_at"];
  return ctx.d1
    .prepare(
      `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")}) ON CONFLICT (${conflict.join(", ")}) DO UPDATE SET ${sets.join(", ")}`,
    )
    .bind(...values);
}

function rollupStatements(ctx: OpContext, rollup: UsageRollup): D1PreparedStatement[] {
  const projectId = ctx.projectId;
  return [
    ...[...rollup.byTask].map(([taskId, a]) => addTo(ctx, "task_usage", { task_id: taskId, project_id: projectId }, a)),
    ...[...rollup.bySession].map(([sessionId, a]) => addTo(ctx, "session_usage", { session_id: sessionId, project_id: projectId }, a)),
    ...[...rollup.byDay.values()].map(({ key, amounts }) =>
      addTo(ctx, "usage_daily", { project_id: projectId, day: key.day, model: key.model, server_id: key.serverId, agent_type: key.agentType }, amounts),
    ),
  ];
}

/** One event per batch: what it added in all and to each task (the first EVENT_TASKS of them). */
function usageEvent(rollup: UsageRollup): EventDraft {
  const byTask = [...rollup.byTask];
  return {
    type: "usage_recorded",
    taskId: null,
    data: {
      points: rollup.points,
      unattributed: rollup.unattributed,
      totals: rollup.total,
      tasks: byTask.slice(0, EVENT_TASKS).map(([taskId, a]) => ({ task_id: taskId, ...a })),
      ...(byTask.length > EVENT_TASKS ? { tasks_left_out: byTask.length - EVENT_TASKS } : {}),
    },
  };
}
