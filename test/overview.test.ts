/** The overviews: numbers counted as tasks change (done, failed, retried, cancelled, open, waiting), per project and per day. */
import { beforeAll, describe, expect, it } from "vitest";
import { call, createProject, expectProblem, until } from "./helpers";
import { cli, createWorld, expectOk, newTask, T, taskIn, type World } from "./task-world";

let w: World;
const today = () => new Date().toISOString().slice(0, 10);
const overview = async (query = "") => (await expectOk(call(`/api/v1/projects/${w.project.id}/overview${query}`, { token: w.member.token }))).json;
const glances = async (token: string) => (await expectOk(call("/api/v1/projects/overview", { token }))).json.projects as { project_id: string }[];

beforeAll(async () => {
  w = await createWorld("Overview");
  // Two done (a feature and a bugfix), one failed, retried and failed again, one cancelled; open: one each of
  // pending, running, needs_human (a question) and plan_review (a plan to review).
  await taskIn(w, "done");
  const bug = await newTask(w, { type: "bugfix" });
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${bug}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${bug}/start`));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${bug}/complete`, { result: "fixed" }));
  const flaky = await taskIn(w, "failed");
  await expectOk(call(`/api/v1/tasks/${flaky.id}/retry`, { method: "POST", token: w.member.token }));
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${flaky.id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${flaky.id}/start`));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${flaky.id}/fail`, { error: "broke again" }));
  await taskIn(w, "cancelled");
  for (const status of ["pending", "running", "needs_human", "plan_review"]) await taskIn(w, status);
}, 60_000);

describe("a project's overview", () => {
  it("counts today's finishes, retries and cancels per day, and the rates from them", async () => {
    const o = await overview();
    expect(o.days).toHaveLength(14);
    expect(o.days.at(-1)).toMatchObject({ day: today(), done: 2, failed: 2, retried: 1, cancelled: 1 });
    expect(o.days.slice(0, -1).every((d: { done: number; failed: number }) => d.done === 0 && d.failed === 0)).toBe(true);
    expect(o.totals).toEqual({ done: 2, failed: 2, retried: 1, cancelled: 1 });
    expect(o.failure_rate).toBe(0.5);
    expect(o.retry_rate).toBe(0.25);
    expect((await overview("?days=1")).days.map((d: { day: string }) => d.day)).toEqual([today()]);
  });

  it("reads the median time to done per type from the histogram: seconds here, within the first bucket", async () => {
    const { by_type } = await overview();
    expect(by_type.map((t: { type: string; done: number; failed: number }) => [t.type, t.done, t.failed])).toEqual([
      ["bugfix", 1, 0],
      ["feature", 1, 2],
    ]);
    for (const t of by_type) {
      expect(t.median_seconds_to_done).toBeGreaterThanOrEqual(1);
      expect(t.median_seconds_to_done).toBeLessThanOrEqual(60);
    }
  });

  it("answers what is open and waiting now, who is online and how loaded, and the latest events", async () => {
    const o = await overview();
    expect(o.open_by_status).toEqual({ pending: 1, assigned: 0, planning: 0, plan_review: 1, running: 1, needs_human: 1 });
    expect(o.open_tasks).toBe(4);
    expect(o.questions_waiting).toBe(2);
    // Both servers registered just now (online) with a session here; the running task is the worker's.
    expect(o.agents).toEqual([
      { server_id: w.orchestrator.id, server_name: w.orchestrator.name, sessions: 1, running_tasks: 0 },
      { server_id: w.worker.id, server_name: w.worker.name, sessions: 1, running_tasks: 1 },
    ]);
    expect(o.code_health).toBeNull();
    expect(o.budgets).toEqual([]);
    expect(o.recent_events).toHaveLength(15);
    const seqs = o.recent_events.map((e: { seq: number }) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
  });

  it("refuses days out of range by name, and another project's overview", async () => {
    for (const days of ["0", "91", "1.5", "many"]) {
      const reply = await call(`/api/v1/projects/${w.project.id}/overview?days=${days}`, { token: w.member.token });
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors[0].path).toContain("days");
    }
    const other = await createProject(w.admin, `Other ${crypto.randomUUID().slice(0, 6)}`);
    expectProblem(await call(`/api/v1/projects/${other.id}/overview`, { token: w.member.token }), 404, "NOT_FOUND");
  });
});

describe("every project at a glance", () => {
  it("answers each visible project's open tasks, questions, agents, failures and spend today, as its overview does", async () => {
    const other = await createProject(w.admin, `Hidden ${crypto.randomUUID().slice(0, 6)}`);
    const mine = await glances(w.member.token);
    expect(mine.map((p) => p.project_id)).toEqual([w.project.id]);
    const o = await overview();
    expect(mine[0]).toEqual({
      project_id: w.project.id,
      name: w.project.name,
      slug: expect.any(String),
      open_tasks: o.open_tasks,
      open_by_status: o.open_by_status,
      questions_waiting: o.questions_waiting,
      agents_online: o.agents.length,
      failures_today: o.days.at(-1).failed,
      spend_today_usd: 0,
    });
    // An admin sees every project, newest first; one without tasks has nothing counted.
    const all = await glances(w.admin);
    expect(all[0]!.project_id).toBe(other.id);
    expect(all.find((p) => p.project_id === w.project.id)).toEqual(mine[0]);
    expect(all[0]).toMatchObject({ open_tasks: 0, questions_waiting: 0, agents_online: 0, failures_today: 0, spend_today_usd: 0 });
  });

  it("counts a cancelled task out of the open ones, and spend from the usage roll-up", async () => {
    const before = (await glances(w.member.token))[0] as unknown as { open_tasks: number };
    const { id } = await taskIn(w, "running");
    await expectOk(
      cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "done", usage: { model: "m", input_tokens: 10, output_tokens: 5, cost_usd: 0.25 } }),
    );
    await expectOk(call(`/api/v1/tasks/${(await taskIn(w, "pending")).id}`, { method: "DELETE", token: w.member.token }));
    // Usage is counted in the room's own batch, just after the completion's.
    type Glance = { open_tasks: number; spend_today_usd: number };
    const after = await until(
      async () => (await glances(w.member.token))[0] as unknown as Glance,
      (g) => g.spend_today_usd > 0,
      "today's spend",
    );
    expect(after.open_tasks).toBe(before.open_tasks);
    expect(after.spend_today_usd).toBeCloseTo(0.25, 6);
    expect((await overview()).days.at(-1)).toMatchObject({ done: 3, cancelled: 2, spend_usd: 0.25 });
  });
});
