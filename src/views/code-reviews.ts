/** A task's code reviews as the hub answers them: the latest to `orchestratia code review`, every attempt to people. */
import { z } from "zod";
import type { CodeReviewRow } from "../db/schema";
import { ATTEMPT_STATUSES, bySeverity, FINDING_SEVERITIES, REVIEWER_KINDS } from "../domain/code-review";
import { id, timestamp } from "./fields";
import { gitDiffStatsSchema } from "./tasks";

const findingSchema = z
  .object({ severity: z.enum(FINDING_SEVERITIES), title: z.string(), detail: z.string(), path: z.string().optional(), line: z.int().optional() })
  .meta({ id: "ReviewFinding" });

export const codeReviewSchema = z
  .object({
    id,
    task_id: id,
    attempt_number: z.int().meta({ description: "1 for the first completion reviewed, n+1 for each completion after a fix was asked" }),
    status: z.enum(ATTEMPT_STATUSES).meta({
      description:
        "`pending` while its reviewer works; `pass`, `warn` or `fail` by the policy's thresholds; `error` when the reviewer could not review; " +
        "`superseded` when its worker completed again before the review came",
    }),
    score: z.int().nullable().meta({ description: "0 to 100; null until reviewed" }),
    summary: z.string(),
    findings: z.array(findingSchema).meta({ description: "Errors first, then warnings, then notes" }),
    git_diff_stats: gitDiffStatsSchema,
    reviewer: z
      .object({
        kind: z.enum(REVIEWER_KINDS),
        task_id: id.optional().meta({ description: "An agent's review task" }),
        server_id: id.nullable().optional(),
        model: z.string().nullable().optional(),
      })
      .nullable(),
    review_task_id: id.nullable(),
    error: z.string().nullable().meta({ description: "Why the reviewer could not review (status `error`)" }),
    requested_at: timestamp,
    completed_at: timestamp.nullable(),
  })
  .meta({ id: "CodeReview" });
export type CodeReviewView = z.infer<typeof codeReviewSchema>;

export const codeReviewListSchema = z
  .object({ reviews: z.array(codeReviewSchema).meta({ description: "Every attempt, first first" }) })
  .meta({ id: "CodeReviewList" });

export const codeReviewView = (r: CodeReviewRow): CodeReviewView => ({
  id: r.id,
  task_id: r.taskId,
  attempt_number: r.attempt,
  status: r.status,
  score: r.score,
  summary: r.summary ?? "",
  findings: bySeverity(r.findings ?? []),
  git_diff_stats: r.gitDiffStats as CodeReviewView["git_diff_stats"],
  reviewer: r.reviewer ?? { kind: r.reviewerKind },
  review_task_id: r.reviewTaskId,
  error: r.error,
  requested_at: r.requestedAt,
  completed_at: r.completedAt,
});
