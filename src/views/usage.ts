/** Usage as the API answers it (API.md "Usage, budgets and telemetry"): the amounts every roll-up keeps. */
import { z } from "zod";
import type { UsageAmounts } from "../domain/usage";

const tokens = (what: string) => z.int().meta({ description: `${what} tokens` });

export const usageAmountsSchema = z
  .object({
    input_tokens: tokens("Input"),
    output_tokens: tokens("Output"),
    cache_read_tokens: tokens("Cache-read"),
    cache_write_tokens: tokens("Cache-write"),
    cost_usd: z.number().meta({ description: "Cost in USD, as the agents reported it" }),
    api_ms: z.int().meta({ description: "Time the model's API took, in milliseconds" }),
  })
  .meta({ id: "UsageTotals" });

/** A roll-up row's amounts as the API names them (the columns are named the same). */
export const usageOfRow = (row: UsageAmounts): UsageAmounts => ({
  input_tokens: Number(row.input_tokens),
  output_tokens: Number(row.output_tokens),
  cache_read_tokens: Number(row.cache_read_tokens),
  cache_write_tokens: Number(row.cache_write_tokens),
  // Summed as floating point: shown to the cent's hundredth, not to the last binary digit.
  cost_usd: Math.round(Number(row.cost_usd) * 1e6) / 1e6,
  api_ms: Number(row.api_ms),
});

/** The SQL text of a JSON object of a roll-up row's amounts (`alias` names the row). */
export const usageJson = (alias: string) =>
  `json_object('input_tokens', ${alias}.input_tokens, 'output_tokens', ${alias}.output_tokens, 'cache_read_tokens', ${alias}.cache_read_tokens, ` +
  `'cache_write_tokens', ${alias}.cache_write_tokens, 'cost_usd', ${alias}.cost_usd, 'api_ms', ${alias}.api_ms)`;
