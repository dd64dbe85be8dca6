/**
 * The code-review loop in the room (API.md "Code review"): a completion the policy reviews opens an attempt in its own
 * batch (unique on task and attempt), the attempt is handed to its reviewer, and the reviewer's answer settles it —
 * accepted, a fix asked of the worker's session, or the policy's final action.
 */
import { sql } from "drizzle-orm";
import { canonicalJson, contentOfPointers } from "../../domain/canonical-json";
import {
  fixPrompt,
  VERDICTS,
  laterAttemptRanges,
  nextStep,
  OPEN_TO_WORKER,
  policyReviews,
  REVIEW_TASK_TYPE,
  reviewTaskSpec,
  verdictOf,
  type Review,
  type ReviewPolicy,
  type TaskReviewStatus,
} from "../../domain/code-review";
import { reviewPolicies, type CodeReviewRow, type ReviewerRef } from "../../db/schema";
import type { GitDiffStats } from "../../protocol/hub-api";
import { reviewInResult } from "../../protocol/code-review";
import { typedLine } from "../../server-link/typed-line";
import { FINISHED } from "../../domain/lifecycle";
import { cutText } from "../../domain/text";
import { newTask } from "../commands";
import { guardHolds, statement, type EventDraft, type TaskRow, type VersionGuard } from "../statements";
import { recordEvents, statusEvent, taskWrite, type Cmd, type OpContext, type OpOutcome, type Planner, type WritePlan } from "./kernel";
import { askPerson, create } from "./lifecycle";
import { invalidField, invalidTransition, notAllowed, notFound } from "./refusals";

/** A review task's title ("Review: " and the reviewed task's) is cut to this, to read as a title in lists. */
const MAX_TITLE = 200;

/** Opens attempt `attempt` of the task's review, if `guard` holds once the batch's writes are in. */
function openAttempt(ctx: OpContext, task: TaskRow, attempt: number, diff: GitDiffStats, policy: ReviewPolicy, guard: VersionGuard) {
  return statement(
    ctx.d1,
    sql`INSERT INTO code_reviews (id, project_id, task_id, attempt, status, git_diff_stats, reviewer_kind, requested_at)
        SELECT ${crypto.randomUUID()}, ${ctx.projectId}, ${task.id}, ${attempt}, 'pending', ${JSON.stringify(diff)}, ${policy.reviewer.kind}, ${ctx.now}
        WHERE ${guardHolds(guard)}`,
  );
}

const requested = (task: TaskRow, attempt: number, policy: ReviewPolicy): EventDraft => ({
  type: "review_requested",
  taskId: task.id,
  data: { attempt, max_retries: policy.max_retries, reviewer: policy.reviewer.kind },
});

/**
 * What a completion the policy reviews adds to its batch: the task in review at attempt 1, the attempt, its event.
 * Null when the policy does not review it: a review task itself, a task reviewed before, or a change it does not match.
 */
export async function reviewOnCompletion(ctx: OpContext, task: TaskRow, diff: GitDiffStats | undefined) {
  if (task.reviewOf || task.reviewStatus !== null || !diff) return null;
  const policy = await ctx.reviewPolicy();
  if (!policyReviews(policy, task, diff)) return null;
  return {
    set: { reviewStatus: "reviewing", reviewAttempt: 1 } satisfies Partial<TaskRow>,
    events: [requested(task, 1, policy)],
    statements: (guard: VersionGuard) => [openAttempt(ctx, task, 1, diff, policy, guard)],
  };
}

/** Whether a completion of this done task is the next attempt of its review rather than a second completion. */
export const openToWorker = (task: TaskRow) => task.status === "done" && task.reviewStatus !== null && OPEN_TO_WORKER.includes(task.reviewStatus);

/**
 * A completion of a task the review loop holds open to its worker: the next attempt. The result, response and diff
 * replace the last; an attempt still waiting for its reviewer is superseded (its answer, if it comes, changes
 * nothing). The same completion again (same result and diff) is the same attempt: nothing is written.
 */
export async function completeAgain(ctx: OpContext, task: TaskRow, cmd: Cmd<"complete">): Promise<OpOutcome> {
  if (ctx.actor.kind !== "agent" || task.assignedServerId !== ctx.actor.serverId) return notAllowed("Only the task's worker completes it again for its review");
  if (cmd.envelope && cmd.envelope.status !== "done")
    return invalidTransition("done", "A task under review is completed again with its fixed result; it cannot fail or ask for help now");
  const diff = cmd.gitDiffStats ?? (task.gitDiffStats as GitDiffStats | null);
  const same =
    canonicalJson([task.result, task.response, task.gitDiffStats], contentOfPointers) ===
    canonicalJson([cmd.result, cmd.response ?? task.response, diff], contentOfPointers);
  if (same) return { taskId: task.id, statements: [], unchanged: true };
  if (!diff) return invalidField("git_diff_stats", "is required to complete a task under review again: the review reads what changed");
  const policy = await ctx.reviewPolicy();
  const attempt = task.reviewAttempt + 1;
  const summary = typeof cmd.result.summary === "string" ? cmd.result.summary : null;
  const plan = taskWrite(
    ctx,
    task,
    {
      result: cmd.result,
      resultStructured: cmd.structured,
      ...(cmd.response ? { response: cmd.response } : {}),
      gitDiffStats: diff,
      warnings: [...task.warnings, ...cmd.warnings],
      completedAt: ctx.now,
      reviewStatus: "reviewing",
      reviewAttempt: attempt,
    },
    [statusEvent("task_completed", task, "done", { summary, structured: cmd.structured, attempt }), requested(task, attempt, policy)],
    (guard) => [
      ...(task.reviewStatus === "reviewing"
        ? [
            statement(
              ctx.d1,
              sql`UPDATE code_reviews SET status = 'superseded', completed_at = ${ctx.now}
                  WHERE task_id = ${task.id} AND attempt = ${task.reviewAttempt} AND status = 'pending' AND ${guardHolds(guard)}`,
            ),
          ]
        : []),
      openAttempt(ctx, task, attempt, diff, policy, guard),
    ],
  );
  return plan;
}

/** The refusal of a review task's completion without a valid review: 422 naming the field. */
export function reviewRefusal(task: TaskRow, result: Record<string, unknown>) {
  if (!task.reviewOf) return null;
  const found = reviewInResult(result);
  if (found.ok) return null;
  const [first] = found.issues;
  return { ...invalidField(first!.path, first!.message), errors: found.issues };
}

export const setReviewPolicy: Planner<"set_review_policy"> = async (ctx, cmd) => {
  if (ctx.actor.kind !== "person") return notAllowed("Only people change a project's review policy");
  const keyChange = cmd.apiKeySealed === undefined ? {} : { apiKeySealed: cmd.apiKeySealed };
  const row = { projectId: ctx.projectId, policy: cmd.policy, apiKeySealed: cmd.apiKeySealed ?? null, updatedBy: ctx.actor.label, updatedAt: ctx.now };
  return {
    taskId: "",
    statements: [
      statement(
        ctx.d1,
        ctx.db
          .insert(reviewPolicies)
          .values(row)
          .onConflictDoUpdate({ target: reviewPolicies.projectId, set: { policy: cmd.policy, updatedBy: ctx.actor.label, updatedAt: ctx.now, ...keyChange } }),
      ),
    ],
    events: recordEvents(ctx, [{ type: "project_settings_changed", taskId: null, data: { review_policy: cmd.policy, changed: ["review_policy"] } }]),
    reviewPolicy: cmd.policy,
    leavesTasksAlone: true,
    data: { policy: cmd.policy },
  };
};

async function attemptRow(ctx: OpContext, taskId: string, attempt: number): Promise<CodeReviewRow | undefined> {
  return ctx.db.query.codeReviews.findFirst({ where: (r, { and, eq }) => and(eq(r.taskId, taskId), eq(r.attempt, attempt), eq(r.projectId, ctx.projectId)) });
}

/** Review tasks still open for attempts a newer completion superseded: the follow-up cancels them. */
async function staleReviewTasks(ctx: OpContext, taskId: string): Promise<string[]> {
  const { results } = await ctx.d1
    .prepare(
      `SELECT r.review_task_id AS id FROM code_reviews r JOIN tasks t ON t.id = r.review_task_id
       WHERE r.task_id = ?1 AND r.status = 'superseded' AND t.status NOT IN ('done', 'failed', 'cancelled')`,
    )
    .bind(taskId)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}

/** The ranges a later attempt is reviewed over, from the first attempt and the last one judged. */
async function earlierAttempts(ctx: OpContext, taskId: string, attempt: number, current: CodeReviewRow) {
  const rows = await ctx.db.query.codeReviews.findMany({
    where: (r, { and, eq, lt }) => and(eq(r.taskId, taskId), lt(r.attempt, attempt)),
    orderBy: (r, { asc }) => asc(r.attempt),
  });
  if (rows.length === 0) return undefined;
  const judged = rows.filter((r) => (VERDICTS as readonly string[]).includes(r.status)).at(-1);
  return laterAttemptRanges(rows[0]!.gitDiffStats, judged?.gitDiffStats ?? null, current.gitDiffStats);
}

const nothingToDo = (taskId: string, why: string): WritePlan => ({ taskId, statements: [], unchanged: true, data: { skipped: why } });

/**
 * Hands a pending attempt to its reviewer. An agent reviewer gets a review task: linked to the reviewed one, needing
 * the policy's capability and the task's repository, never offered to the worker's server. A model reviewer has
 * nothing written here: the room wakes it once this answers `{reviewer: "model"}`.
 */
export const startReview: Planner<"start_review"> = async (ctx, cmd) => {
  const task = await ctx.reads.row(cmd.taskId);
  if (!task) return notFound("Task");
  const row = await attemptRow(ctx, task.id, cmd.attempt);
  if (!row || row.status !== "pending" || row.reviewTaskId) return nothingToDo(task.id, "the attempt is not waiting for a reviewer");
  const stale = cmd.attempt > 1 ? await staleReviewTasks(ctx, task.id) : [];
  if (row.reviewerKind === "model") return { taskId: task.id, statements: [], data: { reviewer: "model", stale_review_tasks: stale } };
  const policy = await ctx.reviewPolicy();
  const later = cmd.attempt > 1 ? await earlierAttempts(ctx, task.id, cmd.attempt, row) : undefined;
  const repo = typeof task.requirements?.repo === "string" ? task.requirements.repo : task.targetRepo;
  const title = `Review: ${task.title}`;
  const created = await create(ctx, {
    op: "create",
    task: newTask({
      title: cutText(title, MAX_TITLE, "…"),
      spec: reviewTaskSpec({
        taskId: task.id,
        title: task.title,
        spec: task.spec,
        acceptanceCriteria: task.acceptanceCriteria,
        repo,
        branch: task.targetBranch,
        attempt: cmd.attempt,
        diff: row.gitDiffStats,
        later,
      }),
      type: REVIEW_TASK_TYPE,
      priority: task.priority,
      targetRepo: task.targetRepo,
      targetBranch: task.targetBranch,
      requirements: { capabilities: [policy.reviewer.capability], ...(repo ? { repo } : {}) },
      origin: { review: { of: task.id, attempt: cmd.attempt, notServer: task.assignedServerId }, traceparent: task.traceparent ?? undefined },
    }),
    dependencies: [{ depends_on_task_id: task.id, dependency_type: "related" }],
  });
  if (!("statements" in created)) return created;
  const reviewer: ReviewerRef = { kind: "agent", task_id: created.taskId };
  return {
    ...created,
    statements: [
      ...created.statements,
      statement(ctx.d1, sql`UPDATE code_reviews SET review_task_id = ${created.taskId}, reviewer = ${JSON.stringify(reviewer)} WHERE id = ${row.id}`),
    ],
    data: { reviewer: "agent", review_task_id: created.taskId, worker_session: task.targetSessionId, stale_review_tasks: stale },
  };
};

/** What an agent reviewer's review task says, once it ended: its review, or why there is none. */
function agentOutcome(reviewTask: TaskRow | undefined): { ok: true; review: Review } | { ok: false; error: string } {
  if (!reviewTask) return { ok: false, error: "the review task is gone" };
  if (reviewTask.status === "done") {
    const found = reviewInResult((reviewTask.result ?? {}) as Record<string, unknown>);
    return found.ok ? found : { ok: false, error: `the review task's result has no valid review: ${found.issues[0]!.path} ${found.issues[0]!.message}` };
  }
  const error = typeof reviewTask.error?.message === "string" ? `: ${reviewTask.error.message}` : "";
  return { ok: false, error: `the review task ${reviewTask.status === "cancelled" ? "was cancelled" : "failed"}${error}` };
}

/**
 * Settles a pending attempt with its reviewer's answer, under the policy as it is now: the attempt judged, the task's
 * place in the loop, and what follows (see nextStep). An attempt settled or superseded already is left as it is.
 */
export const settleReview: Planner<"settle_review"> = async (ctx, cmd) => {
  const task = await ctx.reads.row(cmd.taskId);
  if (!task) return notFound("Task");
  const row = await attemptRow(ctx, task.id, cmd.attempt);
  if (!row || row.status !== "pending" || task.reviewAttempt !== cmd.attempt) return nothingToDo(task.id, "the attempt is not waiting for a review");
  const { source } = cmd;
  const reviewTask = source.kind === "agent" ? await ctx.reads.row(source.reviewTaskId) : undefined;
  if (source.kind === "agent" && (row.reviewTaskId !== source.reviewTaskId || (reviewTask && !FINISHED.includes(reviewTask.status))))
    return nothingToDo(task.id, "the review task has not ended");
  const ownReview = reviewTask?.assignedServerId && reviewTask.assignedServerId === task.assignedServerId;
  const outcome = ownReview
    ? { ok: false as const, error: "the review task was done by the server whose change it reviews" }
    : source.kind === "agent"
      ? agentOutcome(reviewTask)
      : source.outcome;
  const reviewer: ReviewerRef =
    source.kind === "agent"
      ? { kind: "agent", task_id: source.reviewTaskId, server_id: reviewTask?.assignedServerId ?? null }
      : { kind: "model", model: source.model };
  const policy = await ctx.reviewPolicy();
  const base = { attempt: cmd.attempt, max_retries: policy.max_retries, reviewer };

  if (!outcome.ok) {
    const events: EventDraft[] = [
      { type: "review_failed", taskId: task.id, data: { ...base, status: "error", error: outcome.error, action: policy.on_final_failure } },
    ];
    const attemptWrite = attemptUpdate(ctx, row, { status: "error", error: outcome.error, reviewer });
    const question = `The code review of attempt ${cmd.attempt} could not be made: ${outcome.error}. Answer to send the task back to its agent, or cancel it.`;
    return finalPlan(ctx, task, policy, "error", events, attemptWrite, question);
  }
  const { review } = outcome;
  const verdict = verdictOf(review.score, policy);
  // Reviews count against max_retries, not attempt numbers: an attempt superseded before its review used none.
  const round = (await judgedBefore(ctx, task.id)) + 1;
  const step = nextStep(verdict, round, policy);
  const judged = { ...base, round, status: verdict, score: review.score, summary: review.summary, findings: review.findings.length };
  const attemptWrite = attemptUpdate(ctx, row, { status: verdict, score: review.score, summary: review.summary, findings: review.findings, reviewer });
  if (step.kind === "accept") {
    return settledPlan(ctx, task, step.status, [{ type: verdict === "pass" ? "review_passed" : "review_warned", taskId: task.id, data: judged }], attemptWrite);
  }
  if (step.kind === "fix") {
    const prompt = typedLine(fixPrompt({ taskId: task.id, title: task.title, attempt: round, maxRetries: policy.max_retries, verdict, policy, review }));
    const event: EventDraft = {
      type: verdict === "warn" ? "review_warned" : "review_failed",
      taskId: task.id,
      traceparent: task.traceparent,
      data: { ...judged, fix_requested: true, prompt, session_id: task.targetSessionId },
    };
    return settledPlan(ctx, task, "changes_requested", [event], attemptWrite);
  }
  const events: EventDraft[] = [
    { type: "review_failed", taskId: task.id, data: judged },
    { type: "review_exhausted", taskId: task.id, data: { ...base, round, score: review.score, action: policy.on_final_failure } },
  ];
  const question = `The code review failed on its last attempt (${round} of ${policy.max_retries + 1}, score ${review.score}/100): ${review.summary} Answer to send the task back to its agent, or cancel it.`;
  return finalPlan(ctx, task, policy, "failed", events, attemptWrite, question);
};

/** How many of the task's attempts were judged (pass, warn or fail) before this one. */
async function judgedBefore(ctx: OpContext, taskId: string): Promise<number> {
  const row = await ctx.d1
    .prepare("SELECT count(*) AS n FROM code_reviews WHERE task_id = ?1 AND status IN ('pass', 'warn', 'fail')")
    .bind(taskId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

function attemptUpdate(ctx: OpContext, row: CodeReviewRow, set: Partial<CodeReviewRow>) {
  return (guard: VersionGuard) =>
    statement(
      ctx.d1,
      sql`UPDATE code_reviews SET status = ${set.status}, score = ${set.score ?? null}, summary = ${set.summary ?? null},
            findings = ${set.findings ? JSON.stringify(set.findings) : null}, error = ${set.error ?? null},
            reviewer = ${JSON.stringify(set.reviewer ?? null)}, completed_at = ${ctx.now}
          WHERE id = ${row.id} AND status = 'pending' AND ${guardHolds(guard)}`,
    );
}

const settledPlan = (ctx: OpContext, task: TaskRow, status: TaskReviewStatus, events: EventDraft[], attempt: (g: VersionGuard) => D1PreparedStatement) =>
  taskWrite(ctx, task, { reviewStatus: status }, events, (guard) => [attempt(guard)]);

/** The attempts ran out (or the reviewer could not review): the task stays done, or waits on a person, as the policy says. */
function finalPlan(
  ctx: OpContext,
  task: TaskRow,
  policy: ReviewPolicy,
  status: TaskReviewStatus,
  events: EventDraft[],
  attempt: (g: VersionGuard) => D1PreparedStatement,
  question: string,
): WritePlan {
  if (policy.on_final_failure === "keep_done" || task.status !== "done") return settledPlan(ctx, task, status, events, attempt);
  const plan = askPerson(ctx, task, { question, context: undefined, interventionType: "help" }, { set: { reviewStatus: status }, events });
  return { ...plan, statements: [...plan.statements, attempt(plan.events?.guard ?? null)] };
}
