/**
 * The room keeps its tasks between groups of starts and completions: what any
 * other operation may have changed in between is read again, never answered
 * from what the room held.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { RoomCommand } from "../src/room/commands";
import type { ProjectRoom } from "../src/room/project-room";
import type { TaskRow } from "../src/room/statements";
import { TaskMemory } from "../src/room/task-memory";
import { call, type Reply } from "./helpers";
import { cli, createWorld, expectOk, newTask, T, taskStatus, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Memory");
});

const events = async () => (await call(`/api/v1/projects/${w.project.id}/events?limit=1000`, { token: w.admin })).json.events as any[];

/** The D1 round trips the room took for the request. */
const roomQueries = (reply: Reply) => Number(/room;dur=[\d.]+;desc="d1 queries=(\d+)/.exec(reply.headers.get("Server-Timing") ?? "")?.[1]);

/** A task given to the worker's session and started: the room now holds it. */
async function started(body: Record<string, unknown> = {}) {
  const id = await newTask(w, body);
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
  return id;
}

describe("what the room holds between groups", () => {
  it("a dependent created after its upstream started is unblocked by the upstream's completion", async () => {
    const up = await started();
    const down = await newTask(w, { dependencies: [{ depends_on_task_id: up, dependency_type: "blocks" }] });
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${up}/complete`, { result: "ok" }));
    const unblocked = (await events()).filter((e) => e.type === "task_unblocked" && e.task_id === down);
    expect(unblocked.map((e) => e.data.resolved_by)).toEqual([up]);
  });

  it("a task cancelled after it started refuses its agent's completion as cancelled, keeping the late result", async () => {
    const id = await started();
    await expectOk(cli(w.orchestrator.apiKey, "DELETE", `${T}/${id}`));
    const late = await cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "late" });
    // Planned from a row still running, it would have been a concurrent change instead.
    expect(late.status, late.text).toBe(409);
    expect(late.json).toMatchObject({ code: "INVALID_TRANSITION", current_status: "cancelled", late_result_kept: true });
    expect(await taskStatus(w, id)).toBe("cancelled");
  });

  it("a completion that unblocks a waiting task offers it, though nothing was waiting before", async () => {
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: w.worker.apiKey, body: { capabilities: { languages: ["memory"], max_concurrent_tasks: 50 } } }));
    const up = await started();
    const down = await newTask(w, { requirements: { languages: ["memory"] }, dependencies: [{ depends_on_task_id: up, dependency_type: "blocks" }] });
    // A completion with nothing waiting that is ready to offer: the room learns that none is.
    const other = await started();
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${other}/complete`, { result: "ok" }));
    expect(await taskStatus(w, down)).toBe("pending");
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${up}/complete`, { result: "ok" }));
    const task = (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${down}`))).json;
    expect(task).toMatchObject({ status: "assigned", assigned_server_name: w.worker.name });
  });

  it("a task given to a server is held as its batch left it: its start and completion read nothing before their batch", async () => {
    const [first, second] = [await newTask(w), await newTask(w)];
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${first}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${second}/assign`, { session_name: "worker" }));
    expect(roomQueries(await expectOk(cli(w.worker.apiKey, "POST", `${T}/${first}/start`)))).toBe(1);
    // The first completion since tasks were created reads what waits; then the room knows nothing does.
    expect(roomQueries(await expectOk(cli(w.worker.apiKey, "POST", `${T}/${first}/complete`, { result: "ok" })))).toBe(2);
    expect(roomQueries(await expectOk(cli(w.worker.apiKey, "POST", `${T}/${second}/start`)))).toBe(1);
    expect(roomQueries(await expectOk(cli(w.worker.apiKey, "POST", `${T}/${second}/complete`, { result: "ok" })))).toBe(1);
    expect([await taskStatus(w, first), await taskStatus(w, second)]).toEqual(["done", "done"]);
  });

  it("a row one operation read is kept for the next, until an operation writes it", async () => {
    const id = await newTask(w);
    const note = async () => roomQueries(await expectOk(call(`/api/v1/tasks/${id}/notes`, { token: w.member.token, body: { content: "n" } }), 201));
    await note();
    // A note writes no task: the next one takes the row from the room's memory.
    expect(await note()).toBe(1);
    // Each update writes the row: the next reads it again, at the version it left.
    await expectOk(cli(w.orchestrator.apiKey, "PUT", `${T}/${id}`, { title: "first" }));
    await expectOk(cli(w.orchestrator.apiKey, "PUT", `${T}/${id}`, { title: "second" }));
    expect(await note()).toBe(2);
    expect((await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}`))).json.title).toBe("second");
  });

  it("starts and completions of many tasks at once end each task exactly once", async () => {
    const ids = await Promise.all(Array.from({ length: 24 }, () => newTask(w)));
    for (const id of ids) await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await Promise.all(ids.map((id) => expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`))));
    const done = await Promise.all(ids.map((id) => cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "ok" })));
    expect(done.map((r) => r.status)).toEqual(ids.map(() => 200));
    // Completing again is the same answer, read from what the room holds.
    const again = await Promise.all(ids.map((id) => cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "ok" })));
    expect(again.map((r) => r.status)).toEqual(ids.map(() => 200));
    const completed = (await events()).filter((e) => e.type === "task_completed" && ids.includes(e.task_id));
    expect(completed).toHaveLength(ids.length);
    const { n } = (await env.DB.prepare(`SELECT count(*) AS n FROM tasks WHERE status = 'done' AND id IN (${ids.map(() => "?").join(",")})`)
      .bind(...ids)
      .first<{ n: number }>())!;
    expect(n).toBe(ids.length);
  });
});

describe("a project deleted while operations wait in its room", () => {
  it("an operation queued before the room heard of it finds no task, rather than one the room held", async () => {
    const project = (await expectOk(call("/api/v1/projects", { token: w.admin, body: { name: "Deleted" } }), 201)).json.id as string;
    const id = await newTask(w, { project_id: project });
    // A note reads the task's row, and the room keeps it for the next operation.
    await expectOk(call(`/api/v1/tasks/${id}/notes`, { token: w.admin, body: { content: "first" } }), 201);
    const room = env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(project));
    const answer = await runInDurableObject(room, async (instance: ProjectRoom) => {
      // The room is busy with something else; a note on the task it holds waits behind it.
      const writer = (instance as unknown as { writer: { serialise(work: () => Promise<unknown>): Promise<unknown> } }).writer;
      let release!: () => void;
      void writer.serialise(() => new Promise<void>((r) => (release = r)));
      const note = instance.execute(
        { kind: "person", userId: "u", label: "person" },
        { op: "note", taskId: id, content: "n", urgent: false, notifyDependents: false },
      );
      // As the route does: the project goes from D1 with its tasks, then the room is told.
      await env.DB.prepare("DELETE FROM projects WHERE id = ?1").bind(project).run();
      await instance.closeAll("the project was deleted");
      release();
      return note;
    });
    expect(answer).toMatchObject({ ok: false, problem: { status: 404 } });
  });
});

describe("where the project's log ends, known to the room", () => {
  it("an event appended behind the room's back costs the next operation a second try, not a failure", async () => {
    await newTask(w);
    const last = async () =>
      (await env.DB.prepare("SELECT MAX(seq) AS seq FROM events WHERE project_id = ?1").bind(w.project.id).first<{ seq: number }>())!.seq;
    const before = await last();
    await env.DB.prepare("INSERT INTO events (project_id, seq, type, task_id, actor, data, created_at) VALUES (?1, ?2, 'filler', NULL, 'test', '{}', ?3)")
      .bind(w.project.id, before + 1, new Date().toISOString())
      .run();
    const id = await newTask(w);
    const created = (await events()).filter((e) => e.task_id === id && e.type === "task_created");
    expect(created.map((e) => e.seq)).toEqual([before + 2]);
  });
});

describe("what blocks a dependent, known from its siblings", () => {
  /** The rows of D1 the room read for the request. */
  const roomRowsRead = (reply: Reply) => Number(/room-d1;desc="rows read=(\d+)/.exec(reply.headers.get("Server-Timing") ?? "")?.[1]);
  const assign = (id: string) => expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
  const finish = async (id: string) => {
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "ok" }));
  };
  const unblockedBy = async (id: string) => (await events()).filter((e) => e.type === "task_unblocked" && e.task_id === id).map((e) => e.data.resolved_by);

  it("siblings given one after another read their dependent's other blockers once, and only the last completion unblocks it", async () => {
    const children = [await newTask(w), await newTask(w), await newTask(w), await newTask(w)];
    const parent = await newTask(w, { dependencies: children.map((id) => ({ depends_on_task_id: id, dependency_type: "blocks" })) });
    const read = [];
    for (const id of children) read.push(roomRowsRead(await assign(id)));
    // The first reads the parent's other three dependencies and their upstreams; the others take them from the room.
    expect(read[1]).toBeLessThan(read[0]! - 4);
    expect(read[3]).toBeLessThan(read[0]! - 4);
    // Completed in the reverse order of their reads: each still leaves the parent blocked but the last.
    for (const id of children.slice(1).reverse()) {
      await finish(id);
      expect(await unblockedBy(parent)).toEqual([]);
    }
    await finish(children[0]!);
    expect(await unblockedBy(parent)).toEqual([children[0]]);
  });

  it("a dependency added after the siblings were read is waited for", async () => {
    const [first, second, late] = [await newTask(w), await newTask(w), await newTask(w)];
    const parent = await newTask(w, { dependencies: [first, second].map((id) => ({ depends_on_task_id: id, dependency_type: "blocks" })) });
    await assign(first);
    await expectOk(call(`/api/v1/tasks/${parent}/dependencies`, { token: w.admin, body: { depends_on_task_id: late, dependency_type: "blocks" } }), 201);
    await assign(second);
    await finish(second);
    await finish(first);
    expect(await unblockedBy(parent)).toEqual([]);
    await assign(late);
    await finish(late);
    expect(await unblockedBy(parent)).toEqual([late]);
  });
});

describe("TaskMemory", () => {
  const row = (id: string) => ({ id, status: "running", version: 3 }) as unknown as TaskRow;
  const group = (id: string) => ({
    tasks: new Map([[id, row(id)]]),
    blockers: new Map([[id, []]]),
    links: new Map([[id, []]]),
    asked: new Set<string>(),
    blockedBy: new Map([[`${id}-dependent`, [id]]]),
    resolved: new Set<string>(),
    assigned: new Map(),
    noneWaiting: true,
  });
  const note: RoomCommand = { op: "note", taskId: "a", content: "x", urgent: false, notifyDependents: false };

  it("holds what a committed group read and wrote, and keeps it past operations that write no task", () => {
    const memory = new TaskMemory();
    memory.ready().unsettle();
    memory.committed(group("a"));
    expect(memory.ready().holds("a")).toBe(true);
    memory.unsettle();
    memory.committed([note]);
    expect(memory.ready().holds("a")).toBe(true);
    expect(memory.noneWaiting).toBe(true);
  });

  it("forgets on any other operation, on a guard that failed, and on a batch whose outcome is unknown", () => {
    const memory = new TaskMemory();
    memory.committed(group("a"));
    expect([...memory.knownDependents(true).keys()]).toEqual(["a-dependent"]);
    memory.committed([{ op: "cancel", taskId: "b", reason: null }]);
    expect([memory.holds("a"), memory.noneWaiting, memory.knownDependents(true).size]).toEqual([false, false, 0]);

    memory.committed(group("a"));
    memory.committed(undefined);
    expect(memory.holds("a")).toBe(false);

    memory.committed(group("a"));
    memory.unsettle();
    // The batch threw, or its answer never came: nothing is known of what it did.
    expect(memory.ready().holds("a")).toBe(false);
  });

  it("past its limit starts again empty, keeping no read made with what it knew before", () => {
    const memory = new TaskMemory();
    // u1 completed: a read of u2's dependent d may then leave u1 out of what blocks d, or say it blocks d, known done.
    memory.committed({ ...group("u1"), resolved: new Set(["u1"]) });
    memory.committed({ ...group("x"), tasks: new Map(Array.from({ length: 20_001 }, (_, i) => [`t${i}`, row(`t${i}`)])) });
    const read = { ...group("u2"), blockedBy: new Map([["d", ["u2", "u1"]]]) };
    memory.committed(group("y"), read);
    expect([memory.holds("u1"), memory.holds("u2"), memory.holds("y"), memory.resolved.has("u1")]).toEqual([false, false, false, false]);
    expect(memory.knownDependents(true).size).toBe(0);
  });

  it("forgets only its own task after a progress report or an assignment by hand", () => {
    const memory = new TaskMemory();
    memory.committed(group("a"));
    memory.committed(group("b"));
    memory.committed(group("c"));
    memory.committed([{ op: "progress", taskId: "a", progress: 50, message: null }]);
    const target = { serverId: "s", serverName: "s", sessionId: null, sessionName: null };
    memory.committed([{ op: "assign", taskId: "b", target, requirePlan: false }]);
    expect([memory.holds("a"), memory.holds("b"), memory.holds("c"), memory.noneWaiting]).toEqual([false, false, true, true]);
    // Neither changes a dependency: what blocks the tasks' dependents is still known, for a batch that keeps it so.
    expect([...memory.knownDependents(true).keys()]).toEqual(["a-dependent", "b-dependent", "c-dependent"]);
    expect(memory.knownDependents(false).size).toBe(0);
  });
});
