/**
 * The single writer of a project's tasks. Operations run strictly one at a
 * time through a promise chain, because awaiting D1 lets other requests
 * interleave (input gates only cover the object's own storage). Each
 * operation, or group of starts and completions, is one db.batch; what it
 * committed is handed to the room's after-commit hook still inside the
 * queue, so a dashboard's replay (also queued) meets live events with no gap
 * and no duplicate.
 */
import { createDb, type Db } from "../db/client";
import { newerBookmark } from "../db/d1-bookmarks";
import { countingRoundTrips, noRoundTrips } from "../db/round-trips";
import { logError } from "../runtime/log";
import { taskViewsInBatch } from "../db/task-queries";
import { HUB_ACTOR, type ProblemData, type RoomActor, type RoomAnswer, type RoomCommand, type RoomResult } from "./commands";
import { concurrentChange } from "./operations/refusals";
import { capacityCheck, isProblem, overCapacity, planOperation, writesAnything, type OpContext, type OpOutcome, type WritePlan } from "./operations";
import { OutboxRecorder, outboxTargets } from "./outbox";
import { EventLog, logMovedOn, type Appended } from "./event-append";
import { abandonedQuestions, givenTasks, sessionlessTasks, splitAt, type Committed } from "./committed";
import { heldTasksInBatch } from "./dependency-reads";
import { GroupReads } from "./group-reads";
import { d1Reads, type TaskReads } from "./task-reads";
import { TaskMemory } from "./task-memory";
import { logOperations } from "./operation-log";
import { eq } from "drizzle-orm";
import { projects } from "../db/schema";
import { projectSettingsOf, type ProjectSettings } from "../domain/project-settings";

/** Operations the room plans together and commits in one batch: the hot path of agents at work. */
const GROUPED: ReadonlySet<RoomCommand["op"]> = new Set(["start", "complete"]);
/** The most operations one batch carries (D1 counts each statement against an invocation's queries). */
const MAX_GROUP = 32;
/**
 * How often an operation is planned after another project's room filled a
 * server it assigned to; the last time without offering waiting tasks.
 */
const MAX_PLANS = 3;

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
}

/** An operation that threw: its caller gets the error, the others of its group their answers. */
interface Failure {
  failure: unknown;
}

export class RoomWriter {
  readonly db: Db;
  private queue: Promise<unknown> = Promise.resolve();
  /** Operations waiting for the group that runs at the room's next turn. */
  private readonly gathering: { operation: Operation; resolve: (r: RoomResult) => void; reject: (e: unknown) => void }[] = [];
  /** D1 round trips of the operation running now (operations never overlap). */
  private d1Queries = 0;
  /** When the operation (or group) running now began, for its log lines. */
  private started = 0;
  /** How long the write batches of the operation (or group) running now took. */
  private batchMs = 0;
  /** The D1 bookmark of the operation's last committed batch, handed back so its caller reads what it wrote. */
  private committedAt: string | null = null;
  private readonly outbox: OutboxRecorder;
  private readonly events: EventLog;
  /** The project's tasks as the room's groups last read and wrote them (only this room writes them). */
  private readonly memory = new TaskMemory();
  /** The project's settings, read by the first operation that needs them, then kept: only this room changes them. */
  private settings: ProjectSettings | null = null;

  constructor(
    private readonly d1: D1Database,
    readonly projectId: string,
    private readonly hooks: WriterHooks,
  ) {
    this.db = createDb(d1, () => this.d1Queries++);
    this.outbox = new OutboxRecorder(d1, projectId);
    this.events = new EventLog(d1, projectId);
  }

  /** What the room holds of its tasks goes: they were changed or deleted other than through it. */
  forgetTasks() {
    this.memory.forget();
  }

  /** Runs `work` after every operation queued before it; a failure does not stop the queue. */
  serialise<T>(work: () => Promise<T>): Promise<T> {
    const turn = () => {
      this.hooks.beforeTurn();
      return work();
    };
    const run = this.queue.then(turn, turn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Runs one operation, reporting what it cost; starts and completions ride in groups. */
  execute(operation: Operation): Promise<RoomResult> {
    if (GROUPED.has(operation.command.op)) return this.joinGroup(operation);
    return this.serialise(async () => {
      const [result] = await this.measured(1, async () => [await this.apply(operation)]);
      return result as RoomResult;
    });
  }

  /** Runs one operation from inside the queue (presence, the alarm's work). */
  apply(operation: Operation): Promise<RoomAnswer> {
    this.started = performance.now();
    this.d1Queries = 0;
    return this.replanned(operation.command, async (offerWaiting) => {
      const outcome =
        (await this.hooks.refusal(operation.actor)) ?? (await planOperation(this.opContext(operation.actor, undefined, offerWaiting), operation.command));
      const [answer] = await this.commit([outcome], [operation]);
      return answer!;
    });
  }

  /** Runs operations, reporting what they cost together: D1 round trips and time. */
  private async measured(operations: number, run: () => Promise<(RoomAnswer | Failure)[]>): Promise<(RoomResult | Failure)[]> {
    const started = (this.started = performance.now());
    this.d1Queries = 0;
    this.batchMs = 0;
    this.committedAt = null;
    // Rows and calls to other objects are counted against this turn's own tally (AsyncLocalStorage), not the room's.
    const billed = noRoundTrips();
    const answers = await countingRoundTrips(billed, run);
    const { rowsRead, rowsWritten, uncounted, doRequests } = billed;
    const metrics = {
      d1Queries: this.d1Queries,
      ms: performance.now() - started,
      batchMs: this.batchMs,
      operations,
      rowsRead,
      rowsWritten,
      uncounted,
      doRequests,
    };
    const bookmark = this.committedAt ? { bookmark: this.committedAt } : {};
    return answers.map((answer) => ("failure" in answer ? answer : { ...answer, metrics, ...bookmark }));
  }

  /**
   * Starts and completions wait for the room's next turn together: the first
   * to arrive queues the turn, and those arriving before it comes ride along.
   */
  private joinGroup(operation: Operation): Promise<RoomResult> {
    return new Promise((resolve, reject) => {
      this.gathering.push({ operation, resolve, reject });
      if (this.gathering.length === 1) void this.serialise(() => this.runGroup());
    });
  }

  private async runGroup() {
    const members = this.gathering.splice(0, MAX_GROUP);
    if (this.gathering.length > 0) void this.serialise(() => this.runGroup());
    try {
      const results = await this.measured(members.length, () => this.applyGroup(members.map((m) => m.operation)));
      members.forEach((m, i) => {
        const result = results[i]!;
        if ("failure" in result) m.reject(result.failure);
        else m.resolve(result);
      });
    } catch (e) {
      for (const m of members) m.reject(e);
    }
  }

  /**
   * Plans the operations one after another, each seeing what those before it
   * change (GroupReads), and commits them in one batch: one read and one
   * write for the whole group. Each answers exactly as it would alone.
   *
   * Only this room writes the project's tasks, so a guarded update fails in
   * a group only when its tasks were deleted with the project, and then the
   * later operations' guards fail too.
   */
  private async applyGroup(operations: Operation[]): Promise<(RoomAnswer | Failure)[]> {
    if (operations.length === 1) {
      try {
        return await this.replanned(operations[0]!.command, (offerWaiting) => this.commitGroup(operations, offerWaiting));
      } catch (failure) {
        return [{ failure }];
      }
    }
    try {
      return await this.commitGroup(operations, true);
    } catch {
      // The batch rolled back whole: each runs alone, so a failure is only its own.
      const answers: (RoomAnswer | Failure)[] = [];
      for (const operation of operations) answers.push(...(await this.applyGroup([operation])));
      return answers;
    }
  }

  /** Plans the operations one after another on the group's reads, and commits them together. */
  private async commitGroup(operations: Operation[], offerWaiting: boolean): Promise<RoomAnswer[]> {
    const taskIds = operations.map((o) => (o.command as { taskId: string }).taskId);
    const ends = operations.some((o) => o.command.op === "complete");
    const reads = await GroupReads.load(this.db, this.d1, this.projectId, taskIds, this.memory.ready(), ends);
    const outcomes: OpOutcome[] = [];
    for (const { actor, command } of operations) {
      const context = this.opContext(actor, reads, offerWaiting);
      const outcome = (await this.hooks.refusal(actor)) ?? (await planOperation(context, command));
      if (!isProblem(outcome)) reads.record(outcome.effects, context.now);
      outcomes.push(outcome);
    }
    this.d1Queries += reads.roundTrips;
    return this.commit(outcomes, operations, reads);
  }

  /**
   * Plans and commits an operation, and plans it again from fresh reads when
   * another project's room filled a server it assigned to; the last time
   * without offering waiting tasks, which the room then offers in its next turn.
   * Once more, too, when its events were numbered from an end of the log that
   * something else had moved.
   */
  private async replanned<T>(command: RoomCommand, attempt: (offerWaiting: boolean) => Promise<T>): Promise<T> {
    for (let plan = 1; ; plan++) {
      const offerWaiting = plan < MAX_PLANS;
      try {
        const result = await attempt(offerWaiting).catch((e: unknown) => (logMovedOn(e) ? attempt(offerWaiting) : Promise.reject(e)));
        if (!offerWaiting && command.op !== "sweep") this.offerWaitingSoon();
        return result;
      } catch (e) {
        if (!overCapacity(e) || !offerWaiting) throw e;
      }
    }
  }

  /** After an operation committed without offering waiting tasks, they are offered in the room's next turn. */
  private offerWaitingSoon() {
    this.serialise(() => this.apply({ actor: HUB_ACTOR, command: { op: "sweep" }, withView: false })).catch((e) =>
      logError("offering waiting tasks failed", { project_id: this.projectId, operation: "sweep" }, e),
    );
  }

  /**
   * Commits planned operations in one batch, hands on what committed, and
   * answers each: with the task's view, read at the end of the same batch,
   * where the caller asked for it. The room's memory of its tasks takes what a group (`group`) read and planned once
   * its batch has committed whole, and forgets what another operation may have changed.
   */
  private async commit(outcomes: OpOutcome[], operations: readonly Operation[], group?: GroupReads): Promise<RoomAnswer[]> {
    const plans = outcomes.filter((o): o is WritePlan => !isProblem(o));
    // Every operation's statements, then what they leave to the end of the batch, one statement each for all of them:
    // the capacity of the servers they assigned to, and their events (whose seqs follow the operations' order).
    const writes = plans.flatMap((p) => p.statements);
    const checks = capacityCheck(
      this.d1,
      plans.flatMap((p) => p.fills ?? []),
    );
    const appends = this.events.append(plans.flatMap((p) => (p.events ? [p.events] : [])));
    const viewIds = [...new Set(outcomes.flatMap((o, i) => (operations[i]!.withView && !isProblem(o) && writesAnything(o) ? [o.taskId] : [])))];
    const views = viewIds.length > 0 ? taskViewsInBatch(this.db, this.d1, viewIds) : undefined;
    const writing = writes.length + appends.statements.length > 0;
    const owed = writing ? await this.owedStatements() : [];
    if (writing) this.memory.ready().unsettle();
    // The tasks the batch gives to servers are read as it leaves them, for the room to hold when their agents start them.
    const keepsDependencies = group !== undefined || operations.every((o) => this.memory.keepsDependencies(o.command));
    const given = writing ? heldTasksInBatch(this.db, this.d1, this.projectId, givenTasks(plans), this.memory.knownDependents(keepsDependencies)) : undefined;
    const batched = writing
      ? await this.batch([...writes, ...checks, ...appends.statements, ...owed, ...(given ? [given.statement] : []), ...(views ? [views.statement] : [])])
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
    if (writing)
      this.memory.committed(guardsHeld ? (group ?? operations.map((o) => o.command)) : undefined, guardsHeld && given ? given.read(read![0]!) : undefined);
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

  /** What the batch's events owe integrations (the first batch of the room reads where the project's events stand). */
  private owedStatements() {
    if (!this.outbox.knowsLastSeq) this.d1Queries++;
    return this.outbox.statements(new Date().toISOString());
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

  private opContext(actor: RoomActor, reads: TaskReads = d1Reads(this.db, this.projectId, this.memory.ready()), offerWaiting = true): OpContext {
    return {
      db: this.db,
      d1: this.d1,
      projectId: this.projectId,
      actor,
      now: new Date().toISOString(),
      reads,
      offerWaiting,
      settings: () => this.projectSettings(),
    };
  }

  private async projectSettings(): Promise<ProjectSettings> {
    if (!this.settings) {
      const [row] = await this.db.select({ settings: projects.settings }).from(projects).where(eq(projects.id, this.projectId));
      this.settings = projectSettingsOf(row?.settings);
    }
    return this.settings;
  }
}
