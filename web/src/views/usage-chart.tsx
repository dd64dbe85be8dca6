/** Cost per day as bars (uPlot), every day of the period shown, a day without usage at zero; UTC days, as the hub counts them. */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import { adoptChartStyles } from "../chart-styles";
import type { UsageRow } from "../types";
import { daysBetween, usd } from "../usage-format";

const HEIGHT = 220;
const DAY = 86_400;
/** Ticks a whole number of days apart, never between days. */
const DAY_STEPS = [1, 2, 7, 14, 28].map((d) => d * DAY);
const utc = (ts: number) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC");
/** "Nov 26", as the UTC day it is. */
const utcDay = (ts: number) => new Date(ts * 1000).toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" });

export function CostChart({ from, to, rows }: { from: string; to: string; rows: UsageRow[] }) {
  const box = useRef<HTMLDivElement>(null);
  const days = daysBetween(from, to);
  const cost = new Map(rows.map((r) => [r.day, r.cost_usd]));
  const total = rows.reduce((sum, r) => sum + r.cost_usd, 0);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const unstyle = adoptChartStyles();
    const data: uPlot.AlignedData = [days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000), days.map((d) => cost.get(d) ?? 0)];
    const width = () => Math.max(240, el.clientWidth - 16);
    // Canvas takes no CSS variables: the page's own colours, read once, so the axes read in a dark theme too.
    const style = getComputedStyle(el);
    const text = style.getPropertyValue("--muted").trim() || "#5c6578";
    const grid = style.getPropertyValue("--line").trim() || "#d9dde5";
    const axis = { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const plot = new uPlot(
      {
        width: width(),
        height: HEIGHT,
        tzDate: utc,
        legend: { show: false },
        cursor: { points: { show: false } },
        scales: {
          // Half a day either side: each day's bar stands over its own day, the first and last too.
          x: { time: true, range: (_u, min, max) => [min - DAY / 2, max + DAY / 2] },
          y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
        },
        axes: [
          { ...axis, incrs: DAY_STEPS, values: (_u, ticks) => ticks.map((t) => utcDay(t)) },
          { ...axis, values: (_u, ticks) => ticks.map(usd), size: 60 },
        ],
        series: [
          {},
          {
            label: "Cost",
            stroke: "#2f5bd3",
            fill: "rgba(47, 91, 211, 0.55)",
            width: 0,
            paths: uPlot.paths.bars!({ size: [0.7, 48] }),
            points: { show: false },
          },
        ],
      },
      data,
      el,
    );
    // The chart follows its box: a phone turned, a window narrowed.
    const resized = new ResizeObserver(() => plot.setSize({ width: width(), height: HEIGHT }));
    resized.observe(el);
    return () => {
      resized.disconnect();
      plot.destroy();
      unstyle();
    };
  }, [from, to, rows]);
  return (
    <div
      class="cost-chart"
      ref={box}
      role="img"
      aria-label={`Cost per day from ${from} to ${to}: ${usd(total)} in all, over ${rows.length} days with usage`}
      data-days={days.length}
      data-days-with-usage={rows.length}
    />
  );
}
