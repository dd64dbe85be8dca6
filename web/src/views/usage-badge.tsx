/** A task's cost and tokens in a few characters ("$0.42 · 15k tok"), where there is any: on board cards and graph nodes. */
import { compact, duration, exactTokens, hasUsage, usd, type Usage } from "../usage-format";
import "./usage.css";

/** The whole count, for a pointer's title and screen readers. */
export const usageTitle = (u: Usage) =>
  `Cost ${usd(u.cost_usd)}; tokens: ${exactTokens(u.input_tokens)} in, ${exactTokens(u.output_tokens)} out, ` +
  `${exactTokens(u.cache_read_tokens)} cache read, ${exactTokens(u.cache_write_tokens)} cache write; API time ${duration(u.api_ms)}`;

export function UsageBadge({ usage }: { usage: Usage | null | undefined }) {
  if (!hasUsage(usage)) return null;
  return (
    <span class="usage-badge" title={usageTitle(usage)} data-cost={usage.cost_usd}>
      {compact(usage) || duration(usage.api_ms)}
    </span>
  );
}
