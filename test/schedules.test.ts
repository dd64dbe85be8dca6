/**
 * Schedules (API.md "Templates, schedules and triggers"): a template fired on cron slots in a time zone by the project's
 * room, checked as saved, and handled exactly once per slot whatever wake-ups and restarts happen.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, createUser, expectProblem } from "./helpers";
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
