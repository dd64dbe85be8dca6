/**
 * One Durable Object per project with a model reviewer (named by the project's id): reviews each attempt the room
 * hands it, outside the room's turn. A job is kept in storage until its attempt is settled, and the alarm runs it, so
 * a job survives eviction and a failed try is tried again: 429s, 5xx and unreachable endpoints a few times with
 * backoff (later where `Retry-After` asks), a settle the room could not take until it does. A timeout, a refusal, a
 * malformed review or a 4xx settles the attempt as an `error` at once. Settling is a no-op for an attempt already
 * settled or superseded, so a job run twice changes nothing.
 */
import { DurableObject } from "cloudflare:workers";
import { unseal } from "../../auth/sealed";
import type { ReviewPolicy } from "../../domain/code-review";
import { log, logError } from "../../runtime/log";
import type { RoomEnv } from "../../runtime/room-env";
import { executeInRoom, HUB_ACTOR, type RoomReachingEnv } from "../../runtime/room-rpc";
import { checkTargetFor } from "../dns";
import { retryAfterMs } from "../webhook-message";
import { errorMessage, modelRequest, modelUrl, readAnswer, retryable, reviewPrompt, type ModelAnswer } from "./model-request";
import { diffCommand, readAttempt, readDiff, type AttemptReads, type ReviewJob } from "./review-subject";

type ReviewerEnv = RoomEnv & RoomReachingEnv;

interface StoredJob extends ReviewJob {
  /** Tries at the model made so far. */
  tries: number;
  /** When to run it next (epoch ms). */
  dueAt: number;
  /** The diff, once read: a retry does not run `git diff` again. */
  diff?: string;
  lastError?: string;
  /** Runs that threw (the room or D1 unreachable): after MAX_FAILURES the attempt is settled as an error. */
  failures?: number;
}

/** Waits before the 2nd, 3rd and 4th try at the model; after the 4th the attempt is an error. */
const RETRY_DELAYS_MS = [5_000, 30_000, 120_000];
/** The longest wait a `Retry-After` is honoured up to. */
const MAX_RETRY_AFTER_MS = 600_000;
/** A settle the room did not take is tried again after this. */
const SETTLE_RETRY_MS = 30_000;
const MAX_FAILURES = 10;
const DEFAULT_TIMEOUT_S = 60;

const keyOf = (job: ReviewJob) => `job:${job.taskId}:${job.attempt}`;

/** A try at the model: its answer (a review or a final error), or a reason to try again. */
type Tried = ModelAnswer | { retry: string; afterMs: number | null };

export class CodeReviewer extends DurableObject<ReviewerEnv> {
  /** The room opened an attempt for a model reviewer: keep it, and run it now. */
  async review(job: ReviewJob): Promise<void> {
    const key = keyOf(job);
    if (!(await this.ctx.storage.get(key))) await this.ctx.storage.put(key, { ...job, tries: 0, dueAt: Date.now() } satisfies StoredJob);
    await this.ctx.storage.setAlarm(Date.now());
  }

  /** Jobs still kept (for tests and support: what waits, and why). */
  async pending(): Promise<StoredJob[]> {
    return [...(await this.ctx.storage.list<StoredJob>({ prefix: "job:" })).values()].map(({ diff: _, ...job }) => job);
  }

  override async alarm() {
    const jobs = [...(await this.ctx.storage.list<StoredJob>({ prefix: "job:" })).values()];
    for (const job of jobs) {
      if (job.dueAt > Date.now()) continue;
      try {
        await this.run(job);
      } catch (e) {
        logError("a model review failed", { project_id: job.projectId, task_id: job.taskId, operation: "model_review" }, e);
        await this.failed(job);
      }
    }
    const left = [...(await this.ctx.storage.list<StoredJob>({ prefix: "job:" })).values()];
    if (left.length) await this.ctx.storage.setAlarm(Math.max(Date.now() + 100, Math.min(...left.map((j) => j.dueAt))));
  }

  /** A run threw: it is tried again a while later, and after MAX_FAILURES the attempt is an error (or, failing that, dropped). */
  private async failed(job: StoredJob) {
    const failures = (job.failures ?? 0) + 1;
    // Read again: a run that threw after keeping the diff keeps it.
    const kept = (await this.ctx.storage.get<StoredJob>(keyOf(job))) ?? job;
    if (failures < MAX_FAILURES) return this.ctx.storage.put(keyOf(job), { ...kept, failures, dueAt: Date.now() + SETTLE_RETRY_MS });
    await this.settle(job, null, { ok: false, error: `the review could not be made: the hub failed ${failures} times running it` }).catch(() =>
      this.ctx.storage.delete(keyOf(job)),
    );
  }

  private async run(job: StoredJob) {
    const reads = await readAttempt(this.env.DB, job);
    if (!reads) return this.ctx.storage.delete(keyOf(job));
    const policy = reads.policy;
    const reviewer = policy?.reviewer;
    if (!policy || reviewer?.kind !== "model" || !reviewer.endpoint || !reviewer.model || !reads.apiKeySealed)
      return this.settle(job, reviewer?.model ?? null, { ok: false, error: "the project's review policy no longer names a model reviewer with its key" });
    let diff = job.diff;
    if (diff === undefined) {
      const read = await readDiff(this.env, job, reads);
      // A daemon offline or slow a moment is waited for, as a busy model is; a refusal is final.
      if (!read.ok) return read.transient ? this.later(job, reviewer.model, read.error, null) : this.settle(job, reviewer.model, read);
      diff = read.diff;
      await this.ctx.storage.put(keyOf(job), { ...job, diff });
    }
    const tried = await this.ask(policy, reads, diff);
    if ("retry" in tried) return this.later({ ...job, diff }, reviewer.model, tried.retry, tried.afterMs);
    return this.settle(job, reviewer.model, tried);
  }

  /** Tries the job again after the next delay (or what `Retry-After` asks); after the last, the attempt is an error. */
  private async later(job: StoredJob, model: string, why: string, afterMs: number | null) {
    const tries = job.tries + 1;
    const delay = RETRY_DELAYS_MS[tries - 1];
    if (delay === undefined) return this.settle(job, model, { ok: false, error: `${why} (gave up after ${tries} tries)` });
    const wait = afterMs !== null ? Math.min(afterMs, MAX_RETRY_AFTER_MS) : delay;
    log("warn", "a model review will be tried again", { project_id: job.projectId, task_id: job.taskId, operation: "model_review", detail: why });
    return this.ctx.storage.put(keyOf(job), { ...job, tries, dueAt: Date.now() + wait, lastError: why } satisfies StoredJob);
  }

  /** One call of the model, within the timeout. The key goes in the request's headers only. */
  private async ask(policy: ReviewPolicy, reads: AttemptReads, diff: string): Promise<Tried> {
    const { endpoint, api_style, model } = policy.reviewer;
    const style = api_style ?? "openai";
    const url = modelUrl(endpoint!, style);
    // Checked when saved, and again here (a name's addresses change), as webhooks' targets are.
    const check = await checkTargetFor(this.env, url);
    if (!check.ok) return { ok: false, error: `the endpoint failed its check (${check.message})` };
    const key = await unseal(this.env.DATA_KEY, reads.apiKeySealed!).catch(() => null);
    if (key === null) return { ok: false, error: "the policy's API key could not be unsealed (DATA_KEY changed?): an admin saves the key again" };
    const prompt = reviewPrompt({
      title: reads.title,
      spec: reads.spec,
      acceptanceCriteria: reads.acceptanceCriteria,
      range: diffCommand(reads.commits).range,
      stats: reads.stats,
      diff,
    });
    const request = modelRequest(style, model!, key, prompt);
    const timeoutS = Number(this.env.CODE_REVIEW_TIMEOUT_SECONDS) > 0 ? Number(this.env.CODE_REVIEW_TIMEOUT_SECONDS) : DEFAULT_TIMEOUT_S;
    let res: Response;
    let text: string;
    try {
      // Redirects are not followed: the address checked is the only one the diff and the key go to (as webhooks do).
      res = await fetch(url, {
        method: "POST",
        headers: request.headers,
        body: JSON.stringify(request.body),
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutS * 1000),
      });
      text = await res.text();
    } catch (e) {
      if (e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError"))
        return { ok: false, error: `the model did not answer within ${timeoutS} s` };
      return { retry: `the endpoint could not be reached (${e instanceof Error ? e.message.slice(0, 200) : "unknown error"})`, afterMs: null };
    }
    if (res.status >= 300 && res.status < 400)
      return { ok: false, error: `the endpoint answered ${res.status} (a redirect, which the hub does not follow): give its final URL` };
    if (!res.ok) {
      const why = `the endpoint answered ${res.status}: ${errorMessage(text, key) || res.statusText}`;
      return retryable(res.status) ? { retry: why, afterMs: retryAfterMs(res.headers.get("Retry-After")) } : { ok: false, error: why };
    }
    try {
      return readAnswer(style, JSON.parse(text));
    } catch {
      return { ok: false, error: "the model's answer is not JSON" };
    }
  }

  /** Hands the outcome to the room; the job is done once the room took it (or found the attempt settled already). */
  private async settle(job: StoredJob, model: string | null, outcome: ModelAnswer) {
    const result = await executeInRoom(this.env, job.projectId, HUB_ACTOR, {
      op: "settle_review",
      taskId: job.taskId,
      attempt: job.attempt,
      source: { kind: "model", model, outcome },
    });
    if (!result.ok)
      log("warn", "a model review was not settled", { project_id: job.projectId, task_id: job.taskId, operation: "settle_review", code: result.problem.code });
    await this.ctx.storage.delete(keyOf(job));
  }
}
