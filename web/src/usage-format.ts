/** Usage as people read it: costs, token counts and API time in short words, and the sums the pages show. */
import type { Schemas } from "../../client";

export type Usage = Schemas["UsageTotals"];

export const noUsage = (): Usage => ({ input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0, api_ms: 0 });

const MEASURES = ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd", "api_ms"] as const;

/** `a` with `b` added (either may be missing); the cost rounded as the hub rounds it, to the millionth. */
export function addUsage(a: Usage | null | undefined, b: Partial<Usage>): Usage {
  const sum = { ...(a ?? noUsage()) };
  for (const m of MEASURES) sum[m] += Number(b[m] ?? 0) || 0;
  sum.cost_usd = Math.round(sum.cost_usd * 1e6) / 1e6;
  return sum;
}

/** Every token, as a budget in tokens counts them: in, out, and read from and written to the cache. */
export const tokensOf = (u: Usage) => u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens;

export const hasUsage = (u: Usage | null | undefined): u is Usage => !!u && (u.cost_usd > 0 || tokensOf(u) > 0 || u.api_ms > 0);

/** "$0.42", "$1,234.50"; a fraction of a cent keeps two significant digits ("$0.0042") rather than reading as nothing. */
export function usd(n: number): string {
  if (n === 0) return "$0";
  if (Math.abs(n) < 0.01) return `$${Number(n.toPrecision(2))}`;
  return `$${n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** "850", "1.5k", "15k", "2.3M" (999,999 is "1M", not "1000k"). */
export function tokens(n: number): string {
  if (n < 1000) return String(n);
  for (const [size, unit] of [
    [1e3, "k"],
    [1e6, "M"],
  ] as const) {
    const value = n / size;
    const shown = value < 10 ? Number(value.toFixed(1)) : Math.round(value);
    if (shown < 1000) return `${shown}${unit}`;
  }
  const billions = n / 1e9;
  return `${billions < 10 ? Number(billions.toFixed(1)) : Math.round(billions)}B`;
}

/** Every digit, for titles and tables: "15,234". */
export const exactTokens = (n: number) => n.toLocaleString("en-US");

/** "850 ms", "12.3 s", "4 min 12 s", "1 h 5 min". */
export function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${Number(s.toFixed(1))} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** API time, or a dash when none was reported (a completion's usage block carries none). */
export const apiTime = (ms: number) => (ms > 0 ? duration(ms) : "—");

/** What a card shows: "$0.42 · 15k tok". */
export const compact = (u: Usage) =>
  [u.cost_usd > 0 ? usd(u.cost_usd) : null, tokensOf(u) > 0 ? `${tokens(tokensOf(u))} tok` : null].filter(Boolean).join(" · ");

/** The UTC days from `from` to `to` (YYYY-MM-DD, inclusive), in order. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/** The last `n` UTC days up to today: the period a Usage page shows. */
export function lastDays(n: number, now = new Date()): { from: string; to: string } {
  const to = now.toISOString().slice(0, 10);
  return { from: new Date(Date.parse(`${to}T00:00:00Z`) - (n - 1) * 86_400_000).toISOString().slice(0, 10), to };
}
