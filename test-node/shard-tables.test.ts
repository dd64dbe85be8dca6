/** The split of the schema between the directory and a project's shard, and where a new project is placed. */
import { getTableConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import * as schema from "../src/db/schema";
import { DIRECTORY_TABLES, MOVED_TABLES, UNPLACED_TABLES } from "../src/db/shard-tables";
import { openShards, placeProject, shardOrder } from "../src/domain/shard-placement";

describe("the project's tables on its shard", () => {
  it("places every table: in the directory, or found by its project", () => {
    expect(UNPLACED_TABLES).toEqual([]);
    const all = Object.values(schema)
      .filter((v) => v instanceof SQLiteTable)
      .map((t) => getTableConfig(t as SQLiteTable).name);
    expect([...MOVED_TABLES.map((t) => t.name), ...DIRECTORY_TABLES].sort()).toEqual([...all].sort());
    for (const t of MOVED_TABLES) expect(t.keys.length, t.name).toBeGreaterThan(0);
  });

  it("copies a table after every table of the project its foreign keys point at, and the roll-ups last", () => {
    const at = new Map(MOVED_TABLES.map((t, i) => [t.name, i]));
    for (const value of Object.values(schema)) {
      if (!(value instanceof SQLiteTable)) continue;
      const config = getTableConfig(value);
      if (!at.has(config.name)) continue;
      for (const fk of config.foreignKeys) {
        const parent = getTableConfig(fk.reference().foreignTable).name;
        if (parent !== config.name && at.has(parent)) expect(at.get(parent)!, `${parent} before ${config.name}`).toBeLessThan(at.get(config.name)!);
      }
    }
    const rollups = ["task_rollup"].map((n) => at.get(n)!);
    expect(Math.min(...rollups)).toBeGreaterThan(at.get("tasks")!);
    expect(MOVED_TABLES.find((t) => t.name === "delivery_attempts")!.where).toContain('FROM "outbox" WHERE project_id = ?1');
  });
});

describe("placing a new project", () => {
  it("takes the open shard with the fewest projects, the first declared on a tie", () => {
    expect(placeProject(["DB", "DB_1", "DB_2"], { DB: 4, DB_1: 2, DB_2: 2 })).toBe("DB_1");
    expect(placeProject(["DB", "DB_1"], { DB: 4 })).toBe("DB_1");
    expect(placeProject(["DB_1"], { DB: 0, DB_1: 9 })).toBe("DB_1");
  });

  it("opens the shards OPEN_SHARDS names that exist, DB when it names none", () => {
    expect(openShards("DB_1, DB_10,DB_2,DB_7", ["DB", "DB_1", "DB_2", "DB_10"])).toEqual(["DB_1", "DB_2", "DB_10"]);
    expect(openShards("", ["DB", "DB_1"])).toEqual(["DB"]);
    expect(openShards(undefined, ["DB"])).toEqual(["DB"]);
    expect(["DB_10", "DB", "DB_2"].sort(shardOrder)).toEqual(["DB", "DB_2", "DB_10"]);
  });
});
