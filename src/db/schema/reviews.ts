/**
 * The code-review loop (API.md "Code review"): a project's review policy, and each attempt at reviewing a completed
 * task. The project's room is the only writer of both: it decides an attempt in the batch of the completion that asks
 * for it, unique on (task, attempt), so two completions racing start one review per attempt.
 */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { Finding, ReviewedDiff, ReviewPolicy } from "../../domain/code-review";
import { ATTEMPT_STATUSES } from "../../domain/code-review";
import { projects } from "./people";
import { tasks } from "./tasks";

export const reviewPolicies = sqliteTable("review_policies", {
  projectId: text("project_id")
    .primaryKey()
    .references(() => projects.id, { onDelete: "cascade" }),
  /** The policy without its key (`reviewer.has_api_key` says whether one is kept). */
  policy: text("policy", { mode: "json" }).$type<ReviewPolicy>().notNull(),
  /** A model reviewer's API key, sealed with DATA_KEY: read only by the reviewer that calls the model. */
  apiKeySealed: text("api_key_sealed"),
  updatedBy: text("updated_by").notNull(),
  updatedAt: text("updated_at").notNull(),
});

/** Who made a review: a task given to an agent, or a model endpoint. */
export type ReviewerRef = { kind: "agent"; task_id: string; server_id?: string | null } | { kind: "model"; model: string | null };

export const codeReviews = sqliteTable(
  "code_reviews",
  {
    id: text("id").primaryKey(),
    projectId: text("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    /** The reviewed task. */
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    /** 1 for the first completion reviewed, n+1 for each completion after a review asked for a fix. */
    attempt: integer("attempt").notNull(),
    status: text("status", { enum: ATTEMPT_STATUSES }).notNull(),
    score: integer("score"),
    summary: text("summary"),
    findings: text("findings", { mode: "json" }).$type<Finding[]>(),
    /** What the completion under review changed, as its CLI measured it. */
    gitDiffStats: text("git_diff_stats", { mode: "json" }).$type<ReviewedDiff>().notNull(),
    reviewerKind: text("reviewer_kind", { enum: ["agent", "model"] }).notNull(),
    reviewer: text("reviewer", { mode: "json" }).$type<ReviewerRef | null>(),
    /** The review task an agent reviewer was given, once created. */
    reviewTaskId: text("review_task_id"),
    /** Why the attempt could not be reviewed (status `error`). */
    error: text("error"),
    requestedAt: text("requested_at").notNull(),
    completedAt: text("completed_at"),
  },
  (t) => [uniqueIndex("code_reviews_task_attempt").on(t.taskId, t.attempt), index("code_reviews_project").on(t.projectId, t.requestedAt)],
);

export type CodeReviewRow = typeof codeReviews.$inferSelect;
