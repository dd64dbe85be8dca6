/** The archiver's pure decisions (src/archive/plan.ts): which finished tasks go together, and how two logs merge by seq. */
import { describe, expect, it } from "vitest";
import { archiveKey, chooseTaskBatch, cutoffOf, mergeBySeq, type TaskCandidate } from "../src/archive/plan";

const task = (id: string, day: string, dependents: string[] = []): TaskCandidate => ({ id, completed_at: `${day}T12:00:00.000Z`, dependents });

describe("chooseTaskBatch", () => {
  it("takes the first candidate's day only, at most the limit", () => {
    const batch = chooseTaskBatch([task("a", "2026-01-02"), task("b", "2026-01-02"), task("c", "2026-01-01"), task("d", "2026-01-02")], 2);
    expect(batch).toEqual({ day: "2026-01-02", ids: ["a", "b"] });
  });

  it("keeps an upstream only with every dependent still in D1, dropping chains whose end is outside", () => {
    // c depends on b, b on a; d depends on x, which is not a candidate (still in D1 for another reason).
    const candidates = [task("c", "2026-01-05"), task("b", "2026-01-05", ["c"]), task("a", "2026-01-05", ["b"]), task("x", "2026-01-05", ["y"])];
    expect(chooseTaskBatch(candidates)).toEqual({ day: "2026-01-05", ids: ["c", "b", "a"] });
    // With the limit cutting the chain's end off, the tasks upstream of it wait: only what is free to go goes.
    expect(chooseTaskBatch([task("b", "2026-01-05", ["c"]), task("a", "2026-01-05", ["b"]), task("c", "2026-01-05")], 2)).toBeNull();
    expect(chooseTaskBatch([task("c", "2026-01-05"), task("b", "2026-01-05", ["c"]), task("a", "2026-01-05", ["b"])], 2)).toEqual({
      day: "2026-01-05",
      ids: ["c", "b"],
    });
  });

  it("bounds a batch by rows and bytes as well as tasks, a task too big for a batch going alone", () => {
    const sized = (id: string, rows: number, bytes: number): TaskCandidate => ({ ...task(id, "2026-01-07"), rows, bytes });
    const bounds = { rows: 100, bytes: 1000 };
    expect(chooseTaskBatch([sized("a", 40, 10), sized("b", 40, 10), sized("c", 40, 10)], 10, bounds)?.ids).toEqual(["a", "b"]);
    expect(chooseTaskBatch([sized("a", 1, 600), sized("b", 1, 600)], 10, bounds)?.ids).toEqual(["a"]);
    expect(chooseTaskBatch([sized("huge", 10_000, 10_000_000), sized("b", 1, 1)], 10, bounds)?.ids).toEqual(["huge"]);
  });

  it("is null with no candidates", () => {
    expect(chooseTaskBatch([])).toBeNull();
  });
});

describe("mergeBySeq", () => {
  it("merges after since, in seq order, once each, at most limit", () => {
    const live = [{ seq: 2 }, { seq: 5 }, { seq: 9 }];
    const archived = [{ seq: 1 }, { seq: 3 }, { seq: 5 }, { seq: 7 }];
    expect(mergeBySeq(live, archived, 1, 10).map((e) => e.seq)).toEqual([2, 3, 5, 7, 9]);
    expect(mergeBySeq(live, archived, 0, 3).map((e) => e.seq)).toEqual([1, 2, 3]);
  });
});

describe("cutoffs and keys", () => {
  it("puts the cutoff days before now, none when off, and keys objects by project, kind and day", () => {
    const now = Date.parse("2026-03-31T00:00:00.000Z");
    expect(cutoffOf(30, now)).toBe("2026-03-01T00:00:00.000Z");
    expect(cutoffOf(null, now)).toBeNull();
    expect(archiveKey("p", "tasks", "2026-03-01", "b")).toBe("archives/p/2026-03-01/b.ndjson.gz");
    expect(archiveKey("p", "permission_log", "2026-03-01", "b")).toBe("archives/p/permission_log/2026-03-01/b.ndjson.gz");
  });
});
