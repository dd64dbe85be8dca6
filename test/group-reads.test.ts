/** What a group of room operations reads stays a lookup per task, however many tasks its project has. */
import { env } from "cloudflare:workers";
import { fillPlaceholders } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { groupTasks } from "../src/room/task-reads";

describe("a group's read of its tasks", () => {
  it("looks each task up by its id rather than scanning its project's tasks", async () => {
    const query = groupTasks(createDb(env.DB)).getQuery();
    const values = { projectId: crypto.randomUUID(), ids: JSON.stringify([crypto.randomUUID(), crypto.randomUUID()]) };
    const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
      .bind(...fillPlaceholders(query.params, values))
      .all<{ detail: string }>();
    const onTasks = results.map((r) => r.detail).filter((d) => /^(SEARCH|SCAN) t(asks)?\b/.test(d));
    expect(onTasks).toEqual([expect.stringMatching(/^SEARCH tasks USING INDEX sqlite_autoindex_tasks_1 \(id=\?\)/)]);
  });
});
