/**
 * What `complete` takes: the core protocol's `{result}`, or a task-format
 * Task Response (seeds/task-format.md §Task Response) sent whole — its result
 * with the seed's `artifacts` and `metadata` beside it, or, with `status:
 * "failed"`, its error block instead. Pure.
 */
import { z } from "zod";
import { nullMeansAbsent, withinJsonLimit } from "../http/fields";
import { gitDiffStats } from "./hub-api";
import { usageBlockSchema } from "./usage-block";
import { errorBlockBody, failureOf } from "./task-format";

const RESPONSE_STATUSES = ["completed", "failed"] as const;

export const completeBody = z
  .object(
    nullMeansAbsent({
      result: z.unknown().optional().meta({ description: "Required unless `status` is `failed`" }),
      id: z.string({ error: "must be a string" }).max(200, "must be at most 200 characters").optional().meta({
        description: "A Task Response's `id`: the task's client id (or the hub's id); another is refused",
      }),
      status: z.enum(RESPONSE_STATUSES, { error: "must be completed or failed (the outcomes a Task Response sent to complete can report)" }).optional(),
      error: errorBlockBody.optional().meta({ description: "With `status: failed`: the error block; the task fails with it" }),
      artifacts: withinJsonLimit(z.array(z.unknown(), { error: "must be an array" }).max(1000, "must have at most 1000 artifacts"))
        .optional()
        .meta({ description: "A Task Response's artifacts: kept on the task (`response.artifacts`)" }),
      metadata: withinJsonLimit(z.record(z.string(), z.unknown(), { error: "must be an object" }), 64 * 1024)
        .optional()
        .meta({ description: "A Task Response's metadata: kept on the task (`response.metadata`)" }),
      git_diff_stats: gitDiffStats.optional(),
      usage: usageBlockSchema.optional(),
    }),
  )
  .superRefine((body, ctx) => {
    const refuse = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if (body.status === "failed") {
      if (body.error === undefined) refuse("error", "is required when status is failed");
      if (body.result !== undefined) refuse("result", "only a completed Task Response has a result");
    } else {
      if (body.result === undefined) refuse("result", "is required");
      if (body.error !== undefined) refuse("error", "only a failed Task Response (status: failed) has an error");
    }
  });

export type CompleteBody = z.output<typeof completeBody>;

/** A Task Response's artifacts and metadata, as the task keeps them; null when it sent neither. */
export function responseBlocksOf(body: Pick<CompleteBody, "artifacts" | "metadata">): Record<string, unknown> | null {
  if (body.artifacts === undefined && body.metadata === undefined) return null;
  return { ...(body.artifacts !== undefined ? { artifacts: body.artifacts } : {}), ...(body.metadata !== undefined ? { metadata: body.metadata } : {}) };
}

/** How the body ends the task: completed with its result, or failed with its error block (the fail command's fields). */
export function outcomeOf(body: CompleteBody) {
  return body.status === "failed" ? { failed: failureOf(body.error!) } : { result: body.result };
}
