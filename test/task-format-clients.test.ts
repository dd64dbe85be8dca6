/**
 * What a client following the seeds does and expects, end to end: nulls for what it does not set, its own request
 * ids to check status by, whole Task Responses sent to complete, subtasks and the delegation chain.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, expectProblem } from "./helpers";
import { openSocket } from "./sockets";
import { cli, createWorld, expectOk, T, type World } from "./task-world";

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
