/**
 * The code-review loop's doors (API.md "Code review"): a project's review policy (admins set it, members read it),
 * and a task's reviews, every attempt to people and the latest to the CLI (`orchestratia code review`, in
 * code-health.ts). The policy is written through the project's room, which decides every review with it.
 */
import { and, asc, desc, eq, inArray } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { projectDataFor } from "../auth/access";
import { seal } from "../auth/sealed";
import type { Db } from "../db/client";
import { codeReviews, reviewPolicies } from "../db/schema";
import { DEFAULT_REVIEW_POLICY, FINAL_FAILURE_ACTIONS, MODEL_API_STYLES, REVIEWER_KINDS, VERDICTS, type ReviewPolicy } from "../domain/code-review";
import { readJson } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { fieldError } from "../http/problem";
import { checkTargetFor } from "../integrations/dns";
import { person } from "../middleware/guards";
import { documented, type Operation } from "../openapi/operation";
import { reviewPolicyBody, type ReviewPolicyBody } from "../protocol/code-review";
import { runInRoom } from "../room/client";
import { codeReviewListSchema, codeReviewView } from "../views/code-reviews";
import { taskFor } from "./task-access";

export const codeReviewRoutes = { projects: new Hono<HubEnv>(), tasks: new Hono<HubEnv>() };

const operation = (op: Omit<Operation, "tag" | "caller">) => documented({ ...op, tag: "Code review", caller: "person" });

const policySchema = z
  .object({
    enabled: z.boolean(),
    match: z.object({
      types: z.array(z.string()).optional(),
      tags: z.array(z.string()).optional(),
      priorities: z.array(z.string()).optional(),
      paths: z.array(z.string()).optional(),
      min_lines: z.int().optional(),
    }),
    reviewer: z.object({
      kind: z.enum(REVIEWER_KINDS),
      capability: z.string(),
      endpoint: z.string().nullable(),
      api_style: z.enum(MODEL_API_STYLES).nullable(),
      model: z.string().nullable(),
      has_api_key: z.boolean().meta({ description: "Whether a key is kept: the key itself is never answered" }),
    }),
    pass_score: z.int(),
    warn_score: z.int(),
    max_retries: z.int(),
    on_final_failure: z.enum(FINAL_FAILURE_ACTIONS),
  })
  .meta({ id: "ReviewPolicy" });

const RULES =
  "A completion the policy matches (its task's `types`, `tags`, `priorities`, the `paths` its change touched as fnmatch patterns, at least `min_lines` " +
  "inserted and deleted; a completion the CLI measured no change for is never reviewed) is reviewed by an agent (`reviewer.kind: agent`: a review task " +
  "needing the tag `capability` and the task's repository, never given to the worker's server; it completes with the contract `review`) or a model " +
  "(`reviewer.kind: model`: an OpenAI-compatible chat completions `endpoint` or the Anthropic Messages API, `api_style`, `model`, `api_key`; the " +
  "endpoint is the full URL, or a base: `…/v1` gets `/chat/completions` (`/messages`), any other `/v1/chat/completions` (`/v1/messages`). The hub " +
  "reads the change as `git diff` in the worker's session, which needs the project's `remote_exec` setting (each read is a `remote_exec` event), " +
  "sends at most 200 KB of it, and asks for the review as structured output; a refusal, a malformed review, a 4xx, or no answer within 60 s makes " +
  "the attempt `error` with the reason, 429 and 5xx are tried again). A score of " +
  "`pass_score` or more passes; below it the worker's session is sent `code_review_fix_request` and its next completion is reviewed again, up to " +
  "`max_retries` times; a warn (at least `warn_score`) on the last attempt is accepted, a fail there applies `on_final_failure`: `keep_done` (the task " +
  "stays done, people are told by `review_exhausted`) or `needs_human` (a person is asked).";

async function storedPolicy(db: Db, projectId: string) {
  return db.query.reviewPolicies.findFirst({ where: eq(reviewPolicies.projectId, projectId) });
}

/** The policy a body sets, keeping the stored key (and endpoint checks) in view. */
async function policyOf(c: HubContext, body: ReviewPolicyBody, keptKey: boolean): Promise<{ policy: ReviewPolicy; apiKeySealed: string | null | undefined }> {
  const r = body.reviewer;
  if (r.kind === "model") {
    const checked = await checkTargetFor(c.env, r.endpoint!);
    if (!checked.ok) throw fieldError("reviewer.endpoint", checked.message);
    if (!r.api_key && !keptKey) throw fieldError("reviewer.api_key", "is required for a model reviewer (none is kept)");
  }
  const model = r.kind === "model";
  const policy: ReviewPolicy = {
    enabled: body.enabled,
    match: body.match,
    reviewer: {
      kind: r.kind,
      capability: r.capability,
      endpoint: model ? r.endpoint! : null,
      api_style: model ? (r.api_style ?? "openai") : null,
      model: model ? r.model! : null,
      has_api_key: model && (r.api_key !== undefined || keptKey),
    },
    pass_score: body.pass_score,
    warn_score: body.warn_score,
    max_retries: body.max_retries,
    on_final_failure: body.on_final_failure,
  };
  // An agent reviewer needs no key: one kept is dropped. A model's new key replaces the kept one; none given keeps it.
  const apiKeySealed = !model ? null : r.api_key !== undefined ? await seal(c.env.DATA_KEY, r.api_key) : undefined;
  return { policy, apiKeySealed };
}

codeReviewRoutes.projects.put(
  "/:id/review-policy",
  operation({
    id: "putReviewPolicy",
    summary: "Set the project's code-review policy",
    description: `Admins only. ${RULES} The key is kept sealed and never answered back; left out, the kept one stays.`,
    body: reviewPolicyBody,
    responses: { 200: policySchema },
  }),
  person("admin"),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id")!, "write");
    const body = await readJson(c, reviewPolicyBody);
    const kept = await storedPolicy(c.var.db, project.id);
    const { policy, apiKeySealed } = await policyOf(c, body, kept?.apiKeySealed != null);
    await runInRoom(c, project.id, { op: "set_review_policy", policy, apiKeySealed });
    return c.json(policy);
  },
);

codeReviewRoutes.projects.get(
  "/:id/review-policy",
  operation({
    id: "getReviewPolicy",
    summary: "The project's code-review policy",
    description: `Anyone who sees the project; the key is never answered (\`reviewer.has_api_key\` says whether one is kept). Never set: the default, off. ${RULES}`,
    responses: { 200: policySchema },
  }),
  person(),
  async (c) => {
    const project = await projectDataFor(c, c.req.param("id")!);
    return c.json((await storedPolicy(c.var.db, project.id))?.policy ?? DEFAULT_REVIEW_POLICY);
  },
);

codeReviewRoutes.tasks.get(
  "/:id/reviews",
  operation({
    id: "listTaskReviews",
    summary: "Every code review of a task",
    description: "Each attempt of the task's review, first first, with its findings (errors first). Empty when the task was never reviewed.",
    responses: { 200: codeReviewListSchema },
  }),
  person(),
  async (c) => {
    const task = await taskFor(c, c.req.param("id")!);
    const rows = await c.var.db.select().from(codeReviews).where(eq(codeReviews.taskId, task.id)).orderBy(asc(codeReviews.attempt));
    return c.json({ reviews: rows.map(codeReviewView) });
  },
);

/**
 * The task's latest judged attempt (pass, warn or fail), if any: what the official CLI prints as a score. One still
 * waiting for its reviewer, superseded or not reviewable is for people's list of every attempt.
 */
export const latestReview = async (db: Db, taskId: string) =>
  db.query.codeReviews.findFirst({
    where: and(eq(codeReviews.taskId, taskId), inArray(codeReviews.status, VERDICTS)),
    orderBy: desc(codeReviews.attempt),
  });
