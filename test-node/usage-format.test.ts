/** Usage as the dashboard shows it: short costs and token counts, the days of a period, and what a usage batch adds to each task. */
import { describe, expect, it } from "vitest";
import type { HubEvent, Task } from "../web/src/types";
import { addUsage, compact, daysBetween, duration, lastDays, noUsage, tokens, usd } from "../web/src/usage-format";
import { lastUsageSeq, usageAddedByTask, withUsageOf } from "../web/src/usage-live";

const usageEvent = (seq: number, tasks: unknown[]): HubEvent =>
  ({ seq, event_type: "usage_recorded", task_id: null, data: { points: 1, unattributed: 0, totals: {}, tasks } }) as unknown as HubEvent;

describe("usage in short words", () => {
  it("writes costs to the cent, and a fraction of a cent with two significant digits", () => {
    expect([usd(0), usd(0.42), usd(0.0042), usd(0.00001234), usd(12.5), usd(1234.567)]).toEqual(["$0", "$0.42", "$0.0042", "$0.000012", "$12.50", "$1,234.57"]);
  });

  it("writes token counts in k, M and B, with one decimal under ten", () => {
    expect([tokens(850), tokens(1000), tokens(1500), tokens(15_234), tokens(999_999), tokens(2_340_000), tokens(7_000_000_000)]).toEqual([
      "850",
      "1k",
      "1.5k",
      "15k",
      "1M",
      "2.3M",
      "7B",
    ]);
  });

  it("writes API time from milliseconds to hours", () => {
    expect([duration(850), duration(12_340), duration(252_000), duration(3_900_000)]).toEqual(["850 ms", "12.3 s", "4 min 12 s", "1 h 5 min"]);
  });

  it("shows a card's cost and every token, and leaves out what is zero", () => {
    expect(compact({ ...noUsage(), cost_usd: 0.42, input_tokens: 12_000, output_tokens: 2_500, cache_read_tokens: 700 })).toBe("$0.42 · 15k tok");
    expect(compact({ ...noUsage(), input_tokens: 900 })).toBe("900 tok");
    expect(compact({ ...noUsage(), cost_usd: 0.1 })).toBe("$0.10");
  });
});

describe("periods", () => {
  it("lists every UTC day of a period, across a month's end", () => {
    expect(daysBetween("2026-01-30", "2026-02-02")).toEqual(["2026-01-30", "2026-01-31", "2026-02-01", "2026-02-02"]);
    expect(daysBetween("2026-02-02", "2026-02-01")).toEqual([]);
  });

  it("counts the last n days with today", () => {
    expect(lastDays(7, new Date("2026-03-03T23:30:00Z"))).toEqual({ from: "2026-02-25", to: "2026-03-03" });
    expect(daysBetween(...(Object.values(lastDays(30, new Date("2026-03-03T01:00:00Z"))) as [string, string]))).toHaveLength(30);
  });
});

describe("a usage batch on the feed", () => {
  it("adds what it lists to each task, once per entry, and ignores what is not a task's", () => {
    const e = usageEvent(7, [
      { task_id: "a", cost_usd: 0.1, input_tokens: 100, output_tokens: 10, cache_read_tokens: 0, cache_write_tokens: 0, api_ms: 500 },
      { task_id: "b", cost_usd: 0.2 },
      { cost_usd: 5 },
      "junk",
    ]);
    const added = usageAddedByTask(e);
    expect([...added.keys()]).toEqual(["a", "b"]);
    const task = { id: "a", usage: { ...noUsage(), cost_usd: 0.3, input_tokens: 1000, api_ms: 100 } } as unknown as Task;
    expect(withUsageOf(task, e).usage).toEqual({ ...noUsage(), cost_usd: 0.4, input_tokens: 1100, output_tokens: 10, api_ms: 600 });
    // A task with no usage yet starts from nothing; one the batch does not name is left as it is.
    expect(withUsageOf({ id: "b", usage: null } as unknown as Task, e).usage).toEqual({ ...noUsage(), cost_usd: 0.2 });
    const other = { id: "c", usage: null } as unknown as Task;
    expect(withUsageOf(other, e)).toBe(other);
  });

  it("finds the newest batch that added to one of a set of tasks", () => {
    const newestFirst = [
      usageEvent(9, [{ task_id: "x", cost_usd: 1 }]),
      usageEvent(8, [{ task_id: "b", cost_usd: 1 }]),
      usageEvent(7, [{ task_id: "a", cost_usd: 1 }]),
    ];
    expect(lastUsageSeq(newestFirst, new Set(["a", "b"]))).toBe(8);
    expect(lastUsageSeq(newestFirst, new Set(["z"]))).toBe(0);
  });

  it("sums without drifting in binary fractions", () => {
    let sum = noUsage();
    for (let i = 0; i < 10; i++) sum = addUsage(sum, { cost_usd: 0.1 });
    expect(sum.cost_usd).toBe(1);
  });
});
