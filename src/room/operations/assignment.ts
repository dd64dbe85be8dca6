/**
 * Assignment: by hand, the seed's auto-assign, and the auto-assignment that
 * other operations run as they free capacity or unblock tasks, with its
 * set-based write, its capacity check and its events.
 */
import { eq, sql, type SQL } from "drizzle-orm";
import { sessions } from "../../db/schema";
import { planAssignments, type Assignable, type Assignment } from "../../domain/cascade";
import { errorMentions } from "../../db/errors";
import { activeTasksOfServer, maxTasksOf } from "../../db/server-candidates";
import { rankServers, type Candidate } from "../../domain/matching";
import type { Requirements } from "../../protocol/orchestratia-v1";
import type { EventDraft, TaskRow, VersionGuard } from "../statements";
import { routedTo } from "../../protocol/task-format";
import { guardHolds, statement } from "../statements";
import { reviewTaskRefusal } from "./review-task-guard";
import { ASSIGN_BATCH } from "../waiting-reads";
import { answerOnly, loadTask, recordEvents, statusEvent, taskWrite, transition, type OpContext, type Planner, type WritePlan } from "./kernel";
import { awaitingApproval, concurrentChange, invalidTransition, notFound } from "./refusals";
import { budgetRefusal, holdsOn } from "./budget-holds";

/** A task-format task's routing once it is given to the agent named `agent` (an SQL value), as `delegatedTo` makes it. */
const delegatedToSql = (agent: SQL) => sql`CASE
    WHEN client_id IS NULL OR routing ->> '$.delegationChain[#-1]' = ${agent} THEN routing
    ELSE json_set(COALESCE(routing, '{}'), '$.delegationChain',
      json_insert(CASE WHEN json_type(routing, '$.delegationChain') = 'array' THEN routing -> '$.delegationChain' ELSE '[]' END, '$[#]', ${agent})) END`;

/** Assigns pending tasks to servers in one statement; tasks requiring a plan go to planning. */
export function assignStatement(ctx: OpContext, plan: Assignment[], guard: VersionGuard) {
  const rows = JSON.stringify(plan.map((p) => ({ task_id: p.taskId, server_id: p.match.server_id, server_name: p.match.server_name })));
  const assigned = (field: string) => sql`(SELECT a.value ->> ${field} FROM json_each(${rows}) a WHERE a.value ->> 'task_id' = tasks.id)`;
  return statement(
    ctx.d1,
    sql`UPDATE tasks SET
          status = CASE WHEN require_plan THEN 'planning' ELSE 'assigned' END,
          assigned_server_id = ${assigned("server_id")},
          routing = ${delegatedToSql(assigned("server_name"))},
          target_session_id = NULL, assigned_at = ${ctx.now}, version = version + 1, updated_at = ${ctx.now}
        WHERE id IN (SELECT a.value ->> 'task_id' FROM json_each(${rows}) a) AND status = 'pending' AND ${guardHolds(guard)}`,
  );
}

/** What the capacity check's error says: the batch rolled back because a server would have had too many tasks. */
const OVER_CAPACITY = "server over capacity: ";

/**
 * Fails the batch if a server that its operations assigned to has more
 * active tasks than it can take once its writes are in: one statement for
 * the whole batch, after them. A server's load is shared by every project it
 * serves, and another project's room may have assigned to it since this one
 * read it; the room then plans again from fresh reads. (SQLite raises no
 * error on its own outside triggers: a JSON path that names the server is
 * the error.)
 */
export function capacityCheck(d1: D1Database, serverIds: readonly string[]): D1PreparedStatement[] {
  if (serverIds.length === 0) return [];
  return [
    statement(
      d1,
      sql`SELECT json_extract('{}', ${OVER_CAPACITY} || s.name) FROM servers s
          WHERE s.id IN (SELECT value FROM json_each(${JSON.stringify([...new Set(serverIds)])}))
            AND ${activeTasksOfServer} > ${maxTasksOf(sql`s`)}`,
    ),
  ];
}

/** The servers an auto-assignment gives tasks to, whose capacity the room checks after the batch's writes. */
export const filledServers = (plan: readonly Assignment[]) => plan.map((p) => p.match.server_id);

/** Whether a batch failed its capacity check, or a server's link refused to hold room for it (and it is worth planning again). */
export const overCapacity = (e: unknown) => errorMentions(e, OVER_CAPACITY);

/**
 * The links of servers whose projects span shards refused to hold room for the batch's tasks: the batch is not sent,
 * and the room plans again with each such server's load across shards (`loads`, by server id) as its link told it.
 */
export class ServersFull extends Error {
  constructor(readonly loads: ReadonlyMap<string, number>) {
    super(`${OVER_CAPACITY}${[...loads.keys()].join(", ")} (across shards)`);
  }
}

/** The candidates as the operation plans with them: a server's load across shards, when its link told one, if higher. */
const withToldLoads = (ctx: OpContext, candidates: readonly Candidate[]) =>
  ctx.loads?.size ? candidates.map((c) => ({ ...c, activeTasks: Math.max(c.activeTasks, ctx.loads!.get(c.id) ?? 0) })) : candidates;

export const assignmentEvents = (plan: Assignment[]): EventDraft[] =>
  plan.map((p) => ({
    type: "task_assigned",
    taskId: p.taskId,
    data: {
      status: p.requirePlan ? "planning" : "assigned",
      previous_status: "pending",
      server_id: p.match.server_id,
      server_name: p.match.server_name,
      session_id: null,
      session_name: null,
      auto: true,
      match_score: p.match.score,
    },
  }));

/**
 * Auto-assignment for an operation: the waiting tasks (those it unblocks
 * included) go to the best servers. `freedServer` no longer counts the task
 * the operation finishes. One query, whatever the number of tasks.
 */
export async function planAutoAssign(ctx: OpContext, unblocked: string[], freedServer: string | null, returning?: Assignable): Promise<Assignment[]> {
  if (!ctx.offerWaiting) return [];
  const context = await ctx.reads.assignmentContext(ASSIGN_BATCH, unblocked);
  // A task the operation itself hands back to pending is offered too, after those already waiting.
  const offered = returning ? [...context.waiting.filter((w) => w.id !== returning.id), returning] : context.waiting;
  if (offered.length === 0) return [];
  const candidates = withToldLoads(ctx, context.candidates);
  // Tasks in a scope a budget holds wait until it releases them.
  const held = await holdsOn(
    ctx,
    offered.map((w) => w.id),
  );
  const waiting = held.size > 0 ? offered.filter((w) => !held.has(w.id)) : offered;
  if (waiting.length === 0) return [];
  return planAssignments(
    waiting,
    candidates.map((c) => (c.id === freedServer ? { ...c, activeTasks: Math.max(0, c.activeTasks - 1) } : c)),
  );
}

export const assignmentStatements = (ctx: OpContext, plan: Assignment[], guard: VersionGuard) => (plan.length ? [assignStatement(ctx, plan, guard)] : []);

/**
 * A write that leaves the task pending (handed back, approved) and offers it, when `offerable`, with the other
 * waiting tasks in the same batch: after those already waiting, never to the servers in `notTo`. Its own assignment
 * rides in its own (guarded) update, the others' in the set-based one.
 */
export async function pendingAndOffered(
  ctx: OpContext,
  task: TaskRow,
  offerable: boolean,
  notTo: string[],
  set: Partial<TaskRow>,
  events: EventDraft[],
): Promise<WritePlan> {
  const returning =
    offerable && task.requirements
      ? { id: task.id, requirements: task.requirements as Requirements, requirePlan: task.requirePlan, rejectedBy: notTo }
      : undefined;
  const assignments = await planAutoAssign(ctx, [], task.assignedServerId, returning);
  const own = assignments.find((a) => a.taskId === task.id);
  const others = assignments.filter((a) => a !== own);
  const placement: Partial<TaskRow> = own
    ? { status: own.requirePlan ? "planning" : "assigned", assignedServerId: own.match.server_id, assignedAt: ctx.now }
    : { status: "pending", assignedServerId: null, assignedAt: null };
  const plan = taskWrite(ctx, task, { ...set, ...placement }, [...events, ...assignmentEvents(assignments)], (guard) =>
    assignmentStatements(ctx, others, guard),
  );
  return { ...plan, fills: filledServers(assignments), effects: { ...plan.effects, assignments: others } };
}

export const assign: Planner<"assign"> = async (ctx, cmd) => {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  const requirePlan = cmd.requirePlan || task.requirePlan;
  const status = transition(ctx, task, "assign", requirePlan);
  if (typeof status !== "string") return status;
  const held = await budgetRefusal(ctx, [task.id], "assigned");
  if (held) return held;
  const { target } = cmd;
  const ownReview = reviewTaskRefusal(ctx, task, "assign", target.serverId);
  if (ownReview) return ownReview;
  // A task given to a session is pushed to that session's daemon, which names who it came from.
  const from =
    target.sessionId && task.sourceSessionId
      ? await ctx.db.query.sessions.findFirst({ where: eq(sessions.id, task.sourceSessionId), columns: { name: true } })
      : undefined;
  return taskWrite(
    ctx,
    task,
    {
      status,
      assignedServerId: target.serverId,
      targetSessionId: target.sessionId,
      assignedAt: ctx.now,
      requirePlan,
      ...routedTo(task, target.sessionName ?? target.serverName),
    },
    [
      statusEvent("task_assigned", task, status, {
        server_id: target.serverId,
        server_name: target.serverName,
        session_id: target.sessionId,
        session_name: target.sessionName,
        require_plan: requirePlan,
        title: task.title,
        priority: task.priority,
        from_session_name: from?.name ?? null,
        // The session's daemon shows the task as waiting instead of starting its agent on it.
        ...(task.awaitingApproval ? { pending_approval: true } : {}),
      }),
    ],
  );
};

/**
 * The seed's auto-assign: a pending task goes to the best-scoring server, if any qualifies. Asked for explicitly, a task
 * without requirements is matched as requiring nothing (any server with room, online first); only tasks with
 * requirements are offered on their own as servers come.
 */
export const autoAssign: Planner<"auto_assign"> = async (ctx, cmd) => {
  const task = await loadTask(ctx, cmd.taskId);
  if (!task) return notFound("Task");
  if (task.status !== "pending") return invalidTransition(task.status, `Auto-assign needs a pending task; this one is ${task.status}`);
  if (task.awaitingApproval) return awaitingApproval("auto-assigned");
  const held = await budgetRefusal(ctx, [task.id], "auto-assigned");
  if (held) return held;
  if (!ctx.offerWaiting) return concurrentChange("Other projects kept filling the matching servers while this was planned; retry");
  const candidates = withToldLoads(ctx, (await ctx.reads.assignmentContext(0)).candidates);
  const [best] = rankServers((task.requirements ?? {}) as Requirements, candidates, task.rejectedBy);
  if (!best || best.score < 0) return answerOnly(task.id, { status: "no_match" });
  const assignment = { taskId: task.id, match: best, requirePlan: task.requirePlan };
  return {
    ...taskWrite(
      ctx,
      task,
      {
        status: task.requirePlan ? "planning" : "assigned",
        assignedServerId: best.server_id,
        targetSessionId: null,
        assignedAt: ctx.now,
        ...routedTo(task, best.server_name),
      },
      assignmentEvents([assignment]),
    ),
    fills: filledServers([assignment]),
    data: { status: "assigned", server_id: best.server_id, server_name: best.server_name, match_score: best.score },
  };
};

/** Auto-assigns waiting tasks, e.g. when a server comes online or gains capacity. */
export const sweep: Planner<"sweep"> = async (ctx) => {
  const assignments = await planAutoAssign(ctx, [], null);
  if (assignments.length === 0) return answerOnly("", { assigned: 0 });
  return {
    taskId: "",
    statements: assignmentStatements(ctx, assignments, null),
    fills: filledServers(assignments),
    events: recordEvents(ctx, assignmentEvents(assignments)),
    data: { assigned: assignments.length },
  };
};
