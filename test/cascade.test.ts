/** Dependencies, contract exchange and the completion cascade over HTTP (seed §2–§5). */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { RoomActor, RoomCommand, RoomResult } from "../src/room/commands";
import { call, createProject, expectProblem, registerAgent, type Reply } from "./helpers";
import { cli, createWorld, expectOk, newTask, openSession, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Cascade");
});

const get = async (id: string) => (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}`))).json;
const events = async (projectId = w.project.id) => (await call(`/api/v1/projects/${projectId}/events?limit=1000`, { token: w.admin })).json.events as any[];

/** Assign, start and complete a task as the worker. */
async function finish(id: string, result: unknown) {
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
  return expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result }));
}

const schemaResult = (contracts: Record<string, unknown>) => ({ $schema: "orchestratia/task-result/v1", summary: "done", contracts });

describe("the resolution table", () => {
  it("blocks: resolved when the upstream is done, with nothing delivered", async () => {
    const up = await newTask(w);
    const down = await newTask(w, { dependencies: [{ depends_on_task_id: up, dependency_type: "blocks" }] });
    expect(await get(down)).toMatchObject({ blocked: true, dependencies: [{ resolved: false, resolved_at: null, depends_on_status: "pending" }] });
    await finish(up, "ok");
    const after = await get(down);
    expect(after).toMatchObject({ blocked: false, resolved_inputs: {}, dependencies: [{ dependency_type: "blocks", resolved: true, depends_on_status: "done" }] });
    expect(Date.parse(after.dependencies[0].resolved_at)).not.toBeNaN();
  });

  it("input: resolved when done, delivering result.contracts[key].data as resolved_inputs[key]", async () => {
    const up = await newTask(w, {
      structured_spec: {
        $schema: "orchestratia/task-spec/v1",
        requirements: [{ description: "schema", priority: "must" }],
        output_expectations: { contracts: { api_schema: { description: "the API", required: true } } },
      },
    });
    const down = await newTask(w, { dependencies: [{ depends_on_task_id: up, dependency_type: "input", contract_key: "api_schema" }] });
    const data = { endpoints: [{ path: "/users", method: "GET", response: "User[]" }], types: { User: { id: "uuid" } } };
    await finish(up, schemaResult({ api_schema: { status: "fulfilled", data } }));
    expect(await get(down)).toMatchObject({ blocked: false, resolved_inputs: { api_schema: data }, dependencies: [{ dependency_type: "input", contract_key: "api_schema", resolved: true }] });
    const logged = (await events()).filter((e) => e.task_id === up && e.type.startsWith("contract_"));
    expect(logged.map((e) => [e.type, e.data.contract_key, e.data.declared])).toEqual([["contract_fulfilled", "api_schema", true]]);
  });

  it("input with the contract missing: still resolved, with a contract_missing warning (no deadlock)", async () => {
    const up = await newTask(w, {
      structured_spec: {
        $schema: "orchestratia/task-spec/v1",
        requirements: [{ description: "x", priority: "must" }],
        output_expectations: { contracts: { promised: { description: "p", required: true }, optional: { description: "o" } } },
      },
    });
    const down = await newTask(w, { dependencies: [{ depends_on_task_id: up, dependency_type: "input", contract_key: "promised" }] });
    await finish(up, schemaResult({ extra: { data: 1 } }));
    expect(await get(down)).toMatchObject({ blocked: false, resolved_inputs: { promised: null }, dependencies: [{ resolved: true }] });
    const logged = (await events()).filter((e) => (e.task_id === up || e.task_id === down) && e.type.startsWith("contract_"));
    expect(logged.map((e) => [e.type, e.task_id, e.data.contract_key])).toEqual([
      ["contract_fulfilled", up, "extra"],
      ["contract_missing", up, "promised"],
      ["contract_missing", down, "promised"],
    ]);
  });

  it.each([
    ["partial", { status: "partial", data: { endpoints: ["/users"] } }, { status: "partial" }],
    ["skipped", { status: "skipped", data: { reason: "no API in this change" } }, { status: "skipped", reason: "no API in this change" }],
    ["skipped", { status: "skipped", reason: "not needed" }, { status: "skipped", reason: "not needed" }],
  ])("input on a %s contract: delivered with its status, and the downstream task is told", async (status, entry, told) => {
    const up = await newTask(w);
    const down = await newTask(w, { dependencies: [{ depends_on_task_id: up, dependency_type: "input", contract_key: "api_schema" }] });
    await finish(up, schemaResult({ api_schema: entry }));
    // Never passed on as if it were the data: the entry comes whole, with its status.
    expect(await get(down)).toMatchObject({ blocked: false, resolved_inputs: { api_schema: entry }, dependencies: [{ resolved: true }] });
    const logged = (await events()).filter((e) => (e.task_id === up || e.task_id === down) && e.type.startsWith("contract_"));
    expect(logged.map((e) => [e.type, e.task_id])).toEqual([
      [`contract_${status}`, up],
      [`contract_${status}`, down],
    ]);
    expect(logged[1].data).toEqual({ contract_key: "api_schema", upstream_task_id: up, ...told, detail: expect.stringContaining(`a ${status} contract`) });
    // The official CLI's poll carries it the same way.
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${down}/assign`, { session_name: "worker" }));
    const polled = (await expectOk(cli(w.worker.apiKey, "GET", "/api/v1/servers/tasks/poll"))).json.find((t: { id: string }) => t.id === down);
    expect(polled.resolved_inputs).toEqual({ api_schema: entry });
  });

  it("input on a legacy result: resolved without data flow", async () => {
    const up = await newTask(w);
    const down = await newTask(w, { dependencies: [{ depends_on_task_id: up, dependency_type: "input", contract_key: "k" }] });
    await finish(up, { contracts: { k: { data: "legacy results carry no contracts" } } });
    expect(await get(down)).toMatchObject({ blocked: false, resolved_inputs: { k: null } });
  });

  it("related: resolved at once, never blocking", async () => {
    const up = await newTask(w);
    const down = await newTask(w, { dependencies: [{ depends_on_task_id: up, dependency_type: "related" }] });
    expect(await get(down)).toMatchObject({ blocked: false, dependencies: [{ dependency_type: "related", resolved: true }] });
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${down}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${down}/start`));
  });

  it("unblocks only when the last blocking dependency resolves, with one task_unblocked event", async () => {
    const a = await newTask(w);
    const b = await newTask(w);
    const down = await newTask(w, { dependency_ids: [a, b] });
    await finish(a, "a");
    expect((await get(down)).blocked).toBe(true);
    await finish(b, "b");
    expect((await get(down)).blocked).toBe(false);
    expect((await events()).filter((e) => e.task_id === down && e.type === "task_unblocked")).toEqual([expect.objectContaining({ data: { resolved_by: b } })]);
  });

  it("resolves at creation against an upstream that is already done", async () => {
    const up = await newTask(w);
    await finish(up, schemaResult({ k: { data: { v: 1 } } }));
    const down = await newTask(w, { dependencies: [{ depends_on_task_id: up, dependency_type: "input", contract_key: "k" }] });
    expect(await get(down)).toMatchObject({ blocked: false, resolved_inputs: { k: { v: 1 } } });
  });
});

describe("resolved_inputs reach the agent", () => {
  it("on detail, check and poll", async () => {
    const up = await newTask(w);
    const down = await newTask(w, { dependencies: [{ depends_on_task_id: up, dependency_type: "input", contract_key: "config" }] });
    await finish(up, schemaResult({ config: { data: { port: 8080 } } }));
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${down}/assign`, { session_name: "worker" }));
    const detail = await expectOk(cli(w.worker.apiKey, "GET", `${T}/${down}`));
    const check = await expectOk(cli(w.worker.apiKey, "GET", `${T}/check?session_id=${w.workerSession}`));
    const poll = await expectOk(cli(w.worker.apiKey, "GET", "/api/v1/servers/tasks/poll"));
    for (const task of [detail.json, check.json.tasks.find((t: { id: string }) => t.id === down), poll.json.find((t: { id: string }) => t.id === down)]) {
      expect(task.resolved_inputs).toEqual({ config: { port: 8080 } });
    }
  });
});

describe("adding and removing dependencies", () => {
  it("adds typed dependencies and answers what the CLI reads", async () => {
    const up = await newTask(w);
    const down = await newTask(w);
    const added = await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${down}/dependencies`, { depends_on_task_id: up, dependency_type: "input", contract_key: "spec" }), 201);
    expect(added.json).toEqual({ depends_on_task_id: up, dependency_type: "input", contract_key: "spec", resolved: false, resolved_at: null, depends_on_status: "pending" });
    const noKey = await cli(w.orchestrator.apiKey, "POST", `${T}/${down}/dependencies`, { depends_on_task_id: up, dependency_type: "input" });
    expect(noKey.json.errors).toEqual([{ path: "contract_key", message: "is required for an input dependency" }]);
    const defaulted = await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${down}/dependencies`, { depends_on_task_id: up }), 201);
    expect(defaulted.json.dependency_type).toBe("blocks");
  });

  it("refuses a cycle with 409 naming it", async () => {
    const a = await newTask(w);
    const b = await newTask(w, { dependency_ids: [a] });
    const c = await newTask(w, { dependency_ids: [b] });
    const cycle = await cli(w.orchestrator.apiKey, "POST", `${T}/${a}/dependencies`, { depends_on_task_id: c, dependency_type: "blocks" });
    expectProblem(cycle, 409, "DEPENDENCY_CYCLE");
    expect(cycle.json.cycle).toEqual([a, c, b, a]);
    expect(cycle.json.detail).toContain(`${a} → ${c} → ${b} → ${a}`);
    expectProblem(await cli(w.orchestrator.apiKey, "POST", `${T}/${a}/dependencies`, { depends_on_task_id: a }), 409, "DEPENDENCY_CYCLE");
    // related edges count too: a cycle of any kind is refused.
    expectProblem(await cli(w.orchestrator.apiKey, "POST", `${T}/${a}/dependencies`, { depends_on_task_id: b, dependency_type: "related" }), 409, "DEPENDENCY_CYCLE");
  });

  it("refuses a dependency on another project's task, at creation and when adding", async () => {
    const other = await createProject(w.admin, "Other");
    const foreign = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "foreign", project_id: other.id }), 201);
    const mine = await newTask(w);
    const add = await cli(w.orchestrator.apiKey, "POST", `${T}/${mine}/dependencies`, { depends_on_task_id: foreign.json.id });
    expectProblem(add, 422, "VALIDATION_FAILED");
    expect(add.json.errors[0].path).toBe("depends_on_task_id");
    const create = await cli(w.orchestrator.apiKey, "POST", T, { title: "x", project_id: w.project.id, dependency_ids: [foreign.json.id] });
    expectProblem(create, 422, "VALIDATION_FAILED");
  });

  it("removing the last blocker unblocks the task", async () => {
    const up = await newTask(w);
    const down = await newTask(w, { dependency_ids: [up] });
    const removed = await expectOk(cli(w.orchestrator.apiKey, "DELETE", `${T}/${down}/dependencies/${up}`));
    expect(removed.json).toEqual({ removed: true, task_id: down, depends_on_task_id: up });
    expect(await get(down)).toMatchObject({ blocked: false, dependencies: [] });
    expect((await events()).filter((e) => e.task_id === down).map((e) => e.type)).toEqual(["task_created", "dependency_removed", "task_unblocked"]);
    expectProblem(await cli(w.orchestrator.apiKey, "DELETE", `${T}/${down}/dependencies/${up}`), 404, "NOT_FOUND");
  });
});

describe("failure", () => {
  it("leaves downstream tasks pending and blocked, tells them, and unblocks them when a retried upstream completes", async () => {
    const up = await newTask(w);
    const down1 = await newTask(w, { dependency_ids: [up] });
    const down2 = await newTask(w, { dependencies: [{ depends_on_task_id: up, dependency_type: "input", contract_key: "x" }] });
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${up}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${up}/start`));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${up}/fail`, { error: "broke" }));
    for (const id of [down1, down2]) {
      expect(await get(id)).toMatchObject({ status: "pending", blocked: true, dependencies: [{ depends_on_task_id: up, depends_on_status: "failed", resolved: false }] });
      expect((await events()).filter((e) => e.task_id === id && e.type === "dependency_failed")).toEqual([
        expect.objectContaining({ data: { upstream_task_id: up, upstream_status: "failed" } }),
      ]);
    }
    await expectOk(call(`/api/v1/tasks/${up}/retry`, { token: w.member.token, method: "POST" }));
    await finish(up, schemaResult({ x: { data: "second time lucky" } }));
    expect(await get(down1)).toMatchObject({ blocked: false });
    expect(await get(down2)).toMatchObject({ blocked: false, resolved_inputs: { x: "second time lucky" } });
  });

  it("tells downstream tasks when an upstream is cancelled", async () => {
    const up = await newTask(w);
    const down = await newTask(w, { dependency_ids: [up] });
    await expectOk(cli(w.orchestrator.apiKey, "DELETE", `${T}/${up}`));
    expect((await events()).filter((e) => e.task_id === down && e.type === "dependency_failed")[0].data).toEqual({ upstream_task_id: up, upstream_status: "cancelled" });
    expect(await get(down)).toMatchObject({ status: "pending", blocked: true });
  });
});

describe("matching and auto-assignment", () => {
  let pw: { project: { id: string }; rust: { id: string; apiKey: string; name: string }; web: { id: string; apiKey: string; name: string } };
  const capable = (languages: string[], max = 2) => ({ languages, environments: ["linux"], max_concurrent_tasks: max });

  beforeAll(async () => {
    const project = await createProject(w.admin, "Matching");
    const rust = await registerAgent(w.admin, "rust-box", { project_ids: [project.id] });
    const web = await registerAgent(w.admin, "web-box", { project_ids: [project.id] });
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: rust.apiKey, body: { capabilities: capable(["rust"]) } }));
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: web.apiKey, body: { capabilities: capable(["typescript"]) } }));
    pw = { project, rust, web };
  });

  const task = (body: Record<string, unknown>) => expectOk(call("/api/v1/tasks", { token: w.admin, body: { title: "m", project_id: pw.project.id, ...body } }), 201);

  it("previews scores and reasons", async () => {
    const t = await task({ requirements: { languages: ["rust"], tools: ["cargo"] } });
    const preview = await expectOk(call(`/api/v1/tasks/${t.json.id}/matching-agents`, { token: w.admin }));
    expect(preview.json.total).toBe(preview.json.servers.length);
    expect(preview.json.servers[0]).toEqual({ server_id: pw.rust.id, server_name: "rust-box", score: 125, status: "online", reasons: ["language match: rust (+50)", "online (+25)", "has capacity (+50)"] });
    expect(preview.json.servers.find((s: { server_name: string }) => s.server_name === "web-box")).toMatchObject({ score: -1, reasons: ["missing languages: rust (disqualified)"] });
  });

  it("auto-assigns to the best server, or answers no_match", async () => {
    const t = await task({ requirements: { languages: ["typescript"] } });
    const assigned = await expectOk(call(`/api/v1/tasks/${t.json.id}/auto-assign`, { token: w.admin, method: "POST" }));
    expect(assigned.json).toEqual({ status: "assigned", server_id: pw.web.id, server_name: "web-box", match_score: 125 });
    expect((await call(`/api/v1/tasks/${t.json.id}`, { token: w.admin })).json).toMatchObject({ status: "assigned", assigned_server_name: "web-box" });
    const nobody = await task({ requirements: { languages: ["cobol"] } });
    expect((await expectOk(call(`/api/v1/tasks/${nobody.json.id}/auto-assign`, { token: w.admin, method: "POST" }))).json).toEqual({ status: "no_match" });
    // Without requirements, asked for: matched as requiring nothing, so a server with no task yet takes it (not web-box).
    const manual = await task({});
    const anyone = await expectOk(call(`/api/v1/tasks/${manual.json.id}/auto-assign`, { token: w.admin, method: "POST" }));
    expect(anyone.json).toMatchObject({ status: "assigned", match_score: 75 });
    expect(anyone.json.server_name).not.toBe("web-box");
    await expectOk(call(`/api/v1/tasks/${manual.json.id}`, { method: "DELETE", token: w.admin }));
    expectProblem(await call(`/api/v1/tasks/${t.json.id}/auto-assign`, { token: w.admin, method: "POST" }), 409, "INVALID_TRANSITION");
  });

  it("auto-assigns an unblocked task with requirements in the cascade, and leaves one without requirements alone", async () => {
    const up = await task({});
    const withReq = await task({ requirements: { languages: ["rust"] }, dependency_ids: [up.json.id] });
    const without = await task({ dependency_ids: [up.json.id] });
    await expectOk(call(`/api/v1/tasks/${up.json.id}/assign`, { token: w.admin, body: { server_name: "web-box" } }));
    await expectOk(cli(pw.web.apiKey, "POST", `${T}/${up.json.id}/start`));
    await expectOk(cli(pw.web.apiKey, "POST", `${T}/${up.json.id}/complete`, { result: "up" }));
    expect((await call(`/api/v1/tasks/${withReq.json.id}`, { token: w.admin })).json).toMatchObject({ status: "assigned", assigned_server_name: "rust-box", blocked: false });
    expect((await call(`/api/v1/tasks/${without.json.id}`, { token: w.admin })).json).toMatchObject({ status: "pending", assigned_server_id: null, blocked: false });
    const assignedEvent = (await events(pw.project.id)).find((e) => e.task_id === withReq.json.id && e.type === "task_assigned");
    expect(assignedEvent.data).toMatchObject({ auto: true, server_name: "rust-box", match_score: 125 });
  });

  it("offers waiting tasks to a server that comes online or gains capacity", async () => {
    const project = await createProject(w.admin, "Heartbeats");
    const late = await registerAgent(w.admin, "late-box", { project_ids: [project.id] });
    const waiting = await expectOk(call("/api/v1/tasks", { token: w.admin, body: { title: "wait", project_id: project.id, requirements: { languages: ["elixir"] } } }), 201);
    const second = await expectOk(call("/api/v1/tasks", { token: w.admin, body: { title: "wait 2", project_id: project.id, requirements: { languages: ["elixir"] } } }), 201);
    // Registered without capabilities: nothing can be matched yet.
    expect((await call(`/api/v1/tasks/${waiting.json.id}`, { token: w.admin })).json.status).toBe("pending");
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: late.apiKey, body: { capabilities: capable(["elixir"], 1) } }));
    const statusOf = async (id: string) => (await call(`/api/v1/tasks/${id}`, { token: w.admin })).json.status;
    await expect.poll(() => statusOf(waiting.json.id), { timeout: 5000 }).toBe("assigned");
    expect(await statusOf(second.json.id)).toBe("pending");
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: late.apiKey, body: { capabilities: capable(["elixir"], 2) } }));
    await expect.poll(() => statusOf(second.json.id), { timeout: 5000 }).toBe("assigned");
  });

  it("gives freed capacity to waiting tasks when a task completes", async () => {
    const project = await createProject(w.admin, "Capacity");
    const solo = await registerAgent(w.admin, "solo-box", { project_ids: [project.id] });
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: solo.apiKey, body: { capabilities: capable(["go"], 1) } }));
    const make = () => expectOk(call("/api/v1/tasks", { token: w.admin, body: { title: "go", project_id: project.id, requirements: { languages: ["go"] } } }), 201);
    const first = await make();
    const queued = await make();
    await expectOk(call(`/api/v1/tasks/${first.json.id}/auto-assign`, { token: w.admin, method: "POST" }));
    expect((await call(`/api/v1/tasks/${queued.json.id}/auto-assign`, { token: w.admin, method: "POST" })).json).toEqual({ status: "no_match" });
    await expectOk(cli(solo.apiKey, "POST", `${T}/${first.json.id}/start`));
    await expectOk(cli(solo.apiKey, "POST", `${T}/${first.json.id}/complete`, { result: "ok" }));
    expect((await call(`/api/v1/tasks/${queued.json.id}`, { token: w.admin })).json).toMatchObject({ status: "assigned", assigned_server_name: "solo-box" });
  });
});

describe("answers", () => {
  it("answers a start and a completion with the task as it is afterwards", async () => {
    const up = await newTask(w);
    const down = await newTask(w, { dependencies: [{ depends_on_task_id: up, dependency_type: "input", contract_key: "c" }] });
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${up}/assign`, { session_name: "worker" }));
    const started = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${up}/start`));
    expect(started.json).toEqual(await get(up));
    const done = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${up}/complete`, { result: schemaResult({ c: { data: { n: 1 } } }) }));
    expect(done.json).toMatchObject({ id: up, status: "done" });
    expect(done.json).toEqual(await get(up));
    expect(await get(down)).toMatchObject({ blocked: false, resolved_inputs: { c: { n: 1 } } });
  });

  it("answers 404 for a task whose project was deleted, also where this Worker still remembers its project", async () => {
    const project = await createProject(w.admin, "Short-lived");
    const box = await registerAgent(w.admin, "short-lived-box", { project_ids: [project.id] });
    const id = (await expectOk(cli(box.apiKey, "POST", T, { title: "gone soon", project_id: project.id }), 201)).json.id as string;
    await expectOk(call(`/api/v1/projects/${project.id}`, { method: "DELETE", token: w.admin }));
    expectProblem(await cli(box.apiKey, "POST", `${T}/${id}/start`), 404, "NOT_FOUND");
    expectProblem(await cli(box.apiKey, "POST", `${T}/${id}/complete`, { result: "x" }), 404, "NOT_FOUND");
    // Also when the answer would have been offloaded to R2 first.
    expectProblem(await cli(box.apiKey, "POST", `${T}/${id}/complete`, { result: { summary: "big", detail: "x".repeat(100 * 1024) } }), 404, "NOT_FOUND");
    expectProblem(await cli(box.apiKey, "GET", `${T}/${id}`), 404, "NOT_FOUND");
  });
});

describe("capacity across projects", () => {
  it("never gives a server more tasks than it can take when several projects' rooms assign to it at once", async () => {
    const projects = await Promise.all(Array.from({ length: 10 }, (_, i) => createProject(w.admin, `Shared box ${i}`)));
    const box = await registerAgent(w.admin, "shared-box", { project_ids: projects.map((p) => p.id) });
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: box.apiKey, body: { capabilities: { languages: ["prolog"], max_concurrent_tasks: 3 } } }));
    const waiting = await Promise.all(
      projects.map(async (p) => (await expectOk(call("/api/v1/tasks", { token: w.admin, body: { title: "t", project_id: p.id, requirements: { languages: ["prolog"] } } }), 201)).json.id as string),
    );
    const replies = await Promise.all(waiting.map((id) => call(`/api/v1/tasks/${id}/auto-assign`, { token: w.admin, method: "POST" })));
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(replies.filter((r) => r.json.status === "assigned")).toHaveLength(3);
    const statuses = await Promise.all(waiting.map(async (id) => (await call(`/api/v1/tasks/${id}`, { token: w.admin })).json.status));
    expect(statuses.filter((s) => s === "assigned")).toHaveLength(3);
  });

  it("holds when completions in several projects unblock tasks for the same server at once", async () => {
    const projects = await Promise.all(Array.from({ length: 5 }, (_, i) => createProject(w.admin, `Shared cascade ${i}`)));
    const ids = projects.map((p) => p.id);
    const box = await registerAgent(w.admin, "cascade-box", { project_ids: ids });
    const runner = await registerAgent(w.admin, "cascade-runner", { project_ids: ids });
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: box.apiKey, body: { capabilities: { languages: ["forth"], max_concurrent_tasks: 4 } } }));
    const ups = await Promise.all(
      ids.map(async (projectId, n) => {
        await openSession(runner.apiKey, projectId, `runner-${n}`);
        const up = (await expectOk(cli(runner.apiKey, "POST", T, { title: "up", project_id: projectId }), 201)).json.id as string;
        for (let i = 0; i < 5; i++) await expectOk(cli(runner.apiKey, "POST", T, { title: "down", project_id: projectId, dependency_ids: [up], requirements: { languages: ["forth"] } }), 201);
        await expectOk(cli(runner.apiKey, "POST", `${T}/${up}/assign`, { session_name: `runner-${n}` }));
        await expectOk(cli(runner.apiKey, "POST", `${T}/${up}/start`));
        return up;
      }),
    );
    const replies = await Promise.all(ups.map((id) => cli(runner.apiKey, "POST", `${T}/${id}/complete`, { result: "ok" })));
    expect(replies.map((r) => r.status)).toEqual(Array(5).fill(200));
    const onBox = await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE assigned_server_id = ?1 AND status IN ('assigned', 'planning', 'running')").bind(box.id).first<{ n: number }>();
    expect(onBox!.n).toBe(4);
  });
});

describe("capacity taken at every try", () => {
  it("commits the completion without offering waiting tasks when other rooms keep filling the server, and offers them after", async () => {
    const { project, box, make, run } = await projectWithBox("always-filled-box", "lisp", 1);
    const up = await make({});
    const down = await make({ requirements: { languages: ["lisp"] }, dependency_ids: [up] });
    const filler = await make({});
    await run(up);
    // Stands in for other projects' rooms: whenever DOWN is given to the box, another task takes the box's slot in the same instant.
    await env.DB.prepare(
      `CREATE TRIGGER fill_the_box AFTER UPDATE OF assigned_server_id ON tasks WHEN NEW.id = '${down}' AND NEW.assigned_server_id = '${box.id}'
       BEGIN UPDATE tasks SET status = 'assigned', assigned_server_id = NEW.assigned_server_id WHERE id = '${filler}'; END`,
    ).run();
    try {
      const done = await cli(box.apiKey, "POST", `${T}/${up}/complete`, { result: "ok" });
      expect(done.status, done.text).toBe(200);
      expect(done.json).toMatchObject({ id: up, status: "done" });
      // The room's next turn (after the offer it queued) shows the offer rolled back too.
      await inOneTurn(project.id, up, []);
      for (const id of [down, filler]) expect((await call(`/api/v1/tasks/${id}`, { token: w.admin })).json).toMatchObject({ status: "pending", assigned_server_id: null });
    } finally {
      await env.DB.prepare("DROP TRIGGER fill_the_box").run();
    }
    const offered = await expectOk(call(`/api/v1/tasks/${down}/auto-assign`, { token: w.admin, method: "POST" }));
    expect(offered.json).toMatchObject({ status: "assigned", server_name: box.name });
  });
});

describe("constant cost", () => {
  it("spends the same number of D1 round trips on a completion whatever its fan-out", async () => {
    const queriesFor = async (k: number) => {
      const up = await newTask(w);
      for (let i = 0; i < k; i++) await newTask(w, { dependencies: [{ depends_on_task_id: up, dependency_type: i % 2 ? "blocks" : "input", contract_key: "c" }] });
      const done = await finish(up, schemaResult({ c: { data: 1 } }));
      const timing = done.headers.get("Server-Timing") ?? "";
      return Number(timing.match(/d1 queries=(\d+)/)?.[1]);
    };
    const one = await queriesFor(1);
    expect(one).toBeGreaterThan(0);
    expect(await queriesFor(60)).toBe(one);
  });
});

describe("fan-in under concurrency", () => {
  it("completes 50 upstream tasks concurrently: the downstream is unblocked once and auto-assigned once", async () => {
    const project = await createProject(w.admin, "Fan-in");
    const agent = await registerAgent(w.admin, "fan-in-box", { project_ids: [project.id] });
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: agent.apiKey, body: { capabilities: { languages: ["rust"], max_concurrent_tasks: 100 } } }));
    await openSession(agent.apiKey, project.id, "fan-in-worker");
    const ups: string[] = [];
    for (let i = 0; i < 50; i++) ups.push((await expectOk(cli(agent.apiKey, "POST", T, { title: `up ${i}`, project_id: project.id }), 201)).json.id);
    const down = await expectOk(cli(agent.apiKey, "POST", T, { title: "down", project_id: project.id, dependency_ids: ups, requirements: { languages: ["rust"] } }), 201);
    for (const id of ups) {
      await expectOk(cli(agent.apiKey, "POST", `${T}/${id}/assign`, { session_name: "fan-in-worker" }));
      await expectOk(cli(agent.apiKey, "POST", `${T}/${id}/start`));
    }
    const replies = await Promise.all(ups.map((id) => cli(agent.apiKey, "POST", `${T}/${id}/complete`, { result: `done ${id}` })));
    expect(replies.map((r) => r.status)).toEqual(Array(50).fill(200));
    // The room committed them in groups, not one by one.
    expect(Math.max(...replies.map(committedWith))).toBeGreaterThan(1);
    const log = (await events(project.id)).filter((e) => e.task_id === down.json.id);
    expect(log.filter((e) => e.type === "task_unblocked")).toHaveLength(1);
    expect(log.filter((e) => e.type === "task_assigned")).toHaveLength(1);
    expect((await expectOk(cli(agent.apiKey, "GET", `${T}/${down.json.id}`))).json).toMatchObject({ status: "assigned", blocked: false });
  });
});

/** How many operations the room committed together with this request's (Server-Timing). */
const committedWith = (reply: Reply) => Number(reply.headers.get("Server-Timing")?.match(/operations=(\d+)/)?.[1]);

describe("operations committed together", () => {
  it("lets each operation of a group see the ones before it: freed capacity is given out once per freed slot", async () => {
    const project = await createProject(w.admin, "Group capacity");
    const box = await registerAgent(w.admin, "group-box", { project_ids: [project.id] });
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: box.apiKey, body: { capabilities: { languages: ["zig"], max_concurrent_tasks: 8 } } }));
    const make = async (title: string) =>
      (await expectOk(call("/api/v1/tasks", { token: w.admin, body: { title, project_id: project.id, requirements: { languages: ["zig"] } } }), 201)).json.id as string;
    const running: string[] = [];
    for (let i = 0; i < 8; i++) running.push(await make(`running ${i}`));
    for (const id of running) expect((await expectOk(call(`/api/v1/tasks/${id}/auto-assign`, { token: w.admin, method: "POST" }))).json.status).toBe("assigned");
    const waiting: string[] = [];
    for (let i = 0; i < 12; i++) waiting.push(await make(`waiting ${i}`));
    await Promise.all(running.map((id) => expectOk(cli(box.apiKey, "POST", `${T}/${id}/start`))));

    const replies = await Promise.all(running.map((id) => cli(box.apiKey, "POST", `${T}/${id}/complete`, { result: "ok" })));
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(Math.max(...replies.map(committedWith))).toBeGreaterThan(1);
    const statuses = await Promise.all(waiting.map(async (id) => (await call(`/api/v1/tasks/${id}`, { token: w.admin })).json.status));
    // Eight slots freed, eight given out — the oldest waiting tasks first — and never more than the capacity.
    expect(statuses).toEqual([...Array(8).fill("assigned"), ...Array(4).fill("pending")]);
    const assignedEvents = (await events(project.id)).filter((e) => e.type === "task_assigned" && waiting.includes(e.task_id));
    expect(assignedEvents).toHaveLength(8);
  });

  it("lets a start see the completion planned before it in the same group", async () => {
    const up = await newTask(w);
    const down = await newTask(w, { dependency_ids: [up] });
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${up}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${up}/start`));
    // Assigned while still blocked: starting it must wait for the upstream.
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${down}/assign`, { session_name: "worker" }));
    expectProblem(await cli(w.worker.apiKey, "POST", `${T}/${down}/start`), 409, "UNRESOLVED_DEPENDENCIES");

    const [completed, started] = await inOneTurn(w.project.id, up, [
      [worker(), completeOp(up)],
      [worker(), { op: "start", taskId: down }],
    ]);
    expect(completed).toMatchObject({ ok: true, metrics: { operations: 2 } });
    expect(started).toMatchObject({ ok: true, metrics: { operations: 2 } });
    expect(await get(down)).toMatchObject({ status: "running", blocked: false });
    const log = (await events()).filter((e) => [up, down].includes(e.task_id)).map((e) => `${e.type}:${e.task_id === up ? "up" : "down"}`);
    expect(log.slice(-3)).toEqual(["task_completed:up", "task_unblocked:down", "task_started:down"]);
  });

  it("lets an agent's escalation see the start planned before it in the same group", async () => {
    const id = await newTask(w);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    const escalation: RoomCommand = {
      op: "complete",
      taskId: id,
      result: { summary: "stuck" },
      structured: false,
      warnings: [],
      envelope: { status: "needs_human", question: "Which schema?" },
    };
    const [started, escalated] = await inOneTurn(w.project.id, id, [
      [worker(), { op: "start", taskId: id }],
      [worker(), escalation],
    ]);
    expect(started).toMatchObject({ ok: true, metrics: { operations: 2 } });
    expect(escalated).toMatchObject({ ok: true, metrics: { operations: 2 } });
    expect(await get(id)).toMatchObject({ status: "needs_human" });
    const log = (await events()).filter((e) => e.task_id === id).map((e) => e.type);
    expect(log.slice(-2)).toEqual(["task_started", "intervention_requested"]);
  });

  it("still finds the task a completion unblocks behind more than a group reads at once (210) that the group could unblock", async () => {
    const { project, box, make, run } = await projectWithBox("waiting-box", "ada", 1);
    const x = await make({});
    const f = await make({});
    for (let i = 0; i < 210; i++) await make({ priority: "critical", requirements: { languages: ["ada"] }, dependency_ids: [f] });
    const waiting = await make({ requirements: { languages: ["ada"] }, dependency_ids: [x] });
    await run(x);
    await expectOk(cli(box.apiKey, "POST", `${T}/${f}/assign`, { server_name: w.worker.name }));
    const [completed, started] = await inOneTurn(project.id, x, [
      [worker(box), completeOp(x)],
      [worker(), { op: "start", taskId: f }],
    ]);
    expect(completed).toMatchObject({ ok: true, metrics: { operations: 2 } });
    expect(started).toMatchObject({ ok: true });
    // X's slot freed: the task X unblocks takes it, as it would had the completion run alone.
    expect((await call(`/api/v1/tasks/${waiting}`, { token: w.admin })).json).toMatchObject({ status: "assigned", assigned_server_name: box.name });
  });

  it("places as many unblocked tasks in a group as the completions would one after another", async () => {
    const { project, box, make, run } = await projectWithBox("fan-out-box", "ocaml", 101);
    const up = await make({});
    const other = await make({});
    const downstream: string[] = [];
    for (let i = 0; i < 130; i++) downstream.push(await make({ requirements: { languages: ["ocaml"] }, dependency_ids: [up] }));
    for (const id of [up, other]) await run(id);
    const [completed] = await inOneTurn(project.id, other, [
      [worker(box), completeOp(up)],
      [worker(box), completeOp(other)],
    ]);
    expect(completed).toMatchObject({ ok: true, metrics: { operations: 2 } });
    // Alone, the first completion would offer 100 of the 130 it unblocks (one operation's most), filling the server
    // (101 = 100 and the other running task); the second would free and fill one more slot.
    expect(await assignedAfterEach(project.id, [up, other], downstream)).toEqual([100, 1]);
  });

  it("offers waiting tasks past those no server can take, as each completion would alone", async () => {
    const { project, box, make, run } = await projectWithBox("skipping-box", "ocaml", 2);
    const [a, b] = [await make({}), await make({})];
    for (const id of [a, b]) await run(id);
    const x1 = await make({ priority: "critical", requirements: { languages: ["ocaml"] } });
    for (let i = 0; i < 99; i++) await make({ priority: "high", requirements: { languages: ["cobol"] } });
    const x2 = await make({ requirements: { languages: ["ocaml"] } });
    await inOneTurn(project.id, a, [
      [worker(box), completeOp(a)],
      [worker(box), completeOp(b)],
    ]);
    // Alone, A's completion considers X1 and the 99 tasks nobody can take; B's the 99 and X2.
    expect(await assignedAfterEach(project.id, [a, b], [x1, x2])).toEqual([1, 1]);
    expect((await call(`/api/v1/tasks/${x2}`, { token: w.admin })).json).toMatchObject({ status: "assigned" });
  });

  it("answers each operation with its task as committed, read in the group's own batch", async () => {
    const a = (await taskInRunning()).id;
    const b = (await taskInRunning()).id;
    const answers = await inOneTurn(
      w.project.id,
      a,
      [
        [worker(), completeOp(a, "a")],
        [worker(), completeOp(b, "b")],
      ],
      true,
    );
    expect(answers.map((r) => r.metrics)).toMatchObject([
      { operations: 2, d1Queries: 2 },
      { operations: 2, d1Queries: 2 },
    ]);
    const views = answers.map((r) => (r.ok ? r.view : undefined));
    expect(views).toMatchObject([
      { id: a, status: "done", result: { summary: "a" } },
      { id: b, status: "done", result: { summary: "b" } },
    ]);
    // Exactly what a fresh read shows.
    expect(views).toEqual([await get(a), await get(b)]);
  });

  it("answers each operation of a group on its own: a refusal does not stop the others", async () => {
    const a = (await taskInRunning()).id;
    const b = (await taskInRunning()).id;
    const answers = await inOneTurn(w.project.id, a, [
      [worker(), completeOp(a, "a")],
      [worker(), completeOp(a, "a, but different")],
      [worker(), completeOp(b, "b")],
      [worker(), { op: "start", taskId: b }],
    ]);
    expect(answers.map((r) => (r.ok ? "ok" : r.problem.code))).toEqual(["ok", "RESULT_CONFLICT", "ok", "INVALID_TRANSITION"]);
    expect(answers.map((r) => r.metrics.operations)).toEqual([4, 4, 4, 4]);
    expect(await get(a)).toMatchObject({ status: "done", result: { summary: "a" } });
    expect(await get(b)).toMatchObject({ status: "done", result: { summary: "b" } });
  });
});

/**
 * A project served by one new server that speaks `language` and takes
 * `capacity` tasks, with an open session; `make` creates a task in it and
 * `run` gives a task to that session and starts it.
 */
async function projectWithBox(name: string, language: string, capacity: number) {
  const project = await createProject(w.admin, name);
  const box = await registerAgent(w.admin, name, { project_ids: [project.id] });
  await openSession(box.apiKey, project.id, `${name}-session`);
  await expectOk(call("/api/v1/servers/heartbeat", { apiKey: box.apiKey, body: { capabilities: { languages: [language], max_concurrent_tasks: capacity } } }));
  const make = async (body: Record<string, unknown>) => (await expectOk(cli(box.apiKey, "POST", T, { title: "t", project_id: project.id, ...body }), 201)).json.id as string;
  const run = async (id: string) => {
    await expectOk(cli(box.apiKey, "POST", `${T}/${id}/assign`, { session_name: `${name}-session` }));
    await expectOk(cli(box.apiKey, "POST", `${T}/${id}/start`));
  };
  return { project, box, make, run };
}

/** How many of `tasks` were assigned after each completion in `completed` (in order) and before the next one. */
async function assignedAfterEach(projectId: string, completed: string[], tasks: string[]) {
  const log = await events(projectId);
  const at = completed.map((id) => log.findIndex((e) => e.type === "task_completed" && e.task_id === id));
  expect(at.every((i, n) => i >= 0 && (n === 0 || i > at[n - 1]!))).toBe(true);
  return at.map((from, n) => log.slice(from, at[n + 1] ?? log.length).filter((e) => e.type === "task_assigned" && tasks.includes(e.task_id)).length);
}

const worker = (server: { id: string; name: string } = w.worker): RoomActor => ({ kind: "agent", serverId: server.id, serverName: server.name, label: `agent:${server.name}` });
const completeOp = (taskId: string, summary = "ok"): RoomCommand => ({ op: "complete", taskId, result: { summary }, structured: false, warnings: [] });

/**
 * Sends the operations to the project's room in this order while a note on
 * `busyTask` keeps it busy, so they arrive before its next turn and gather
 * into one group. Answers theirs, in order.
 */
async function inOneTurn(projectId: string, busyTask: string, operations: [RoomActor, RoomCommand][], withViews = false): Promise<RoomResult[]> {
  const room = env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(projectId));
  const [, ...answers] = (await Promise.all([
    room.execute({ kind: "person", userId: "test", label: "test" }, { op: "note", taskId: busyTask, content: "busy", urgent: false }),
    ...operations.map(([actor, command]) => room.execute(actor, command, { view: withViews })),
  ])) as unknown as RoomResult[];
  return answers;
}

async function taskInRunning() {
  const id = await newTask(w);
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
  return { id };
}
