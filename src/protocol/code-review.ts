/**
 * The shapes of the code-review loop on the wire (API.md "Code review"): the review a reviewer answers (an agent's
 * `review` contract, or a model's structured output), and a project's review policy as an admin sets it.
 */
import { z } from "zod";
import {
  DEFAULT_REVIEW_CAPABILITY,
  FINAL_FAILURE_ACTIONS,
  FINDING_SEVERITIES,
  MODEL_API_STYLES,
  REVIEW_CONTRACT,
  REVIEWER_KINDS,
  VERDICTS,
  type Review,
} from "../domain/code-review";
import { priority } from "./hub-api";

/** Most findings a review keeps. */
export const MAX_FINDINGS = 200;

const finding = z.object(
  {
    severity: z.enum(FINDING_SEVERITIES, { error: `must be one of ${FINDING_SEVERITIES.join(", ")}` }),
    title: z.string("must be a string").trim().min(1, "must not be empty").max(500, "must be at most 500 characters"),
    detail: z.string("must be a string").max(10_000, "must be at most 10000 characters").default(""),
    path: z.string("must be a string").max(4096, "must be at most 4096 characters").optional(),
    line: z.int("must be a whole number").min(0, "must not be negative").optional(),
  },
  { error: "must be an object" },
);

export const reviewShape = z
  .object(
    {
      score: z.number("must be a number").min(0, "must be from 0 to 100").max(100, "must be from 0 to 100").transform(Math.round),
      status: z.enum(VERDICTS, { error: `must be one of ${VERDICTS.join(", ")}` }).optional(),
      summary: z.string("must be a string").max(20_000, "must be at most 20000 characters").default(""),
      findings: z.array(finding, { error: "must be an array" }).max(MAX_FINDINGS, `must hold at most ${MAX_FINDINGS} findings`).default([]),
    },
    { error: "must be an object" },
  )
  .meta({ id: "Review" });

export type ReviewIssue = { path: string; message: string };

const issuesOf = (error: z.ZodError, prefix: string): ReviewIssue[] =>
  error.issues.map((i) => ({ path: [prefix, ...i.path.map(String)].filter(Boolean).join("."), message: i.message }));

/** A reviewer's answer as a Review, or what is wrong with it (each issue names its field under `prefix`). */
export function parseReview(value: unknown, prefix = ""): { ok: true; review: Review } | { ok: false; issues: ReviewIssue[] } {
  const parsed = reviewShape.safeParse(value);
  return parsed.success ? { ok: true, review: parsed.data as Review } : { ok: false, issues: issuesOf(parsed.error, prefix) };
}

/**
 * The review a review task's result carries: `contracts.review` as the seed's contract entry (`{status: "fulfilled",
 * data: {score, …}}`) or the review itself (`{score, status: "fail", …}`). Issues name the result's field.
 */
export function reviewInResult(result: Record<string, unknown>) {
  const contracts = result.contracts;
  const entry = contracts && typeof contracts === "object" ? (contracts as Record<string, unknown>)[REVIEW_CONTRACT] : undefined;
  const path = `result.contracts.${REVIEW_CONTRACT}`;
  if (entry === undefined || entry === null || typeof entry !== "object" || Array.isArray(entry))
    return { ok: false as const, issues: [{ path, message: "is required: a review task completes with its review (score, summary, findings)" }] };
  const e = entry as Record<string, unknown>;
  const wrapped = e.data !== undefined && e.score === undefined;
  return parseReview(wrapped ? e.data : e, wrapped ? `${path}.data` : path);
}

const names = (what: string) =>
  z
    .array(z.string("must be a string").trim().min(1, "must not be empty").max(200, "must be at most 200 characters"), { error: "must be an array" })
    .max(50, `must list at most 50 ${what}`);

const score = (what: string) => z.int("must be a whole number").min(0, "must be from 0 to 100").max(100, "must be from 0 to 100").meta({ description: what });

export const reviewPolicyBody = z
  .object({
    enabled: z.boolean("must be true or false"),
    match: z
      .object({
        types: names("types").optional(),
        tags: names("tags").optional(),
        priorities: z.array(priority, { error: "must be an array" }).optional(),
        paths: names("patterns").optional().meta({ description: "fnmatch patterns: the change touches a file one matches" }),
        min_lines: z.int("must be a whole number").min(0, "must not be negative").optional().meta({ description: "Lines inserted and deleted together" }),
      })
      .default({}),
    reviewer: z.object({
      kind: z.enum(REVIEWER_KINDS, { error: `must be one of ${REVIEWER_KINDS.join(", ")}` }),
      capability: z.string("must be a string").trim().min(1, "must not be empty").max(100).default(DEFAULT_REVIEW_CAPABILITY),
      endpoint: z.url("must be an http(s) URL").max(2048).optional(),
      api_style: z.enum(MODEL_API_STYLES, { error: `must be one of ${MODEL_API_STYLES.join(", ")}` }).optional(),
      model: z.string("must be a string").trim().min(1, "must not be empty").max(200).optional(),
      api_key: z
        .string("must be a string")
        .min(1, "must not be empty")
        .max(4096)
        .optional()
        .meta({ description: "Kept sealed; never answered back. Left out, the kept key stays." }),
    }),
    pass_score: score("A review scoring this or more passes").default(80),
    warn_score: score("Below the pass score and at least this: warn; below it: fail").default(60),
    max_retries: z.int("must be a whole number").min(0, "must be from 0 to 10").max(10, "must be from 0 to 10").default(2),
    on_final_failure: z.enum(FINAL_FAILURE_ACTIONS, { error: `must be one of ${FINAL_FAILURE_ACTIONS.join(", ")}` }).default("keep_done"),
  })
  .superRefine((p, ctx) => {
    if (p.warn_score > p.pass_score) ctx.addIssue({ code: "custom", path: ["warn_score"], message: "must not be above pass_score" });
    if (p.reviewer.kind === "model") {
      if (!p.reviewer.endpoint) ctx.addIssue({ code: "custom", path: ["reviewer", "endpoint"], message: "is required for a model reviewer" });
      if (!p.reviewer.model) ctx.addIssue({ code: "custom", path: ["reviewer", "model"], message: "is required for a model reviewer" });
    }
  })
  .meta({ id: "ReviewPolicyBody" });
export type ReviewPolicyBody = z.output<typeof reviewPolicyBody>;
