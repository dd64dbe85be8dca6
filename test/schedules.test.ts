/**
 * Schedules (API.md "Templates, schedules and triggers"): a template fired on cron slots in a time zone by the project's
 * room, checked as saved, and handled exactly once per slot whatever wake-ups and restarts happen.
 */
import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { wakeRoomsWithOverdueSchedules } from "../src/cron/maintenance";
import { addMember, call, createProject, createUser, daemonRegistration, expectProblem, registrationToken } from "./helpers";
import { createWorld, expectOk, worldUnder, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Schedules");
});

const templatesOf = (projectId: string) => `/api/v1/projects/${projectId}/templates`;
const schedulesOf = (projectId: string) => `/api/v1/projects/${projectId}/schedules`;

/** Two tasks, `report` waiting on `collect`, for `{{day}}` (required) in `{{region}}`. */
async function nightly(world: World = w, extra: Record<string, unknown> = {}) {
  const body = {
    name: `nightly-${crypto.randomUUID().slice(0, 6)}`,
    parameters: [
      { name: "day", type: "string", required: true },
      { name: "region", type: "string", default: "eu" },
    ],
    tasks: [
      { key: "collect", title: "Collect {{region}} for {{day}}" },
      { key: "report", title: "Report {{day}}", dependencies: [{ on: "collect" }] },
    ],
    ...extra,
  };
  return (await expectOk(call(templatesOf(world.project.id), { token: world.member.token, body }), 201)).json;
}

async function schedule(body: Record<string, unknown>, world: World = w) {
  return (await expectOk(call(schedulesOf(world.project.id), { token: world.member.token, body }), 201)).json;
}

describe("a schedule", () => {
  it("is set up, listed, read, changed, paused, resumed and deleted by a member, and read by a viewer", async () => {
    const t = await nightly();
    const s = await schedule({ template_id: t.id, name: "Nightly", cron: "0 2 * * *", timezone: "Europe/Berlin", parameters: { day: "today" } });
    expect(s).toMatchObject({
      template_id: t.id,
      name: "Nightly",
      cron: "0 2 * * *",
      timezone: "Europe/Berlin",
      missed: "skip",
      overlap: "skip",
      paused: false,
    });
    expect(s.next_runs).toHaveLength(5);
    for (const at of s.next_runs) {
      expect(Date.parse(at)).toBeGreaterThan(Date.now());
      expect(new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit" }).format(new Date(at))).toBe("02:00");
    }
    expect(Date.parse(s.next_runs[1]) - Date.parse(s.next_runs[0])).toBeGreaterThanOrEqual(23 * 3600_000);

    const viewer = await createUser(w.admin, "viewer");
    await expectOk(call(`/api/v1/projects/${w.project.id}/members`, { token: w.admin, body: { user_id: viewer.id, role: "viewer" } }), 201);
    const listed = (await expectOk(call(schedulesOf(w.project.id), { token: viewer.token }))).json.schedules;
    expect(listed.map((x: { id: string }) => x.id)).toContain(s.id);
    expect((await expectOk(call(`${schedulesOf(w.project.id)}/${s.id}`, { token: viewer.token }))).json.next_runs).toEqual(s.next_runs);
    expectProblem(
      await call(schedulesOf(w.project.id), { token: viewer.token, body: { template_id: t.id, cron: "@daily", parameters: { day: "x" } } }),
      403,
      "FORBIDDEN",
    );
    expectProblem(await call(`${schedulesOf(w.project.id)}/${s.id}`, { method: "PATCH", token: viewer.token, body: { paused: true } }), 403, "FORBIDDEN");

    const patch = (body: unknown) => expectOk(call(`${schedulesOf(w.project.id)}/${s.id}`, { method: "PATCH", token: w.member.token, body }));
    const paused = (await patch({ paused: true })).json;
    expect(paused).toMatchObject({ paused: true, next_runs: [] });
    const resumed = (await patch({ paused: false, cron: "30 6 * * 1-5", timezone: "UTC", overlap: "allow" })).json;
    expect(resumed).toMatchObject({ paused: false, cron: "30 6 * * 1-5", overlap: "allow", name: "Nightly" });
    for (const at of resumed.next_runs) {
      expect(new Date(at).toISOString()).toMatch(/T06:30:00\.000Z$/);
      expect([0, 6]).not.toContain(new Date(at).getUTCDay());
    }

    await expectOk(call(`${schedulesOf(w.project.id)}/${s.id}`, { method: "DELETE", token: w.member.token }), 204);
    expectProblem(await call(`${schedulesOf(w.project.id)}/${s.id}`, { token: w.member.token }), 404, "NOT_FOUND");
  });

  it("is refused as saved for its cron, time zone, another project's template or parameters the template refuses (422 naming each)", async () => {
    const t = await nightly();
    const other = await worldUnder(w.admin, "Other schedules");
    const theirs = await nightly(other);
    const bad = async (body: Record<string, unknown>, path: string) => {
      const reply = await call(schedulesOf(w.project.id), {
        token: w.member.token,
        body: { template_id: t.id, cron: "0 2 * * *", parameters: { day: "d" }, ...body },
      });
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors.map((e: { path: string }) => e.path)).toContain(path);
    };
    await bad({ cron: "every night" }, "cron");
    await bad({ cron: "0 2 * * * *" }, "cron");
    await bad({ cron: "61 2 * * *" }, "cron");
    await bad({ timezone: "Mars/Olympus" }, "timezone");
    const both = await call(schedulesOf(w.project.id), { token: w.member.token, body: { template_id: t.id, cron: "0 2 * *", timezone: "Europe/Berln" } });
    expectProblem(both, 422, "VALIDATION_FAILED");
    expect(both.json.errors.map((e: { path: string }) => e.path)).toEqual(["timezone", "cron"]);
    await bad({ template_id: theirs.id }, "template_id");
    await bad({ parameters: {} }, "parameters.day");
    await bad({ parameters: { day: 3 } }, "parameters.day");
    await bad({ parameters: { day: "d", colour: "red" } }, "parameters.colour");
    await bad({ missed: "later" }, "missed");
    const s = await schedule({ template_id: t.id, cron: "@daily", parameters: { day: "d" } });
    const reply = await call(`${schedulesOf(w.project.id)}/${s.id}`, { method: "PATCH", token: w.member.token, body: { timezone: "Nowhere/Else" } });
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors.map((e: { path: string }) => e.path)).toEqual(["timezone"]);
    expectProblem(await call(`${schedulesOf(other.project.id)}/${s.id}`, { token: w.admin }), 404, "NOT_FOUND");
    const list = (await expectOk(call(schedulesOf(w.project.id), { token: w.member.token }))).json.schedules;
    expect(list.filter((x: { template_id: string }) => x.template_id === t.id)).toHaveLength(1);
  });
});

/** A project of its own (a room whose clock a test moves alone), with the same people. */
async function projectWorld(name: string): Promise<World> {
  const project = await createProject(w.admin, name);
  await addMember(w.admin, project.id, w.member.id);
  return { ...w, project };
}

const room = (projectId: string) => env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(projectId));
/** The room's firing with its clock at `at`: the alarm's own path, with the time moved. */
const fireAt = (world: World, at: string | number) => room(world.project.id).fireSchedules(typeof at === "number" ? at : Date.parse(at));
const later = (at: string, ms: number) => new Date(Date.parse(at) + ms).toISOString();
const HOUR = 3600_000;
const DAY = 24 * HOUR;

interface RunView {
  id: string;
  slot: string;
  status: string;
  skipped: string | null;
  task_ids: string[];
  source: string;
  parameters: Record<string, unknown>;
}
const runsOf = async (world: World, scheduleId: string): Promise<RunView[]> =>
  (await expectOk(call(`/api/v1/projects/${world.project.id}/runs?schedule_id=${scheduleId}&limit=200`, { token: world.admin }))).json.runs;
const tasksIn = async (world: World) =>
  (await expectOk(call(`/api/v1/tasks?project_id=${world.project.id}&limit=200`, { token: world.admin }))).json.tasks as { id: string; title: string }[];
const scheduleNow = async (world: World, id: string) => (await expectOk(call(`${schedulesOf(world.project.id)}/${id}`, { token: world.admin }))).json;

describe("a schedule's slots", () => {
  it("fire as the room's clock reaches them, each making the template's graph and its run", async () => {
    const world = await projectWorld("Nightly slots");
    const t = await nightly(world);
    const s = await schedule({ template_id: t.id, cron: "0 2 * * *", parameters: { day: "today" }, overlap: "allow" }, world);
    const [first, second] = s.next_runs as string[];
    // Before its slot, nothing fires.
    await fireAt(world, later(first!, -1000));
    expect(await runsOf(world, s.id)).toEqual([]);
    expect(await fireAt(world, later(first!, 10_000))).toBe(Date.parse(second!));
    await fireAt(world, later(second!, 20_000));
    const runs = (await runsOf(world, s.id)).reverse();
    expect(runs.map((r) => [r.slot, r.source, r.status, r.skipped, r.task_ids.length])).toEqual([
      [first, "schedule", "open", null, 2],
      [second, "schedule", "open", null, 2],
    ]);
    expect(runs[0]!.parameters).toEqual({ day: "today", region: "eu" });
    const tasks = await tasksIn(world);
    expect(tasks).toHaveLength(4);
    for (const run of runs) {
      const [collect, report] = await Promise.all(run.task_ids.map(async (id) => (await expectOk(call(`/api/v1/tasks/${id}`, { token: world.admin }))).json));
      expect([collect.title, collect.status, collect.blocked]).toEqual(["Collect eu for today", "pending", false]);
      expect([report.title, report.blocked]).toEqual(["Report today", true]);
      expect(report.dependencies.map((d: { depends_on_task_id: string }) => d.depends_on_task_id)).toEqual([collect.id]);
    }
    const after = await scheduleNow(world, s.id);
    expect(after.last_slot).toBe(second);
    expect(after.next_runs[0]).toBe(later(second!, DAY));
  });

  it("fire exactly once with two wake-ups at once, a restart between, and an advance lost", async () => {
    const world = await projectWorld("Once per slot");
    const t = await nightly(world);
    const s = await schedule({ template_id: t.id, cron: "15 3 * * *", parameters: { day: "once" } }, world);
    const slot = s.next_runs[0] as string;
    const at = later(slot, 5000);
    await Promise.all([fireAt(world, at), fireAt(world, at)]);
    expect((await runsOf(world, s.id)).map((r) => [r.slot, r.task_ids.length])).toEqual([[slot, 2]]);
    expect(await tasksIn(world)).toHaveLength(2);
    // The room restarts: its memory goes, D1 and its alarm stay.
    await evictDurableObject(room(world.project.id));
    await Promise.all([fireAt(world, at), fireAt(world, later(at, 1000))]);
    expect(await runsOf(world, s.id)).toHaveLength(1);
    // As if the batch that advanced the schedule were lost: the slot is due again, and its run is found, not made again.
    await env.DB.prepare("UPDATE schedules SET next_run_at = ?, last_slot = NULL WHERE id = ?").bind(slot, s.id).run();
    await fireAt(world, at);
    expect(await runsOf(world, s.id)).toHaveLength(1);
    expect(await tasksIn(world)).toHaveLength(2);
    expect((await scheduleNow(world, s.id)).last_slot).toBe(slot);
  });

  it("set the room's alarm as they are set up and resumed, and the alarm fires a slot that has come", async () => {
    const world = await projectWorld("Alarmed");
    const t = await nightly(world);
    const alarm = () => runInDurableObject(room(world.project.id), (_, state) => state.storage.getAlarm());
    const s = await schedule({ template_id: t.id, cron: "0 * * * *", parameters: { day: "alarm" }, missed: "run_once", paused: true }, world);
    expect(s.next_runs).toEqual([]);
    const resumed = (await expectOk(call(`${schedulesOf(world.project.id)}/${s.id}`, { method: "PATCH", token: world.member.token, body: { paused: false } })))
      .json;
    expect(await alarm()).toBeLessThanOrEqual(Date.parse(resumed.next_runs[0]));
    await evictDurableObject(room(world.project.id));
    expect(await alarm()).toBeLessThanOrEqual(Date.parse(resumed.next_runs[0]));
    // As if the room had slept through its slot: the hour now begun is due, and fired once however late.
    const slot = new Date(Math.floor(Date.now() / HOUR) * HOUR).toISOString();
    await env.DB.prepare("UPDATE schedules SET next_run_at = ? WHERE id = ?").bind(slot, s.id).run();
    expect(await runDurableObjectAlarm(room(world.project.id))).toBe(true);
    expect((await runsOf(world, s.id)).map((r) => [r.slot, r.task_ids.length])).toEqual([[slot, 2]]);
    expect(await alarm()).toBeLessThanOrEqual(Date.parse((await scheduleNow(world, s.id)).next_runs[0]));
  });

  it("are found by the hourly sweep when the room's alarm was lost, and handled by their `missed` policy", async () => {
    const world = await projectWorld("Lost alarm");
    const t = await nightly(world);
    const s = await schedule({ template_id: t.id, cron: "0 * * * *", parameters: { day: "lost" }, missed: "run_once" }, world);
    expect(await wakeRoomsWithOverdueSchedules(env)).toBe(0);
    // As if the room's alarm were gone and its slot long past.
    await runInDurableObject(room(world.project.id), (_, state) => state.storage.deleteAlarm());
    const slot = new Date(Math.floor(Date.now() / HOUR) * HOUR - HOUR).toISOString();
    await env.DB.prepare("UPDATE schedules SET next_run_at = ? WHERE id = ?").bind(slot, s.id).run();
    expect(await wakeRoomsWithOverdueSchedules(env)).toBe(1);
    const [run] = await runsOf(world, s.id);
    expect([run!.slot, run!.task_ids.length]).toEqual([new Date(Math.floor(Date.now() / HOUR) * HOUR).toISOString(), 2]);
    expect(await runInDurableObject(room(world.project.id), (_, state) => state.storage.getAlarm())).toBeLessThanOrEqual(
      Date.parse((await scheduleNow(world, s.id)).next_runs[0]),
    );
    expect(await wakeRoomsWithOverdueSchedules(env)).toBe(0);
  });

  it("offer a firing's tasks with requirements to servers at once", async () => {
    const world = await projectWorld("Offered");
    const language = `lang-${crypto.randomUUID().slice(0, 8)}`;
    const reply = await call("/api/v1/servers/register", {
      body: {
        ...daemonRegistration(`capable-${language}`, await registrationToken(w.admin)),
        capabilities: { languages: [language], max_concurrent_tasks: 5 },
      },
    });
    expect(reply.status, reply.text).toBe(201);
    const t = await nightly(world, {
      tasks: [{ key: "build", title: "Build for {{day}}", requirements: { languages: [language] } }],
    });
    const s = await schedule({ template_id: t.id, cron: "0 5 * * *", parameters: { day: "d" } }, world);
    await fireAt(world, later(s.next_runs[0], 1000));
    const [run] = await runsOf(world, s.id);
    const task = (await expectOk(call(`/api/v1/tasks/${run!.task_ids[0]}`, { token: world.admin }))).json;
    expect([task.status, task.assigned_server_id]).toEqual(["assigned", reply.json.id]);
  });

  it("missed by hours: `skip` records the latest slot skipped and makes nothing; `run_once` makes one graph for it", async () => {
    const world = await projectWorld("Missed slots");
    const t = await nightly(world);
    const skip = await schedule({ template_id: t.id, cron: "0 * * * *", parameters: { day: "skip" } }, world);
    const once = await schedule({ template_id: t.id, cron: "0 * * * *", parameters: { day: "once" }, missed: "run_once" }, world);
    const first = skip.next_runs[0] as string;
    const latest = later(first, 3 * HOUR);
    await fireAt(world, later(latest, 10 * 60_000));
    expect((await runsOf(world, skip.id)).map((r) => [r.slot, r.status, r.skipped, r.task_ids])).toEqual([[latest, "skipped", "missed", []]]);
    expect((await runsOf(world, once.id)).map((r) => [r.slot, r.status, r.skipped, r.task_ids.length])).toEqual([[latest, "open", null, 2]]);
    expect((await tasksIn(world)).map((x) => x.title).sort()).toEqual(["Collect eu for once", "Report once"]);
    for (const id of [skip.id, once.id]) expect((await scheduleNow(world, id)).next_runs[0]).toBe(later(latest, HOUR));
  });

  it("overlapping: `skip` records the slot skipped while the previous graph is open, and fires again once it finished", async () => {
    const world = await projectWorld("Overlaps");
    const t = await nightly(world);
    const s = await schedule({ template_id: t.id, cron: "0 * * * *", parameters: { day: "o" } }, world);
    const first = s.next_runs[0] as string;
    await fireAt(world, later(first, 1000));
    await fireAt(world, later(first, HOUR + 1000));
    let runs = (await runsOf(world, s.id)).reverse();
    expect(runs.map((r) => [r.status, r.skipped])).toEqual([
      ["open", null],
      ["skipped", "overlap"],
    ]);
    for (const id of runs[0]!.task_ids) await expectOk(call(`/api/v1/tasks/${id}`, { method: "DELETE", token: world.member.token }));
    await fireAt(world, later(first, 2 * HOUR + 1000));
    runs = (await runsOf(world, s.id)).reverse();
    expect(runs.map((r) => [r.slot, r.status, r.skipped])).toEqual([
      [first, "failed", null],
      [later(first, HOUR), "skipped", "overlap"],
      [later(first, 2 * HOUR), "open", null],
    ]);
  });

  it("paused, fire nothing; resumed, start from the next slot after now", async () => {
    const world = await projectWorld("Paused");
    const t = await nightly(world);
    const s = await schedule({ template_id: t.id, cron: "0 * * * *", parameters: { day: "p" }, missed: "run_once" }, world);
    const first = s.next_runs[0] as string;
    const patch = (body: unknown) => expectOk(call(`${schedulesOf(world.project.id)}/${s.id}`, { method: "PATCH", token: world.member.token, body }));
    await patch({ paused: true });
    await fireAt(world, later(first, 1000));
    expect(await runsOf(world, s.id)).toEqual([]);
    const before = Date.now();
    const resumed = (await patch({ paused: false })).json;
    const next = Date.parse(resumed.next_runs[0]);
    expect(next).toBeGreaterThan(before);
    expect(next).toBeLessThanOrEqual(Date.now() + HOUR);
    await fireAt(world, next + 1000);
    expect((await runsOf(world, s.id)).map((r) => [r.slot, r.task_ids.length])).toEqual([[resumed.next_runs[0], 2]]);
  });

  it("are read in the schedule's time zone: 09:00 in Berlin is 08:00Z in winter and 07:00Z in summer", async () => {
    const world = await projectWorld("Berlin mornings");
    const t = await nightly(world);
    const s = await schedule({ template_id: t.id, cron: "0 9 * * *", timezone: "Europe/Berlin", parameters: { day: "d" }, overlap: "allow" }, world);
    await fireAt(world, "2030-01-15T08:00:30Z");
    expect((await scheduleNow(world, s.id)).next_runs[0]).toBe("2030-01-16T08:00:00.000Z");
    await fireAt(world, "2030-07-15T07:00:30Z");
    expect((await runsOf(world, s.id)).map((r) => [r.slot, r.skipped])).toEqual([
      ["2030-07-15T07:00:00.000Z", null],
      ["2030-01-15T08:00:00.000Z", null],
    ]);
  });

  it("record a slot skipped with why when the template no longer takes the schedule's parameters", async () => {
    const world = await projectWorld("Changed template");
    const t = await nightly(world);
    const s = await schedule({ template_id: t.id, cron: "0 4 * * *", parameters: { day: "d" } }, world);
    const { id: _id, project_id: _p, created_by: _c, created_at: _a, updated_at: _u, ...body } = t;
    body.parameters = [...body.parameters, { name: "owner", type: "string", required: true }];
    await expectOk(call(`${templatesOf(world.project.id)}/${t.id}`, { method: "PUT", token: world.member.token, body }));
    await fireAt(world, later(s.next_runs[0], 1000));
    const [run] = await runsOf(world, s.id);
    expect([run!.status, run!.skipped]).toEqual(["skipped", "parameters.owner: is required"]);
    expect(await tasksIn(world)).toEqual([]);
    // It can still be paused; resumed, it is checked again, and fixed it resumes.
    const patch = (body: unknown) => call(`${schedulesOf(world.project.id)}/${s.id}`, { method: "PATCH", token: world.member.token, body });
    await expectOk(patch({ paused: true }));
    const refused = await patch({ paused: false });
    expectProblem(refused, 422, "VALIDATION_FAILED");
    expect(refused.json.errors.map((e: { path: string }) => e.path)).toEqual(["parameters.owner"]);
    expect((await expectOk(patch({ paused: false, parameters: { day: "d", owner: "kim" } }))).json).toMatchObject({ paused: false });
  });
});
