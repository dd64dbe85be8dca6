/** The task-format dialect (seeds/task-format.md), section by section: requests, routing, responses, artifacts, error blocks, repeats and traces. */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { TASK_STATUSES } from "../src/domain/lifecycle";
import {
  artifactsOf,
  isTaskFormatRequest,
  priorityOf,
  requestForHash,
  STATUS_ALIASES,
  TASK_FORMAT_STATUS,
  TASK_FORMAT_STATUSES,
  titleOf,
} from "../src/protocol/task-format";
import { addMember, call, createProject, expectProblem, registerAgent } from "./helpers";
import { cli, createWorld, expectOk, openSession, T, taskIn, taskStatus, type World } from "./task-world";

/** One hub's people for the file; each part gets a project of its own, with its own worker and orchestrator sessions. */
let hub: Promise<World> | undefined;
async function worldFor(name: string): Promise<World> {
  const w = await (hub ??= createWorld("Task format"));
  const project = await createProject(w.admin, name);
  await addMember(w.admin, project.id, w.member.id);
  const suffix = crypto.randomUUID().slice(0, 6);
  const worker = await registerAgent(w.admin, `worker-${suffix}`);
  const orchestrator = await registerAgent(w.admin, `orchestrator-${suffix}`);
  const workerSession = await openSession(worker.apiKey, project.id, "worker");
  const orchestratorSession = await openSession(orchestrator.apiKey, project.id, "orchestrator");
  return { ...w, project, worker, orchestrator, workerSession, orchestratorSession };
}

describe("task-format statuses", () => {
  it.each([
    ["pending", "pending"],
    ["assigned", "pending"],
    ["planning", "in_progress"],
    ["running", "in_progress"],
    ["plan_review", "input_required"],
    ["needs_human", "input_required"],
    ["done", "completed"],
    ["failed", "failed"],
    ["cancelled", "cancelled"],
  ] as const)("names the hub's %s %s", (hub, seed) => {
    expect(TASK_FORMAT_STATUS[hub]).toBe(seed);
  });

  it("names every hub status with one of the seed's six", () => {
    expect(Object.keys(TASK_FORMAT_STATUS).sort()).toEqual([...TASK_STATUSES].sort());
    expect(new Set(Object.values(TASK_FORMAT_STATUS))).toEqual(new Set(TASK_FORMAT_STATUSES));
  });

  it("filters by the seed's own names for the statuses they stand for", () => {
    expect(STATUS_ALIASES).toEqual({ in_progress: ["planning", "running"], completed: ["done"], input_required: ["plan_review", "needs_human"] });
  });
});

describe("listing by task-format status", () => {
  let w: World;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    w = await worldFor("Task format");
    for (const status of ["pending", "running", "needs_human", "plan_review", "done"]) ids[status] = (await taskIn(w, status)).id;
  });
  const listed = async (status: string) => {
    const reply = await call(`/api/v1/tasks?project_id=${w.project.id}&status=${status}`, { token: w.member.token });
    expect(reply.status, reply.text).toBe(200);
    return reply.json.tasks.map((t: any) => t.id).sort();
  };

  it("takes in_progress, completed and input_required beside the hub's own names", async () => {
    expect(await listed("in_progress")).toEqual([ids.running].sort());
    expect(await listed("input_required")).toEqual([ids.needs_human, ids.plan_review].sort());
    expect(await listed("completed")).toEqual([ids.done]);
    expect(await listed("completed,pending")).toEqual([ids.done, ids.pending].sort());
    expect(await listed("needs_human")).toEqual([ids.needs_human]);
  });

  it("refuses other names, listing the ones it takes", async () => {
    const reply = await call(`/api/v1/tasks?project_id=${w.project.id}&status=finished`, { token: w.member.token });
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors[0].message).toContain("input_required");
  });
});

/* ---------------------------------------------------------------------------
 * The seed section by section, over HTTP.
 * ------------------------------------------------------------------------- */

const PEOPLE = "/api/v1/tasks";

/** The seed's example request, with an id of its own. */
const seedRequest = (w: World, extra: Record<string, unknown> = {}) => ({
  id: crypto.randomUUID(),
  type: "parse_recipe",
  payload: { url: "https://example.com/recipe" },
  context: { conversationId: "conv-1", user: "user-id", timestamp: "2025-01-05T10:30:00Z", priority: "normal" },
  routing: { source: "orchestrator", delegationChain: ["orchestrator"] },
  observability: { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", baggage: { tenant: "acme" } },
  project_id: w.project.id,
  ...extra,
});

const createTf = (w: World, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call(T, { apiKey: w.orchestrator.apiKey, body, headers });
const asTaskFormat = async (w: World, id: string, surface = T) => {
  const auth = surface === T ? { apiKey: w.orchestrator.apiKey } : { token: w.member.token };
  return (await expectOk(call(`${surface}/${id}?format=task-format`, auth))).json;
};
const byWorker = (w: World, id: string, path: string, body?: unknown) => expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}${path}`, body));

describe("task-format request (§Task Request)", () => {
  let w: World;
  beforeAll(async () => {
    w = await worldFor("Task format requests");
  });

  it("keeps every field and block as sent, with unknown fields inside the blocks", async () => {
    const parent = await createTf(w, seedRequest(w));
    const body = seedRequest(w, {
      context: { conversationId: "conv-1", parentTaskId: parent.json.client_id, user: "u", timestamp: "2025-01-05T10:30:00Z", priority: "high", locale: "en" },
      routing: { source: "orchestrator", delegationChain: ["orchestrator", "planner"], hops: 2 },
    });
    const reply = await createTf(w, body);
    expect(reply.status, reply.text).toBe(201);
    const t = reply.json;
    expect(t).toMatchObject({
      client_id: body.id,
      type: "parse_recipe",
      title: `Parse recipe (${body.id})`,
      priority: "high",
      status: "pending",
      payload: body.payload,
      context: body.context,
      routing: body.routing,
      observability: body.observability,
    });
    expect(t.id).not.toBe(body.id);
    // The people's surface reads the same task.
    const read = await expectOk(call(`${PEOPLE}/${t.id}`, { token: w.member.token }));
    expect(read.json).toMatchObject({ client_id: body.id, payload: body.payload, context: body.context, routing: body.routing, observability: body.observability });
  });

  it("is created by people too, from session_id instead of project_id", async () => {
    const { project_id: _, ...body } = seedRequest(w);
    const reply = await call(PEOPLE, { token: w.member.token, body: { ...body, session_id: w.orchestratorSession } });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json).toMatchObject({ project_id: w.project.id, client_id: body.id, source_session_id: w.orchestratorSession });
  });

  it.each([
    ["id", { id: "" }, "id"],
    ["id", { id: 7 }, "id"],
    ["id", { id: "x".repeat(201) }, "id"],
    ["type", { type: undefined }, "type"],
    ["payload", { payload: [1, 2] }, "payload"],
    ["payload", { payload: "text" }, "payload"],
    ["context", { context: "urgent" }, "context"],
    ["context.priority", { context: { priority: "asap" } }, "context.priority"],
    ["context.timestamp", { context: { timestamp: "yesterday" } }, "context.timestamp"],
    ["context.user", { context: { user: 42 } }, "context.user"],
    ["context.conversationId", { context: { conversationId: {} } }, "context.conversationId"],
    ["context.parentTaskId", { context: { parentTaskId: 1 } }, "context.parentTaskId"],
    ["routing.source", { routing: { source: 1 } }, "routing.source"],
    ["routing.target", { routing: { target: "" } }, "routing.target"],
    ["routing.delegationChain", { routing: { delegationChain: "orchestrator" } }, "routing.delegationChain"],
    ["routing.delegationChain", { routing: { delegationChain: ["a", 2] } }, "routing.delegationChain.1"],
    ["observability.traceId", { observability: { traceId: 12 } }, "observability.traceId"],
    ["observability.spanId", { observability: { spanId: false } }, "observability.spanId"],
    ["observability.baggage", { observability: { baggage: "k=v" } }, "observability.baggage"],
    ["priority", { priority: "asap" }, "priority"],
    ["a field of another dialect", { spec: "Do it" }, "spec"],
  ])("refuses a bad %s with a problem naming it", async (_what, change, path) => {
    const reply = await createTf(w, { ...seedRequest(w), ...change });
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it.each([
    [{ context: { priority: "urgent" } }, "critical"],
    [{ context: { priority: "low" } }, "low"],
    [{ context: { priority: "high" } }, "high"],
    [{ priority: "urgent" }, "critical"],
    [{ priority: "low", context: { priority: "urgent" } }, "low"],
    [{ context: {} }, "normal"],
  ])("takes the priority from %j as %s", async (change, priority) => {
    const reply = await createTf(w, { ...seedRequest(w), ...change });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json.priority).toBe(priority);
  });

  it("answers the same request again with 200 and the same task, whatever its key order", async () => {
    const body = seedRequest(w);
    const first = await createTf(w, body);
    expect(first.status, first.text).toBe(201);
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const again = await createTf(w, reordered);
    expect(again.status, again.text).toBe(200);
    expect(again.json.id).toBe(first.json.id);
    // From the people's surface too.
    const fromPerson = await call(PEOPLE, { token: w.member.token, body });
    expect(fromPerson.status, fromPerson.text).toBe(200);
    expect(fromPerson.json.id).toBe(first.json.id);
  });

  it("refuses another request under an id already taken with 409", async () => {
    const body = seedRequest(w);
    expect((await createTf(w, body)).status).toBe(201);
    const other = await createTf(w, { ...body, payload: { url: "https://example.com/other" } });
    expectProblem(other, 409, "TASK_ID_TAKEN");
  });

  it("lets another project use the same id", async () => {
    const body = seedRequest(w);
    const first = await createTf(w, body);
    const elsewhere = await createProject(w.admin, "Task format elsewhere");
    const second = await call(PEOPLE, { token: w.admin, body: { ...body, project_id: elsewhere.id } });
    expect(second.status, second.text).toBe(201);
    expect(second.json.id).not.toBe(first.json.id);
    expect(second.json.client_id).toBe(body.id);
  });

  it("leaves core requests (with a title) as they were", async () => {
    const reply = await createTf(w, { title: "A core task", payload: { x: 1 }, project_id: w.project.id });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json).toMatchObject({ title: "A core task", client_id: null, payload: null });
  });
});

describe("routing.target (§Routing Block)", () => {
  let w: World;
  beforeAll(async () => {
    w = await worldFor("Task format routing");
  });

  it("assigns to the open session of that name", async () => {
    const reply = await createTf(w, seedRequest(w, { routing: { source: "orchestrator", target: "worker" } }));
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json).toMatchObject({ status: "assigned", assigned_server_name: w.worker.name, target_session_name: "worker", routing: { target: "worker" } });
    const events = await expectOk(call(`${T}/${reply.json.id}/events`, { apiKey: w.orchestrator.apiKey }));
    expect(events.json.events.map((e: { type: string }) => e.type)).toEqual(["task_created", "task_assigned"]);
    // The worker finds it among its tasks.
    const check = await expectOk(call(`${T}/check?session_id=${w.workerSession}`, { apiKey: w.worker.apiKey }));
    expect(check.json.tasks.map((t: { id: string }) => t.id)).toContain(reply.json.id);
  });

  it("assigns to a server of that name serving the project", async () => {
    const reply = await createTf(w, seedRequest(w, { routing: { target: w.orchestrator.name } }));
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json).toMatchObject({ status: "assigned", assigned_server_name: w.orchestrator.name, target_session_id: null });
  });

  it("answers a repeat with the task it made even once the target it named has gone", async () => {
    const body = seedRequest(w, { routing: { target: w.orchestrator.name } });
    const first = await createTf(w, body);
    expect(first.status, first.text).toBe(201);
    await env.DB.prepare("UPDATE servers SET name = ?1 WHERE id = ?2").bind(`${w.orchestrator.name}-gone`, w.orchestrator.id).run();
    try {
      const again = await createTf(w, body);
      expect(again.status, again.text).toBe(200);
      expect(again.json.id).toBe(first.json.id);
    } finally {
      await env.DB.prepare("UPDATE servers SET name = ?1 WHERE id = ?2").bind(w.orchestrator.name, w.orchestrator.id).run();
    }
  });

  it("refuses a target naming nothing with 422 naming routing.target, creating nothing", async () => {
    const body = seedRequest(w, { routing: { target: "nobody-here" } });
    const reply = await createTf(w, body);
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors).toEqual([{ path: "routing.target", message: expect.stringContaining("nobody-here") }]);
    const list = await expectOk(call(`${T}?project_id=${w.project.id}&limit=200`, { apiKey: w.orchestrator.apiKey }));
    expect(list.json.tasks.filter((t: { client_id: string }) => t.client_id === body.id)).toEqual([]);
  });
});

describe("task-format response (§Task Response)", () => {
  let w: World;
  beforeAll(async () => {
    w = await worldFor("Task format responses");
  });
  const created = async (extra: Record<string, unknown> = {}) => {
    const body = seedRequest(w, { routing: { target: "worker" }, ...extra });
    const reply = await createTf(w, body);
    expect(reply.status, reply.text).toBe(201);
    return { clientId: body.id as string, id: reply.json.id as string };
  };

  it("answers a waiting task as pending, under the client's id, on both surfaces", async () => {
    const body = seedRequest(w);
    const { json } = await createTf(w, body);
    for (const surface of [T, PEOPLE]) {
      expect(await asTaskFormat(w, json.id, surface)).toEqual({ id: body.id, status: "pending", metadata: { retryCount: 0 }, artifacts: [] });
    }
  });

  it("walks the statuses: assigned pending, running in_progress, needs_human input_required, done completed", async () => {
    const { clientId, id } = await created();
    expect(await asTaskFormat(w, id)).toMatchObject({ id: clientId, status: "pending", metadata: { agent: w.worker.name, retryCount: 0 } });
    await byWorker(w, id, "/start");
    const running = await asTaskFormat(w, id);
    expect(running).toMatchObject({ status: "in_progress", metadata: { agent: w.worker.name } });
    expect(running.metadata.startedAt).toEqual(expect.any(String));
    expect(running).not.toHaveProperty("result");
    const help = await byWorker(w, id, "/help", { question: "Which cuisine?", intervention_type: "question" });
    expect((await asTaskFormat(w, id)).status).toBe("input_required");
    await expectOk(call(`/api/v1/interventions/${help.json.intervention_id}/respond`, { token: w.member.token, body: { response: "Thai" } }));
    expect((await asTaskFormat(w, id)).status).toBe("in_progress");
    const result = { title: "Thai Basil Chicken", ingredients: ["basil"], artifacts: [{ name: "draft.md", type: "text/markdown", content: "# Draft" }] };
    await byWorker(w, id, "/complete", { result });
    const done = await asTaskFormat(w, id);
    const task = (await expectOk(call(`${T}/${id}`, { apiKey: w.worker.apiKey }))).json;
    expect(done).toEqual({
      id: clientId,
      status: "completed",
      result: task.result,
      metadata: {
        startedAt: task.started_at,
        completedAt: task.completed_at,
        duration_ms: Date.parse(task.completed_at) - Date.parse(task.started_at),
        agent: w.worker.name,
        retryCount: 0,
      },
      artifacts: result.artifacts,
    });
    expect(done.result).toMatchObject({ title: "Thai Basil Chicken" });
  });

  it("answers a failed task with its error block, and a retried one with its retry count", async () => {
    const { id } = await created();
    await byWorker(w, id, "/start");
    await byWorker(w, id, "/fail", { error: "The recipe site is down" });
    const failed = await asTaskFormat(w, id);
    expect(failed).toMatchObject({ status: "failed", error: { code: "TASK_FAILED", message: "The recipe site is down", recoverable: false }, metadata: { retryCount: 0 } });
    expect(failed).not.toHaveProperty("result");
    expect(failed.metadata.duration_ms).toEqual(expect.any(Number));
    await expectOk(call(`${PEOPLE}/${id}/retry`, { token: w.member.token, body: {} }));
    const retried = await asTaskFormat(w, id);
    expect(retried).toMatchObject({ status: "pending", metadata: { retryCount: 1 } });
    expect(retried).not.toHaveProperty("error");
  });

  it("answers a cancelled task as cancelled", async () => {
    const { id } = await created();
    await expectOk(cli(w.orchestrator.apiKey, "DELETE", `${T}/${id}`));
    expect((await asTaskFormat(w, id)).status).toBe("cancelled");
  });

  it.each(["planning", "plan_review", "assigned", "pending"] as const)("answers a core task in %s under its own id", async (status) => {
    const { id } = await taskIn(w, status);
    expect(await asTaskFormat(w, id, PEOPLE)).toMatchObject({ id, status: TASK_FORMAT_STATUS[status], artifacts: [] });
  });

  it("lists tasks in the response shape (filtered by the hub's status, assigned, which the seed calls pending)", async () => {
    const { clientId } = await created();
    const list = await expectOk(call(`${T}?project_id=${w.project.id}&format=task-format&status=assigned&limit=200`, { apiKey: w.orchestrator.apiKey }));
    expect(list.json.tasks.find((t: { id: string }) => t.id === clientId)).toEqual({ id: clientId, status: "pending", metadata: { agent: w.worker.name, retryCount: 0 }, artifacts: [] });
    expect(list.json.tasks.every((t: Record<string, unknown>) => t.status === "pending" && !("title" in t))).toBe(true);
  });

  it("refuses another format naming format", async () => {
    const { id } = await created();
    for (const path of [`${T}/${id}?format=a2a`, `${T}?project_id=${w.project.id}&format=xml`]) {
      const reply = await call(path, { apiKey: w.orchestrator.apiKey });
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors[0].path).toBe("query.format");
    }
  });
});

describe("task-format artifacts (§Artifacts Block)", () => {
  it.each([
    [{ artifacts: [{ name: "a.md", type: "text/markdown", content: "# A" }] }, [{ name: "a.md", type: "text/markdown", content: "# A" }]],
    [
      { $schema: "orchestratia/task-result/v1", summary: "done", artifacts: { coverage_html: "/tmp/coverage/index.html", report: { type: "text/html", url: "https://x" } } },
      [
        { name: "coverage_html", value: "/tmp/coverage/index.html" },
        { name: "report", type: "text/html", url: "https://x" },
      ],
    ],
    [{ summary: "no artifacts" }, []],
    ["plain text", []],
    [null, []],
    [{ artifacts: "nope" }, []],
  ])("takes %j as %j", (result, artifacts) => {
    expect(artifactsOf(result)).toEqual(artifacts);
  });
});

describe("task-format error block on fail (§Error Block)", () => {
  let w: World;
  beforeAll(async () => {
    w = await worldFor("Task format errors");
  });

  it("keeps the block as the task's error and its code as error_code", async () => {
    const { id } = await taskIn(w, "running");
    const block = { code: "MCP_NOT_CONNECTED", message: "The Notion MCP is not connected", details: { mcp: "notion", requiredBy: "content-agent" }, recoverable: true };
    const reply = await byWorker(w, id, "/fail", { error: block });
    expect(reply.json).toMatchObject({ status: "failed", error: block, error_code: "MCP_NOT_CONNECTED" });
    expect((await asTaskFormat(w, id)).error).toEqual(block);
  });

  it("takes the block on the daemon's fail endpoint too, and text as before", async () => {
    const a = await taskIn(w, "running");
    const daemon = await expectOk(cli(w.worker.apiKey, "POST", `/api/v1/servers/tasks/${a.id}/fail`, { error: { code: "RATE_LIMITED", message: "Slow down" } }));
    expect(daemon.json.task).toMatchObject({ error_code: "RATE_LIMITED", error: { code: "RATE_LIMITED", message: "Slow down", recoverable: false } });
    const b = await taskIn(w, "running");
    const text = await byWorker(w, b.id, "/fail", { error: "broke" });
    expect(text.json).toMatchObject({ error_code: null, error: { code: "TASK_FAILED", message: "broke", recoverable: false }, result: { error: "broke" } });
  });

  it.each([
    [{ code: 5, message: "m" }, "error.code"],
    [{ code: "", message: "m" }, "error.code"],
    [{ code: "X".repeat(101), message: "m" }, "error.code"],
    [{ code: "X" }, "error.message"],
    [{ code: "X", message: "" }, "error.message"],
    [{ code: "X", message: "m", recoverable: "yes" }, "error.recoverable"],
    [42, "error"],
  ])("refuses %j naming %s, leaving the task running", async (error, path) => {
    const { id } = await taskIn(w, "running");
    const reply = await cli(w.worker.apiKey, "POST", `${T}/${id}/fail`, { error });
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect(await taskStatus(w, id)).toBe("running");
  });

  it("does not let an agent's TIMEOUT code fail a task it was not given", async () => {
    const { id } = await taskIn(w, "running");
    const reply = await cli(w.orchestrator.apiKey, "POST", `${T}/${id}/fail`, { error: { code: "TIMEOUT", message: "gave up" } });
    expect(reply.status, reply.text).toBe(403);
    expect(await taskStatus(w, id)).toBe("running");
  });
});

describe("task-format concurrency", () => {
  it("makes one task of 20 concurrent creates with the same id", async () => {
    const w = await worldFor("Task format concurrency");
    const body = seedRequest(w);
    const replies = await Promise.all(Array.from({ length: 20 }, () => createTf(w, body)));
    for (const r of replies) expect([200, 201], r.text).toContain(r.status);
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    expect(new Set(replies.map((r) => r.json.id)).size).toBe(1);
    const list = await expectOk(call(`${T}?project_id=${w.project.id}&limit=200`, { apiKey: w.orchestrator.apiKey }));
    expect(list.json.count).toBe(1);
  });
});

describe("task-format tracing (§Observability Block)", () => {
  let w: World;
  beforeAll(async () => {
    w = await worldFor("Task format tracing");
  });
  const HEADER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

  it("keeps a traceparent header on the task and its events; the header wins over observability.traceId", async () => {
    const reply = await createTf(w, seedRequest(w, { routing: { target: "worker" } }), { traceparent: HEADER });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json).toMatchObject({ trace_id: "0af7651916cd43dd8448eb211c80319c", traceparent: HEADER });
    const events = await expectOk(call(`/api/v1/projects/${w.project.id}/events?limit=1000`, { token: w.member.token }));
    const own = events.json.events.filter((e: { task_id: string }) => e.task_id === reply.json.id);
    expect(own.map((e: { type: string }) => e.type)).toEqual(["task_created", "task_assigned"]);
    for (const e of own) expect(e.traceparent).toBe(HEADER);
  });

  it("continues observability.traceId when no header came", async () => {
    const reply = await createTf(w, seedRequest(w));
    expect(reply.json.trace_id).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(reply.json.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
  });

  it("continues it past a malformed header, with a warning for each", async () => {
    const reply = await createTf(w, seedRequest(w), { traceparent: "not-a-traceparent" });
    expect(reply.json.trace_id).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(reply.json.warnings).toEqual([expect.stringContaining("traceparent header ignored")]);
  });

  it("begins a new trace for a traceId that is not one, keeping it as sent with a warning", async () => {
    const reply = await createTf(w, seedRequest(w, { observability: { traceId: "...", spanId: "..." } }));
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(reply.json.observability).toEqual({ traceId: "...", spanId: "..." });
    expect(reply.json.warnings).toEqual([expect.stringContaining("observability.traceId")]);
  });

  it("keeps a core task's traceparent header too", async () => {
    const reply = await call(T, { apiKey: w.orchestrator.apiKey, headers: { traceparent: HEADER }, body: { title: "Traced", project_id: w.project.id } });
    expect(reply.json).toMatchObject({ trace_id: "0af7651916cd43dd8448eb211c80319c", traceparent: HEADER });
  });
});

describe("task-format request mapping (pure)", () => {
  it.each([
    ["parse_recipe", "Parse recipe (x)"],
    ["summarizeDocument", "Summarize document (x)"],
    ["web-search.v2", "Web search v2 (x)"],
    ["___", "___ (x)"],
  ])("titles type %s as %s", (type, title) => {
    expect(titleOf(type, "x")).toBe(title);
  });

  it.each([
    [{}, "normal"],
    [{ context: { priority: "urgent" } }, "critical"],
    [{ priority: "critical" }, "critical"],
    [{ priority: "high", context: { priority: "low" } }, "high"],
  ] as const)("takes the priority of %j as %s", (request, priority) => {
    expect(priorityOf(request as never)).toBe(priority);
  });

  it("hashes the request whatever its key order and wherever it was sent", () => {
    const a = requestForHash({ id: "1", type: "t", payload: { a: 1, b: 2 }, project_id: "p" });
    expect(requestForHash({ payload: { b: 2, a: 1 }, type: "t", id: "1", session_id: "s" })).toBe(a);
    expect(requestForHash({ id: "1", type: "t", payload: { a: 1, b: 3 } })).not.toBe(a);
  });

  it.each([
    [{ payload: {} }, true],
    [{ payload: {}, title: "x" }, false],
    [{ title: "x" }, false],
    [[], false],
    [null, false],
  ])("takes %j as a task-format request: %s", (body, yes) => {
    expect(isTaskFormatRequest(body)).toBe(yes);
  });
});
