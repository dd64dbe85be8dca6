/** A server's capacity across shards: when a hold fits, what a refused room is told, and which servers need holds. */
import { describe, expect, it } from "vitest";
import { HOLD_MS, holdFits, LAST_LOOK_MS, liveHolds, needsHolds, nextLookIn, shardCount, tasksPerServer, type Hold } from "../src/domain/capacity-holds";

const hold = (tasks: number, until: number, id = `h${tasks}-${until}`): Hold => ({ id, projectId: "p", tasks, until });

describe("a hold", () => {
  it("fits while active tasks, live holds and the asked tasks stay within the limit", () => {
    expect(holdFits(0, 2, [], 2)).toEqual({ fits: true, load: 0 });
    expect(holdFits(1, 2, [], 1)).toEqual({ fits: true, load: 1 });
    expect(holdFits(1, 2, [], 2)).toEqual({ fits: false, load: 1 });
    expect(holdFits(0, 2, [hold(1, 10)], 1)).toEqual({ fits: true, load: 1 });
    expect(holdFits(1, 2, [hold(1, 10)], 1)).toEqual({ fits: false, load: 2 });
    // Already past its limit (tasks given by hand): nothing more fits, and the load says so.
    expect(holdFits(3, 2, [], 1)).toEqual({ fits: false, load: 3 });
    // A server gone from the directory is refused (its limit read as 0).
    expect(holdFits(0, 0, [], 1).fits).toBe(false);
  });

  it("counts only holds not yet lapsed, which last past the longest a batch runs", () => {
    const holds = [hold(1, 100, "a"), hold(2, 200, "b")];
    expect(liveHolds(holds, 99).map((h) => h.id)).toEqual(["a", "b"]);
    expect(liveHolds(holds, 100).map((h) => h.id)).toEqual(["b"]);
    expect(liveHolds(holds, 200)).toEqual([]);
    expect(HOLD_MS).toBeGreaterThan(30_000);
  });
});

describe("which servers need holds", () => {
  it("those whose projects live on more than one shard, a moving project counting its target", () => {
    expect(needsHolds(shardCount([{ shard: "DB", moving_to: null }]))).toBe(false);
    expect(
      needsHolds(
        shardCount([
          { shard: "DB", moving_to: null },
          { shard: "DB", moving_to: null },
        ]),
      ),
    ).toBe(false);
    expect(
      needsHolds(
        shardCount([
          { shard: "DB", moving_to: null },
          { shard: "DB_1", moving_to: null },
        ]),
      ),
    ).toBe(true);
    expect(needsHolds(shardCount([{ shard: "DB", moving_to: "DB_1" }]))).toBe(true);
    expect(needsHolds(shardCount([]))).toBe(false);
  });

  it("asks each server for as many tasks as the batch gives it", () => {
    expect([...tasksPerServer(["a", "b", "a", "a"])]).toEqual([
      ["a", 3],
      ["b", 1],
    ]);
    expect(tasksPerServer([]).size).toBe(0);
  });
});

describe("looking again at a full server", () => {
  it("looks soon, then less and less often, up to a minute", () => {
    expect([0, 1, 2, 3].map(nextLookIn)).toEqual([1000, 2000, 4000, 8000]);
    expect(nextLookIn(20)).toBe(LAST_LOOK_MS);
  });
});
