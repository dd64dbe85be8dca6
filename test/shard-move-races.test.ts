/**
 * A move between shards beside the room's other work: writes and usage sent while it copies and switches all land on
 * the new shard once; the archiver asked to run meanwhile loses nothing; a second move waits for the first to end; the
 * roll-ups read the same after it.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { call, expectProblem } from "./helpers";
import { cli, expectOk, newTask, T } from "./task-world";
import { roomStub } from "../src/room/client";
import {
  askMove,
  copyUpTo,
  count,
  d1,
  driveToEnd,
  moveRecord,
  moves,
  moveSetup,
  placement,
  room,
  runningTask,
  tableIndex,
  untilTaken,
  world,
} from "./move-world";
import type { UsagePoint } from "../src/domain/usage";
import type { ProjectRoom } from "../src/room/project-room";
import { MOVED_TABLES } from "../src/db/shard-tables";

beforeAll(moveSetup);

describe("writes and usage during a move", () => {
  it("all land on the new shard exactly once, sent while it copies and as it switches", async () => {
    const { w, from, to } = await world("Busy move");
    const taskId = await runningTask(w);
    const who = { sessionId: w.workerSession, serverId: w.worker.id, agentType: "claude_code", model: "claude-sonnet-4-5" };
    const point = (): UsagePoint => ({ ...who, measure: "output_tokens", value: 1, at: new Date().toISOString() });
    // Written a step at a time, so that the copy takes many turns of the room and the writes meet each phase.
    await expectOk(askMove(w.project.id, to), 202);
    const titles = Array.from({ length: 30 }, (_, i) => `Sent during the move ${i}`);
    const driving = (async () => {
      for (let i = 0; i < 400 && (await moveRecord(w.project.id)); i++) {
        await runInDurableObject(room(w.project.id), (r: ProjectRoom) => r.moveOn(0, 2));
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await Promise.all([
      driving,
      ...titles.map((title, i) =>
        new Promise((r) => setTimeout(r, i * 15)).then(() =>
          untilTaken(() => cli(w.orchestrator.apiKey, "POST", T, { title, spec: "Do it", project_id: w.project.id })),
        ),
      ),
      ...Array.from({ length: 20 }, (_, i) => new Promise((r) => setTimeout(r, i * 20)).then(() => room(w.project.id).recordUsage([point()]))),
    ]);
    expect(await moveRecord(w.project.id)).toBeUndefined();
    expect(await placement(w.project.id)).toEqual({ shard: to, moving_to: null });

    const sent = `SELECT count(DISTINCT title) AS n FROM tasks WHERE project_id = ?1 AND title LIKE 'Sent during the move %'`;
    const rows = `SELECT count(*) AS n FROM tasks WHERE project_id = ?1 AND title LIKE 'Sent during the move %'`;
    expect(await count(to, sent, w.project.id)).toBe(30);
    expect(await count(to, rows, w.project.id)).toBe(30);
    expect(await count(from, rows, w.project.id)).toBe(0);
    // Every point is counted on the new shard, once, however it met the move (kept until the move let it through).
    const tokens = async () => Number(await d1(to).prepare("SELECT output_tokens AS n FROM task_usage WHERE task_id = ?1").bind(taskId).first("n"));
    for (let i = 0; i < 50 && (await tokens()) < 20; i++) await runDurableObjectAlarm(room(w.project.id));
    expect(await tokens()).toBe(20);
    expect(await count(from, "SELECT count(*) AS n FROM task_usage WHERE task_id = ?1", taskId)).toBe(0);
  });
});

describe("the switch", () => {
  it("refuses what was queued on the old shard's writer as the project switched, so that it lands on the new shard", async () => {
    const { w, from, to } = await world("Queued at the switch");
    const taskId = await newTask(w);
    await expectOk(askMove(w.project.id, to), 202);
    await copyUpTo(w.project.id, MOVED_TABLES.length);
    const actor = { kind: "person" as const, userId: w.member.id, label: "test" };
    const note = (r: ProjectRoom, i: number) => r.execute(actor, { op: "note", taskId, content: `Queued ${i}`, urgent: false });
    // The next step switches; the notes queue behind it on the writer of the shard it leaves.
    const answers = await runInDurableObject(room(w.project.id), async (r: ProjectRoom) => {
      const switching = r.moveOn(0);
      const notes = Array.from({ length: 12 }, (_, i) => note(r, i));
      await switching;
      return Promise.all(notes);
    });
    expect((await moveRecord(w.project.id))!.switched).toBe(true);
    const refused = answers.flatMap((a, i) => (a.ok ? [] : [i]));
    for (const i of refused) expect(answers[i]).toMatchObject({ ok: false, problem: { status: 503, code: "PROJECT_MOVING" } });
    // Sent again, they land on the new shard.
    await runInDurableObject(room(w.project.id), async (r: ProjectRoom) => {
      for (const i of refused) expect((await note(r, i)).ok).toBe(true);
    });
    await driveToEnd(w.project.id);
    const notes = "SELECT count(*) AS n FROM task_notes WHERE task_id = ?1 AND content LIKE 'Queued %'";
    expect(await count(to, notes, taskId)).toBe(12);
    expect(await count(from, notes, taskId)).toBe(0);
  });

  it("keeps usage the intake flushed while the project copied, and records it on the new shard once", async () => {
    const { w, to } = await world("Usage kept");
    const taskId = await runningTask(w);
    const who = { sessionId: w.workerSession, serverId: w.worker.id, agentType: "claude_code", model: "claude-sonnet-4-5" };
    await expectOk(askMove(w.project.id, to), 202);
    await copyUpTo(w.project.id, 1);
    await room(w.project.id).recordUsage([{ ...who, measure: "output_tokens", value: 7, at: new Date().toISOString() }]);
    // The intake's timer flushes within a second, while the move still copies: its batch is refused, and kept.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await moveRecord(w.project.id))!.switched).toBe(false);
    await driveToEnd(w.project.id);
    const tokens = async () => Number(await d1(to).prepare("SELECT output_tokens AS n FROM task_usage WHERE task_id = ?1").bind(taskId).first("n"));
    for (let i = 0; i < 20 && (await tokens()) < 7; i++) await runInDurableObject(room(w.project.id), (r: ProjectRoom) => r.alarm());
    expect(await tokens()).toBe(7);
  });
});

describe("one move at a time", () => {
  it("refuses another shard while it copies, and a second move until the first has deleted its old rows; then takes it", async () => {
    const { w, from, to } = await world("Moved twice");
    await newTask(w);
    // Begun as the route begins it, its alarm kept away so that it is still copying when asked again.
    await env.DB.prepare("UPDATE projects SET moving_to = ?2 WHERE id = ?1").bind(w.project.id, to).run();
    await runInDurableObject(room(w.project.id), async (r: ProjectRoom, state) => {
      expect(await r.moveTo(from, to)).toBeUndefined();
      await state.storage.deleteAlarm();
    });
    // While it copies: the shard it lives on is another shard than the one it goes to.
    const copying = await askMove(w.project.id, from);
    expectProblem(copying, 409, "CONFLICT");
    expect(copying.json.detail).toContain(`moving to shard ${to}`);
    expect(await placement(w.project.id)).toEqual({ shard: from, moving_to: to });

    // Switched, still deleting its old rows.
    await runInDurableObject(room(w.project.id), async (r: ProjectRoom, state) => {
      while (!(await state.storage.get<{ switched: boolean }>("move"))!.switched) await r.moveOn(0, 50);
    });
    expect(await placement(w.project.id)).toEqual({ shard: to, moving_to: null });
    const refused = await askMove(w.project.id, from);
    expectProblem(refused, 409, "CONFLICT");
    expect(refused.json.detail).toContain(`deleting its old rows on shard ${from}`);
    // The mark is undone: the project takes writes on its new shard meanwhile.
    expect(await placement(w.project.id)).toEqual({ shard: to, moving_to: null });
    const during = await newTask(w, { title: "Between the moves" });

    await driveToEnd(w.project.id);
    await expectOk(askMove(w.project.id, from), 202);
    await driveToEnd(w.project.id);
    expect(await placement(w.project.id)).toEqual({ shard: from, moving_to: null });
    expect(await count(from, "SELECT count(*) AS n FROM tasks WHERE id = ?1", during)).toBe(1);
    expect(await count(to, "SELECT count(*) AS n FROM tasks WHERE project_id = ?1", w.project.id)).toBe(0);
    // The project's copy on its shard says where it lives.
    expect(await d1(from).prepare("SELECT shard, moving_to FROM projects WHERE id = ?1").bind(w.project.id).first()).toMatchObject({
      shard: from,
      moving_to: null,
    });
  });
});

describe("the roll-ups", () => {
  it("read the same after a move, tasks last touched on other days included", async () => {
    const { w, from, to } = await world("Rolled up");
    const ids = [await newTask(w), await newTask(w), await runningTask(w)];
    // Touched days ago without a change of status: their roll-up rows stay on the day they were counted.
    for (const [i, id] of ids.entries())
      await d1(from)
        .prepare("UPDATE tasks SET updated_at = ?2 WHERE id = ?1")
        .bind(id, new Date(Date.now() - (i + 2) * 86_400_000).toISOString())
        .run();
    const overview = async () => (await expectOk(call(`/api/v1/projects/${w.project.id}/overview`, { token: moves.admin }))).json;
    const sums = (shard: string) =>
      d1(shard)
        .prepare("SELECT sum(pending) AS pending, sum(running) AS running, sum(done) AS done FROM task_rollup WHERE project_id = ?1")
        .bind(w.project.id)
        .first();
    const before = { overview: await overview(), sums: await sums(from) };
    expect(before.sums).toMatchObject({ pending: 2, running: 1 });

    await expectOk(askMove(w.project.id, to), 202);
    await driveToEnd(w.project.id);
    expect({ overview: await overview(), sums: await sums(to) }).toEqual(before);
  });
});

/** A project with `n` tasks finished long ago (due for the archive) and one still open. */
async function withOldFinishedTasks(name: string, n: number) {
  const { w, from, to } = await world(name);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = await runningTask(w);
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: `result ${i}` }));
    ids.push(id);
  }
  await newTask(w, { title: "Later" });
  await d1(from)
    .prepare("UPDATE tasks SET completed_at = '2026-01-10T08:00:00.000Z' WHERE id IN (SELECT value FROM json_each(?1))")
    .bind(JSON.stringify(ids))
    .run();
  return { w, from, to, ids };
}

describe("the archiver during a move", () => {
  it("runs neither mid-copy nor on the old shard: every finished task is in D1 or the archive once, on the new shard", async () => {
    const { w, from, to, ids } = await withOldFinishedTasks("Archived while moving", 5);
    // The hourly sweep wakes it once the archive's tables are copied, before the tasks are.
    await expectOk(askMove(w.project.id, to), 202);
    const tasksAt = tableIndex("tasks");
    expect(Math.max(tableIndex("archive_batches"), tableIndex("archived_tasks"))).toBeLessThan(tasksAt);
    await copyUpTo(w.project.id, tasksAt);
    expect(await roomStub(env, w.project.id).archive()).toBe(false);
    await driveToEnd(w.project.id);
    // After the move the archiver goes on, on the new shard.
    for (let i = 0; i < 20 && (await roomStub(env, w.project.id).archive()); i++);
    for (let i = 0; i < 5; i++) await runDurableObjectAlarm(room(w.project.id));

    const list = JSON.stringify(ids);
    const live = await count(to, "SELECT count(*) AS n FROM tasks WHERE id IN (SELECT value FROM json_each(?1))", list);
    const archived = await count(
      to,
      `SELECT count(*) AS n FROM archived_tasks a JOIN archive_batches b ON b.id = a.batch_id
       WHERE a.task_id IN (SELECT value FROM json_each(?1)) AND b.step = 'done'`,
      list,
    );
    expect(live + archived).toBe(5);
    expect(archived).toBe(5);
    expect(await count(from, "SELECT count(*) AS n FROM archived_tasks WHERE project_id = ?1", w.project.id)).toBe(0);
    expect(await count(from, "SELECT count(*) AS n FROM tasks WHERE project_id = ?1", w.project.id)).toBe(0);
  });
});

describe("the archiver's run under way as a move begins", () => {
  it("ends before the move is recorded, and the move then loses nothing", async () => {
    const { w, from, to, ids } = await withOldFinishedTasks("Archiving as it moves", 4);
    await env.DB.prepare("UPDATE projects SET moving_to = ?2 WHERE id = ?1").bind(w.project.id, to).run();
    const order = await runInDurableObject(room(w.project.id), async (r: ProjectRoom, state) => {
      const seen: string[] = [];
      const archived = r.archive().then(() => seen.push("archive run ended"));
      const begun = r.moveTo(from, to).then(async () => seen.push((await state.storage.get("move")) ? "move recorded" : "no move"));
      await Promise.all([archived, begun]);
      return seen;
    });
    expect(order).toEqual(["archive run ended", "move recorded"]);
    await driveToEnd(w.project.id);
    // Whatever the run left goes on after the move, on the new shard.
    for (let i = 0; i < 20 && (await roomStub(env, w.project.id).archive()); i++);
    const list = JSON.stringify(ids);
    expect(await count(to, "SELECT count(*) AS n FROM archived_tasks WHERE task_id IN (SELECT value FROM json_each(?1))", list)).toBe(4);
    expect(await count(to, "SELECT count(*) AS n FROM tasks WHERE id IN (SELECT value FROM json_each(?1))", list)).toBe(0);
  });
});
