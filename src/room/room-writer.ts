/**
 * The single writer of a project's tasks. Operations run strictly one at a
 * time through a promise chain, because awaiting D1 lets other requests
 * interleave (input gates only cover the object's own storage). Each
 * operation, or group of starts and completions, is one db.batch; what it
 * committed is handed to the room's after-commit hook still inside the
 * queue, so a dashboard's replay (also queued) meets live events with no gap
 * and no duplicate. Here is the queue: turns, groups, replanning and what a
 * turn cost; the commit itself is BatchCommitter's (batch-commit.ts).
 */
import { countingRoundTrips, noRoundTrips } from "../db/round-trips";
import { logError } from "../runtime/log";
import { BatchCommitter, type Operation } from "./batch-commit";
import type { RoomAnswer, RoomCommand, RoomResult } from "./commands";
import { HUB_ACTOR } from "../runtime/room-rpc";
import { logMovedOn } from "./event-append";
import { GroupReads } from "./group-reads";
import { isProblem, overCapacity, planOperation, ServersFull, type OpOutcome } from "./operations";

/** Operations the room plans together and commits in one batch: the hot path of agents at work. */
const GROUPED: ReadonlySet<RoomCommand["op"]> = new Set(["start", "complete"]);
/** The most operations one batch carries (D1 counts each statement against an invocation's queries). */
const MAX_GROUP = 32;
/**
 * How often an operation is planned after another project's room filled a
 * server it assigned to; the last time without offering waiting tasks.
 */
const MAX_PLANS = 3;

/** An operation that threw: its caller gets the error, the others of its group their answers. */
interface Failure {
  failure: unknown;
}

export class RoomWriter extends BatchCommitter {
  private queue: Promise<unknown> = Promise.resolve();
  /** Operations waiting for the group that runs at the room's next turn. */
  private readonly gathering: { operation: Operation; resolve: (r: RoomResult) => void; reject: (e: unknown) => void }[] = [];

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
   * another project's room filled a server it assigned to (or the link of a
   * server serving several shards refused to hold room for it); the last time
   * without offering waiting tasks, which the room then offers in its next turn.
   * Once more, too, when its events were numbered from an end of the log that
   * something else had moved.
   */
  private async replanned<T>(command: RoomCommand, attempt: (offerWaiting: boolean) => Promise<T>): Promise<T> {
    try {
      for (let plan = 1; ; plan++) {
        const offerWaiting = plan < MAX_PLANS;
        try {
          const result = await attempt(offerWaiting).catch((e: unknown) => (logMovedOn(e) ? attempt(offerWaiting) : Promise.reject(e)));
          if (!offerWaiting && command.op !== "sweep") this.offerWaitingSoon();
          return result;
        } catch (e) {
          if (!overCapacity(e) || !offerWaiting) throw e;
          // Refused by servers' links: the next plan counts what those servers carry on the other shards.
          if (e instanceof ServersFull) for (const [id, load] of e.loads) this.loads.set(id, load);
        }
      }
    } finally {
      this.loads.clear();
    }
  }

  /** After an operation committed without offering waiting tasks, they are offered in the room's next turn. */
  private offerWaitingSoon() {
    this.serialise(() => this.apply({ actor: HUB_ACTOR, command: { op: "sweep" }, withView: false })).catch((e) =>
      logError("offering waiting tasks failed", { project_id: this.projectId, operation: "sweep" }, e),
    );
  }
}
