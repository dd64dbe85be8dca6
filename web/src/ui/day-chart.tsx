/**
 * Charts of one value per UTC day (uPlot), as bars or lines, every day of the period shown, a day without a value at
 * zero: the overview's small charts and the usage page's cost. Colours are the theme's own (canvas takes no CSS
 * variables, so they are read from the page when the chart is drawn).
 */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import { adoptChartStyles } from "../chart-styles";
import { isDark, themeColour } from "../theme";

const HEIGHT = 160;
const DAY = 86_400;
const DAY_STEPS = [1, 2, 7, 14, 28].map((d) => d * DAY);
const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000];
const utc = (ts: number) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC");
const utcDay = (ts: number) => new Date(ts * 1000).toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" });

export interface DaySeries {
  label: string;
  values: number[];
  /** A colour variable of the theme (tokens.css), such as `--ok`. */
  colour: string;
  kind: "bars" | "line";
}

/** Fill for a bar: the colour (`rgb(…)`), a little see-through so that the grid reads behind it in either theme. */
const fillOf = (colour: string) => colour.replace(/^rgb\((.*)\)$/, `rgb($1 / ${isDark() ? 0.7 : 0.8})`).replaceAll(",", "");

export function DayChart(props: {
  days: string[];
  series: DaySeries[];
  label: string;
  format?: (n: number) => string;
  limit?: { value: number; label: string };
  height?: number;
  /** The chart's class (`mini-chart` by default), and what else it says of itself as data attributes. */
  class?: string;
  data?: Record<string, string | number>;
}) {
  const box = useRef<HTMLDivElement>(null);
  const { days, series, format = (n: number) => String(n), limit, height = HEIGHT } = props;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const unstyle = adoptChartStyles();
    const style = getComputedStyle(el);
    const colour = (name: string, fallback: string) => themeColour(el, name, fallback);
    const muted = colour("--muted", "#596275");
    const grid = colour("--line", "#dde1e8");
    const axis = { stroke: muted, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, font: "11px system-ui, sans-serif" };
    const x = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    const bars = series.filter((s) => s.kind === "bars").length;
    const top = Math.max(limit?.value ?? 0, ...series.flatMap((s) => s.values));
    const drawn: uPlot.Series[] = series.map((s) => {
      const c = colour(s.colour, "#2f5bd3");
      return s.kind === "bars"
        ? { label: s.label, stroke: c, fill: fillOf(c), width: 0, paths: uPlot.paths.bars!({ size: [bars > 1 ? 0.4 : 0.7, 32] }), points: { show: false } }
        : { label: s.label, stroke: c, width: 2, points: { show: days.length <= 31, size: 5, fill: c } };
    });
    const data: uPlot.AlignedData = [x, ...series.map((s) => s.values)];
    if (limit) {
      drawn.push({ label: limit.label, stroke: colour("--danger", "#b42318"), width: 1.5, dash: [5, 4], points: { show: false } });
      data.push(x.map(() => limit.value));
    }
    // The box's content width: its padding stays free of the canvas.
    const padding = parseFloat(style.paddingLeft) + parseFloat(style.paddingRight);
    const width = () => Math.max(220, el.clientWidth - padding);
    const plot = new uPlot(
      {
        width: width(),
        height,
        tzDate: utc,
        legend: { show: false },
        cursor: { points: { show: false }, drag: { x: false, y: false } },
        scales: {
          x: { time: true, range: (_u, min, max) => [min - DAY / 2, max + DAY / 2] },
          y: { range: () => [0, top > 0 ? top * 1.15 : 1] },
        },
        axes: [
          { ...axis, incrs: DAY_STEPS, values: (_u, ticks) => ticks.map((t) => utcDay(t)) },
          // Counts tick at whole numbers only; amounts wherever uPlot finds room.
          { ...axis, ...(props.format ? {} : { incrs: WHOLE_STEPS }), values: (_u, ticks) => ticks.map(format), size: 48 },
        ],
        series: [{}, ...drawn],
      },
      data,
      el,
    );
    const resized = new ResizeObserver(() => plot.setSize({ width: width(), height }));
    resized.observe(el);
    return () => {
      resized.disconnect();
      plot.destroy();
      unstyle();
    };
  }, [days.join(), JSON.stringify(series), limit?.value, height]);
  const totals = series.map((s) => `${s.label} ${format(s.values.reduce((a, b) => a + b, 0))}`).join(", ");
  const data = Object.fromEntries(Object.entries(props.data ?? {}).map(([k, v]) => [`data-${k}`, v]));
  return (
    <div
      class={props.class ?? "mini-chart"}
      ref={box}
      role="img"
      aria-label={`${props.label}, ${days.length} days: ${totals}`}
      data-days={days.length}
      {...data}
    />
  );
}
