/**
 * A move between shards beside the room's other work: writes and usage sent while it copies and switches all land on
 * the new shard once; the archiver asked to run meanwhile loses nothing; a second move waits for the first to end; the
 * roll-ups read the same after it.
 */
import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { bootstrapAdmin, call, expectProblem, until } from "./helpers";
import { cli, expectOk, newTask, T, worldUnder, type World } from "./task-world";
import type { UsagePoint } from "../src/domain/usage";
import { roomStub } from "../src/room/client";
import type { ProjectRoom } from "../src/room/project-room";
import { MOVED_TABLES } from "../src/db/shard-tables";

let admin: string;
beforeAll(async () => {
  admin = await bootstrapAdmin();
});

const room = (projectId: string) => env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(projectId));
const d1 = (shard: string) => (shard === "DB" ? env.DB : env.DB_1!);
const count = async (shard: string, sql: string, ...binds: unknown[]) =>
  Number(
    await d1(shard)
      .prepare(sql)
      .bind(...binds)
      .first("n"),
  );
const placement = (projectId: string) =>
  env.DB.prepare("SELECT shard, moving_to FROM projects WHERE id = ?1").bind(projectId).first<{ shard: string; moving_to: string | null }>();
const moveRecord = (projectId: string) =>
  runInDurableObject(room(projectId), (_r, state) => state.storage.get<{ switched: boolean; at: { table: number } }>("move"));
const tableIndex = (name: string) => MOVED_TABLES.findIndex((t) => t.name === name);

/** The copy stepped by hand (its alarm kept away) until it is about to copy table `table`. */
async function copyUpTo(projectId: string, table: number) {
  await runInDurableObject(room(projectId), (_r, state) => state.storage.deleteAlarm());
  for (let i = 0; i < 400 && (await moveRecord(projectId))!.at.table < table; i++)
    await runInDurableObject(room(projectId), (r: ProjectRoom) => r.moveOn(0, 1000));
  expect((await moveRecord(projectId))!.at.table).toBe(table);
}

/** A world whose project lives on one shard; `to` is the other. */
async function world(name: string) {
  const w = await worldUnder(admin, name);
  const from = (await placement(w.project.id))!.shard;
  return { w, from, to: from === "DB" ? "DB_1" : "DB" };
}

const askMove = (projectId: string, shard: string) => call(`/api/v1/projects/${projectId}/move`, { token: admin, body: { shard } });

/** The room's alarm run until the move has ended (its record gone), as the runtime would run it (its steps when none is set). */
async function driveToEnd(projectId: string) {
  for (let i = 0; i < 400 && (await moveRecord(projectId)); i++)
    if (!(await runDurableObjectAlarm(room(projectId)))) await runInDurableObject(room(projectId), (r: ProjectRoom) => r.moveOn());
  expect(await moveRecord(projectId)).toBeUndefined();
}

/** A write through the Worker, sent again after each 503 (as a client honouring Retry-After does, sooner). */
async function untilTaken(send: () => ReturnType<typeof call>, status = 201) {
  for (let i = 0; i < 400; i++) {
    const reply = await send();
    if (reply.status !== 503) {
      expect(reply.status).toBe(status);
      return reply;
    }
    expect(reply.headers.get("Retry-After")).toBe("5");
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("still refused");
}

async function runningTask(w: World) {
  const id = await newTask(w);
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
  return id;
}

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
    const overview = async () => (await expectOk(call(`/api/v1/projects/${w.project.id}/overview`, { token: admin }))).json;
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

describe("the archiver during a move", () => {
  it("runs neither mid-copy nor on the old shard: every finished task is in D1 or the archive once, on the new shard", async () => {
    const { w, from, to } = await world("Archived while moving");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = await runningTask(w);
      await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: `result ${i}` }));
      ids.push(id);
    }
    await newTask(w, { title: "Later" });
    await d1(from)
      .prepare("UPDATE tasks SET completed_at = '2026-01-10T08:00:00.000Z' WHERE id IN (SELECT value FROM json_each(?1))")
      .bind(JSON.stringify(ids))
      .run();
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
    const { w, from, to } = await world("Archiving as it moves");
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const id = await runningTask(w);
      await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: `result ${i}` }));
      ids.push(id);
    }
    await newTask(w, { title: "Later" });
    await d1(from)
      .prepare("UPDATE tasks SET completed_at = '2026-01-10T08:00:00.000Z' WHERE id IN (SELECT value FROM json_each(?1))")
      .bind(JSON.stringify(ids))
      .run();
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

describe("what follows the project to its new shard", () => {
  it("its webhook's lane delivers from the new shard after the move", async () => {
    const { w, to } = await world("Hooked move");
    const receiver = inject("receiver");
    const name = crypto.randomUUID().slice(0, 8);
    const hook = await expectOk(call(`/api/v1/projects/${w.project.id}/webhooks`, { token: w.member.token, body: { url: `${receiver}/hooks/${name}` } }), 201);
    const control = async () =>
      (await (await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify({ secrets: [hook.json.secret], status: 200 }) })).json()) as {
        received: { body: unknown }[];
      };
    const deliveredFor = async (taskId: string) => (await control()).received.filter((r) => JSON.stringify(r.body).includes(taskId)).length;
    const first = await newTask(w, { title: "Before the move" });
    await until(
      () => deliveredFor(first),
      (n) => n > 0,
      "the first delivery",
    );

    await expectOk(askMove(w.project.id, to), 202);
    await driveToEnd(w.project.id);
    const after = await newTask(w, { title: "After the move" });
    await until(
      () => deliveredFor(after),
      (n) => n > 0,
      "a delivery after the move",
    );
    expect(await deliveredFor(after)).toBe(1);
    expect(await count(to, "SELECT count(*) AS n FROM outbox WHERE target_id = ?1 AND status = 'pending' AND seq IS NOT NULL", hook.json.id)).toBe(0);
  });

  it("its webhook's lane delivers nothing while the project moves", async () => {
    const { w, from, to } = await world("Hook waits");
    const receiver = inject("receiver");
    const name = crypto.randomUUID().slice(0, 8);
    const hook = await expectOk(call(`/api/v1/projects/${w.project.id}/webhooks`, { token: w.member.token, body: { url: `${receiver}/hooks/${name}` } }), 201);
    const answer = (status: number) => fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify({ secrets: [hook.json.secret], status }) });
    const lane = env.WEBHOOK_ENDPOINT.get(env.WEBHOOK_ENDPOINT.idFromName(hook.json.id));
    const attempts = (shard: string) =>
      count(shard, "SELECT count(*) AS n FROM delivery_attempts WHERE outbox_id IN (SELECT id FROM outbox WHERE target_id = ?1)", hook.json.id);
    const dueNow = (shard: string) =>
      d1(shard)
        .prepare("UPDATE outbox SET next_attempt_at = ?2 WHERE target_id = ?1 AND status = 'pending'")
        .bind(hook.json.id, new Date(Date.now() - 1000).toISOString())
        .run();
    await answer(500);
    const taskId = await newTask(w, { title: "Refused at first" });
    await until(
      () => attempts(from),
      (n) => n > 0,
      "a refused attempt",
    );

    await expectOk(askMove(w.project.id, to), 202);
    await copyUpTo(w.project.id, tableIndex("outbox") + 1);
    await answer(200);
    const before = await attempts(from);
    await dueNow(from);
    await runDurableObjectAlarm(lane);
    await new Promise((r) => setTimeout(r, 300));
    expect(await attempts(from)).toBe(before);

    await driveToEnd(w.project.id);
    await dueNow(to);
    await runDurableObjectAlarm(lane);
    const delivered = `SELECT count(*) AS n FROM outbox WHERE target_id = ?1 AND status = 'delivered' AND seq IS NOT NULL`;
    await until(
      () => count(to, delivered, hook.json.id),
      (n) => n > 0,
      "delivered from the new shard",
    );
    const received = ((await (await answer(200)).json()) as { received: { body: unknown }[] }).received;
    // The refused attempts before the move, and one delivery after it.
    expect(received.filter((r) => JSON.stringify(r.body).includes(taskId)).length).toBe(before + 1);
  });

  it("keeps the settings the room wrote on the source's copy when the directory's write of them failed", async () => {
    const project = (
      await expectOk(call("/api/v1/projects", { token: admin, body: { name: `Settled ${crypto.randomUUID().slice(0, 6)}`, shard: "DB_1" } }), 201)
    ).json;
    await expectOk(call(`/api/v1/projects/${project.id}`, { method: "PATCH", token: admin, body: { settings: { archive_after_days: 12 } } }));
    // The room's next change reached its shard's copy; the directory's copy of it failed.
    const copy = JSON.parse(String(await env.DB_1!.prepare("SELECT settings FROM projects WHERE id = ?1").bind(project.id).first("settings")));
    await env
      .DB_1!.prepare("UPDATE projects SET settings = ?2 WHERE id = ?1")
      .bind(project.id, JSON.stringify({ ...copy, archive_after_days: 7 }))
      .run();
    await expectOk(askMove(project.id, "DB"), 202);
    await driveToEnd(project.id);
    const settings = JSON.parse(String(await env.DB.prepare("SELECT settings FROM projects WHERE id = ?1").bind(project.id).first("settings")));
    expect(settings.archive_after_days).toBe(7);
  });

  it("ends a move whose target is no longer bound, logged, the project writable where it was", async () => {
    const { w, from } = await world("Nowhere to go");
    await env.DB.prepare("UPDATE projects SET moving_to = 'DB_9' WHERE id = ?1").bind(w.project.id).run();
    await runInDurableObject(room(w.project.id), (_r, state) =>
      state.storage.put("move", { source: from, target: "DB_9", switched: false, at: { phase: "copy", table: 0, after: null } }),
    );
    // A room restarted with the move recorded resumes it on its alarm.
    await evictDurableObject(room(w.project.id));
    await runInDurableObject(room(w.project.id), () => undefined);
    await runDurableObjectAlarm(room(w.project.id));
    expect(await moveRecord(w.project.id)).toBeUndefined();
    expect(await placement(w.project.id)).toEqual({ shard: from, moving_to: null });
    const id = await newTask(w, { title: "Still here" });
    expect(await count(from, "SELECT count(*) AS n FROM tasks WHERE id = ?1", id)).toBe(1);
  });
});
