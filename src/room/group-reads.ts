/**
 * Reads for a group of operations (see task-reads.ts): read once, then each operation sees the effects of those
 * planned before it (the `PlanEffects` they record), exactly as if they had been committed.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { parseCandidates } from "../db/server-candidates";
import { boundForBatch } from "../db/sql";
import { ACTIVE, type TaskStatus } from "../domain/lifecycle";
import type { Candidate } from "../domain/matching";
import { routedTo } from "../protocol/task-format";
import { countLinks, readTasks } from "./dependency-reads";
import type { TaskRow } from "./statements";
import { holdRead, type Blocker, type GroupKnowledge, type LinkRead, type TaskMemory } from "./task-memory";
import { taskRow, type PlanEffects, type TaskReads } from "./task-reads";
import { GROUP_WAITING, groupWaiting, inWaitingOrder, parseWaiting, waitingAlone, type Waiting } from "./waiting-reads";

/**
 * Reads for a group of operations on these tasks: what the room's memory holds, the rest in one round trip, then the
 * group's own effects. What the group reads and plans stays here until its batch commits: the memory then takes it.
 */
export class GroupReads implements TaskReads, GroupKnowledge {
  readonly tasks = new Map<string, TaskRow>();
  readonly blockers = new Map<string, Blocker[]>();
  readonly links = new Map<string, LinkRead[]>();
  readonly asked = new Set<string>();
  readonly blockedBy = new Map<string, string[]>();
  readonly resolved = new Set<string>();
  private readonly unblocked = new Set<string>();
  /** Tasks auto-assigned in this group, with the status that gave them. */
  readonly assigned = new Map<string, TaskStatus>();
  /** Change in each server's active tasks since the read. */
  private readonly load = new Map<string, number>();
  /**
   * The waiting tasks read, in waiting order. When a list was cut at its
   * limit, tasks after its last one may be missing: `knownUpTo` is the last
   * task up to which the lists hold every waiting task (null: all of them).
   */
  private waiting: { tasks: Waiting[]; knownUpTo: Waiting | null } = { tasks: [], knownUpTo: null };
  private candidates: Candidate[] = [];
  /** The waiting tasks and the servers, once read: the tasks ready to offer then, and whether that list was cut. */
  private context: { ready: Waiting[]; cut: boolean } | undefined;
  /** D1 round trips the group's reads took. */
  roundTrips = 0;

  private constructor(
    private readonly db: Db,
    private readonly d1: D1Database,
    private readonly projectId: string,
    /** The group's tasks, as a JSON array. */
    private readonly groupIds: string,
    private readonly memory: TaskMemory,
  ) {}

  /**
   * The tasks (of this project) with what the group needs of them, in one round trip for what the memory does not
   * hold (none when it holds them all). A group that ends tasks reads the waiting tasks and the servers in the same
   * round trip, unless the memory knows none is ready to offer: then only an operation that offers some reads them.
   */
  static async load(db: Db, d1: D1Database, projectId: string, taskIds: readonly string[], memory: TaskMemory, ends: boolean) {
    const missing = [...new Set(taskIds)].filter((id) => !memory.holds(id));
    const taskQuery = missing.length > 0 ? readTasks(db, d1, projectId, missing, memory.knownDependents(true)) : undefined;
    const rows = taskQuery ? [taskQuery.statement] : [];
    const reads = new GroupReads(db, d1, projectId, JSON.stringify(taskIds), memory);
    const contextQuery = ends && !memory.noneWaiting ? reads.contextQuery() : undefined;
    const statements = [...rows, ...(contextQuery ? [contextQuery.statement] : [])];
    if (statements.length === 0) return reads;
    const results = await d1.batch(statements);
    reads.roundTrips++;
    if (taskQuery) holdRead(reads, taskQuery.read(results[0]!));
    if (contextQuery) reads.takeContext(contextQuery.read(results.at(-1)!)[0]);
    return reads;
  }

  private contextQuery() {
    return boundForBatch<{ unblocked: string; unblockable: string; candidates: string }>(
      groupWaiting(this.db),
      this.d1,
      { projectId: this.projectId, ids: this.groupIds },
      3,
    );
  }

  private async readContext() {
    const query = this.contextQuery();
    const [result] = await this.d1.batch([query.statement]);
    this.roundTrips++;
    this.takeContext(query.read(result!)[0]);
  }

  private takeContext(row: { unblocked: string; unblockable: string; candidates: string } | undefined) {
    const lists = row ? [parseWaiting(row.unblocked), parseWaiting(row.unblockable)] : [[], []];
    const cutAt = lists.filter((l) => l.length >= GROUP_WAITING).map((l) => l.at(-1)!);
    this.waiting = { tasks: lists.flat().sort(inWaitingOrder), knownUpTo: cutAt.sort(inWaitingOrder)[0] ?? null };
    this.candidates = row ? parseCandidates(row.candidates) : [];
    this.context = { ready: lists[0]!, cut: lists[0]!.length >= GROUP_WAITING };
  }

  /** Whether, once the group has committed, no waiting task is ready to offer: what it read and did say so. */
  get noneWaiting(): boolean {
    const stillPending = (id: string) => !this.assigned.has(id) && (this.task(id)?.status ?? "pending") === "pending";
    if ([...this.unblocked].some(stillPending)) return false;
    if (!this.context) return this.memory.noneWaiting;
    return !this.context.cut && !this.context.ready.some((w) => stillPending(w.id));
  }

  /** The task as the group leaves it so far, from its own reads and effects or the memory's. */
  private task(id: string) {
    return this.tasks.get(id) ?? this.memory.tasks.get(id);
  }

  async row(taskId: string) {
    const task = this.task(taskId);
    if (task) return task;
    this.roundTrips++;
    const row = await taskRow(this.db, this.projectId, taskId);
    if (row) this.tasks.set(row.id, row);
    return row;
  }

  private isResolved = (id: string) => this.resolved.has(id) || this.memory.resolved.has(id);

  async taskWithBlockers(taskId: string) {
    const task = this.task(taskId);
    const blockers = this.blockers.get(taskId) ?? this.memory.blockers.get(taskId);
    return task && blockers && { task, blockers: blockers.filter((b) => !this.isResolved(b.depends_on_task_id)) };
  }

  async taskWithDownstream(taskId: string) {
    const task = this.task(taskId);
    const read = this.links.get(taskId) ?? this.memory.links.get(taskId);
    if (!task || !read) return undefined;
    const links = this.isResolved(taskId) ? [] : countLinks(read, this.isResolved);
    return {
      task,
      links: links.map((l) => {
        const now = this.task(l.taskId);
        if (now) return { ...l, taskStatus: now.status, sessionId: now.targetSessionId };
        const assigned = this.assigned.get(l.taskId) ?? this.memory.assigned.get(l.taskId);
        // An auto-assignment gives the task to no session.
        return assigned ? { ...l, taskStatus: assigned, sessionId: null } : l;
      }),
      openQuestions: this.asked.has(taskId) || this.memory.asked.has(taskId),
    };
  }

  async assignmentContext(limit: number, alsoUnblocking: readonly string[] = []) {
    if (!this.context) {
      // Nothing was ready to offer when the last group committed, and nothing has been unblocked since.
      if (limit > 0 && this.memory.noneWaiting && alsoUnblocking.length === 0 && this.unblocked.size === 0) return { waiting: [], candidates: [] };
      await this.readContext();
    }
    const eligible = (w: Waiting) =>
      (!w.blocked || this.unblocked.has(w.id) || alsoUnblocking.includes(w.id)) &&
      !this.assigned.has(w.id) &&
      (this.task(w.id)?.status ?? "pending") === "pending";
    const { tasks, knownUpTo } = this.waiting;
    let waiting = (knownUpTo ? tasks.filter((w) => inWaitingOrder(w, knownUpTo) <= 0) : tasks).filter(eligible);
    if (waiting.length < limit && knownUpTo) {
      // The lists may miss some of the tasks this operation would consider alone: read them as it would,
      // with what the group unblocked, and past the tasks the group assigned (still pending in D1).
      const [row] = await this.db.all<{ waiting: string }>(
        sql`SELECT ${waitingAlone(this.projectId, limit + this.assigned.size, [...this.unblocked, ...alsoUnblocking])} AS waiting`,
      );
      waiting = parseWaiting(row!.waiting).filter(eligible);
    }
    return {
      waiting: waiting.slice(0, limit),
      candidates: this.candidates.map((c) => ({ ...c, activeTasks: c.activeTasks + (this.load.get(c.id) ?? 0) })),
    };
  }

  /** What an operation planned in this group changes for the ones after it (`now`: when the group was planned). */
  record(effects: PlanEffects | undefined, now: string) {
    if (!effects) return;
    if (effects.task) {
      const { before, after } = effects.task;
      this.tasks.set(after.id, after);
      if (before.assignedServerId && ACTIVE.includes(before.status)) this.addLoad(before.assignedServerId, -1);
      if (after.assignedServerId && ACTIVE.includes(after.status)) this.addLoad(after.assignedServerId, 1);
    }
    if (effects.resolved) this.resolved.add(effects.resolved);
    if (effects.asked) this.asked.add(effects.asked);
    for (const id of effects.unblocked ?? []) {
      this.unblocked.add(id);
      // As the trigger on the completed task leaves its row.
      const task = this.task(id);
      if (task?.blocked) this.tasks.set(id, { ...task, blocked: false });
    }
    for (const a of effects.assignments ?? []) {
      const status = a.requirePlan ? "planning" : "assigned";
      this.assigned.set(a.taskId, status);
      this.addLoad(a.match.server_id, 1);
      const task = this.task(a.taskId);
      if (task) {
        // As assignStatement writes it.
        this.tasks.set(a.taskId, {
          ...task,
          status,
          assignedServerId: a.match.server_id,
          targetSessionId: null,
          ...routedTo(task, a.match.server_name),
          assignedAt: now,
          version: task.version + 1,
          updatedAt: now,
        });
      }
    }
  }

  private addLoad(serverId: string, delta: number) {
    this.load.set(serverId, (this.load.get(serverId) ?? 0) + delta);
  }
}
