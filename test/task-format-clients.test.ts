/**
 * What a client following the seeds does and expects, end to end: nulls for what it does not set, its own request
 * ids to check status by, whole Task Responses sent to complete, subtasks and the delegation chain.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, call, createProject, createUser, expectProblem, registerAgent, until } from "./helpers";
import { openSocket } from "./sockets";
import { cli, createWorld, expectOk, openSession, T, type World } from "./task-world";

const PEOPLE = "/api/v1/tasks";

let w: World;
beforeAll(async () => {
  w = await createWorld("Task format clients");
});

/** A task-format request of the seed's shape, with an id of its own. */
const request = (extra: Record<string, unknown> = {}) => ({
  id: crypto.randomUUID(),
  type: "parse_recipe",
  payload: { url: "https://example.com/recipe" },
  routing: { source: "orchestrator", delegationChain: ["orchestrator"] },
  project_id: w.project.id,
  ...extra,
});
const create = (body: Record<string, unknown>, headers: Record<string, string> = {}) => call(T, { apiKey: w.orchestrator.apiKey, body, headers });
const created = async (body: Record<string, unknown>) => (await expectOk(create(body), 201)).json;
const read = async (id: string) => (await expectOk(call(`${T}/${id}`, { apiKey: w.orchestrator.apiKey }))).json;
const asTaskFormat = async (id: string) => (await expectOk(call(`${T}/${id}?format=task-format`, { apiKey: w.orchestrator.apiKey }))).json;
const byWorker = (id: string, path: string, body?: unknown) => cli(w.worker.apiKey, "POST", `${T}/${id}${path}`, body);

/** A task-format task given to the worker and started, with the client's id. */
async function running() {
  const body = request({ routing: { target: "worker" } });
  const task = await created(body);
  await expectOk(byWorker(task.id, "/start"));
  return { id: task.id as string, clientId: body.id };
}

describe("null is absent", () => {
  it("in a task-format request's optional fields and blocks, and the request is the same one as without them", async () => {
    const body = request({
      context: { conversationId: null, parentTaskId: null, user: null, timestamp: null, priority: null, locale: "en" },
      routing: null,
      observability: { traceId: null, spanId: null, baggage: null },
      priority: null,
      session_id: null,
      title: null,
    });
    const first = await expectOk(create(body), 201);
    expect(first.json).toMatchObject({ client_id: body.id, priority: "normal", routing: null, context: { locale: "en" }, observability: {} });
    expect(first.json.context).not.toHaveProperty("parentTaskId");
    // The request without its nulls is the same request: answered with the task it made.
    const again = await expectOk(
      create({ id: body.id, type: body.type, payload: body.payload, context: { locale: "en" }, observability: {}, project_id: w.project.id }),
    );
    expect(again.json.id).toBe(first.json.id);
  });

  it("in a required field, which is then required: a request with id and type but no payload is refused naming payload", async () => {
    for (const body of [request({ payload: undefined }), request({ payload: null })]) {
      const reply = await create(body);
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors).toEqual([{ path: "payload", message: "is required" }]);
    }
  });

  it("in a core create's optional fields, on both surfaces: they take their defaults", async () => {
    const nulls = {
      spec: null,
      type: null,
      priority: null,
      acceptance_criteria: null,
      require_plan: null,
      dependencies: null,
      dependency_ids: null,
      session_id: null,
    };
    const body = { title: "Null-heavy client", project_id: w.project.id, ...nulls };
    for (const reply of [await call(T, { apiKey: w.orchestrator.apiKey, body }), await call(PEOPLE, { token: w.member.token, body })]) {
      expect(reply.status, reply.text).toBe(201);
      expect(reply.json).toMatchObject({ spec: "", type: "feature", priority: "normal", acceptance_criteria: [], require_plan: false, dependencies: [] });
    }
    // A field that is not optional is still required.
    expectProblem(await call(T, { apiKey: w.orchestrator.apiKey, body: { ...body, title: null } }), 422, "VALIDATION_FAILED");
  });

  it("in an agent socket request's optional fields", async () => {
    const s = await openSocket(`/api/v1/projects/${w.project.id}/agent-ws`, { "X-API-Key": w.orchestrator.apiKey });
    s.send({
      type: "request:submit-task",
      id: "null-submit",
      timestamp: null,
      payload: { name: "From a null-heavy agent", description: null, requiredRole: null, priority: null, dependencies: null },
    });
    const answer = await s.next((f) => f.correlationId === "null-submit");
    expect(answer.type, JSON.stringify(answer)).toBe("response:success");
    expect(answer.payload.task).toMatchObject({ name: "From a null-heavy agent", priority: "normal", requiredRole: null });
    s.ws.close();
  });

  it("in a fail's error and an error block's optional fields", async () => {
    const a = await running();
    expect((await expectOk(byWorker(a.id, "/fail", { error: null }))).json).toMatchObject({ status: "failed", error: { message: "Failed without a reason" } });
    const b = await running();
    const failed = await expectOk(byWorker(b.id, "/fail", { error: { code: "DOWN", message: "The site is down", details: null, recoverable: null } }));
    expect(failed.json.error).toEqual({ code: "DOWN", message: "The site is down", recoverable: false });
  });
});

describe("a task read by the client's own request id", () => {
  let other: { id: string };
  let body: ReturnType<typeof request>;
  let task: { id: string };
  let scoped: { apiKey: string };
  beforeAll(async () => {
    body = request();
    task = await created(body);
    scoped = await registerAgent(w.admin, `scoped-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [w.project.id] });
    // The same client id in a project the member does not belong to.
    other = await createProject(w.admin, "Task format clients elsewhere");
    await expectOk(call(PEOPLE, { token: w.admin, body: { ...body, project_id: other.id } }), 201);
  });

  it("answers the task on both surfaces, in either shape", async () => {
    const byAgent = await expectOk(call(`${T}/${body.id}`, { apiKey: scoped.apiKey }));
    expect(byAgent.json).toMatchObject({ id: task.id, client_id: body.id, project_id: w.project.id });
    const byPerson = await expectOk(call(`${PEOPLE}/${body.id}`, { token: w.member.token }));
    expect(byPerson.json.id).toBe(task.id);
    const seedShape = await expectOk(call(`${PEOPLE}/${body.id}?format=task-format`, { token: w.member.token }));
    expect(seedShape.json).toEqual({ id: body.id, status: "pending", metadata: { retryCount: 0 }, artifacts: [] });
  });

  it("refuses an id used in several of the caller's projects with 409 naming them, unless project_id chooses", async () => {
    const ambiguous = await call(`${PEOPLE}/${body.id}`, { token: w.admin });
    expectProblem(ambiguous, 409, "AMBIGUOUS_TASK_ID");
    expect(ambiguous.json.project_ids.sort()).toEqual([w.project.id, other.id].sort());
    const chosen = await expectOk(call(`${PEOPLE}/${body.id}?project_id=${other.id}`, { token: w.admin }));
    expect(chosen.json).toMatchObject({ client_id: body.id, project_id: other.id });
    // An agent serving every project sees both too.
    expectProblem(await call(`${T}/${body.id}`, { apiKey: w.worker.apiKey }), 409, "AMBIGUOUS_TASK_ID");
  });

  it("finds nothing of another project: 404 for a client id only there, and for project_id naming it", async () => {
    const elsewhere = request({ project_id: other.id });
    await expectOk(call(PEOPLE, { token: w.admin, body: elsewhere }), 201);
    expectProblem(await call(`${PEOPLE}/${elsewhere.id}`, { token: w.member.token }), 404, "NOT_FOUND");
    expectProblem(await call(`${PEOPLE}/${body.id}?project_id=${other.id}`, { token: w.member.token }), 404, "NOT_FOUND");
    expectProblem(await call(`${T}/${elsewhere.id}`, { apiKey: scoped.apiKey }), 404, "NOT_FOUND");
    expect((await expectOk(call(`${T}/${body.id}`, { apiKey: scoped.apiKey }))).json.id).toBe(task.id);
  });

  it("takes the hub's id first, and project_id holds for it too", async () => {
    expect((await expectOk(call(`${PEOPLE}/${task.id}`, { token: w.member.token }))).json.id).toBe(task.id);
    expectProblem(await call(`${PEOPLE}/${task.id}?project_id=${other.id}`, { token: w.admin }), 404, "NOT_FOUND");
  });
});

describe("a Task Response sent to complete", () => {
  const artifacts = [{ name: "draft.md", type: "text/markdown", content: "# Draft" }];
  const metadata = { model: "small-1", tokens: 1234, agent: "what the agent calls itself", startedAt: "2020-01-01T00:00:00Z" };

  it("keeps its artifacts and metadata beside the result, and answers them in the task-format response", async () => {
    const { id, clientId } = await running();
    const result = { title: "Thai Basil Chicken" };
    const done = await expectOk(byWorker(id, "/complete", { id: clientId, status: "completed", result, artifacts, metadata }));
    expect(done.json).toMatchObject({ status: "done", result, response: { artifacts, metadata } });
    const answer = await asTaskFormat(id);
    expect(answer).toMatchObject({ id: clientId, status: "completed", result, artifacts });
    // The agent's own metadata is kept; what the hub answers itself (times, agent) is the hub's.
    expect(answer.metadata).toEqual({
      model: "small-1",
      tokens: 1234,
      startedAt: done.json.started_at,
      completedAt: done.json.completed_at,
      duration_ms: expect.any(Number),
      agent: w.worker.name,
      retryCount: 0,
    });
    // The same response again changes nothing; other artifacts are another result.
    expect((await expectOk(byWorker(id, "/complete", { id: clientId, status: "completed", result, artifacts, metadata }))).json.response).toEqual({
      artifacts,
      metadata,
    });
    expectProblem(await byWorker(id, "/complete", { result, artifacts: [] }), 409, "RESULT_CONFLICT");
  });

  it("takes a failed Task Response as a failure with its error block, on the agents' and the daemon's endpoints", async () => {
    const error = { code: "SITE_DOWN", message: "The recipe site is down", details: { status: 503 }, recoverable: true };
    const a = await running();
    const failed = await expectOk(byWorker(a.id, "/complete", { id: a.clientId, status: "failed", error, metadata }));
    expect(failed.json).toMatchObject({ status: "failed", error, error_code: "SITE_DOWN", response: { metadata } });
    expect(await asTaskFormat(a.id)).toMatchObject({ id: a.clientId, status: "failed", error, artifacts: [] });
    const b = await running();
    await expectOk(cli(w.worker.apiKey, "POST", `/api/v1/servers/tasks/${b.id}/complete`, { status: "failed", error }));
    expect(await read(b.id)).toMatchObject({ status: "failed", error, error_code: "SITE_DOWN", response: null });
  });

  it("is cleared by a retry, with the result", async () => {
    const { id } = await running();
    await expectOk(byWorker(id, "/complete", { status: "failed", error: { code: "X", message: "no" }, artifacts }));
    const retried = await expectOk(call(`${PEOPLE}/${id}/retry`, { token: w.member.token, body: {} }));
    expect(retried.json).toMatchObject({ status: "pending", response: null, error: null });
  });

  it.each([
    [{ status: "failed" }, "error", "is required when status is failed"],
    [{ status: "failed", error: { code: "X", message: "m" }, result: { partial: true } }, "result", "only a completed Task Response has a result"],
    [{ result: "ok", error: { code: "X", message: "m" } }, "error", "only a failed Task Response (status: failed) has an error"],
    [{ status: "in_progress", result: "ok" }, "status", expect.stringContaining("completed or failed")],
    [{ status: "failed", error: { message: "no code" } }, "error.code", expect.any(String)],
    [{ result: "ok", artifacts: { name: "a" } }, "artifacts", "must be an array"],
    [{ result: "ok", metadata: ["a"] }, "metadata", "must be an object"],
    [{ result: "ok", id: "somebody-else" }, "id", expect.stringContaining("is not this task's id")],
  ])("refuses %j naming %s, leaving the task running", async (body, path, message) => {
    const { id } = await running();
    const reply = await byWorker(id, "/complete", body);
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors).toContainEqual({ path, message });
    expect((await read(id)).status).toBe("running");
  });

  it("may name its task by the hub's id", async () => {
    const { id } = await running();
    expect((await expectOk(byWorker(id, "/complete", { id, status: "completed", result: "ok" }))).json.status).toBe("done");
  });
});

describe("subtasks (context.parentTaskId)", () => {
  it("join their parent's trace, the parent named by its request id or the hub's id", async () => {
    const parentBody = request();
    const parent = await created(parentBody);
    for (const parentTaskId of [parentBody.id, parent.id]) {
      const sub = await created(request({ context: { parentTaskId } }));
      expect(sub.trace_id).toBe(parent.trace_id);
      expect(sub.traceparent).not.toBe(parent.traceparent);
      expect(sub.context).toEqual({ parentTaskId });
      expect(sub.warnings).toEqual([]);
    }
  });

  it("keep a traceparent of the parent's trace, and give way to the parent's over another one, with a warning", async () => {
    const parent = await created(request());
    const same = `00-${parent.trace_id}-00f067aa0ba902b7-01`;
    expect((await expectOk(create(request({ context: { parentTaskId: parent.id } }), { traceparent: same }), 201)).json.traceparent).toBe(same);
    const foreign = await expectOk(
      create(request({ context: { parentTaskId: parent.id } }), { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" }),
      201,
    );
    expect(foreign.json.trace_id).toBe(parent.trace_id);
    expect(foreign.json.warnings).toEqual([expect.stringContaining("joins its parent's trace")]);
  });

  it("keep a parent this project does not hold as an external reference, with a warning, joining no trace", async () => {
    const elsewhere = await createProject(w.admin, "Another parent's project");
    const foreignParent = (await expectOk(call(PEOPLE, { token: w.admin, body: request({ project_id: elsewhere.id }) }), 201)).json;
    const header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    for (const parentTaskId of [foreignParent.id, foreignParent.client_id, "task-of-another-hub"]) {
      const body = request({ context: { parentTaskId } });
      const reply = await expectOk(call(PEOPLE, { token: w.admin, body, headers: { traceparent: header } }), 201);
      expect(reply.json.context).toEqual({ parentTaskId });
      expect(reply.json.warnings).toEqual([expect.stringContaining("kept as an external reference")]);
      // Its own trace, not the foreign parent's: the request's traceparent holds.
      expect(reply.json.traceparent).toBe(header);
      expect(reply.json.trace_id).not.toBe(foreignParent.trace_id);
      // The same request again is the same task.
      expect((await expectOk(call(PEOPLE, { token: w.admin, body, headers: { traceparent: header } }))).json.id).toBe(reply.json.id);
    }
  });
});

describe("fields the seed does not name (compute protocol: extended by optional fields)", () => {
  it("keeps a top-level field it does not know in extensions, with a warning, and answers a repeat as the same request", async () => {
    const body = request({ deadline: "2026-03-01T00:00:00Z", budget: { usd: 2 }, extra: null });
    const task = await created(body);
    expect(task.extensions).toEqual({ deadline: "2026-03-01T00:00:00Z", budget: { usd: 2 } });
    expect(task.warnings).toEqual([
      "deadline is not a field of a task-format request: kept as sent, in the task's extensions",
      "budget is not a field of a task-format request: kept as sent, in the task's extensions",
    ]);
    expect((await read(task.id)).extensions).toEqual({ deadline: "2026-03-01T00:00:00Z", budget: { usd: 2 } });
    expect((await expectOk(create(body))).json.id).toBe(task.id);
    const other = await create({ ...body, budget: { usd: 3 } });
    expectProblem(other, 409, "TASK_ID_TAKEN");
    // A request without any has none.
    expect((await created(request())).extensions).toBeNull();
  });

  it("still refuses a field of the core create body by name, and extensions past 64 KiB naming the largest, creating nothing", async () => {
    const spec = request({ spec: "Do it", requirements: { languages: ["go"] } });
    const refused = await create(spec);
    expectProblem(refused, 422, "VALIDATION_FAILED");
    expect(refused.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(["requirements", "spec"]);
    const huge = request({ notes: "n".repeat(70_000), tag: "small" });
    const tooBig = await create(huge);
    expectProblem(tooBig, 422, "VALIDATION_FAILED");
    expect(tooBig.json.errors).toEqual([{ path: "notes", message: expect.stringContaining("65536 bytes") }]);
    for (const body of [spec, huge]) expectProblem(await call(`${PEOPLE}/${body.id}?project_id=${w.project.id}`, { token: w.admin }), 404, "NOT_FOUND");
  });
});

describe("the delegation chain (routing.delegationChain)", () => {
  it("gains the agent routing.target gives the task to, once", async () => {
    const routed = await created(request({ routing: { source: "orchestrator", target: "worker", delegationChain: ["orchestrator"] } }));
    expect(routed.routing).toEqual({ source: "orchestrator", target: "worker", delegationChain: ["orchestrator", "worker"] });
    const already = await created(request({ routing: { target: "worker", delegationChain: ["orchestrator", "worker"] } }));
    expect(already.routing.delegationChain).toEqual(["orchestrator", "worker"]);
  });

  it("gains the agent a person assigns it to; a core task gets no routing", async () => {
    const task = await created(request({ routing: null }));
    const assigned = await expectOk(call(`${PEOPLE}/${task.id}/assign`, { token: w.member.token, body: { server_name: w.worker.name } }));
    expect(assigned.json.routing).toEqual({ delegationChain: [w.worker.name] });
    const core = (await expectOk(call(PEOPLE, { token: w.member.token, body: { title: "Core", project_id: w.project.id } }), 201)).json;
    expect((await expectOk(call(`${PEOPLE}/${core.id}/assign`, { token: w.member.token, body: { server_name: w.worker.name } }))).json.routing).toBeNull();
  });

  it("gains the server auto-assignment gives the task to: by the seed's auto-assign and by the hub's own offer", async () => {
    const project = await createProject(w.admin, "Cobol routing");
    const member = await createUser(w.admin, "member");
    await addMember(w.admin, project.id, member.id);
    const cobol = await registerAgent(w.admin, `cobol-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
    await openSession(cobol.apiKey, project.id, "cobol");
    const requirements = { $schema: "orchestratia/requirements/v1", capabilities: ["cobol"] };
    const newTask = async () => {
      const task = (await expectOk(call(PEOPLE, { token: member.token, body: request({ project_id: project.id }) }), 201)).json;
      await expectOk(call(`${PEOPLE}/${task.id}`, { method: "PUT", token: member.token, body: { requirements } }));
      return task.id as string;
    };
    // Offered when the server says it can do COBOL (one statement for every task offered).
    const offered = await newTask();
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: cobol.apiKey, body: { capabilities: { tools: ["cobol"], max_concurrent_tasks: 10 } } }));
    const assigned = await until(
      () => call(`${PEOPLE}/${offered}`, { token: member.token }).then((r) => r.json),
      (t) => t.status === "assigned",
      "the task offered to the COBOL server",
    );
    expect(assigned.routing).toEqual({ source: "orchestrator", delegationChain: ["orchestrator", cobol.name] });
    // The seed's auto-assign, by hand.
    const byHand = await newTask();
    const chosen = await call(`${PEOPLE}/${byHand}/auto-assign`, { method: "POST", token: member.token });
    const task = (await expectOk(call(`${PEOPLE}/${byHand}`, { token: member.token }))).json;
    expect([chosen.status, task.status], chosen.text).toEqual([200, "assigned"]);
    expect(task.routing.delegationChain).toEqual(["orchestrator", cobol.name]);
  });
});

describe("the type is the capability it needs (routing without routing.target)", () => {
  it("goes to a server offering its type as a tool or tag, auto-assigned as usual, the chain naming that server", async () => {
    const project = await createProject(w.admin, "Capability routing");
    const translator = await registerAgent(w.admin, `translator-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: translator.apiKey, body: { capabilities: { tags: ["Translate_Text"], max_concurrent_tasks: 2 } } }));
    const tf = (extra: Record<string, unknown>) => request({ project_id: project.id, type: "translate_text", ...extra });

    const routed = (await expectOk(call(PEOPLE, { token: w.admin, body: tf({}) }), 201)).json;
    expect(routed.requirements).toEqual({ capabilities: ["translate_text"] });
    expect(routed).toMatchObject({ status: "assigned", assigned_server_id: translator.id });
    expect(routed.routing.delegationChain).toEqual(["orchestrator", translator.name]);

    // A type nobody offers waits, and says why.
    const unmatched = (await expectOk(call(PEOPLE, { token: w.admin, body: tf({ type: "carve_wood" }) }), 201)).json;
    expect(unmatched).toMatchObject({ status: "pending", requirements: { capabilities: ["carve_wood"] }, assigned_server_id: null });
    const why = await expectOk(call(`${PEOPLE}/${unmatched.id}/matching-agents`, { token: w.admin }));
    expect(why.json.servers.find((m: any) => m.server_id === translator.id).reasons).toEqual(["missing capabilities: carve_wood (disqualified)"]);

    // routing.target names the agent itself: no requirements are made of the type.
    const session = await openSession(translator.apiKey, project.id, "by-name");
    const targeted = (await expectOk(call(PEOPLE, { token: w.admin, body: tf({ type: "carve_wood", routing: { target: "by-name" } }) }), 201)).json;
    expect(targeted).toMatchObject({ requirements: null, status: "assigned", target_session_id: session });
  });
});
