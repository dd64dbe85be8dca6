/**
 * seeds/agent-orchestrator-messages.md section by section: the dialect's
 * mappings table by table, then every request, event and notification over a
 * real agent socket; and what the dialect relies on in the core (matching,
 * contracts, capabilities) over HTTP.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import {
  agentMatches,
  DEFAULT_ASK_TIMEOUT_MS,
  hubStatusesOf,
  priorityOf,
  REQUEST_TIMEOUT_MS,
  requestFingerprintText,
  requiredRoleOf,
  requirementsOfSubmit,
  seedAgent,
  seedErrorOf,
  seedStatusOf,
  SHUTDOWN_GRACE_MS,
  withinDeadline,
} from "../src/protocol/agent-orchestrator-messages";
import { call, createProject, daemonRegistration, expectProblem, registerAgent, registrationToken } from "./helpers";
import { openSocket, type TestSocket } from "./sockets";
import { cli, createWorld, expectOk, newTask, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Agent messages");
});

const agentSocket = (apiKey: string, projectId = w.project.id) => openSocket(`/api/v1/projects/${projectId}/agent-ws`, { "X-API-Key": apiKey });
const send = (s: TestSocket, type: string, payload: unknown = {}, id = `req-${crypto.randomUUID()}`, extra: Record<string, unknown> = {}) => {
  s.send({ type, id, timestamp: new Date().toISOString(), payload, ...extra });
  return id;
};
const request = (s: TestSocket, type: string, payload: unknown = {}, extra: Record<string, unknown> = {}) => {
  const id = send(s, type, payload, undefined, extra);
  return s.next((f) => f.correlationId === id);
};
const tasksTitled = async (title: string) => (await env.DB.prepare("SELECT count(*) AS n FROM tasks WHERE title = ?1").bind(title).first<{ n: number }>())!.n;
const heartbeat = (apiKey: string, capabilities: Record<string, unknown>) => call("/api/v1/servers/heartbeat", { apiKey, body: { capabilities } });

describe("the dialect's mappings (pure)", () => {
  it("priorities: the seed's numbers and names as the hub's", () => {
    const table: [Parameters<typeof priorityOf>[0], string][] = [
      [undefined, "normal"],
      [0, "low"],
      [1, "low"],
      [2, "normal"],
      [3, "high"],
      [4, "critical"],
      [10, "critical"],
      ["urgent", "critical"],
      ["high", "high"],
    ];
    for (const [p, hub] of table) expect(priorityOf(p), String(p)).toBe(hub);
  });

  it("statuses: the hub's as the seed's, and back", () => {
    const table: [string, string][] = [
      ["pending", "queued"],
      ["assigned", "queued"],
      ["planning", "queued"],
      ["plan_review", "queued"],
      ["running", "running"],
      ["needs_human", "running"],
      ["done", "completed"],
      ["failed", "failed"],
      ["cancelled", "cancelled"],
    ];
    for (const [hub, seed] of table) {
      expect(seedStatusOf(hub), hub).toBe(seed);
      expect(hubStatusesOf[seed], seed).toContain(hub);
    }
  });

  it("submit-task's requiredRole and requiredCapabilities become hard requirements; a task shows its required role", () => {
    const table: [Parameters<typeof requirementsOfSubmit>[0], Record<string, unknown> | null][] = [
      [{}, null],
      [{ requiredCapabilities: [] }, null],
      [{ requiredRole: "reviewer" }, { role: "reviewer" }],
      [{ requiredCapabilities: ["cobol"] }, { capabilities: ["cobol"] }],
      [{ requiredRole: "worker", requiredCapabilities: ["typescript", "testing"] }, { role: "worker", capabilities: ["typescript", "testing"] }],
    ];
    for (const [p, req] of table) expect(requirementsOfSubmit(p), JSON.stringify(p)).toEqual(req);
    expect(requiredRoleOf({ role: "reviewer" })).toBe("reviewer");
    expect(requiredRoleOf({ languages: ["rust"] })).toBeNull();
    expect(requiredRoleOf(null)).toBeNull();
  });

  it("agents: status from presence and load, filters by role among their roles and by capabilities", () => {
    const agent = (online: boolean, activeTasks: number) =>
      seedAgent({ id: "a", name: "a", roles: ["planner", "reviewer"], online, activeTasks, capabilities: ["TypeScript", "testing"], currentTask: null });
    expect([agent(false, 0).status, agent(true, 0).status, agent(true, 2).status]).toEqual(["offline", "idle", "busy"]);
    expect(agent(true, 0)).toMatchObject({ role: "planner", roles: ["planner", "reviewer"] });
    const table: [Parameters<typeof agentMatches>[1], boolean][] = [
      [{}, true],
      [{ role: "reviewer" }, true],
      [{ role: "worker" }, false],
      [{ status: "idle" }, true],
      [{ status: "busy" }, false],
      [{ capabilities: ["typescript"] }, true],
      [{ capabilities: ["typescript", "cobol"] }, false],
    ];
    for (const [f, matches] of table) expect(agentMatches(agent(true, 0), f), JSON.stringify(f)).toBe(matches);
  });

  it("refusals: the seed's code, with the hub's problem code, status and field errors in details", () => {
    const table: [Parameters<typeof seedErrorOf>[0], string][] = [
      [{ status: 404, code: "NOT_FOUND", detail: "Task not found" }, "NOT_FOUND"],
      [{ status: 403, code: "NOT_ALLOWED", detail: "no" }, "UNAUTHORIZED"],
      [{ status: 409, code: "INVALID_TRANSITION", detail: "no", extensions: { current_status: "done" } }, "INVALID_REQUEST"],
      [{ status: 409, code: "RESULT_CONFLICT", detail: "no" }, "INVALID_REQUEST"],
      [{ status: 409, code: "UNRESOLVED_DEPENDENCIES", detail: "no" }, "INVALID_REQUEST"],
      [{ status: 422, code: "VALIDATION_FAILED", detail: "no", errors: [{ path: "dependencies", message: "x" }] }, "INVALID_REQUEST"],
    ];
    for (const [problem, code] of table) {
      expect(seedErrorOf(problem), problem.code).toEqual({
        code,
        message: problem.detail,
        details: { problem: problem.code, status: problem.status, ...(problem.errors ? { errors: problem.errors } : {}), ...(problem.extensions ?? {}) },
      });
    }
  });

  it("a request's fingerprint is its type and payload, whatever the order of keys", () => {
    expect(requestFingerprintText("request:submit-task", { name: "a", payload: { x: 1, y: [2, { b: 1, a: 2 }] } })).toBe(
      requestFingerprintText("request:submit-task", { payload: { y: [2, { a: 2, b: 1 }], x: 1 }, name: "a" }),
    );
    expect(requestFingerprintText("request:submit-task", { name: "a" })).not.toBe(requestFingerprintText("request:submit-task", { name: "b" }));
    expect(requestFingerprintText("request:submit-task", {})).not.toBe(requestFingerprintText("request:ask-user", {}));
  });

  it("timeouts: 30 s for every request and for ask-user without its own; a handler outrun by its deadline loses", async () => {
    expect(REQUEST_TIMEOUT_MS).toBe(30_000);
    expect(DEFAULT_ASK_TIMEOUT_MS).toBe(30_000);
    let expire!: () => void;
    const deadline = new Promise<void>((r) => (expire = r));
    let finish!: (v: string) => void;
    const slow = new Promise<string>((r) => (finish = r));
    const race = withinDeadline(slow, deadline);
    expire();
    expect(await race).toEqual({ done: false });
    finish("late");
    expect(await withinDeadline(Promise.resolve("quick"), new Promise<void>(() => {}))).toEqual({ done: true, value: "quick" });
  });

  it("shutdown grace: none for a revoked key or a deleted project, a short one for a replaced key", () => {
    expect(SHUTDOWN_GRACE_MS).toEqual({ revoked: 0, replaced: 2_000, "project-deleted": 0 });
  });
});

describe("message format and correlation", () => {
  it("answers a request with response:success carrying its own id, the request's id as correlationId, and a timestamp", async () => {
    const s = await agentSocket(w.worker.apiKey);
    const id = send(s, "request:query-agents");
    const res = await s.next((f) => f.correlationId === id);
    expect(res).toEqual({ type: "response:success", id: expect.any(String), correlationId: id, timestamp: expect.any(String), payload: { agents: expect.any(Array) } });
    expect(res.id).not.toBe(id);
    expect(Number.isNaN(Date.parse(res.timestamp))).toBe(false);
  });
});

describe("1. query-agents", () => {
  it("shows each agent's role from its capabilities (worker by default) and filters by role, status and capabilities", async () => {
    const project = await createProject(w.admin, "Roles");
    const reviewer = await registerAgent(w.admin, `reviewer-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
    const plain = await registerAgent(w.admin, `plain-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
    await expectOk(heartbeat(reviewer.apiKey, { roles: ["reviewer", "planner"], languages: ["typescript"], tools: ["testing"] }));
    await expectOk(heartbeat(plain.apiKey, { languages: ["python"] }));
    const s = await agentSocket(plain.apiKey, project.id);
    const all = (await request(s, "request:query-agents")).payload.agents;
    expect(all.find((a: any) => a.id === reviewer.id)).toEqual({
      id: reviewer.id,
      name: reviewer.name,
      role: "reviewer",
      roles: ["reviewer", "planner"],
      status: "idle",
      capabilities: ["typescript", "testing"],
      currentTask: null,
    });
    expect(all.find((a: any) => a.id === plain.id)).toMatchObject({ role: "worker", roles: ["worker"] });
    const names = async (payload: unknown) => (await request(s, "request:query-agents", payload)).payload.agents.map((a: any) => a.name).sort();
    expect(await names({ role: "reviewer" })).toEqual([reviewer.name]);
    expect(await names({ role: "planner" })).toEqual([reviewer.name]);
    // Servers serving every project are here too; the reviewer is not a worker.
    const workers = await names({ role: "worker" });
    expect(workers).toEqual(expect.arrayContaining([plain.name, w.worker.name, w.orchestrator.name]));
    expect(workers).not.toContain(reviewer.name);
    expect(await names({ capabilities: ["typescript", "testing"] })).toEqual([reviewer.name]);
    expect(await names({ role: "reviewer", capabilities: ["python"] })).toEqual([]);
  });
});

describe("2. query-tasks", () => {
  it("lists the agent's own tasks (assigned to it or submitted by it) with their required role, filtered by status and requiredRole", async () => {
    const s = await agentSocket(w.orchestrator.apiKey);
    const submitted = (await request(s, "request:submit-task", { name: "Review the parser", requiredRole: "reviewer" })).payload.task;
    expect(submitted).toMatchObject({ status: "queued", requiredRole: "reviewer" });
    const plain = (await request(s, "request:submit-task", { name: "Plain work" })).payload.task;
    expect(plain.requiredRole).toBeNull();
    const someoneElses = await newTask(w);
    const ids = async (payload: unknown) => (await request(s, "request:query-tasks", payload)).payload.tasks.map((t: any) => t.id);
    // newTask is the orchestrator's too (created over its API key); the worker's are not.
    const workerOwn = await newTask(w);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${workerOwn}/assign`, { server_name: w.worker.name }));
    const worker = await agentSocket(w.worker.apiKey);
    const workerIds = (await request(worker, "request:query-tasks")).payload.tasks.map((t: any) => t.id);
    expect(workerIds).toContain(workerOwn);
    expect(workerIds).not.toContain(submitted.id);
    expect(workerIds).not.toContain(someoneElses);
    expect(await ids({})).toEqual(expect.arrayContaining([submitted.id, plain.id]));
    expect(await ids({ requiredRole: "reviewer" })).toEqual([submitted.id]);
    expect(await ids({ status: "completed" })).toEqual([]);
    expect(await ids({ status: "queued", limit: 1 })).toHaveLength(1);
  });
});

describe("3. submit-task", () => {
  it("keeps payload as the task's payload and description as its spec, answering the task in the seed's shape", async () => {
    const s = await agentSocket(w.orchestrator.apiKey);
    const res = await request(s, "request:submit-task", {
      type: "implementation",
      name: "Fix bug in auth",
      description: "The token check is off by one",
      payload: { file: "src/auth.ts", lines: [10, 20] },
      requiredRole: "worker",
      requiredCapabilities: ["typescript"],
      priority: 2,
    });
    expect(res.payload.task).toMatchObject({
      name: "Fix bug in auth",
      description: "The token check is off by one",
      type: "implementation",
      status: "queued",
      priority: "normal",
      requiredRole: "worker",
      requiredCapabilities: ["typescript"],
      payload: { file: "src/auth.ts", lines: [10, 20] },
      dependencies: [],
    });
    const task = (await cli(w.orchestrator.apiKey, "GET", `${T}/${res.payload.task.id}`)).json;
    expect(task).toMatchObject({ spec: "The token check is off by one", payload: { file: "src/auth.ts", lines: [10, 20] }, requirements: { role: "worker", capabilities: ["typescript"] } });
  });

  it("honours requiredCapabilities and requiredRole in auto-assignment: never to a server without them, and to one with them", async () => {
    const project = await createProject(w.admin, "Cobol shop");
    const submitter = await registerAgent(w.admin, `submitter-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
    const modern = await registerAgent(w.admin, `modern-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
    await expectOk(heartbeat(modern.apiKey, { languages: ["typescript"], tools: ["npm"], tags: ["backend"], max_concurrent_tasks: 10 }));
    const s = await agentSocket(submitter.apiKey, project.id);
    const cobol = (await request(s, "request:submit-task", { name: "Port the ledger", requiredCapabilities: ["cobol"] })).payload.task;
    const review = (await request(s, "request:submit-task", { name: "Review the ledger", requiredRole: "reviewer" })).payload.task;
    for (const t of [cobol, review]) {
      expect((await expectOk(call(`/api/v1/tasks/${t.id}/auto-assign`, { token: w.admin, method: "POST" }))).json, t.name).toEqual({ status: "no_match" });
    }
    const preview = (await expectOk(call(`/api/v1/tasks/${cobol.id}/matching-agents`, { token: w.admin }))).json.servers;
    expect(preview.find((m: any) => m.server_id === modern.id).reasons).toEqual(["missing capabilities: cobol (disqualified)"]);
    const reviewPreview = (await expectOk(call(`/api/v1/tasks/${review.id}/matching-agents`, { token: w.admin }))).json.servers;
    expect(reviewPreview.find((m: any) => m.server_id === modern.id).reasons).toEqual(["missing role: reviewer (disqualified)"]);

    // A server with cobol (any of languages, tools, tags, environments) and one with the role: the waiting tasks go to them.
    const mainframe = await registerAgent(w.admin, `mainframe-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
    const reviewer = await registerAgent(w.admin, `reviewer-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
    await expectOk(heartbeat(mainframe.apiKey, { tools: ["COBOL"], max_concurrent_tasks: 10 }));
    await expectOk(heartbeat(reviewer.apiKey, { role: "reviewer", max_concurrent_tasks: 10 }));
    const assignedTo = async (id: string) => (await call(`/api/v1/tasks/${id}`, { token: w.admin })).json.assigned_server_id;
    await expect.poll(() => assignedTo(cobol.id)).toBe(mainframe.id);
    await expect.poll(() => assignedTo(review.id)).toBe(reviewer.id);
  });
});

describe("4. get-task and subscribe-task: agents reach only their own tasks", () => {
  it("answers the agent's own task (assigned or submitted), and NOT_FOUND for another agent's", async () => {
    const orchestrator = await agentSocket(w.orchestrator.apiKey);
    const worker = await agentSocket(w.worker.apiKey);
    const submitted = (await request(orchestrator, "request:submit-task", { name: "Mine alone" })).payload.task.id;
    expect((await request(orchestrator, "request:get-task", { taskId: submitted })).payload.task).toMatchObject({ id: submitted, name: "Mine alone" });
    expect(await request(worker, "request:get-task", { taskId: submitted })).toMatchObject({ type: "response:error", error: { code: "NOT_FOUND" } });
    expect(await request(worker, "request:subscribe-task", { taskId: submitted })).toMatchObject({ type: "response:error", error: { code: "NOT_FOUND" } });
    expect(await request(worker, "request:get-task", { taskId: "not-a-task" })).toMatchObject({ error: { code: "NOT_FOUND" } });
    // Once assigned to the worker, it is the worker's too.
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${submitted}/assign`, { server_name: w.worker.name }));
    expect((await request(worker, "request:get-task", { taskId: submitted })).payload.task.id).toBe(submitted);
    expect((await request(worker, "request:subscribe-task", { taskId: submitted })).payload.subscriptions).toContain(submitted);
  });
});

describe("5. ask-user", () => {
  it("waits the seed's 30 s when no timeout is given, and the given timeout otherwise", async () => {
    const s = await agentSocket(w.worker.apiKey);
    const before = Date.now();
    send(s, "request:ask-user", { question: "Default wait?" });
    send(s, "request:ask-user", { question: "Long wait?", timeout: 300_000 });
    let asked: any[] = [];
    await expect
      .poll(async () => {
        asked = (await call("/api/v1/interventions?status=pending", { token: w.admin })).json.filter((i: any) => i.question === "Default wait?" || i.question === "Long wait?");
        return asked.length;
      })
      .toBe(2);
    const after = Date.now();
    const expiry = (q: string) => Date.parse(asked.find((i) => i.question === q).expires_at);
    expect(expiry("Default wait?")).toBeGreaterThanOrEqual(before + 30_000);
    expect(expiry("Default wait?")).toBeLessThanOrEqual(after + 30_000);
    expect(expiry("Long wait?")).toBeGreaterThanOrEqual(before + 300_000);
  });
});

describe("refusals keep their meaning", () => {
  it("answers the seed's code with the hub's problem code, status and field errors in details", async () => {
    const s = await agentSocket(w.worker.apiKey);
    const missing = crypto.randomUUID();
    const unknownDep = await request(s, "request:submit-task", { name: "Depends on nothing", dependencies: [missing] });
    expect(unknownDep.error).toEqual({
      code: "INVALID_REQUEST",
      message: expect.stringContaining(missing),
      details: { problem: "VALIDATION_FAILED", status: 422, errors: [{ path: "dependencies", message: `no task ${missing} in this project` }] },
    });
    const notMine = await newTask(w);
    s.send({ type: "event:progress", id: "p-not-mine", payload: { taskId: notMine, progress: 0.5 } });
    expect((await s.next((f) => f.correlationId === "p-not-mine")).error).toMatchObject({ code: "UNAUTHORIZED", details: { problem: "NOT_ALLOWED", status: 403 } });
    s.send({ type: "event:progress", id: "p-gone", payload: { taskId: crypto.randomUUID(), progress: 0.5 } });
    expect((await s.next((f) => f.correlationId === "p-gone")).error).toMatchObject({ code: "NOT_FOUND", details: { problem: "NOT_FOUND", status: 404 } });
  });
});

describe("a repeated request id", () => {
  it("submit-task: the same answer and one task, on the same socket and after a reconnect; another request under the id is refused", async () => {
    const s = await agentSocket(w.orchestrator.apiKey);
    const payload = { name: "Exactly once", payload: { n: 1 } };
    const id = `once-${crypto.randomUUID()}`;
    send(s, "request:submit-task", payload, id);
    const first = await s.next((f) => f.correlationId === id);
    send(s, "request:submit-task", { payload: { n: 1 }, name: "Exactly once" }, id);
    const second = await s.next((f) => f.correlationId === id);
    expect(second.payload).toEqual(first.payload);
    const again = await agentSocket(w.orchestrator.apiKey);
    send(again, "request:submit-task", payload, id);
    expect((await again.next((f) => f.correlationId === id)).payload).toEqual(first.payload);
    expect(await tasksTitled("Exactly once")).toBe(1);

    send(again, "request:submit-task", { name: "Something else" }, id);
    expect((await again.next((f) => f.correlationId === id)).error).toMatchObject({ code: "INVALID_REQUEST", message: expect.stringContaining("already used for another request") });
    expect(await tasksTitled("Something else")).toBe(0);
  });

  it("20 concurrent messages with the same id: 20 identical answers, one task", async () => {
    const s = await agentSocket(w.orchestrator.apiKey);
    const id = `burst-${crypto.randomUUID()}`;
    for (let i = 0; i < 20; i++) send(s, "request:submit-task", { name: "Burst once" }, id);
    const answers = await s.collect(20, (f) => f.correlationId === id, 15_000);
    expect(new Set(answers.map((a) => a.type))).toEqual(new Set(["response:success"]));
    expect(new Set(answers.map((a) => a.payload.task.id)).size).toBe(1);
    expect(await tasksTitled("Burst once")).toBe(1);
  });

  it("ask-user: one question; once answered, a repeat gets the answer", async () => {
    const s = await agentSocket(w.worker.apiKey);
    const id = `ask-${crypto.randomUUID()}`;
    const question = `Asked once ${id}`;
    send(s, "request:ask-user", { question, timeout: 60_000 }, id);
    send(s, "request:ask-user", { question, timeout: 60_000 }, id);
    const pending = async () => (await call("/api/v1/interventions?status=pending", { token: w.admin })).json.filter((i: any) => i.question === question);
    await expect.poll(async () => (await pending()).length).toBe(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(await pending()).toHaveLength(1);
    await expectOk(call(`/api/v1/interventions/${(await pending())[0].id}/respond`, { token: w.admin, body: { response: "yes" } }));
    expect((await s.next((f) => f.correlationId === id)).payload).toMatchObject({ answer: "yes" });
    const later = await agentSocket(w.worker.apiKey);
    send(later, "request:ask-user", { question, timeout: 60_000 }, id);
    expect(await later.next((f) => f.correlationId === id)).toMatchObject({ type: "response:success", payload: { answer: "yes", metadata: { answeredAt: expect.any(String) } } });
    const all = (await call("/api/v1/interventions", { token: w.admin })).json.filter((i: any) => i.question === question);
    expect(all).toHaveLength(1);
  });
});

describe("notifications carry the task's traceparent", () => {
  it("notify:task-assigned, notify:task-event and notify:task-cancelled name the trace the task was created in", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const created = await call("/api/v1/tasks", {
      token: w.admin,
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      body: { title: "Traced", spec: "x", project_id: w.project.id },
    });
    expect(created.status, created.text).toBe(201);
    const task = created.json;
    expect(task.trace_id).toBe(traceId);
    const s = await agentSocket(w.worker.apiKey);
    await expectOk(call(`/api/v1/tasks/${task.id}/assign`, { token: w.admin, body: { server_name: w.worker.name } }));
    const assigned = await s.next((f) => f.type === "notify:task-assigned" && f.payload.taskId === task.id);
    expect(assigned.traceparent).toBe(task.traceparent);
    expect(assigned.traceparent).toContain(traceId);
    await request(s, "request:subscribe-task", { taskId: task.id });
    await expectOk(call(`/api/v1/tasks/${task.id}/notes`, { token: w.admin, body: { content: "hello" } }), 201);
    expect((await s.next((f) => f.type === "notify:task-event" && f.payload.taskId === task.id)).traceparent).toBe(task.traceparent);
    await expectOk(call(`/api/v1/tasks/${task.id}`, { token: w.admin, method: "DELETE", body: { reason: "enough" } }));
    expect((await s.next((f) => f.type === "notify:task-cancelled" && f.payload.taskId === task.id)).traceparent).toBe(task.traceparent);
  });

  it("a submitted task joins the trace its message names", async () => {
    const s = await agentSocket(w.orchestrator.apiKey);
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const res = await request(s, "request:submit-task", { name: "Joins a trace" }, { traceparent });
    expect(res.payload.task.traceparent).toBe(traceparent);
  });
});

describe("notify:shutdown says what happens", () => {
  it("a replaced key: requests refused at once, the socket closed when the announced grace ends", async () => {
    const name = `rekeyed-${crypto.randomUUID().slice(0, 6)}`;
    const agent = await registerAgent(w.admin, name);
    const s = await agentSocket(agent.apiKey);
    await request(s, "request:query-agents");
    const again = await call("/api/v1/servers/register", { body: daemonRegistration(name, await registrationToken(w.admin)) });
    expect(again.status, again.text).toBe(201);
    const shutdown = await s.next((f) => f.type === "notify:shutdown");
    const announced = Date.now();
    expect(shutdown.payload).toEqual({ gracePeriod: SHUTDOWN_GRACE_MS.replaced, reason: expect.stringContaining("registered again") });
    expect(await request(s, "request:query-agents")).toMatchObject({ type: "response:error", error: { code: "UNAUTHORIZED", details: { closes_at: expect.any(String) } } });
    const closed = await Promise.race([s.closed, new Promise<null>((r) => setTimeout(() => r(null), SHUTDOWN_GRACE_MS.replaced + 5_000))]);
    expect(closed?.code).toBe(4004);
    // Not before the grace it announced (the timer's own slack aside).
    expect(Date.now() - announced).toBeGreaterThanOrEqual(SHUTDOWN_GRACE_MS.replaced - 50);
  });

  it("a revoked key: gracePeriod 0, closed at once", async () => {
    const agent = await registerAgent(w.admin, `revoked-${crypto.randomUUID().slice(0, 6)}`);
    const s = await agentSocket(agent.apiKey);
    await request(s, "request:query-agents");
    await expectOk(call(`/api/v1/servers/${agent.id}/revoke`, { method: "POST", token: w.admin }));
    expect((await s.next((f) => f.type === "notify:shutdown")).payload.gracePeriod).toBe(0);
    expect((await s.closed).code).toBe(4004);
  });

  it("a deleted project: gracePeriod 0, closed at once", async () => {
    const project = await createProject(w.admin, "Doomed");
    const s = await agentSocket(w.worker.apiKey, project.id);
    await request(s, "request:query-agents");
    const deleted = await call(`/api/v1/projects/${project.id}`, { method: "DELETE", token: w.admin });
    expect(deleted.status, deleted.text).toBeLessThan(300);
    expect((await s.next((f) => f.type === "notify:shutdown")).payload).toMatchObject({ gracePeriod: 0 });
    expect((await s.closed).code).toBe(4004);
  });
});

describe("what the dialect relies on in the core, over HTTP", () => {
  it("requirement fields the hub does not know are matched, or refused when they cannot be", async () => {
    const project = await createProject(w.admin, "Compute");
    const big = await registerAgent(w.admin, `big-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
    const small = await registerAgent(w.admin, `small-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
    await expectOk(heartbeat(big.apiKey, { cpu_cores: 128, max_concurrent_tasks: 5 }));
    await expectOk(heartbeat(small.apiKey, { languages: ["rust"], max_concurrent_tasks: 5 }));
    const create = (requirements: unknown) => call("/api/v1/tasks", { token: w.admin, body: { title: "Compute", spec: "x", project_id: project.id, requirements } });
    const refused = await create({ cpu_cores: 64, gpu: { model: "a100" } });
    expectProblem(refused, 422, "VALIDATION_FAILED");
    expect(refused.json.errors).toEqual([expect.objectContaining({ path: "requirements.gpu" })]);
    const t = (await expectOk(create({ $schema: "orchestratia/requirements/v1", cpu_cores: 64 }), 201)).json;
    const servers = (await expectOk(call(`/api/v1/tasks/${t.id}/matching-agents`, { token: w.admin }))).json.servers;
    expect(servers.find((m: any) => m.server_id === small.id).reasons).toEqual(["missing cpu_cores: 64 (disqualified)"]);
    expect(servers.find((m: any) => m.server_id === big.id).score).toBeGreaterThan(0);
    expect((await expectOk(call(`/api/v1/tasks/${t.id}/auto-assign`, { token: w.admin, method: "POST" }))).json).toMatchObject({ status: "assigned", server_id: big.id });
  });

  it("a skipped contract must give its reason", async () => {
    const id = await newTask(w);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { server_name: w.worker.name }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    const result = (entry: unknown) => ({ result: { $schema: "orchestratia/task-result/v1", summary: "s", contracts: { api_spec: entry } } });
    const refused = await cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, result({ status: "skipped" }));
    expectProblem(refused, 422, "VALIDATION_FAILED");
    expect(refused.json.errors).toEqual([expect.objectContaining({ path: "result.contracts.api_spec.reason" })]);
    expectProblem(await cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, result({ status: "skipped", data: { reason: "  " } })), 422, "VALIDATION_FAILED");
    const done = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, result({ status: "skipped", data: { reason: "no API in this change" } })));
    expect(done.json.result.contracts.api_spec).toEqual({ status: "skipped", data: { reason: "no API in this change" } });
  });

  it("a capabilities $schema is checked at register and heartbeat: another version or a foreign one is accepted with a warning", async () => {
    const name = `schema-${crypto.randomUUID().slice(0, 6)}`;
    const registered = await call("/api/v1/servers/register", {
      body: { ...daemonRegistration(name, await registrationToken(w.admin)), machine_id: crypto.randomUUID(), protocol_versions: ["orchestratia/v1"], capabilities: { $schema: "orchestratia/capabilities/v2", languages: ["go"] } },
    });
    expect(registered.status, registered.text).toBe(201);
    expect(registered.json.warnings).toEqual([expect.stringContaining('unknown schema version "orchestratia/capabilities/v2"')]);
    const apiKey = registered.json.api_key;
    const foreign = await expectOk(heartbeat(apiKey, { $schema: "https://example.com/node-descriptor.json", languages: ["go"] }));
    expect(foreign.json.warnings).toEqual([expect.stringContaining('unrecognised $schema "https://example.com/node-descriptor.json"')]);
    const current = await expectOk(heartbeat(apiKey, { $schema: "orchestratia/capabilities/v1", languages: ["go"] }));
    expect(current.json).not.toHaveProperty("warnings");
    const malformed = await heartbeat(apiKey, { $schema: 7 });
    expectProblem(malformed, 422, "VALIDATION_FAILED");
    expect(malformed.json.errors).toEqual([expect.objectContaining({ path: "capabilities.$schema" })]);
  });
});
