/**
 * The event log's shape (migrations 0038 and 0040): a task's events are read from the log by its key, in the blocks of
 * the log that hold them (where the log stood when the task was created, and each later block task_log_blocks lists),
 * with no index of a task's events; the overviews' roll-ups are one row per project, day and type, kept by triggers.
 * Each stays exact under many batches, concurrent writers, and deletes.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { deleteTaskEvents, taskEventsStatement } from "../src/archive/task-events";
import { LOG_BLOCK } from "../src/db/task-events";
import { answered, call, hubAs } from "./helpers";
import { cli, createWorld, expectOk, newTask, T, worldUnder, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Event log shape");
});

/** The whole log of the project, by its key: what a task's events must be a part of. */
async function wholeLog(projectId: string) {
  const { results } = await env.DB.prepare("SELECT seq, type, task_id FROM events WHERE project_id = ?1 ORDER BY seq")
    .bind(projectId)
    .all<{ seq: number; type: string; task_id: string | null }>();
  return results;
}

const timeline = async (id: string) =>
  (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}/events`))).json.events as { seq: number; type: string; task_id: string }[];

const drive = async (id: string, to: "running" | "done" | "failed") => {
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
  if (to === "done") await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: { summary: "ok" } }));
  if (to === "failed") await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/fail`, { error: "broke" }));
};

describe("a task's timeline", () => {
  it("is its events in seq order after many other batches, those other tasks' operations wrote about it included", async () => {
    const upstream = await newTask(w);
    const dependent = await newTask(w, { dependency_ids: [upstream] });
    // Other tasks' batches in between, some of them concurrent groups.
    const others = await Promise.all(Array.from({ length: 12 }, () => newTask(w)));
    await Promise.all(others.map((id, i) => drive(id, i % 3 === 0 ? "failed" : "done")));
    await expectOk(call(`/api/v1/tasks/${dependent}/notes`, { token: w.member.token, body: { content: "a note between" } }), 201);
    // The upstream's completion unblocks the dependent: its task_unblocked event is written by the upstream's batch.
    await drive(upstream, "done");
    await drive(dependent, "done");

    const log = await wholeLog(w.project.id);
    for (const id of [upstream, dependent, others[5]!]) {
      const own = log.filter((e) => e.task_id === id);
      expect((await timeline(id)).map((e) => [e.seq, e.type])).toEqual(own.map((e) => [e.seq, e.type]));
    }
    expect((await timeline(dependent)).map((e) => e.type)).toEqual(
      expect.arrayContaining(["task_created", "note_added", "task_unblocked", "task_assigned", "task_started", "task_completed"]),
    );
    // The events of a set of tasks, as an archive reads them: in seq order.
    const set = [dependent, others[0]!, upstream];
    const read = await eventsOf(w.project.id, set);
    expect(read.events.map((e) => e.seq)).toEqual(log.filter((e) => set.includes(e.task_id!)).map((e) => e.seq));
    expect(read.events.every((e) => typeof e.data === "object" && e.project_id === w.project.id)).toBe(true);
    expect((await eventsOf(w.project.id, [])).events).toEqual([]);
  });

  it("starts where the log ended as the task was created", async () => {
    const id = await newTask(w);
    const [{ log_from }] = (await env.DB.prepare("SELECT log_from FROM tasks WHERE id = ?1").bind(id).all<{ log_from: number }>()).results as [
      { log_from: number },
    ];
    const log = await wholeLog(w.project.id);
    const created = log.find((e) => e.task_id === id && e.type === "task_created")!;
    expect(log_from).toBe(created.seq - 1);
    expect((await timeline(id)).map((e) => e.seq)).toEqual([created.seq]);
  });
});

/** The events of tasks as the archive reads them, with the rows D1 read to find them. */
async function eventsOf(projectId: string, ids: string[]) {
  const { statement, read } = taskEventsStatement(env.DB, projectId, ids);
  const result = await statement.all();
  return { events: read(result), rowsRead: result.meta.rows_read };
}

/** Appends `n` events of no task to the project's log behind its room's back, as a busy project's other work would. */
const fillLog = (projectId: string, n: number) =>
  env.DB.prepare(
    `INSERT INTO events (project_id, seq, type, task_id, actor, data, created_at)
     WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?2)
     SELECT ?1, (SELECT MAX(seq) FROM events WHERE project_id = ?1) + i, 'server_removed', NULL, 'hub', '{}', ?3 FROM k`,
  )
    .bind(projectId, n, new Date().toISOString())
    .run();

/** `n` copies of task `id` in its project, as a long-lived project holds thousands of tasks. */
async function copiesOf(id: string, n: number) {
  const { results } = await env.DB.prepare("SELECT name FROM pragma_table_info('tasks')").all<{ name: string }>();
  const columns = results.map((c) => c.name);
  const values = columns.map((c) => (c === "id" ? "lower(hex(randomblob(16)))" : c === "client_id" ? "NULL" : c));
  await env.DB.prepare(
    `INSERT INTO tasks (${columns.join(", ")}) WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ?2)
     SELECT ${values.join(", ")} FROM tasks, k WHERE tasks.id = ?1`,
  )
    .bind(id, n)
    .run();
}

const blocksOf = async (id: string) =>
  (await env.DB.prepare("SELECT block FROM task_log_blocks WHERE task_id = ?1 ORDER BY block").bind(id).all<{ block: number }>()).results.map((r) => r.block);

describe("a task whose events lie far apart in a long log", () => {
  it("is read whole from the blocks that hold its events, each listed once, and the read walks those blocks alone", async () => {
    const mine = { ...w, ...(await worldUnder(w.admin, "Long log")) };
    const id = await newTask(mine);
    const near = await newTask(mine);
    expect(await blocksOf(id)).toEqual([]);
    // Thousands of other tasks in the project: a read by the tasks' ids never goes through the project's tasks.
    await copiesOf(near, 5000);
    await fillLog(mine.project.id, 3 * LOG_BLOCK);
    // Two notes in a later block: the first lists the block for the task, the second finds it listed.
    for (const content of ["far on", "further on"]) await expectOk(call(`/api/v1/tasks/${id}/notes`, { token: mine.member.token, body: { content } }), 201);
    const log = await wholeLog(mine.project.id);
    const own = log.filter((e) => e.task_id === id);
    expect(own.map((e) => e.type)).toEqual(["task_created", "note_added", "note_added"]);
    expect(await blocksOf(id)).toEqual([Math.floor(own[1]!.seq / LOG_BLOCK)]);
    expect(await blocksOf(near)).toEqual([]);
    expect((await timeline(id)).map((e) => [e.seq, e.type])).toEqual(own.map((e) => [e.seq, e.type]));

    // The read walks the rest of the task's first block and the one block listed, not the log between.
    const read = await eventsOf(mine.project.id, [id, near]);
    expect(read.events.map((e) => e.seq)).toEqual(log.filter((e) => e.task_id === id || e.task_id === near).map((e) => e.seq));
    expect(log.length).toBeGreaterThan(3 * LOG_BLOCK);
    expect(read.rowsRead).toBeLessThan(2 * LOG_BLOCK + 100);
    // Two hundred tasks created in one block walk it once, not once each.
    const { results: copies } = await env.DB.prepare("SELECT id FROM tasks WHERE project_id = ?1 AND id NOT IN (?2, ?3) LIMIT 200")
      .bind(mine.project.id, id, near)
      .all<{ id: string }>();
    const many = await eventsOf(mine.project.id, [id, near, ...copies.map((c) => c.id)]);
    expect(many.events.map((e) => e.seq)).toEqual(read.events.map((e) => e.seq));
    expect(many.rowsRead).toBeLessThan(2 * LOG_BLOCK + 1000);

    // As the archive deletes a task's events: those alone, found the same way.
    const deleted = await deleteTaskEvents(env.DB, mine.project.id, [id], "1").run();
    expect(deleted.meta.changes).toBe(3);
    expect(deleted.meta.rows_read).toBeLessThan(2 * LOG_BLOCK + 100);
    expect((await wholeLog(mine.project.id)).filter((e) => e.task_id === id || e.task_id === near).map((e) => e.task_id)).toEqual([near]);
  });
});

describe("the roll-ups under concurrent writers", () => {
  it("keep seq gapless and the open counts, finishes and retries equal to a count of the tasks", async () => {
    const fresh = await worldUnder(w.admin, "Roll-ups at once");
    const mine = { ...w, ...fresh };
    const ids = await Promise.all(Array.from({ length: 36 }, () => newTask(mine)));
    await Promise.all(ids.map((id) => expectOk(cli(mine.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }))));
    await Promise.all(ids.slice(0, 30).map((id) => expectOk(cli(mine.worker.apiKey, "POST", `${T}/${id}/start`))));
    // Dozens of completions and failures at once ride in the room's groups.
    await Promise.all([
      ...ids.slice(0, 20).map((id) => expectOk(cli(mine.worker.apiKey, "POST", `${T}/${id}/complete`, { result: { summary: "ok" } }))),
      ...ids.slice(20, 26).map((id) => expectOk(cli(mine.worker.apiKey, "POST", `${T}/${id}/fail`, { error: "broke" }))),
    ]);
    await Promise.all(ids.slice(20, 23).map((id) => expectOk(call(`/api/v1/tasks/${id}/retry`, { method: "POST", token: mine.admin }))));
    const orchestrator = hubAs({ apiKey: mine.orchestrator.apiKey });
    await Promise.all(ids.slice(33).map((id) => answered(orchestrator.DELETE("/api/v1/server/tasks/{id}", { params: { path: { id } } }))));

    const counted = async () => {
      const { results } = await env.DB.prepare("SELECT status, count(*) AS n FROM tasks WHERE project_id = ?1 GROUP BY status")
        .bind(fresh.project.id)
        .all<{ status: string; n: number }>();
      return Object.fromEntries(results.map((r) => [r.status, r.n]));
    };
    const overview = async () => (await expectOk(call(`/api/v1/projects/${fresh.project.id}/overview?days=1`, { token: fresh.admin }))).json;
    const byStatus = await counted();
    const o = await overview();
    const open = ["pending", "assigned", "planning", "plan_review", "running", "needs_human"];
    expect(o.open_by_status).toEqual(Object.fromEntries(open.map((s) => [s, byStatus[s] ?? 0])));
    expect(o.totals).toEqual({ done: 20, failed: 6, retried: 3, cancelled: 3 });
    expect(o.by_type).toEqual([{ type: "feature", done: 20, failed: 6, median_seconds_to_done: expect.any(Number) }]);

    // seq is gapless: 1 to the head, each once.
    const log = await wholeLog(fresh.project.id);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));

    // A task deleted unfinished leaves the open counts; a finished one (as an archive deletes it) moves no figure.
    const [pendingOne, doneOne] = [ids[20]!, ids[0]!];
    await env.DB.batch([env.DB.prepare("DELETE FROM tasks WHERE id = ?1").bind(pendingOne), env.DB.prepare("DELETE FROM tasks WHERE id = ?1").bind(doneOne)]);
    const after = await overview();
    expect(after.open_by_status).toEqual({ ...o.open_by_status, pending: o.open_by_status.pending - 1 });
    expect(after.totals).toEqual(o.totals);
    const { results: rollups } = await env.DB.prepare("SELECT count(*) AS n FROM task_rollup WHERE project_id = ?1")
      .bind(fresh.project.id)
      .all<{ n: number }>();
    // Every change of these tasks today wrote into one row: one project, one day, one type.
    expect(rollups[0]!.n).toBe(1);
  });
});
