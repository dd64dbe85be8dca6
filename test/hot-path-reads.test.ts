/** What the room reads on its hot path stays a lookup per row it needs, however many tasks and events its project has. */
import { env } from "cloudflare:workers";
import { fillPlaceholders, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../src/db/client";
import { PROJECTS_WITH_WAITING_TASKS } from "../src/room/client";
import { EventLog } from "../src/room/event-append";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { groupTasks } from "../src/room/dependency-reads";
import { groupWaiting, waitingAlone } from "../src/room/waiting-reads";

describe("a group's read of its tasks", () => {
  it("looks each task up by its id rather than scanning its project's tasks", async () => {
    const query = groupTasks(createDb(env.DB)).getQuery();
    const values = { projectId: crypto.randomUUID(), ids: JSON.stringify([crypto.randomUUID(), crypto.randomUUID()]), known: "" };
    const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${query.sql}`)
      .bind(...fillPlaceholders(query.params, values))
      .all<{ detail: string }>();
    const onTasks = results.map((r) => r.detail).filter((d) => /^(SEARCH|SCAN) t(asks)?\b/.test(d));
    expect(onTasks).toEqual([expect.stringMatching(/^SEARCH tasks USING INDEX sqlite_autoindex_tasks_1 \(id=\?\)/)]);
  });
});

describe("finding the projects with waiting tasks", () => {
  it("reads the index of tasks ready to run rather than every task", async () => {
    const { sql: query } = new SQLiteSyncDialect().sqlToQuery(PROJECTS_WITH_WAITING_TASKS);
    const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${query}`).all<{ detail: string }>();
    expect(results.map((r) => r.detail)).toContainEqual(expect.stringMatching(/^SCAN tasks USING (COVERING )?INDEX tasks_waiting\b/));
  });
});

describe("reading the waiting tasks", () => {
  /**
   * A project whose group is one running task, with one task waiting only on it, 200 tasks waiting on nothing, and
   * ahead of them all in waiting order, `backlog` tasks waiting on another task.
   */
  async function projectWithBacklog(backlog: number) {
    const projectId = crypto.randomUUID();
    const [group, freed, other] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const task = (id: string, status: string, createdAt: string) =>
      env.DB.prepare(
        `INSERT INTO tasks (id, project_id, title, spec, type, priority, status, acceptance_criteria, created_by, warnings, requirements, created_at, updated_at)
         VALUES (?1, ?2, 't', '', 'feature', 'normal', ?3, '[]', 'test', '[]', '{}', ?4, ?4)`,
      ).bind(id, projectId, status, createdAt);
    const dependency = (taskId: string, upstream: string) =>
      env.DB.prepare(
        "INSERT INTO task_dependencies (task_id, depends_on_task_id, project_id, dependency_type, created_at) VALUES (?1, ?2, ?3, 'blocks', '2026')",
      ).bind(taskId, upstream, projectId);
    /** `count` pending tasks whose ids start with `prefix`, created in that order from `createdAt` on. */
    const many = (prefix: string, count: number, createdAt: string) =>
      env.DB.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?3)
         INSERT INTO tasks (id, project_id, title, spec, type, priority, status, acceptance_criteria, created_by, warnings, requirements, created_at, updated_at)
         SELECT ?1 || i, ?2, 't', '', 'feature', 'normal', 'pending', '[]', 'test', '[]', '{}', ?4 || printf('%05d', i), ?4 FROM n`,
      ).bind(prefix, projectId, count, createdAt);
    const blockedBy = (prefix: string, upstream: string) =>
      env.DB.prepare(
        `INSERT INTO task_dependencies (task_id, depends_on_task_id, project_id, dependency_type, created_at)
         SELECT id, ?2, ?3, 'blocks', '2026' FROM tasks WHERE project_id = ?3 AND id LIKE ?1 || '%'`,
      ).bind(prefix, upstream, projectId);
    await env.DB.batch([
      env.DB.prepare("INSERT INTO projects (id, name, slug, created_at, updated_at) VALUES (?1, 'backlog', ?1, '2026', '2026')").bind(projectId),
      task(other, "running", "2026-02"),
      many(`${projectId}:blocked:`, backlog, "2026-00-"),
      blockedBy(`${projectId}:blocked:`, other),
      many(`${projectId}:free:`, 200, "2026-01-"),
      task(group, "running", "2026-02"),
      task(freed, "pending", "2026-03"),
      dependency(freed, group),
    ]);
    return { projectId, group, freed };
  }

  /** `read` reads the same rows beside a backlog of 10 blocked tasks and of 1,000. */
  async function expectNoRowsForBacklog(read: (backlog: number) => Promise<number>) {
    const [short, long] = [await read(10), await read(1000)];
    // D1's count of the same read of the same rows varies by a row or two; passing the backlog would add 990 or more.
    expect(Math.abs(long - short)).toBeLessThan(10);
  }

  /** One operation's waiting tasks, as their ids in order, and the rows D1 read for them. */
  async function waitingAloneIn(projectId: string, limit: number, unblocking: string[]) {
    const query = new SQLiteSyncDialect().sqlToQuery(sql`SELECT ${waitingAlone(projectId, limit, unblocking)} AS waiting`);
    const { results, meta } = await env.DB.prepare(query.sql)
      .bind(...query.params)
      .all<{ waiting: string }>();
    return { ids: (JSON.parse(results[0]!.waiting) as { id: string }[]).map((w) => w.id), rows: meta.rows_read };
  }

  it("reads the tasks ready to run, and those only the group's tasks still block, without passing the blocked backlog", async () => {
    await expectNoRowsForBacklog(async (backlog) => {
      const { projectId, group, freed } = await projectWithBacklog(backlog);
      const query = groupWaiting(createDb(env.DB)).getQuery();
      const { results, meta } = await env.DB.prepare(query.sql)
        .bind(...fillPlaceholders(query.params, { projectId, ids: JSON.stringify([group]) }))
        .all<{ unblocked: string; unblockable: string }>();
      const [row] = results;
      expect((JSON.parse(row!.unblockable) as { id: string }[]).map((w) => w.id)).toEqual([freed]);
      expect(JSON.parse(row!.unblocked)).toHaveLength(200);
      return meta.rows_read;
    });
  });

  it("reads for one operation the tasks ready to run and those it unblocks, without passing the blocked backlog", async () => {
    await expectNoRowsForBacklog(async (backlog) => {
      const { projectId, freed } = await projectWithBacklog(backlog);
      const [ready, withFreed] = [await waitingAloneIn(projectId, 250, []), await waitingAloneIn(projectId, 250, [freed])];
      // Ready tasks in waiting order; the one it unblocks in its place among them (created after them all).
      expect(ready.ids).toHaveLength(200);
      expect(withFreed.ids).toEqual([...ready.ids, freed]);
      // Cut at its limit, the list is the first of them in the same order.
      expect((await waitingAloneIn(projectId, 100, [freed])).ids).toEqual(ready.ids.slice(0, 100));
      return ready.rows + withFreed.rows;
    });
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
      // A log the room has not seen the end of: it asks where it ends, and the insert finds it again.
      const append = new EventLog(env.DB, projectId).append([{ actor: "test", at: new Date().toISOString(), events: drafts, guard: null }]);
      const results = await env.DB.batch(append.statements);
      const appended = append.read(results);
      expect("events" in appended && appended.events.map((e) => e.seq)).toEqual([events + 1, events + 2]);
      return results.reduce((n, r) => n + r.meta.rows_read, 0);
    };
    const [few, many] = [await readsWith(10), await readsWith(1000)];
    expect(many).toBe(few);
    expect(many).toBeLessThan(50);
  });
});
