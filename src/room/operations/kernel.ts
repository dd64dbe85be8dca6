/**
 * What every room operation is made of. A planner reads what it needs, checks
 * the lifecycle, and returns either a refusal or the statements of one batch
 * with what to do once it has committed. Nothing here writes: the room runs
 * the batch, so an operation lands whole or not at all.
 */
import type { Db } from "../../db/client";
import { checkTransition, type TaskAction, type TaskStatus } from "../../domain/lifecycle";
import type { ProblemData, RoomActor, RoomCommand } from "../commands";
import type { EventType } from "../../domain/event-types";
import { guardAfter, updateTask, type EventAppend, type EventDraft, type TaskRow, type VersionGuard } from "../statements";
import type { PlanEffects, TaskReads } from "../task-reads";
import type { ProjectSettings } from "../../domain/project-settings";
import type { BudgetRow } from "../../db/schema";
import type { ReviewPolicy } from "../../domain/code-review";
import { invalidTransition, notAllowed } from "./refusals";

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
  /** Servers' loads across shards as their links told them when they refused to hold room for this operation's last plan. */
  loads?: ReadonlyMap<string, number>;
  /** The project's settings: read once by the room, which is the only writer of them. */
  settings(): Promise<ProjectSettings>;
  /** The project's budgets as last written: read once by the room, which is the only writer of them. */
  budgets(): Promise<readonly BudgetRow[]>;
  /** The project's review policy (without its key): read once by the room, which is the only writer of it. */
  reviewPolicy(): Promise<ReviewPolicy>;
}

/** What an agent's socket is told once the batch has committed: an answer it waits for, or that none will come. */
export type AgentNotice =
  | { kind: "answer"; serverId: string; correlationId: string; answer: string; answeredAt: string }
  | { kind: "timeout"; serverId: string; correlationId: string; message: string };

export interface WritePlan {
  taskId: string;
  statements: D1PreparedStatement[];
  /** Its events: the room appends those of the whole batch together, after every operation's statements. */
  events?: EventAppend;
  /** Servers its auto-assignment gave tasks to: the room checks their capacity once for the whole batch, after its writes. */
  fills?: readonly string[];
  /** The completed task has dependents given to sessions: their daemons hear of it once the batch has committed. */
  toDependents?: true;
  /** Index of the guarded task update in `statements`, if any: it must have changed one row. */
  guardedUpdate?: number;
  /** The refusal when the guarded update changed nothing (by default, a concurrent change). */
  guardRefusal?: ProblemData;
  /** What the caller is answered besides the task. */
  data?: Record<string, unknown>;
  /** The request repeated what is already so (a completion with the same result): nothing was written. */
  unchanged?: true;
  /** A deadline this operation set, for the room's alarm. */
  deadline?: string;
  /** Agents to tell after commit. */
  notices?: AgentNotice[];
  /** What later operations of the same group must see of this one. */
  effects?: PlanEffects;
  /** Commit the statements, and still answer this refusal (a late result is kept, and the agent is told no). */
  refusal?: ProblemData;
  /** It wrote no task, dependency or question, whatever its kind: the room's memory of its tasks stays as it was. */
  leavesTasksAlone?: true;
  /** The project's settings as the operation leaves them: the room keeps them once the batch has committed. */
  settings?: ProjectSettings;
  /** The project's budgets as the operation leaves them: the room keeps them once the batch has committed. */
  budgets?: readonly BudgetRow[];
  /** The project's review policy as the operation leaves it: the room keeps it once the batch has committed. */
  reviewPolicy?: ReviewPolicy;
}

export type OpOutcome = WritePlan | ProblemData;

export const isProblem = (o: OpOutcome): o is ProblemData => "code" in o && "status" in o;

/** The command of one kind of operation. */
export type Cmd<K extends RoomCommand["op"]> = Extract<RoomCommand, { op: K }>;

/** Plans one kind of operation. */
export type Planner<K extends RoomCommand["op"]> = (ctx: OpContext, cmd: Cmd<K>) => Promise<OpOutcome>;

/** Whether a plan writes anything: statements, or only events. */
export const writesAnything = (plan: WritePlan) => plan.statements.length > 0 || (plan.events?.events.length ?? 0) > 0;

/** An answer that writes nothing. */
export const answerOnly = (taskId: string, data: Record<string, unknown>): WritePlan => ({ taskId, statements: [], data });

export const loadTask = (ctx: OpContext, taskId: string): Promise<TaskRow | undefined> => ctx.reads.row(taskId);

export function partyOf(actor: RoomActor, task: TaskRow) {
  return actor.kind === "person" ? ({ kind: "person" } as const) : ({ kind: "agent", isAssignee: task.assignedServerId === actor.serverId } as const);
}

/** Checks the lifecycle table; a refusal names the current status and what is allowed. */
export function transition(ctx: OpContext, task: TaskRow, action: TaskAction, requirePlan = false): TaskStatus | ProblemData {
  const check = checkTransition(task.status, action, partyOf(ctx.actor, task), requirePlan);
  if (check.ok) return check.next;
  return check.reason === "invalid_transition" ? invalidTransition(task.status, check.detail, check.allowed) : notAllowed(check.detail);
}

/** The operation's events, in order, as its actor at its time, if `guard` holds once the batch's writes are in. */
export const recordEvents = (ctx: OpContext, events: EventDraft[], guard: VersionGuard = null): EventAppend => ({
  actor: ctx.actor.label,
  at: ctx.now,
  events,
  guard,
});

/** A task change plus its events, all applying only if the task still has the version read. */
export function taskWrite(
  ctx: OpContext,
  task: TaskRow,
  set: Partial<TaskRow>,
  events: EventDraft[],
  extra: (guard: VersionGuard) => D1PreparedStatement[] = () => [],
): WritePlan {
  const guard = guardAfter(task);
  return {
    taskId: task.id,
    guardedUpdate: 0,
    effects: { task: { before: task, after: { ...task, ...set, version: task.version + 1, updatedAt: ctx.now } } },
    statements: [updateTask(ctx.d1, task, set, ctx.now), ...extra(guard)],
    events: recordEvents(ctx, events, guard),
  };
}

export const statusEvent = (type: EventType, task: TaskRow, next: TaskStatus, data: Record<string, unknown> = {}): EventDraft => ({
  type,
  taskId: task.id,
  // A review task's events say what it reviews: the room settles that review when the task ends.
  data: { status: next, previous_status: task.status, ...(task.reviewOf ? { review_of: task.reviewOf, review_attempt: task.reviewAttempt } : {}), ...data },
  traceparent: task.traceparent,
});
