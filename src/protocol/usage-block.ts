/**
 * The usage block an agent may send with its result (API.md "Usage, budgets and telemetry"), for agents that do not
 * export telemetry: beside the result (`usage`), inside it (`result.usage`), or in a Task Response's metadata
 * (`metadata.usage`). Pure.
 */
import { z } from "zod";
import type { UsageBlock } from "../domain/usage";
import { isPlainObject } from "../domain/plain-object";
import { zodFieldErrors, type FieldError } from "./field-errors";

const tokenCount = z.int({ error: "must be a whole number of tokens" }).min(0, "must not be negative").max(1e12, "must be at most 10^12").optional();

export const usageBlockSchema = z
  .object({
    model: z.string({ error: "must be a string" }).min(1, "must not be empty").max(200, "must be at most 200 characters").optional(),
    input_tokens: tokenCount,
    output_tokens: tokenCount,
    cache_read_tokens: tokenCount,
    cache_write_tokens: tokenCount,
    cost_usd: z.number({ error: "must be a number of US dollars" }).min(0, "must not be negative").max(1e6, "must be at most 1,000,000").optional(),
  })
  .meta({ id: "UsageBlock", description: "What the work used, for agents that do not export telemetry: counted on the task" });

/** The usage a completion carries, from the first place that has one; its mistakes named by where it was found. */
export function usageOfCompletion(body: { usage?: UsageBlock; result?: unknown; metadata?: Record<string, unknown> }): {
  block?: UsageBlock;
  errors?: FieldError[];
} {
  if (body.usage) return { block: body.usage };
  const found: [string, unknown][] = [
    ["result.usage", isPlainObject(body.result) ? body.result.usage : undefined],
    ["metadata.usage", body.metadata?.usage],
  ];
  for (const [path, value] of found) {
    if (value === undefined) continue;
    const parsed = usageBlockSchema.safeParse(value);
    return parsed.success ? { block: parsed.data } : { errors: zodFieldErrors(parsed.error, path) };
  }
  return {};
}
