/**
 * The room's commit of planned operations: their statements and what they leave to the end of the batch, sent as one
 * D1 batch; each answered from its results, what committed handed to the room's after-commit hook, and the room's
 * memory of its tasks told. RoomWriter (room-writer.ts) runs it in its queue.
 */
import { eq } from "drizzle-orm";
import { createDb, type Db } from "../db/client";
import { newerBookmark } from "../db/d1-bookmarks";
import { budgets, projects, reviewPolicies, type BudgetRow } from "../db/schema";
import { DEFAULT_REVIEW_POLICY, type ReviewPolicy } from "../domain/code-review";
import { taskViewsInBatch } from "../views/task-queries";
import { projectSettingsOf, type ProjectSettings } from "../domain/project-settings";
import { logError } from "../runtime/log";
import type { ProblemData, RoomActor, RoomAnswer, RoomCommand } from "./commands";
import { abandonedQuestions, givenTasks, sessionlessTasks, splitAt, type Committed } from "./committed";
import { heldTasksInBatch } from "./dependency-reads";
import { EventLog, logMovedOn, type Appended } from "./event-append";
import type { GroupReads } from "./group-reads";
import { logOperations } from "./operation-log";
import { concurrentChange } from "./operations/refusals";
import { capacityCheck, isProblem, overCapacity, writesAnything, type OpContext, type OpOutcome, type WritePlan } from "./operations";
import { OutboxRecorder, outboxTargets } from "./outbox";
import { d1Reads, type TaskReads } from "./task-reads";
import { TaskMemory } from "./task-memory";

/** What the room's writer is asked: one command, by one actor. */
export interface Operation {
  actor: RoomActor;
  command: RoomCommand;
  /** The caller answers with the task's view: read in the commit's batch. */
  withView: boolean;
  /** The HTTP request that asked, named in the operation's log line. */
  requestId?: string;
}

export interface WriterHooks {
  /** Each turn of the queue starts here: cheap checks that must not wait for the room to go idle. */
  beforeTurn(): void;
  /** Why this caller may not write at all (an agent whose API key was revoked), checked in the operation's turn. */
  refusal(actor: RoomActor): Promise<ProblemData | undefined>;
  /** Runs after every batch that committed, inside the queue. */
  afterCommit(committed: Committed): Promise<void>;
  /**
   * Before a batch giving tasks to servers (`fills`) is sent: room held for them on those whose projects span shards
   * (room-holds.ts), released once it has committed or rolled back. Throws ServersFull when a server has none.
   */
  holdRoom?(fills: readonly string[]): Promise<{ release(): Promise<void> } | undefined>;
}

/** The writer's commit and what it keeps between operations; RoomWriter adds the queue. */
export abstract class BatchCommitter {
  readonly db: Db;
  /** D1 round trips of the operation running now (operations never overlap). */
  protected d1Queries = 0;
  /** When the operation (or group) running now began, for its log lines. */
  protected started = 0;
  /** How long the write batches of the operation (or group) running now took. */
  protected batchMs = 0;
  /** The D1 bookmark of the operation's last committed batch, handed back so its caller reads what it wrote. */
  protected committedAt: string | null = null;
  private readonly outbox: OutboxRecorder;
  private readonly events: EventLog;
  /** The project's tasks as the room's groups last read and wrote them (only this room writes them). */
  protected readonly memory = new TaskMemory();
  /** The project's settings, read by the first operation that needs them, then kept: only this room changes them. */
  private settings: ProjectSettings | null = null;
  /** The project's review policy, read by the first completion that needs it, then kept: only this room changes it. */
  private reviewPolicy: ReviewPolicy | null = null;
  /**
   * The project's budgets, read by the first operation that needs them, then kept as each batch that changes them
   * leaves them: only this room writes them. A batch whose outcome is not known leaves them to be read again.
   */
  private budgetRows: readonly BudgetRow[] | null = null;
  /** Servers' loads across shards as their links told them on refusing the operation running now (RoomWriter fills it). */
  protected readonly loads = new Map<string, number>();

  constructor(
    protected readonly d1: D1Database,
    readonly projectId: string,
    /** The directory, for a room on another shard: who hears of its events in chat is read there (null on the directory). */
    directory: D1Database | null,
    protected readonly hooks: WriterHooks,
  ) {
    this.db = createDb(d1, () => this.d1Queries++);
    this.outbox = new OutboxRecorder(d1, projectId, directory);
    this.events = new EventLog(d1, projectId);
  }

  /** What the room holds of its tasks goes: they were changed or deleted other than through it. */
  forgetTasks() {
    this.memory.forget();
  }

  /**
   * Commits planned operations in one batch, hands on what committed, and
   * answers each: with the task's view, read at the end of the same batch,
   * where the caller asked for it. The room's memory of its tasks takes what a group (`group`) read and planned once
   * its batch has committed whole, and forgets what another operation may have changed.
   */
  protected async commit(outcomes: OpOutcome[], operations: readonly Operation[], group?: GroupReads): Promise<RoomAnswer[]> {
    const plans = outcomes.filter((o): o is WritePlan => !isProblem(o));
    // Every operation's statements, then what they leave to the end of the batch, one statement each for all of them:
    // the capacity of the servers they assigned to, and their events (whose seqs follow the operations' order).
    const writes = plans.flatMap((p) => p.statements);
    const fills = plans.flatMap((p) => p.fills ?? []);
    const checks = capacityCheck(this.d1, fills);
    const appends = this.events.append(plans.flatMap((p) => (p.events ? [p.events] : [])));
    const viewIds = [...new Set(outcomes.flatMap((o, i) => (operations[i]!.withView && !isProblem(o) && writesAnything(o) ? [o.taskId] : [])))];
    const views = viewIds.length > 0 ? taskViewsInBatch(this.db, this.d1, viewIds) : undefined;
    const writing = writes.length + appends.statements.length > 0;
    const leavesBudgets = plans.findLast((p) => p.budgets)?.budgets;
    if (leavesBudgets && writing) this.budgetRows = null;
    const owed = writing ? await this.owedStatements(plans.flatMap((p) => p.events?.events.map((e) => e.type) ?? [])) : [];
    if (writing) this.memory.ready().unsettle();
    // The tasks the batch gives to servers are read as it leaves them, for the room to hold when their agents start them.
    const keepsDependencies = group !== undefined || operations.every((o) => this.memory.keepsDependencies(o.command));
    const given = writing ? heldTasksInBatch(this.db, this.d1, this.projectId, givenTasks(plans), this.memory.knownDependents(keepsDependencies)) : undefined;
    const batched = writing
      ? await this.heldBatch(fills, [
          ...writes,
          ...checks,
          ...appends.statements,
          ...owed,
          ...(given ? [given.statement] : []),
          ...(views ? [views.statement] : []),
        ])
      : [];
    const [results, , appended, recorded, read] = splitAt(batched, writes.length, checks.length, appends.statements.length, owed.length, given ? 1 : 0);
    const events = await this.eventsOf(appends.read(appended!));
    const viewOf = new Map((views ? views.read(batched.at(-1)!) : []).map((v) => [v.id, v]));
    let offset = 0;
    const committed: Committed = {
      events,
      notices: abandonedQuestions(results),
      deadlines: [],
      outbox: outboxTargets(recorded),
      sessionless: sessionlessTasks(outcomes),
      withDependents: new Set(plans.flatMap((p) => (p.toDependents ? [p.taskId] : []))),
    };
    this.outbox.committed(committed.events);
    let guardsHeld = true;
    const answers = outcomes.map((outcome, i): RoomAnswer => {
      if (isProblem(outcome)) return { ok: false, problem: outcome };
      const own = results.slice(offset, (offset += outcome.statements.length));
      // Only this room writes the project's tasks, so this means the task was deleted or changed underneath.
      // Counted by changes (RETURNING costs D1 rows): a statement's changes leave out what its triggers changed.
      if (outcome.guardedUpdate !== undefined && own[outcome.guardedUpdate]!.meta.changes === 0) {
        guardsHeld = false;
        return { ok: false, problem: outcome.guardRefusal ?? concurrentChange() };
      }
      committed.notices.push(...(outcome.notices ?? []));
      if (outcome.settings) this.settings = outcome.settings;
      if (outcome.reviewPolicy) this.reviewPolicy = outcome.reviewPolicy;
      if (outcome.deadline) committed.deadlines.push(outcome.deadline);
      if (outcome.refusal) return { ok: false, problem: outcome.refusal };
      const view = operations[i]!.withView ? viewOf.get(outcome.taskId) : undefined;
      return {
        ok: true,
        taskId: outcome.taskId,
        ...(outcome.data ? { data: outcome.data } : {}),
        ...(outcome.unchanged ? { unchanged: true } : {}),
        ...(view ? { view } : {}),
      };
    });
    if (leavesBudgets && guardsHeld) this.budgetRows = leavesBudgets;
    if (writing)
      this.memory.committed(
        // An operation that says it wrote no task (a usage batch that stopped nothing) leaves the memory as it was.
        guardsHeld ? (group ?? operations.filter((_, i) => !(outcomes[i] as WritePlan).leavesTasksAlone).map((o) => o.command)) : undefined,
        guardsHeld && given ? given.read(read![0]!) : undefined,
      );
    try {
      await this.hooks.afterCommit(committed);
    } catch (e) {
      // The batch has committed: its callers get their answers whatever became of handing it on.
      logError("handing on a commit failed", { project_id: this.projectId, operation: "after_commit" }, e);
    }
    logOperations(this.projectId, operations, answers, this.started, this.d1Queries);
    return answers;
  }

  /** The events a batch appended: as it said, or read back when it could not (some guard did not hold). */
  private async eventsOf(appended: Appended) {
    const { events, readBack, failure } = await this.events.written(appended);
    if (readBack) this.d1Queries++;
    if (failure)
      logError("reading back a batch's events failed: they go out with the next batch's", { project_id: this.projectId, operation: "events" }, failure);
    return events;
  }

  /**
   * What the batch's events owe integrations (the first batch of the room reads where the project's events stand; a
   * room on another shard reads who hears of them in chat from the directory).
   */
  private async owedStatements(types: string[]) {
    const { statements, roundTrips } = await this.outbox.statements(new Date().toISOString(), types);
    this.d1Queries += roundTrips;
    return statements;
  }

  /**
   * The batch, with room held first on the servers it fills whose projects span shards (their links count every
   * shard). The hold goes once the batch has committed or surely rolled back (its own capacity check, or a log moved on
   * under it, which the room runs again at once and would otherwise find its own hold in the way); after any other
   * failure the batch may yet commit, so the hold is left to lapse.
   */
  private async heldBatch(fills: readonly string[], statements: D1PreparedStatement[]) {
    const held = fills.length > 0 ? await this.hooks.holdRoom?.(fills) : undefined;
    if (!held) return this.batch(statements);
    const release = () => held.release().catch((e: unknown) => logError("releasing held room failed", { project_id: this.projectId, operation: "hold" }, e));
    try {
      const results = await this.batch(statements);
      await release();
      return results;
    } catch (e) {
      if (overCapacity(e) || logMovedOn(e)) await release();
      throw e;
    }
  }

  /**
   * The writes of one operation (or group): one D1 transaction, one round trip. It runs in a session of its own
   * starting at the primary (where writes go anyway) only to learn the bookmark it committed at.
   */
  private async batch(statements: D1PreparedStatement[]) {
    this.d1Queries++;
    const session = this.d1.withSession("first-primary");
    const sent = performance.now();
    const results = await session.batch(statements).finally(() => (this.batchMs += performance.now() - sent));
    this.committedAt = newerBookmark(this.committedAt, session.getBookmark());
    return results;
  }

  protected opContext(actor: RoomActor, reads: TaskReads = d1Reads(this.db, this.projectId, this.memory.ready()), offerWaiting = true): OpContext {
    return {
      db: this.db,
      d1: this.d1,
      projectId: this.projectId,
      actor,
      now: new Date().toISOString(),
      reads,
      offerWaiting,
      loads: this.loads,
      settings: () => this.projectSettings(),
      budgets: () => this.projectBudgets(),
      reviewPolicy: () => this.projectReviewPolicy(),
    };
  }

  private async projectBudgets(): Promise<readonly BudgetRow[]> {
    this.budgetRows ??= await this.db.select().from(budgets).where(eq(budgets.projectId, this.projectId)).orderBy(budgets.createdAt, budgets.id);
    return this.budgetRows;
  }

  /** The project's review policy as the room keeps it (read from D1 the first time). */
  private async projectReviewPolicy(): Promise<ReviewPolicy> {
    if (!this.reviewPolicy) {
      const [row] = await this.db.select({ policy: reviewPolicies.policy }).from(reviewPolicies).where(eq(reviewPolicies.projectId, this.projectId));
      this.reviewPolicy = row?.policy ?? DEFAULT_REVIEW_POLICY;
    }
    return this.reviewPolicy;
  }

  /** The project's settings as the room keeps them (read from D1 the first time). */
  async projectSettings(): Promise<ProjectSettings> {
    if (!this.settings) {
      const [row] = await this.db.select({ settings: projects.settings }).from(projects).where(eq(projects.id, this.projectId));
      this.settings = projectSettingsOf(row?.settings);
    }
    return this.settings;
  }
}
