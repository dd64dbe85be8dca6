/**
 * The approval gate: a project setting, off by default, under which the tasks
 * agents create (on every agent surface: the core protocol, task-format
 * requests, the agent socket) wait for a person. The daemon of the session
 * such a task is given to hears nothing of it while it waits (hub.py would
 * type its "pending approval" box into the agent), and a plain
 * `task_assigned` once a person approves it; the fake daemon reads it as
 * hub.py does.
 */
import { DEFAULT_PROJECT_SETTINGS } from "../src/domain/project-settings";
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, aTraceparent, call, createProject, createUser, expectProblem, registerAgent, until } from "./helpers";
import { fakeDaemon, PLAN_TRIGGER, TASK_TRIGGER, type FakeDaemon } from "./fake-daemon";
import { openSocket } from "./sockets";
import { cli, createWorld, expectOk, newTask, openSession, T, type World } from "./task-world";

let w: World;
let viewer: Awaited<ReturnType<typeof createUser>>;
let worker: FakeDaemon;

beforeAll(async () => {
  w = await createWorld("Approval gate");
  viewer = await createUser(w.admin, "viewer");
  await addMember(w.admin, w.project.id, viewer.id);
  worker = await fakeDaemon(w.worker.apiKey);
});

const P = (projectId = w.project.id) => `/api/v1/projects/${projectId}`;
const setGate = (on: boolean, token = w.admin, projectId = w.project.id) =>
  call(P(projectId), { method: "PATCH", token, body: { settings: { approve_agent_tasks: on } } });
const approve = (id: string, token = w.member.token) => call(`/api/v1/tasks/${id}/approve`, { method: "POST", token });
const task = async (id: string) => (await call(`/api/v1/tasks/${id}`, { token: w.member.token })).json;
const eventsOf = async (id: string) => (await call(`/api/v1/tasks/${id}/events`, { token: w.member.token })).json.events.map((e: any) => e.type);

/** Runs `body` with the world's project approving agents' tasks, and turns that off again after. */
async function gated(body: () => Promise<void>) {
  await expectOk(setGate(true));
  try {
    await body();
  } finally {
    await expectOk(setGate(false));
  }
}

describe("the setting", () => {
  it("is off by default: an agent's task goes ahead, and approving it is 409", async () => {
    const project = await createProject(w.admin, "Defaults");
    expect((await expectOk(call(P(project.id), { token: w.admin }))).json.settings).toEqual({
      ...DEFAULT_PROJECT_SETTINGS,
      approve_agent_tasks: false,
      remote_exec: false,
    });
    const id = await newTask(w);
    expect(await task(id)).toMatchObject({ status: "pending", awaiting_approval: false });
    expectProblem(await approve(id), 409, "NOT_AWAITING_APPROVAL");
  });

  it("is changed by admins only, named and checked, and its change is an event", async () => {
    const project = await createProject(w.admin, "Settings");
    await addMember(w.admin, project.id, w.member.id);
    expectProblem(await setGate(true, w.member.token, project.id), 403, "FORBIDDEN");
    const on = await expectOk(setGate(true, w.admin, project.id));
    expect(on.json).toMatchObject({ id: project.id, settings: { approve_agent_tasks: true } });
    expect((await call(P(project.id), { token: w.member.token })).json.settings).toEqual({
      ...DEFAULT_PROJECT_SETTINGS,
      approve_agent_tasks: true,
      remote_exec: false,
    });
    expect((await call("/api/v1/projects", { token: w.member.token })).json.projects.find((p: any) => p.id === project.id).settings).toEqual({
      ...DEFAULT_PROJECT_SETTINGS,
      approve_agent_tasks: true,
    });
    for (const [body, path] of [
      [{ settings: { approve_agent_tasks: "yes" } }, "settings.approve_agent_tasks"],
      [{ settings: { approve_everything: true } }, "settings"],
      [{ settings: {} }, "settings"],
      [{}, "settings"],
    ] as const) {
      const refused = await call(P(project.id), { method: "PATCH", token: w.admin, body });
      expectProblem(refused, 422, "VALIDATION_FAILED");
      expect(refused.json.errors.map((e: any) => e.path)).toEqual([path]);
    }
    // The same value again changes nothing, and records nothing.
    await expectOk(setGate(true, w.admin, project.id));
    const log = (await call(`${P(project.id)}/events`, { token: w.admin })).json.events.filter((e: any) => e.type === "project_settings_changed");
    expect(log.map((e: any) => [e.actor, e.data])).toEqual([
      ["admin@example.com", { settings: { ...DEFAULT_PROJECT_SETTINGS, approve_agent_tasks: true, remote_exec: false }, changed: ["approve_agent_tasks"] }],
    ]);
  });
});

describe("an agent's task in a project that approves them", () => {
  it("waits: its session hears nothing, it is not startable; once approved, its daemon gets a plain task_assigned and it runs", async () =>
    gated(async () => {
      const id = await newTask(w, { title: "Drop the old tables" });
      expect(await task(id)).toMatchObject({ status: "pending", awaiting_approval: true });
      // A person's own task does not wait.
      const mine = await expectOk(call("/api/v1/tasks", { token: w.member.token, body: { title: "Mine", project_id: w.project.id } }), 201);
      expect(mine.json.awaiting_approval).toBe(false);

      await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
      expect((await task(id)).target_session_id).toBe(w.workerSession);
      expectProblem(await cli(w.worker.apiKey, "POST", `${T}/${id}/start`), 409, "TASK_AWAITING_APPROVAL");
      expect((await expectOk(cli(w.worker.apiKey, "GET", "/api/v1/servers/tasks/poll"))).json.map((t: any) => t.id)).not.toContain(id);

      expectProblem(await approve(id, viewer.token), 403, "FORBIDDEN");
      const approved = await expectOk(approve(id));
      expect(approved.json).toMatchObject({ id, status: "assigned", awaiting_approval: false });
      const given = await worker.socket.next((f) => f.task_id === id);
      expect(given).toEqual({
        type: "task_assigned",
        session_id: w.workerSession,
        task_id: id,
        title: "Drop the old tables",
        priority: "normal",
        require_plan: false,
        pending_approval: false,
        from_session_name: "Unknown",
        traceparent: aTraceparent(),
      });
      // A room's pushes reach a daemon in the order they committed: anything sent while it waited would have come first.
      expect(worker.socket.frames.filter((f) => f.task_id === id)).toEqual([given]);
      expect(worker.shown(w.workerSession).filter((s) => s.via !== "inbox" && s.taskId === id)).toEqual([{ via: "typed", text: TASK_TRIGGER, taskId: id }]);
      expectProblem(await approve(id), 409, "NOT_AWAITING_APPROVAL");
      expect((await expectOk(cli(w.worker.apiKey, "GET", "/api/v1/servers/tasks/poll"))).json.map((t: any) => t.id)).toContain(id);
      await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
      expect(await eventsOf(id)).toEqual(["task_created", "task_awaiting_approval", "task_assigned", "task_approved", "task_started"]);
      const log = (await call(`/api/v1/tasks/${id}/events`, { token: w.member.token })).json.events;
      expect(log.find((e: any) => e.type === "task_awaiting_approval")).toMatchObject({
        actor: `agent:${w.orchestrator.name}`,
        data: { title: "Drop the old tables", created_by: `agent:${w.orchestrator.name}` },
      });
      expect(log.find((e: any) => e.type === "task_approved")).toMatchObject({
        actor: w.member.email,
        data: { status: "assigned", session_id: w.workerSession },
      });
    }));

  it("is not planned before it is approved", async () =>
    gated(async () => {
      const id = await newTask(w, { require_plan: true });
      await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
      expectProblem(await cli(w.worker.apiKey, "POST", `${T}/${id}/plan`, { plan: { steps: ["a"] } }), 409, "TASK_AWAITING_APPROVAL");
      await expectOk(approve(id));
      // Approved, it is given to the session in plan mode: hub.py asks the agent for a plan first.
      expect(await worker.socket.next((f) => f.task_id === id)).toMatchObject({ type: "task_assigned", require_plan: true, pending_approval: false });
      expect(worker.shown(w.workerSession).at(-1)).toEqual({ via: "typed", text: PLAN_TRIGGER, taskId: id });
      await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/plan`, { plan: { steps: ["a"] } }));
    }));

  it("is passed over by auto-assignment until approved, then offered at once", async () => {
    const project = await createProject(w.admin, "Gated matching");
    await addMember(w.admin, project.id, w.member.id);
    await expectOk(setGate(true, w.admin, project.id));
    const box = await registerAgent(w.admin, `gated-box-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
    const requirements = { languages: ["ocaml"] };
    const agents = (await expectOk(cli(box.apiKey, "POST", T, { title: "By an agent", project_id: project.id, requirements }), 201)).json.id;
    const persons = (
      await expectOk(call("/api/v1/tasks", { token: w.member.token, body: { title: "By a person", project_id: project.id, requirements } }), 201)
    ).json.id;
    // The box comes online with room for both: waiting tasks are offered to it.
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: box.apiKey, body: { capabilities: { languages: ["ocaml"], max_concurrent_tasks: 2 } } }));
    await until(
      () => task(persons),
      (t) => t.status === "assigned",
      "the person's task assigned",
    );
    expect(await task(agents)).toMatchObject({ status: "pending", awaiting_approval: true, assigned_server_id: null });
    expectProblem(await call(`/api/v1/tasks/${agents}/auto-assign`, { method: "POST", token: w.member.token }), 409, "TASK_AWAITING_APPROVAL");
    const approved = await expectOk(approve(agents));
    expect(approved.json).toMatchObject({ status: "assigned", assigned_server_id: box.id, awaiting_approval: false });
    expect(await eventsOf(agents)).toEqual(["task_created", "task_awaiting_approval", "task_approved", "task_assigned"]);
  });

  it("holds on every agent surface: a task-format request (routed to a session) and the agent socket's submit-task", async () =>
    gated(async () => {
      const routed = await expectOk(
        cli(w.orchestrator.apiKey, "POST", T, {
          id: crypto.randomUUID(),
          type: "parse",
          payload: { url: "https://example.com" },
          routing: { target: "worker" },
          project_id: w.project.id,
        }),
        201,
      );
      expect(routed.json).toMatchObject({ status: "assigned", target_session_id: w.workerSession, awaiting_approval: true });

      const s = await openSocket(`${P()}/agent-ws`, { "X-API-Key": w.orchestrator.apiKey });
      const id = `req-${crypto.randomUUID()}`;
      s.send({ type: "request:submit-task", id, timestamp: new Date().toISOString(), payload: { name: "Over the socket" } });
      const submitted = (await s.next((f) => f.correlationId === id)).payload.task;
      expect(await task(submitted.id)).toMatchObject({ title: "Over the socket", awaiting_approval: true });
      s.ws.close(1000, "done");
    }));

  it("stays waiting when the setting is turned off; tasks created after go ahead", async () => {
    let waiting = "";
    await gated(async () => {
      waiting = await newTask(w);
    });
    const after = await newTask(w);
    expect(await task(after)).toMatchObject({ awaiting_approval: false });
    expect(await task(waiting)).toMatchObject({ awaiting_approval: true });
    await expectOk(approve(waiting));
  });

  it("is approved exactly once when dozens of people press at once", async () =>
    gated(async () => {
      const id = await newTask(w);
      const tokens = [w.admin, w.member.token];
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => approve(id, tokens[i % 2])));
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      for (const a of answers.filter((r) => r.status !== 200)) expectProblem(a, 409, "NOT_AWAITING_APPROVAL");
      expect((await eventsOf(id)).filter((t: string) => t === "task_approved")).toHaveLength(1);
    }));

  it("is not approved once it has ended", async () =>
    gated(async () => {
      const id = await newTask(w);
      await expectOk(cli(w.orchestrator.apiKey, "DELETE", `${T}/${id}`));
      expectProblem(await approve(id), 409, "INVALID_TRANSITION");
      expectProblem(await call(`/api/v1/tasks/${crypto.randomUUID()}/approve`, { method: "POST", token: w.member.token }), 404, "NOT_FOUND");
    }));
});

describe("sessions", () => {
  it("a task given to a session of another server is approved to that server's daemon", async () =>
    gated(async () => {
      const box = await registerAgent(w.admin, `approval-box-${crypto.randomUUID().slice(0, 6)}`);
      const session = await openSession(box.apiKey, w.project.id, "elsewhere");
      const daemon = await fakeDaemon(box.apiKey);
      const id = await newTask(w);
      await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "elsewhere" }));
      await expectOk(approve(id));
      expect(await daemon.socket.next((f) => f.task_id === id)).toMatchObject({
        type: "task_assigned",
        session_id: session,
        task_id: id,
        pending_approval: false,
      });
      expect(worker.socket.frames.some((f) => f.task_id === id)).toBe(false);
      daemon.socket.ws.close(1000, "done");
    }));
});
