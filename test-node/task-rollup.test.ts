/** The task roll-ups' histogram: a median read back within its bucket, and the days a period covers. */
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { daysUpTo, DURATION_BUCKETS, medianSeconds, rateOf, upperBoundOf } from "../src/domain/task-rollup";

describe("medianSeconds", () => {
  it("is null for nothing counted, and within the bucket holding the middle count", () => {
    expect(medianSeconds(new Map())).toBeNull();
    const m = medianSeconds(new Map([[3, 5]]))!;
    expect(m).toBeGreaterThanOrEqual(upperBoundOf(2));
    expect(m).toBeLessThanOrEqual(upperBoundOf(3));
    // Three short, one long: the middle is among the short ones.
    expect(
      medianSeconds(
        new Map([
          [0, 3],
          [10, 1],
        ]),
      ),
    ).toBeLessThanOrEqual(60);
    // One short, three long: among the long.
    expect(
      medianSeconds(
        new Map([
          [0, 1],
          [10, 3],
        ]),
      ),
    ).toBeGreaterThanOrEqual(upperBoundOf(9));
    // The last bucket has no upper bound: twice its lower one stands for it.
    expect(medianSeconds(new Map([[DURATION_BUCKETS - 1, 1]]))).toBeLessThanOrEqual(upperBoundOf(DURATION_BUCKETS - 2) * 2);
  });

  it("uses the buckets the roll-up trigger sorts durations into", () => {
    // The migration that made task_rollup's trigger (0038).
    const dir = resolve(import.meta.dirname, "../migrations");
    const file = readdirSync(dir).find((f) => f.endsWith(".sql") && readFileSync(resolve(dir, f), "utf8").includes("CREATE TRIGGER `task_rollup_on_change`"));
    const sql = readFileSync(resolve(dir, file!), "utf8");
    const bounds = [...sql.matchAll(/WHEN s < (\d+) THEN (\d+)/g)].slice(0, DURATION_BUCKETS - 1).map((m) => [Number(m[1]), Number(m[2])]);
    expect(bounds).toEqual(Array.from({ length: DURATION_BUCKETS - 1 }, (_, b) => [upperBoundOf(b), b]));
    expect(sql).toContain(`ELSE ${DURATION_BUCKETS - 1} END`);
  });
});

describe("rateOf and daysUpTo", () => {
  it("divides safely and lists the days oldest first, across a month's end", () => {
    expect(rateOf(1, 0)).toBe(0);
    expect(rateOf(1, 3)).toBe(0.333);
    expect(daysUpTo("2026-03-02", 3)).toEqual(["2026-02-28", "2026-03-01", "2026-03-02"]);
  });
});
