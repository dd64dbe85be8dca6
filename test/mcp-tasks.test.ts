/**
 * Hub tasks as MCP tasks (the Tasks extension on 2026-07-28), driven by the extension's own client package: a task
 * made by a tool call is the board's task and the A2A task of the same id; the agent works it with the CLI's requests;
 * tasks/get follows it to its result, tasks/update answers its questions and reviews its plan, tasks/cancel ends it.
 */
import { TaskState } from "@a2a-js/sdk";
import { beforeAll, describe, expect, it } from "vitest";
import { a2aClient } from "./a2a-client";
import { call, registerAgent } from "./helpers";
import { modernPost, taskSession, TASKS } from "./mcp-client-v2";
import { cli, createWorld, expectOk, openSession, T, worldUnder, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("MCP tasks");
});

const person = () => ({ Authorization: `Bearer ${w.admin}` });
const RESULT = {
  $schema: "orchestratia/task-result/v1",
  summary: "Designed the API",
  contracts: { api_schema: { status: "fulfilled", data: { endpoints: ["/users"] } } },
};

/** A task made through MCP by the person's task-following client: its id, as the extension's execution names it. */
async function createdThroughMcp(session: Awaited<ReturnType<typeof taskSession>>["session"], world = w, title = "Through MCP") {
  const execution = await session.callTool("create_task", { project_id: world.project.id, title });
  expect(execution.kind).toBe("task");
  return execution.handle!.taskId;
}

/** The worker's side, as the official CLI sends it: assigned to its session, then started. */
async function takenUp(id: string, world = w) {
  await expectOk(cli(world.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
  await expectOk(cli(world.worker.apiKey, "POST", `${T}/${id}/start`));
}

const hubStatus = async (id: string) => (await expectOk(call(`/api/v1/tasks/${id}`, { token: w.admin }))).json.status as string;

describe("a task made by a tool call", () => {
  it("is the board's task and A2A's: worked by the agent, it is completed for tasks/get and for A2A, with the hub's result", async () => {
    const { session } = await taskSession(person());
    const id = await createdThroughMcp(session);
    expect(await hubStatus(id)).toBe("pending");
    const task = session.task(id);
    expect((await task.snapshot()).status).toBe("working");

    await takenUp(id);
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: RESULT }));

    const seen = await task.snapshot();
    expect(seen).toMatchObject({ taskId: id, status: "completed", statusMessage: "Designed the API" });
    const outcome = await task.result();
    expect(outcome.status).toBe("completed");
    const result = (outcome as { result: { content: { text: string }[]; structuredContent: unknown; isError?: boolean } }).result;
    expect(result.isError).toBeFalsy();
    expect(result.content[0]!.text).toBe("Designed the API");
    expect(result.structuredContent).toMatchObject(RESULT);

    const a2a = await (await a2aClient(w.project.id, w.admin)).getTask({ tenant: "", id, historyLength: 0 });
    expect(a2a).toMatchObject({ id, status: { state: TaskState.TASK_STATE_COMPLETED } });
    await session.close();
  });

  it("an agent's delegated task is followed the same way, by the agent that made it", async () => {
    const { session } = await taskSession({ "X-API-Key": w.orchestrator.apiKey });
    const execution = await session.callTool("delegate_task", { session_id: w.orchestratorSession, title: "Delegated", spec: "Write the client" });
    expect(execution.kind).toBe("task");
    const id = execution.handle!.taskId;
    expect((await expectOk(call(`/api/v1/tasks/${id}`, { token: w.admin }))).json).toMatchObject({ project_id: w.project.id, spec: "Write the client" });
    await takenUp(id);
    expect((await session.task(id).snapshot()).status).toBe("working");
    await session.close();
  });

  it("a task its agent failed is completed with isError and the failure, as the extension has a tool's own errors", async () => {
    const { session } = await taskSession(person());
    const id = await createdThroughMcp(session);
    await takenUp(id);
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/fail`, { error: "The disk is full" }));
    const outcome = (await session.task(id).result()) as { status: string; result: { isError: boolean; content: { text: string }[] } };
    expect(outcome.status).toBe("completed");
    expect(outcome.result.isError).toBe(true);
    expect(outcome.result.content[0]!.text).toBe("The disk is full");
    await session.close();
  });
});

describe("questions and plans", () => {
  it("an agent's question reaches a client that answers forms, and the answer sent with tasks/update resumes the task", async () => {
    const { session } = await taskSession(person(), { answersForms: true });
    const id = await createdThroughMcp(session);
    await takenUp(id);
    const help = (await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/help`, { question: "Which database?", intervention_type: "question" }))).json;
    const task = session.task(id);
    const waiting = await task.snapshot();
    expect(waiting).toMatchObject({ status: "input_required", statusMessage: "Which database?" });
    expect(waiting.raw.inputRequests).toEqual({
      [help.intervention_id]: {
        method: "elicitation/create",
        params: { mode: "form", message: "Which database?", requestedSchema: expect.objectContaining({ required: ["answer"] }) },
      },
    });

    // Declining leaves the question open for a person elsewhere; accepting answers it.
    await task.update({ [help.intervention_id]: { action: "decline" } });
    expect(await hubStatus(id)).toBe("needs_human");
    await task.update({ [help.intervention_id]: { action: "accept", content: { answer: "Postgres" } } });
    expect(await hubStatus(id)).toBe("running");
    const answered = (await expectOk(call(`/api/v1/interventions?task_id=${id}`, { token: w.admin }))).json[0];
    expect(answered).toMatchObject({ id: help.intervention_id, status: "responded", response: "Postgres" });
    expect((await task.snapshot()).status).toBe("working");
    // Keys naming nothing this task waits on (another task's question, anything at all) are ignored, whatever they hold.
    const other = await createdThroughMcp(session, w, "Another task");
    await takenUp(other);
    const elsewhere = (await expectOk(cli(w.worker.apiKey, "POST", `${T}/${other}/help`, { question: "Elsewhere?", intervention_type: "question" }))).json;
    await task.update({ [elsewhere.intervention_id]: { action: "accept", content: { answer: "not yours" } } });
    const odd = await modernPost(
      person(),
      "tasks/update",
      { taskId: id, inputResponses: { "unknown-key": { ignored: true } } },
      { name: id, capabilities: { extensions: { [TASKS]: {} } } },
    );
    expect(((await odd.json()) as { result: { resultType: string } }).result.resultType).toBe("complete");
    expect(await hubStatus(other)).toBe("needs_human");
    // The same answer again finds nothing open and changes nothing.
    await task.update({ [help.intervention_id]: { action: "accept", content: { answer: "MySQL" } } });
    expect((await expectOk(call(`/api/v1/interventions?task_id=${id}`, { token: w.admin }))).json[0].response).toBe("Postgres");
    await session.close();
  });

  it("a client that does not answer forms reads the question in the status message and is sent no form", async () => {
    const { session } = await taskSession(person());
    const id = await createdThroughMcp(session);
    await takenUp(id);
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/help`, { question: "Ship on Friday?", intervention_type: "question" }));
    const waiting = await session.task(id).snapshot();
    expect(waiting).toMatchObject({ status: "input_required", statusMessage: "Ship on Friday?" });
    expect(waiting.raw.inputRequests).toEqual({});
    await session.close();
  });

  it("a plan under review is approved with tasks/update, and the agent starts work", async () => {
    const { session } = await taskSession(person(), { answersForms: true });
    const id = await createdThroughMcp(session);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker", require_plan: true }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/plan`, { plan: "1. read 2. write" }));
    const task = session.task(id);
    const review = await task.snapshot();
    expect(review.status).toBe("input_required");
    const key = `plan:${id}`;
    expect((review.raw.inputRequests as Record<string, { params: { message: string } }>)[key]!.params.message).toContain("1. read 2. write");
    await task.update({ [key]: { action: "accept", content: { approve: true } } });
    expect(await hubStatus(id)).toBe("running");
    await session.close();
  });
});

describe("cancelling, refusals and what a client must declare", () => {
  it("tasks/cancel cancels the hub task, and on a finished task is the same empty acknowledgement", async () => {
    const { session } = await taskSession(person());
    const id = await createdThroughMcp(session);
    const cancel = () => modernPost(person(), "tasks/cancel", { taskId: id }, { name: id, capabilities: { extensions: { [TASKS]: {} } } });
    // The acknowledgement is empty: no task fields (the SDK adds only the server's name in _meta).
    const ack = async () => ((await (await cancel()).json()) as { result: Record<string, unknown> }).result;
    const first = await ack();
    expect(first.resultType).toBe("complete");
    expect(Object.keys(first).filter((k) => k !== "_meta")).toEqual(["resultType"]);
    expect(await hubStatus(id)).toBe("cancelled");
    expect((await session.task(id).snapshot()).status).toBe("cancelled");
    expect(await ack()).toEqual(first);
    await session.close();
  });

  it("a client that does not declare the extension gets the task itself, and tasks/* need the extension (-32021)", async () => {
    const made = await modernPost(
      person(),
      "tools/call",
      { name: "create_task", arguments: { project_id: w.project.id, title: "Plain" } },
      { name: "create_task" },
    );
    const { result } = (await made.json()) as { result: { resultType?: string; structuredContent: { id: string; status: string } } };
    expect(result.resultType).toBe("complete");
    expect(result.structuredContent.status).toBe("pending");
    for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
      const res = await modernPost(person(), method, { taskId: result.structuredContent.id, inputResponses: {} }, { name: result.structuredContent.id });
      expect(((await res.json()) as { error: { code: number } }).error.code, method).toBe(-32021);
    }
    expect(await hubStatus(result.structuredContent.id)).toBe("pending");
  });

  it("a task the caller cannot see is unknown (-32602) to read, answer or cancel, and stays as it was", async () => {
    const { session } = await taskSession(person());
    const id = await createdThroughMcp(session);
    const outsider = await registerAgent(w.admin, `outsider-${crypto.randomUUID().slice(0, 6)}`, {
      project_ids: [(await worldUnder(w.admin, "Elsewhere")).project.id],
    });
    const declared = { capabilities: { extensions: { [TASKS]: {} } }, name: id };
    for (const method of ["tasks/get", "tasks/cancel"]) {
      const res = await modernPost({ "X-API-Key": outsider.apiKey }, method, { taskId: id }, declared);
      expect(((await res.json()) as { error: { code: number; message: string } }).error, method).toMatchObject({ code: -32602, message: `Unknown task ${id}` });
    }
    const unknown = crypto.randomUUID();
    const res = await modernPost(person(), "tasks/get", { taskId: unknown }, { ...declared, name: unknown });
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32602);
    expect(await hubStatus(id)).toBe("pending");
    await session.close();
  });

  it("a viewer follows a task but its answers and cancels are refused as the REST API refuses them", async () => {
    const { session } = await taskSession(person());
    const id = await createdThroughMcp(session);
    const viewer = (
      await expectOk(
        call("/api/v1/users", { token: w.admin, body: { email: `v-${crypto.randomUUID()}@example.com`, password: "password-viewer-1", role: "viewer" } }),
        201,
      )
    ).json;
    await expectOk(call(`/api/v1/projects/${w.project.id}/members`, { token: w.admin, body: { user_id: viewer.id } }), 201);
    const token = (await expectOk(call("/api/v1/auth/login", { body: { email: viewer.email, password: "password-viewer-1" } }))).json.access_token as string;
    const declared = { capabilities: { extensions: { [TASKS]: {} } }, name: id };
    const read = await modernPost({ Authorization: `Bearer ${token}` }, "tasks/get", { taskId: id }, declared);
    expect(((await read.json()) as { result: { status: string } }).result.status).toBe("working");
    const cancel = await modernPost({ Authorization: `Bearer ${token}` }, "tasks/cancel", { taskId: id }, declared);
    expect(((await cancel.json()) as { error: { code: number; data: { code: string } } }).error).toMatchObject({ code: -32602, data: { code: "FORBIDDEN" } });
    expect(await hubStatus(id)).toBe("pending");
    await session.close();
  });
});

describe("on another shard", () => {
  it("a project on DB_1 serves its tasks the same way", async () => {
    const project = (await expectOk(call("/api/v1/projects", { token: w.admin, body: { name: "MCP on a shard", shard: "DB_1" } }), 201)).json as { id: string };
    const worker = await registerAgent(w.admin, `shard-worker-${crypto.randomUUID().slice(0, 6)}`);
    await openSession(worker.apiKey, project.id, "worker");
    const { session } = await taskSession(person());
    const execution = await session.callTool("create_task", { project_id: project.id, title: "Sharded" });
    const id = execution.handle!.taskId;
    await expectOk(cli(worker.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await expectOk(cli(worker.apiKey, "POST", `${T}/${id}/start`));
    await expectOk(cli(worker.apiKey, "POST", `${T}/${id}/complete`, { result: RESULT }));
    expect((await session.task(id).snapshot()).status).toBe("completed");
    await session.close();
  });
});
