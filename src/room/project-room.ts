/**
 * One Durable Object per project: the single writer of that project's tasks.
 * Operations arrive over RPC and run strictly one at a time through a promise
 * chain, because awaiting D1 lets other requests interleave (input gates only
 * cover the object's own storage). Each operation is one db.batch.
 */
import { DurableObject } from "cloudflare:workers";
import { and, eq, isNotNull, lte, min } from "drizzle-orm";
import { createDb, type Db } from "../db/client";
import { tasks } from "../db/schema";
import type { Env } from "../env";
import { HUB_ACTOR, type RoomActor, type RoomCommand, type RoomResult } from "./commands";
import { fail, isProblem, planOperation } from "./task-operations";

export class ProjectRoom extends DurableObject<Env> {
  private readonly db: Db;
  private queue: Promise<unknown> = Promise.resolve();
  /** D1 round trips of the operation running now (operations never overlap). */
  private d1Queries = 0;
  private projectId: string | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.db = createDb(env.DB, () => this.d1Queries++);
  }

  /** Runs `work` after every operation queued before it; a failure does not stop the queue. */
  private serialise<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  async execute(projectId: string, actor: RoomActor, command: RoomCommand): Promise<RoomResult> {
    return this.serialise(async () => {
      const started = performance.now();
      this.d1Queries = 0;
      const result = await this.apply(projectId, actor, command);
      return { ...result, metrics: { d1Queries: this.d1Queries, ms: performance.now() - started } };
    });
  }

  private async apply(projectId: string, actor: RoomActor, command: RoomCommand) {
    await this.rememberProject(projectId);
    const outcome = await planOperation(this.opContext(projectId, actor), command);
    if (isProblem(outcome)) return { ok: false as const, problem: outcome };
    if (outcome.statements.length > 0) {
      const results = await this.batch(outcome.statements);
      if (outcome.guardedUpdate !== undefined && results[outcome.guardedUpdate]!.results.length !== 1) {
        // Only this room writes the project's tasks, so this means the task was deleted or changed underneath.
        return { ok: false as const, problem: { status: 409 as const, code: "CONCURRENT_CHANGE", detail: "The task changed while this request was being handled; retry" } };
      }
    }
    if (outcome.deadline) await this.scheduleAlarm(Date.parse(outcome.deadline));
    return { ok: true as const, taskId: outcome.taskId, ...(outcome.data ? { data: outcome.data } : {}) };
  }

  /** One operation's writes: one D1 transaction, one round trip. */
  private batch(statements: D1PreparedStatement[]) {
    this.d1Queries++;
    return this.env.DB.batch(statements);
  }

  private opContext(projectId: string, actor: RoomActor) {
    return { db: this.db, d1: this.env.DB, projectId, actor, now: new Date().toISOString() };
  }

  /** The alarm needs to know the project; stored once, remembered in memory. */
  private async rememberProject(projectId: string) {
    if (this.projectId === projectId) return;
    if ((await this.ctx.storage.get<string>("projectId")) !== projectId) await this.ctx.storage.put("projectId", projectId);
    this.projectId = projectId;
  }

  private async scheduleAlarm(at: number) {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || at < current) await this.ctx.storage.setAlarm(at);
  }

  /** Fails running tasks whose timeout has passed (code TIMEOUT; never retried implicitly), then waits for the next deadline. */
  override async alarm() {
    const projectId = await this.ctx.storage.get<string>("projectId");
    if (!projectId) return;
    await this.serialise(async () => {
      const now = new Date().toISOString();
      const overdue = await this.db
        .select({ id: tasks.id, timeoutSeconds: tasks.timeoutSeconds })
        .from(tasks)
        .where(and(eq(tasks.projectId, projectId), eq(tasks.status, "running"), isNotNull(tasks.deadlineAt), lte(tasks.deadlineAt, now)));
      for (const task of overdue) {
        const outcome = await fail(this.opContext(projectId, HUB_ACTOR), {
          op: "fail",
          taskId: task.id,
          error: `Timed out after ${task.timeoutSeconds} s`,
          code: "TIMEOUT",
        });
        if (!isProblem(outcome)) await this.batch(outcome.statements);
      }
      const [next] = await this.db
        .select({ at: min(tasks.deadlineAt) })
        .from(tasks)
        .where(and(eq(tasks.projectId, projectId), eq(tasks.status, "running"), isNotNull(tasks.deadlineAt)));
      if (next?.at) await this.ctx.storage.setAlarm(Math.max(Date.parse(next.at), Date.now() + 1000));
    });
  }
}
