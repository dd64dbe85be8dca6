/**
 * Moving a project between shards (POST /api/v1/projects/{id}/move): every row of it copied, then the directory names
 * the new shard and the old rows go; writes wait meanwhile (503 with Retry-After); a room killed mid-move resumes it,
 * and a step made twice (killed after its batch, before its position was kept) duplicates nothing.
 */
import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { bootstrapAdmin, call, expectProblem, registerAgent } from "./helpers";
import { cli, expectOk, openSession, T } from "./task-world";
import { copyStep, rowCounts } from "../src/db/project-move";
import { MOVED_TABLES } from "../src/db/shard-tables";
import type { ProjectRoom } from "../src/room/project-room";

let admin: string;
beforeAll(async () => {
  admin = await bootstrapAdmin();
});

const room = (projectId: string) => env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(projectId));
const d1 = (shard: string) => (shard === "DB" ? env.DB : env.DB_1!);
const nonZero = (counts: Record<string, number>) => Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));

/** A project on `shard` with tasks in several states, a dependency, notes, a session and their events. */
async function busyProject(shard: string) {
  const project = (await expectOk(call("/api/v1/projects", { token: admin, body: { name: `Moving ${crypto.randomUUID().slice(0, 6)}`, shard } }), 201)).json;
  const agent = await registerAgent(admin, `mover-${crypto.randomUUID().slice(0, 6)}`);
  await openSession(agent.apiKey, project.id, "worker");
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) {
    const created = await expectOk(cli(agent.apiKey, "POST", T, { title: `Task ${i}`, spec: "Do it", project_id: project.id }), 201);
    ids.push(created.json.id);
    await expectOk(cli(agent.apiKey, "POST", `${T}/${created.json.id}/notes`, { content: `note on ${i}` }), 201);
  }
  await expectOk(cli(agent.apiKey, "POST", `${T}/${ids[1]}/dependencies`, { depends_on_task_id: ids[0] }), 201);
  for (const id of ids.slice(2, 4)) {
    await expectOk(cli(agent.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await expectOk(cli(agent.apiKey, "POST", `${T}/${id}/start`));
  }
  await expectOk(cli(agent.apiKey, "POST", `${T}/${ids[3]}/complete`, { result: { summary: "finished before the move" } }));
  return { project, agent, ids };
}

/** What people read of the project: its tasks, each one's notes and dependencies, its event log. */
async function readBack(projectId: string, ids: string[]) {
  const tasks = (await expectOk(call(`/api/v1/tasks?project_id=${projectId}&limit=100`, { token: admin }))).json.tasks;
  const each = [];
  for (const id of ids) {
    const task = (await expectOk(call(`/api/v1/tasks/${id}`, { token: admin }))).json;
    const notes = (await expectOk(call(`/api/v1/tasks/${id}/notes`, { token: admin }))).json;
    each.push({ task, notes });
  }
  const events = (await expectOk(call(`/api/v1/projects/${projectId}/events?limit=1000`, { token: admin }))).json.events;
  return { tasks, each, events };
}

async function movedTo(projectId: string, shard: string) {
  // Woken (a restarted room sets its alarm for the move it finds under way), then driven by its alarm.
  await runInDurableObject(room(projectId), () => undefined);
  for (let i = 0; i < 100; i++) {
    const p = (await expectOk(call(`/api/v1/projects/${projectId}`, { token: admin }))).json;
    if (p.shard === shard && p.moving_to === null) return p;
    await runDurableObjectAlarm(room(projectId));
  }
  throw new Error(`the project did not reach ${shard}`);
}

describe("moving a project", () => {
  it("copies every row to the new shard, reads back the same, deletes the old rows, and takes writes there", async () => {
    const { project, agent, ids } = await busyProject("DB");
    const before = await readBack(project.id, ids);
    const counts = nonZero(await rowCounts(env.DB, project.id));
    expect(counts).toMatchObject({ tasks: 6, task_notes: 6, task_dependencies: 1, sessions: 1 });

    const asked = await expectOk(call(`/api/v1/projects/${project.id}/move`, { token: admin, body: { shard: "DB_1" } }), 202);
    expect(asked.json).toEqual({ id: project.id, shard: "DB", moving_to: "DB_1" });
    await movedTo(project.id, "DB_1");

    expect(nonZero(await rowCounts(env.DB_1!, project.id))).toEqual(counts);
    expect(nonZero(await rowCounts(env.DB, project.id))).toEqual({});
    // The directory keeps the project's row (its shard renamed); the new shard its copy.
    expect(await env.DB.prepare("SELECT shard FROM projects WHERE id = ?1").bind(project.id).first("shard")).toBe("DB_1");
    expect(await readBack(project.id, ids)).toEqual(before);

    // Writes go on there: a new task, worked to the end.
    const after = (await expectOk(cli(agent.apiKey, "POST", T, { title: "After the move", spec: "Do it", project_id: project.id }), 201)).json.id;
    await expectOk(cli(agent.apiKey, "POST", `${T}/${ids[0]}/notes`, { content: "still here" }), 201);
    expect(await env.DB_1!.prepare("SELECT 1 AS found FROM tasks WHERE id = ?1").bind(after).first("found")).toBe(1);
    const events = (await expectOk(call(`/api/v1/projects/${project.id}/events?since=${before.events.at(-1).seq}`, { token: admin }))).json.events;
    expect(events.map((e: { type: string }) => e.type)).toEqual(["task_created", "note_added"]);
    expect(events[0].seq).toBe(before.events.at(-1).seq + 1);
  });

  it("refuses another shard while it moves, and names only shards that exist", async () => {
    const { project } = await busyProject("DB_1");
    // Begun as the route begins it, its alarm kept away so that it is still copying when asked again.
    await env.DB.prepare("UPDATE projects SET moving_to = 'DB' WHERE id = ?1").bind(project.id).run();
    await runInDurableObject(room(project.id), async (r: ProjectRoom, state) => {
      expect(await r.moveTo("DB_1", "DB")).toBeUndefined();
      await state.storage.deleteAlarm();
      await r.moveOn(0, 3);
    });
    const back = await call(`/api/v1/projects/${project.id}/move`, { token: admin, body: { shard: "DB_1" } });
    expectProblem(back, 409, "CONFLICT");
    expect(back.json.detail).toBe("The project is moving to shard DB; ask again once it has moved");
    expect((await expectOk(call(`/api/v1/projects/${project.id}`, { token: admin }))).json).toMatchObject({ shard: "DB_1", moving_to: "DB" });
    // Its alarm set again (as a restarted room sets it), it goes on.
    await runInDurableObject(room(project.id), (_r, state) => state.storage.setAlarm(Date.now()));
    await movedTo(project.id, "DB");
    const nowhere = await call(`/api/v1/projects/${project.id}/move`, { token: admin, body: { shard: "DB_7" } });
    expectProblem(nowhere, 422, "VALIDATION_FAILED");
    expectProblem(await call(`/api/v1/projects/${project.id}/move`, { token: admin, body: { shard: "DB" } }), 422, "VALIDATION_FAILED");
  });
});

describe("a move cut short", () => {
  it("refuses writes with Retry-After while it copies, and a room killed mid-copy (a step even made twice) resumes it", async () => {
    const { project, agent, ids } = await busyProject("DB_1");
    const before = await readBack(project.id, ids);
    const counts = nonZero(await rowCounts(env.DB_1!, project.id));
    // Started as the route starts it, then stepped by hand a few rows at a time, the alarm kept away.
    await env.DB.prepare("UPDATE projects SET moving_to = 'DB' WHERE id = ?1").bind(project.id).run();
    await runInDurableObject(room(project.id), async (r: ProjectRoom, state) => {
      await r.moveTo("DB_1", "DB");
      await state.storage.deleteAlarm();
      // One step each (no time left after it), three rows at most.
      for (let i = 0; i < 5; i++) await r.moveOn(0, 3);
    });
    const stopped = (await runInDurableObject(room(project.id), (_r, state) => state.storage.get<{ at: { table: number } }>("move")))!;
    expect(stopped.at.table).toBeLessThan(MOVED_TABLES.length);

    // Writes wait: through the room and through the Worker alike.
    const refused = await cli(agent.apiKey, "POST", T, { title: "During the move", spec: "Wait", project_id: project.id });
    expectProblem(refused, 503, "PROJECT_MOVING");
    expect(refused.headers.get("Retry-After")).toBe("5");
    expectProblem(await call(`/api/v1/projects/${project.id}`, { method: "PUT", token: admin, body: { name: "Renamed" } }), 503, "PROJECT_MOVING");
    // Reads answer from where it was.
    expect((await expectOk(call(`/api/v1/tasks/${ids[0]}`, { token: admin }))).json.id).toBe(ids[0]);

    // The next step's batch made, but the room killed before it kept its position: the resumed move makes it again.
    const position = (await runInDurableObject(room(project.id), (_r, state) => state.storage.get<{ at: never }>("move")))!.at;
    await copyStep(env.DB_1!, env.DB, project.id, position, 3);
    await evictDurableObject(room(project.id));
    await movedTo(project.id, "DB");

    expect(nonZero(await rowCounts(env.DB, project.id))).toEqual(counts);
    expect(nonZero(await rowCounts(env.DB_1!, project.id))).toEqual({});
    // Its copy on the old shard went too.
    expect(await d1("DB_1").prepare("SELECT 1 AS found FROM projects WHERE id = ?1").bind(project.id).first("found")).toBeNull();
    expect(await readBack(project.id, ids)).toEqual(before);
    await expectOk(cli(agent.apiKey, "POST", T, { title: "After the move", spec: "Do it", project_id: project.id }), 201);
  });
});
