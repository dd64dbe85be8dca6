/**
 * The event log's shape (migration 0038): a task's events are read from the log by its key, from where the log stood
 * when the task was created, with no index of a task's events; the overviews' roll-ups are one row per project, day
 * and type, kept by triggers. Each stays exact under many batches, concurrent writers, and deletes.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { eventsOfTasks } from "../src/db/task-events";
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
    // The events of a set of tasks, as an archive reads them: one walk of the log, in seq order.
    const set = [dependent, others[0]!, upstream];
    const read = await eventsOfTasks(env.DB, w.project.id, set);
    expect(read.map((e) => e.seq)).toEqual(log.filter((e) => set.includes(e.task_id!)).map((e) => e.seq));
    expect(read.every((e) => typeof e.data === "object" && e.project_id === w.project.id)).toBe(true);
    expect(await eventsOfTasks(env.DB, w.project.id, set, 2)).toHaveLength(2);
    expect(await eventsOfTasks(env.DB, w.project.id, [])).toEqual([]);
  });

  it("starts where the log ended as the task was created; a task written with no such mark is read from the start", async () => {
    const id = await newTask(w);
    const [{ log_from }] = (await env.DB.prepare("SELECT log_from FROM tasks WHERE id = ?1").bind(id).all<{ log_from: number }>()).results as [
      { log_from: number },
    ];
    const log = await wholeLog(w.project.id);
    const created = log.find((e) => e.task_id === id && e.type === "task_created")!;
    expect(log_from).toBe(created.seq - 1);

    // Written by hand, as before migration 0038 or by a copy from elsewhere: log_from 0 reads the whole log.
    await env.DB.prepare("UPDATE tasks SET log_from = 0 WHERE id = ?1").bind(id).run();
    expect((await timeline(id)).map((e) => e.seq)).toEqual([created.seq]);
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
