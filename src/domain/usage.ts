/**
 * Usage, as the hub counts it (API.md "Usage, budgets and telemetry"): the amounts every roll-up keeps, the points the
 * doors hand a project's room, and how a cumulative series becomes deltas. No I/O.
 */

/** What a roll-up counts. Tokens are whole; cost is USD; `api_ms` is time spent in the model's API. */
export interface UsageAmounts {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_usd: number;
  api_ms: number;
}
export type UsageMeasure = keyof UsageAmounts;
export const USAGE_MEASURES = [
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "cost_usd",
  "api_ms",
] as const satisfies readonly UsageMeasure[];

export const noUsage = (): UsageAmounts => ({ input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, api_ms: 0 });

export function addUsage(into: UsageAmounts, more: Partial<UsageAmounts>): UsageAmounts {
  for (const m of USAGE_MEASURES) into[m] += more[m] ?? 0;
  return into;
}

/** Every token a budget in tokens counts: read from and written to the cache as well as in and out. */
export const tokensOf = (a: UsageAmounts) => a.input_tokens + a.output_tokens + a.cache_read_tokens + a.cache_write_tokens;

export const isEmptyUsage = (a: Partial<UsageAmounts>) => USAGE_MEASURES.every((m) => !a[m]);

/**
 * One measurement a door hands the project's room: a delta, or the current value of a cumulative series (which the
 * room turns into the delta since its last value). Who: the hub session (or none), the server that sent it, the agent
 * type and model; when: `at`, the end of the point's interval. `taskId`, when the door knows it (a completion's
 * usage block), attributes it without looking at what the session was doing.
 */
export interface UsagePoint {
  sessionId: string | null;
  serverId: string | null;
  agentType: string | null;
  model: string | null;
  measure: UsageMeasure;
  value: number;
  at: string;
  taskId?: string | null;
  /** A cumulative counter: its series (whatever names it uniquely: metric, attributes, resource) and when it started counting. */
  cumulative?: { series: string; startedAt: string };
}

/** A cumulative series as last seen. */
export interface SeriesState {
  startedAt: string;
  value: number;
}

/**
 * The delta a cumulative point adds: the growth since the series' last value; all of it when the series is new or
 * restarted (a later start time, or a value that went down: the exporter's process began counting again); nothing
 * for a point older than what was already counted (a retry, or one delivered out of order).
 */
export function cumulativeDelta(last: SeriesState | undefined, point: SeriesState): { delta: number; next: SeriesState } {
  if (!last || point.startedAt > last.startedAt) return { delta: point.value, next: point };
  if (point.startedAt < last.startedAt) return { delta: 0, next: last };
  if (point.value < last.value) return { delta: point.value, next: point };
  return { delta: point.value - last.value, next: point };
}

/** A usage block as a completion, an MCP tool or A2A metadata carries it, as points for its task. */
export interface UsageBlock {
  model?: string | null;
  input_tokens?: number;
  output_tokens?: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  cost_usd?: number;
}

export function pointsOfBlock(
  block: UsageBlock,
  who: { taskId: string; sessionId: string | null; serverId: string | null; agentType: string | null },
  at: string,
): UsagePoint[] {
  const measures = ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd"] as const;
  return measures.flatMap((measure) => {
    const value = block[measure];
    return typeof value === "number" && value > 0 ? [{ ...who, model: block.model ?? null, measure, value, at }] : [];
  });
}
