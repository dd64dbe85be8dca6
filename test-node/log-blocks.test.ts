/** The block size of the event log is written twice: in the readers (LOG_BLOCK) and in migration 0040's SQL, which cannot import it. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LOG_BLOCK } from "../src/db/task-events";

describe("the log's blocks", () => {
  it("are the same size in the readers and in the migration's trigger and backfill", () => {
    const migration = readFileSync(path.join(import.meta.dirname, "../migrations/0040_task_log_blocks.sql"), "utf8");
    const divisors = [...migration.matchAll(/\/\s*(\d+)/g)].map((m) => Number(m[1]));
    // The backfill's three and the trigger's three.
    expect(divisors).toHaveLength(6);
    expect(new Set(divisors)).toEqual(new Set([LOG_BLOCK]));
  });
});
