/** The usage page's cost per UTC day, as bars. */
import { DayChart } from "../ui/day-chart";
import type { UsageRow } from "../types";
import { daysBetween, usd } from "../usage-format";

export function CostChart({ from, to, rows }: { from: string; to: string; rows: UsageRow[] }) {
  const cost = new Map(rows.map((r) => [r.day, r.cost_usd]));
  const days = daysBetween(from, to);
  return (
    <DayChart
      class="cost-chart"
      days={days}
      series={[{ label: "Cost", values: days.map((d) => cost.get(d) ?? 0), colour: "--accent", kind: "bars" }]}
      label={`Cost per day from ${from} to ${to}, ${rows.length} days with usage`}
      format={usd}
      height={220}
      data={{ "days-with-usage": rows.length }}
    />
  );
}
