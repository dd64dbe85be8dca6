/**
 * What room operations read before they plan: a task with what blocks it, a
 * task with what depends on it, and the state of auto-assignment.
 *
 * `d1Reads` reads straight from D1 for one operation. `GroupReads` reads once
 * for a group of operations that the room plans one after another and commits
 * in one batch: each operation then sees the effects of those planned before
 * it (the `PlanEffects` they record), exactly as if they had been committed.
 */
import { and, eq, getTableColumns, sql, type Placeholder, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { candidatesJson, parseCandidates } from "../db/server-candidates";
import { dependencyBlocking, PRIORITY_RANK, projects, READY_TO_OFFER, tasks, WAITING } from "../db/schema";
import { boundForBatch, builtOnce, inJsonList, qualified } from "../db/sql";
import type { Assignable, Assignment, DownstreamLink } from "../domain/cascade";
import { ACTIVE, type TaskStatus } from "../domain/lifecycle";
import type { Candidate } from "../domain/matching";
import type { Requirements } from "../protocol/orchestratia-v1";
import { routedTo } from "../protocol/task-format";
import type { TaskRow } from "./statements";
import { holdRead, type Blocker, type GroupKnowledge, type HeldTasks, type LinkRead, type TaskMemory } from "./task-memory";

export type { Blocker } from "./task-memory";

export interface AssignmentContext {
  waiting: Assignable[];
  candidates: Candidate[];
}

/** A task with the unresolved dependencies of other tasks on it, and whether it has questions still open. */
export interface TaskWithDownstream {
  task: TaskRow;
  links: DownstreamLink[];
  openQuestions: boolean;
}

export interface TaskReads {
  /** The task's row alone. */
  row(taskId: string): Promise<TaskRow | undefined>;
  /** The task and its unresolved blocks/input dependencies. */
  taskWithBlockers(taskId: string): Promise<{ task: TaskRow; blockers: Blocker[] } | undefined>;
  /** The task and the unresolved dependencies of other tasks on it, with what decides their unblocking. */
  taskWithDownstream(taskId: string): Promise<TaskWithDownstream | undefined>;
  /**
   * Pending, unblocked tasks with requirements (most urgent and oldest first,
   * at most `limit`) and the servers serving the project with their load.
   * `alsoUnblocking` are tasks the operation itself unblocks.
   */
  assignmentContext(limit: number, alsoUnblocking?: readonly string[]): Promise<AssignmentContext>;
}

/** What an operation changes that a later operation of the same group must see. */
export interface PlanEffects {
  task?: { before: TaskRow; after: TaskRow };
  /** The task completed: every dependency on it is resolved. */
  resolved?: string;
  unblocked?: readonly string[];
  assignments?: readonly Assignment[];
  /** The task has a question open now. */
  asked?: string;
}

const blockersJson = sql<string>`(SELECT json_group_array(json_object('depends_on_task_id', d.depends_on_task_id, 'dependency_type', d.dependency_type))
  FROM task_dependencies d JOIN tasks u ON u.id = d.depends_on_task_id WHERE d.task_id = ${qualified(tasks.id)} AND ${sql.raw(dependencyBlocking("d", "u"))})`;

/**
 * The task's dependents by unresolved dependencies, each with its other upstreams still blocking it, unless `known` (a
 * text of ids between commas) names the dependent: the room then knows them (null here). The task is not done yet (it
 * is being ended), so only what the rows on it say resolves them.
 */
const downstreamJson = (known: SQL | Placeholder) => sql<string>`(SELECT json_group_array(json_object(
    'taskId', d.task_id, 'taskStatus', dt.status, 'dependencyType', d.dependency_type, 'contractKey', d.contract_key, 'sessionId', dt.target_session_id,
    'otherUnresolved', CASE WHEN instr(${known}, ',' || d.task_id || ',') > 0 THEN NULL ELSE
      json((SELECT json_group_array(o.depends_on_task_id) FROM task_dependencies o JOIN tasks ou ON ou.id = o.depends_on_task_id
      WHERE o.task_id = d.task_id AND o.depends_on_task_id != d.depends_on_task_id AND ${sql.raw(dependencyBlocking("o", "ou"))})) END))
  FROM task_dependencies d JOIN tasks dt ON dt.id = d.task_id
  WHERE d.depends_on_task_id = ${qualified(tasks.id)} AND d.resolved = 0)`;

/** Dependents a read may skip the upstreams of, at most: each costs its id in the query's text. */
const MAX_KNOWN_DEPENDENTS = 1_000;

/** Dependents a read may skip the upstreams of, as `downstreamJson` takes them: the first MAX_KNOWN_DEPENDENTS known. */
function knownText(known: ReadonlyMap<string, string[]>) {
  if (known.size === 0) return "";
  const ids: string[] = [];
  for (const id of known.keys()) if (ids.push(id) >= MAX_KNOWN_DEPENDENTS) break;
  return `,${ids.join(",")},`;
}

/** Whether the task has questions open (pending interventions): ending it closes them. */
const openQuestions = sql<number>`EXISTS (SELECT 1 FROM interventions i WHERE i.task_id = ${qualified(tasks.id)} AND i.status = 'pending')`;

/** The first `limit` of the project's tasks meeting `condition` (on `t`), in waiting order: most urgent, then oldest. */
const firstWaiting = (projectId: string | Placeholder, condition: SQL, limit: number) =>
  sql`WHERE t.project_id = ${projectId} AND ${condition}
    ORDER BY ${PRIORITY_RANK}, t.created_at, t.id LIMIT ${limit}`;

/**
 * The first tasks meeting `condition` (which names WAITING, or READY_TO_OFFER
 * to read the index of those) as one JSON array; each says
 * whether it is still blocked in D1 and carries its place in waiting order.
 * They are looked for among `among` (the project's tasks, in waiting order,
 * unless given).
 */
const waitingJson = (projectId: string | Placeholder, limit: number, condition: SQL, among: SQL = sql`tasks t`) => sql<string>`(
  SELECT json_group_array(json_object('id', w.id, 'requirements', json(w.requirements), 'require_plan', w.require_plan, 'blocked', w.blocked,
    'rank', w.rank, 'created_at', w.created_at, 'rejected_by', json(w.rejected_by))) FROM (
    SELECT t.id, t.requirements, t.require_plan, t.blocked, ${PRIORITY_RANK} AS rank, t.created_at, t.rejected_by
    FROM ${among} ${firstWaiting(projectId, condition, limit)}) w)`;

type Waiting = Assignable & { blocked: boolean; rank: number; createdAt: string };

const parseWaiting = (json: string): Waiting[] =>
  (
    JSON.parse(json) as {
      id: string;
      requirements: Requirements;
      require_plan: number;
      blocked: number;
      rank: number;
      created_at: string;
      rejected_by: string[] | null;
    }[]
  ).map((w) => ({
    id: w.id,
    requirements: w.requirements,
    requirePlan: Boolean(w.require_plan),
    rejectedBy: w.rejected_by ?? [],
    blocked: Boolean(w.blocked),
    rank: w.rank,
    createdAt: w.created_at,
  }));

/** SQLite's order for text (bytewise), not the locale's. */
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const inWaitingOrder = (a: Waiting, b: Waiting) => a.rank - b.rank || compareText(a.createdAt, b.createdAt) || compareText(a.id, b.id);

const countLinks = (links: LinkRead[], resolved: (id: string) => boolean = () => false): DownstreamLink[] =>
  links.map((l) => ({ ...l, otherUnresolved: l.otherUnresolved.filter((id) => !resolved(id)).length }));

/** The task's row, if it is this project's. */
async function taskRow(db: Db, projectId: string, taskId: string): Promise<TaskRow | undefined> {
  const [row] = await db
    .select()
    .from(tasks)
    .where(and(eq(tasks.id, taskId), eq(tasks.projectId, projectId)));
  return row;
}

/** Reads for one operation, straight from D1: one query each; a row alone is taken from the memory when it holds it, and left there. */
export function d1Reads(db: Db, projectId: string, memory: TaskMemory): TaskReads {
  const withExtra = async (taskId: string, extra: SQL<string>, questions: SQL<number> = sql`0`) => {
    const [row] = await db
      .select({ task: tasks, extra, questions })
      .from(tasks)
      .where(and(eq(tasks.id, taskId), eq(tasks.projectId, projectId)));
    return row;
  };
  return {
    async row(taskId) {
      const held = memory.tasks.get(taskId);
      if (held) return held;
      const row = await taskRow(db, projectId, taskId);
      if (row) memory.remember(row);
      return row;
    },
    async taskWithBlockers(taskId) {
      const row = await withExtra(taskId, blockersJson);
      return row && { task: row.task, blockers: JSON.parse(row.extra) as Blocker[] };
    },
    async taskWithDownstream(taskId) {
      const row = await withExtra(taskId, downstreamJson(sql`''`), openQuestions);
      return row && { task: row.task, links: countLinks(JSON.parse(row.extra) as LinkRead[]), openQuestions: Boolean(row.questions) };
    },
    async assignmentContext(limit, alsoUnblocking = []) {
      const [row] = await db.all<{ waiting: string; candidates: string }>(
        sql`SELECT ${waitingAlone(projectId, limit, alsoUnblocking)} AS waiting, ${candidatesJson(projectId)} AS candidates`,
      );
      return { waiting: parseWaiting(row!.waiting), candidates: parseCandidates(row!.candidates) };
    },
  };
}

/** How many waiting tasks one operation considers for auto-assignment. */
export const ASSIGN_BATCH = 100;

/** The waiting tasks one operation considers: unblocked in D1, or unblocked by the operation itself (looked up by id). */
export const waitingAlone = (projectId: string, limit: number, alsoUnblocking: readonly string[]) => {
  if (alsoUnblocking.length === 0) return waitingJson(projectId, limit, READY_TO_OFFER);
  const ready = sql`SELECT id FROM (SELECT t.id FROM tasks t ${firstWaiting(projectId, READY_TO_OFFER, limit)})`;
  const among = sql`(${ready} UNION SELECT value FROM json_each(${JSON.stringify(alsoUnblocking)})) u CROSS JOIN tasks t ON t.id = u.id`;
  return waitingJson(projectId, limit, WAITING, among);
};

/**
 * How many waiting tasks of each kind a group reads: twice what one
 * operation considers, so that the operations of a group rarely have to
 * read again.
 */
const GROUP_WAITING = 2 * ASSIGN_BATCH;

/**
 * What a group reads of the waiting tasks: those unblocked in D1, and those
 * blocked only by the group's own tasks (which its completions may unblock).
 * The latter are looked for among what depends on the group's tasks, so the
 * read does not grow with the project's backlog.
 * Built once: `projectId` and `ids` (the group's tasks, a JSON array) are bound.
 */
export const groupWaiting = builtOnce((db: Db) => {
  const projectId = sql.placeholder("projectId");
  const inGroup = sql`(SELECT value FROM json_each(${sql.placeholder("ids")}))`;
  // CROSS JOIN keeps SQLite from walking the project's waiting tasks in order and testing each instead.
  const dependents = sql`(SELECT DISTINCT g.task_id FROM task_dependencies g
    WHERE g.depends_on_task_id IN ${inGroup} AND g.dependency_type != 'related' AND g.resolved = 0) g CROSS JOIN tasks t ON t.id = g.task_id`;
  const blockedOnlyByGroup = sql`NOT EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks u ON u.id = d.depends_on_task_id
    WHERE d.task_id = t.id AND ${sql.raw(dependencyBlocking("d", "u"))} AND d.depends_on_task_id NOT IN ${inGroup})`;
  return db
    .select({
      unblocked: waitingJson(projectId, GROUP_WAITING, READY_TO_OFFER).as("unblocked"),
      unblockable: waitingJson(projectId, GROUP_WAITING, sql`${WAITING} AND ${blockedOnlyByGroup}`, dependents).as("unblockable"),
      candidates: candidatesJson(projectId).as("candidates"),
    })
    .from(projects)
    .where(eq(projects.id, projectId))
    .prepare();
});

/**
 * The tasks a group reads from D1 (those the room does not hold), each with all the room keeps of it: what blocks it
 * (to start it), what depends on it and its open questions (to end it). Built once: `projectId`, `ids` (a JSON
 * array) and `known` (`knownText`) are bound.
 */
export const groupTasks = builtOnce((db: Db) =>
  db
    .select({
      task: tasks,
      blockers: blockersJson.as("blockers"),
      links: downstreamJson(sql.placeholder("known")).as("links"),
      questions: openQuestions.as("questions"),
    })
    .from(tasks)
    // The unary + keeps SQLite from choosing the project's index (a scan of all its tasks) over a lookup per id.
    .where(and(inJsonList(tasks.id, sql.placeholder("ids")), sql`+${qualified(tasks.projectId)} = ${sql.placeholder("projectId")}`))
    .prepare(),
);
const GROUP_TASK_COLUMNS = Object.keys(getTableColumns(tasks)).length + 3;
type GroupTaskRow = { task: TaskRow; blockers: string; links: string; questions: number };
type LinkJson = Omit<LinkRead, "otherUnresolved"> & { otherUnresolved: string[] | null };

/** The rows read, with each skipped dependent's other upstreams taken from what was known of it. */
function heldTasks(rows: GroupTaskRow[], known: ReadonlyMap<string, string[]>): HeldTasks {
  const blockedBy = new Map<string, string[]>();
  const links = new Map(
    rows.map((r) => {
      const upstream = r.task.id;
      const read = (JSON.parse(r.links) as LinkJson[]).map(({ otherUnresolved, ...link }): LinkRead => {
        const others = otherUnresolved ?? known.get(link.taskId)!.filter((id) => id !== upstream);
        // Links are unresolved dependencies: one that blocks is among what blocks its task, until its upstream is done.
        blockedBy.set(link.taskId, link.dependencyType === "related" || r.task.status === "done" ? others : [upstream, ...others]);
        return { ...link, otherUnresolved: others };
      });
      return [upstream, read];
    }),
  );
  return {
    tasks: new Map(rows.map((r) => [r.task.id, r.task])),
    blockers: new Map(rows.map((r) => [r.task.id, JSON.parse(r.blockers) as Blocker[]])),
    links,
    asked: new Set(rows.flatMap((r) => (r.questions ? [r.task.id] : []))),
    blockedBy,
  };
}

/** The tasks read with `groupTasks`, skipping the other upstreams of the dependents `known` gives. */
function readTasks(db: Db, d1: D1Database, projectId: string, ids: readonly string[], known: ReadonlyMap<string, string[]>) {
  const values = { projectId, ids: JSON.stringify(ids), known: knownText(known) };
  const query = boundForBatch<GroupTaskRow>(groupTasks(db), d1, values, GROUP_TASK_COLUMNS);
  return { statement: query.statement, read: (result: D1Result) => heldTasks(query.read(result), known) };
}

/**
 * These tasks as a batch leaves them, read at its end: nothing when there are none. `known` are the dependents whose
 * upstreams the room holds, as the batch leaves them too; it is read again once the batch has committed, before the
 * room's memory takes anything in.
 */
export function heldTasksInBatch(db: Db, d1: D1Database, projectId: string, ids: readonly string[], known: ReadonlyMap<string, string[]>) {
  return ids.length === 0 ? undefined : readTasks(db, d1, projectId, ids, known);
}

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
