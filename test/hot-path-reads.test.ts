/** What the room reads on its hot path stays a lookup per row it needs, however many tasks and events its project has. */
import { env } from "cloudflare:workers";
import { fillPlaceholders } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { appendEvents } from "../src/room/statements";
import { groupTasks } from "../src/room/task-reads";

describe("a group's read of its tasks", () => {
  it("looks each task up by its id rather than scanning its project's tasks", async () => {
    const query = groupTasks(createDb(env.DB), { blockers: true, downstream: true }).getQuery();
    const values = { projectId: crypto.randomUUID(), ids: JSON.stringify([crypto.randomUUID(), crypto.randomUUID()]) };
    const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
      .bind(...fillPlaceholders(query.params, values))
      .all<{ detail: string }>();
    const onTasks = results.map((r) => r.detail).filter((d) => /^(SEARCH|SCAN) t(asks)?\b/.test(d));
    expect(onTasks).toEqual([expect.stringMatching(/^SEARCH tasks USING INDEX sqlite_autoindex_tasks_1 \(id=\?\)/)]);
  });
});

describe("appending a project's events", () => {
  /** A project holding `count` events. */
  async function projectWithEvents(count: number) {
    const projectId = crypto.randomUUID();
    const now = new Date().toISOString();
    await env.DB.prepare("INSERT INTO projects (id, name, slug, created_at, updated_at) VALUES (?1, 'events', ?1, ?2, ?2)").bind(projectId, now).run();
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?3)
       INSERT INTO events (project_id, seq, type, task_id, actor, data, created_at) SELECT ?1, i, 'filler', NULL, 'test', '{}', ?2 FROM n`,
    )
      .bind(projectId, now, count)
      .run();
    return projectId;
  }

  it("reads the next seq from the project's last event, not by counting through all of them", async () => {
    const readsWith = async (events: number) => {
      const projectId = await projectWithEvents(events);
      const drafts = [
        { type: "note_added" as const, taskId: null, data: {} },
        { type: "note_added" as const, taskId: null, data: {} },
      ];
      const [append] = appendEvents(env.DB, projectId, [{ actor: "test", at: new Date().toISOString(), events: drafts, guard: null }]);
      const { results, meta } = await append!.all<{ seq: number }>();
      expect(results.map((r) => r.seq)).toEqual([events + 1, events + 2]);
      return meta.rows_read;
    };
    const [few, many] = [await readsWith(10), await readsWith(1000)];
    expect(many).toBe(few);
    expect(many).toBeLessThan(50);
  });
});
