/**
 * The A2A front door, driven by the A2A SDK's own client: a project is one agent whose card lists what its live
 * servers can do; a message becomes an ordinary hub task, routed to the best agent, worked through the agent API.
 */
import { TaskState, type Message, type StreamResponse, type Task } from "@a2a-js/sdk";
import { parseLegacyAgentCard } from "@a2a-js/sdk/compat/v0_3/client";
import { beforeAll, describe, expect, it } from "vitest";
import { a2aBase, a2aClient, data, fetchAs, rpc, text, userMessage } from "./a2a-client";
import { call, createProject, fetchUrl, until } from "./helpers";
import { cli, createWorld, expectOk, T, type World } from "./task-world";

const capable = (languages: string[]) => ({ $schema: "orchestratia/capabilities/v1", languages, max_concurrent_tasks: 5 });
const configuration = (more: { returnImmediately?: boolean; historyLength?: number } = {}) => ({
  acceptedOutputModes: [],
  taskPushNotificationConfig: undefined,
  returnImmediately: true,
  ...more,
});
const send = (message: Message, more: { returnImmediately?: boolean; historyLength?: number } = {}) => ({
  tenant: "",
  message,
  configuration: configuration(more),
  metadata: undefined,
});

let w: World;
let person: string;

beforeAll(async () => {
  w = await createWorld("A2A");
  person = w.member.token;
  // The worker writes Rust; the orchestrator TypeScript.
  await expectOk(call("/api/v1/servers/heartbeat", { apiKey: w.worker.apiKey, body: { capabilities: capable(["rust"]) } }));
  await expectOk(call("/api/v1/servers/heartbeat", { apiKey: w.orchestrator.apiKey, body: { capabilities: capable(["typescript"]) } }));
});

const asTask = (r: Message | Task) => {
  expect("status" in r, JSON.stringify(r)).toBe(true);
  return r as Task;
};

/** The worker takes its task through to done, handing over a contract. */
async function workerCompletes(id: string, summary = "Parsed it") {
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
  await expectOk(
    cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, {
      result: {
        $schema: "orchestratia/task-result/v1",
        summary,
        contracts: { report: { status: "fulfilled", data: { lines: 42 } }, note: { data: "all good" } },
      },
    }),
  );
}

describe("the agent card", () => {
  it("lists one skill per capability of the project's live servers, and follows them as they change", async () => {
    const client = await a2aClient(w.project.id, person);
    const card = await client.getAgentCard();
    expect(card.name).toBe(w.project.name);
    expect(card.skills.map((s) => s.id)).toEqual(["rust", "typescript"]);
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: false });
    expect(card.supportedInterfaces).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ url: a2aBase(w.project.id), protocolBinding: "JSONRPC", protocolVersion: "1.0" }),
        expect.objectContaining({ url: a2aBase(w.project.id), protocolBinding: "JSONRPC", protocolVersion: "0.3" }),
      ]),
    );
    expect(Object.keys(card.securitySchemes)).toEqual(["bearer"]);

    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: w.orchestrator.apiKey, body: { capabilities: capable(["typescript", "elixir"]) } }));
    const again = await (await a2aClient(w.project.id, w.worker.apiKey)).getAgentCard();
    expect(again.skills.map((s) => s.id)).toEqual(["elixir", "rust", "typescript"]);
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: w.orchestrator.apiKey, body: { capabilities: capable(["typescript"]) } }));
  });

  it("is the 0.3 card for a client that names no version, which the SDK's compatibility layer reads", async () => {
    const res = await fetchAs(person)(`${a2aBase(w.project.id)}.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Vary")).toContain("A2A-Version");
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ protocolVersion: "0.3.0", url: a2aBase(w.project.id), preferredTransport: "JSONRPC" });
    const parsed = parseLegacyAgentCard(body);
    expect(parsed.skills.map((s) => s.id)).toEqual(["rust", "typescript"]);
  });

  it("is checked again on every read, so a cached card never hides a skill that came or went", async () => {
    const url = `${a2aBase(w.project.id)}.well-known/agent-card.json`;
    const first = await fetchAs(person)(url, { headers: { "A2A-Version": "1.0" } });
    expect(first.headers.get("Cache-Control")).toBe("private, no-cache");
    const etag = first.headers.get("ETag")!;
    expect((await fetchAs(person)(url, { headers: { "A2A-Version": "1.0", "If-None-Match": etag } })).status).toBe(304);
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: w.orchestrator.apiKey, body: { capabilities: capable(["typescript", "zig"]) } }));
    const changed = await fetchAs(person)(url, { headers: { "A2A-Version": "1.0", "If-None-Match": etag } });
    expect(changed.status).toBe(200);
    expect(((await changed.json()) as { skills: { id: string }[] }).skills.map((s) => s.id)).toContain("zig");
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: w.orchestrator.apiKey, body: { capabilities: capable(["typescript"]) } }));
  });

  it("is refused without credentials, and not found for a project the caller cannot see", async () => {
    const anonymous = await call(`/a2a/${w.project.id}/.well-known/agent-card.json`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("WWW-Authenticate")).toContain("Bearer");
    const other = await createProject(w.admin, "Elsewhere");
    const hidden = await fetchAs(person)(`${a2aBase(other.id)}.well-known/agent-card.json`);
    expect(hidden.status).toBe(404);
  });
});

describe("a message", () => {
  it("becomes a task routed by skill to the agent that has it, which the client sees completed with its contracts as artifacts", async () => {
    const client = await a2aClient(w.project.id, person);
    const message = userMessage([text("Parse the access logs\nCount the lines per status.")], { metadata: { skills: ["rust"] } });
    const sent = asTask(await client.sendMessage(send(message)));
    expect(sent.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(sent.contextId).toMatch(/^[0-9a-f-]{36}$/);

    // An ordinary task everywhere else: on the board, to the CLI.
    const hub = await expectOk(call(`/api/v1/tasks/${sent.id}`, { token: w.admin }));
    expect(hub.json).toMatchObject({
      title: "Parse the access logs",
      spec: "Parse the access logs\nCount the lines per status.",
      status: "assigned",
      assigned_server_name: w.worker.name,
      client_id: message.messageId,
      context: { conversationId: sent.contextId },
      routing: { source: "a2a" },
      requirements: { capabilities: ["rust"] },
    });

    await workerCompletes(sent.id);
    const done = await client.getTask({ tenant: "", id: sent.id });
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.status?.message?.parts[0]?.content).toEqual({ $case: "text", value: "Parsed it" });
    expect(done.artifacts.map((a) => [a.artifactId, a.description, a.parts[0]?.content])).toEqual([
      ["report", "fulfilled", { $case: "data", value: { lines: 42 } }],
      ["note", "fulfilled", { $case: "text", value: "all good" }],
    ]);
    expect(done.history[0]?.messageId).toBe(message.messageId);
  });

  it("hands over a contract held in a DataRef with a download URL, as the REST API does", async () => {
    const client = await a2aClient(w.project.id, person);
    const task = asTask(await client.sendMessage(send(userMessage([text("Big output")], { metadata: { skills: ["rust"] } }))));
    const bytes = new TextEncoder().encode("line 1\nline 2\n");
    const made = await expectOk(
      call("/api/v1/server/datarefs", { apiKey: w.worker.apiKey, body: { project_id: w.project.id, content_type: "text/plain", size: bytes.byteLength } }),
      201,
    );
    expect((await fetchUrl(made.json.upload.url, { method: "PUT", body: bytes })).status).toBe(200);
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${task.id}/start`));
    const pointer = { $dataref: made.json.dataref.id, size: bytes.byteLength, content_type: "text/plain" };
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${task.id}/complete`, { result: { summary: "Logged", contracts: { log: { data: pointer } } } }));
    const done = await client.getTask({ tenant: "", id: task.id });
    const part = done.artifacts[0]!.parts[0]!.content as { $case: "data"; value: { $dataref: string; url: string } };
    expect(part.value.$dataref).toBe(made.json.dataref.id);
    expect(await (await fetchUrl(part.value.url)).text()).toBe("line 1\nline 2\n");
  });

  it("sent again with the same id answers the same task; other content under that id is refused", async () => {
    const client = await a2aClient(w.project.id, person);
    const message = userMessage([text("Only once")]);
    const first = asTask(await client.sendMessage(send(message)));
    const again = asTask(await client.sendMessage(send(message)));
    expect(again.id).toBe(first.id);
    await expect(client.sendMessage(send({ ...message, parts: [text("Something else")] }))).rejects.toThrow(/already/i);
  });

  it("waits, when the client blocks, until the agent finishes", async () => {
    const client = await a2aClient(w.project.id, person);
    const sending = client.sendMessage(send(userMessage([text("Blocking work")], { metadata: { skills: ["rust"] } }), { returnImmediately: false }));
    const id = await until(
      async () =>
        (await expectOk(call(`/api/v1/tasks?project_id=${w.project.id}&status=assigned`, { token: w.admin }))).json.tasks.find(
          (t: { title: string }) => t.title === "Blocking work",
        )?.id,
      (found) => Boolean(found),
      "the task to be assigned",
    );
    await workerCompletes(id, "Done while you waited");
    const answered = asTask(await sending);
    expect(answered.id).toBe(id);
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("answers a blocking send as the task is once the wait is over, when its agent has not finished", async () => {
    const client = await a2aClient(w.project.id, person);
    const began = Date.now();
    const answered = asTask(
      await client.sendMessage(send(userMessage([text("Nobody works this yet")], { metadata: { skills: ["rust"] } }), { returnImmediately: false })),
    );
    // The tests' hub waits 2 s (A2A_BLOCKING_WAIT_SECONDS).
    expect(Date.now() - began).toBeGreaterThanOrEqual(1900);
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect((await expectOk(call(`/api/v1/tasks/${answered.id}`, { token: w.admin }))).json.status).toBe("assigned");
  });

  it("sent by many at once with one id makes one task", async () => {
    const client = await a2aClient(w.project.id, person);
    const message = userMessage([text("Sent thirty times at once")]);
    const answers = await Promise.all(Array.from({ length: 30 }, () => client.sendMessage(send(message))));
    expect(new Set(answers.map((a) => asTask(a).id)).size).toBe(1);
    const listed = await expectOk(call(`/api/v1/tasks?project_id=${w.project.id}&limit=200`, { token: w.admin }));
    expect(listed.json.tasks.filter((t: { client_id: string | null }) => t.client_id === message.messageId)).toHaveLength(1);
  });

  it("streams submitted, working, the artifacts and completed, in that order", async () => {
    const client = await a2aClient(w.project.id, person);
    const stream = client.sendMessageStream(send(userMessage([text("Streamed work")], { metadata: { skills: ["rust"] } })));
    const seen: string[] = [];
    for await (const event of stream) {
      const p = event.payload!;
      if (p.$case === "task") {
        seen.push(`task:${TaskState[p.value.status!.state]}`);
        await expectOk(cli(w.worker.apiKey, "POST", `${T}/${p.value.id}/start`));
      } else if (p.$case === "statusUpdate") {
        seen.push(`status:${TaskState[p.value.status!.state]}`);
        if (p.value.status!.state === TaskState.TASK_STATE_WORKING)
          await expectOk(
            cli(w.worker.apiKey, "POST", `${T}/${p.value.taskId}/complete`, { result: { summary: "Streamed", contracts: { out: { data: { ok: true } } } } }),
          );
      } else if (p.$case === "artifactUpdate") seen.push(`artifact:${p.value.artifact!.artifactId}`);
    }
    expect(seen).toEqual(["task:TASK_STATE_SUBMITTED", "status:TASK_STATE_WORKING", "artifact:out", "status:TASK_STATE_COMPLETED"]);
  });

  it("comes back as input required when the agent asks, and a follow-up message answers the question", async () => {
    const client = await a2aClient(w.project.id, person);
    const task = asTask(await client.sendMessage(send(userMessage([text("Needs a decision")], { metadata: { skills: ["rust"] } }))));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${task.id}/start`));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${task.id}/help`, { question: "Which port?", intervention_type: "question" }));
    const asking = await client.getTask({ tenant: "", id: task.id });
    expect(asking.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(asking.status?.message?.parts[0]?.content).toEqual({ $case: "text", value: "Which port?" });

    const answered = asTask(await client.sendMessage(send(userMessage([text("8443")], { taskId: task.id, contextId: task.contextId }))));
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const interventions = await expectOk(cli(w.worker.apiKey, "GET", `/api/v1/server/interventions?task_id=${task.id}`));
    expect(interventions.json[0]).toMatchObject({ status: "responded", response: "8443" });
    expect(answered.history.slice(-2).map((m) => m.parts[0]?.content)).toEqual([
      { $case: "text", value: "Which port?" },
      { $case: "text", value: "8443" },
    ]);
    // A message on a finished task is refused.
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${task.id}/complete`, { result: "Port chosen" }));
    await expect(client.sendMessage(send(userMessage([text("More?")], { taskId: task.id })))).rejects.toThrow(/finished task/);
  });

  it("takes a data part holding a task spec as the task's structured spec, and keeps the message as the task's payload", async () => {
    const client = await a2aClient(w.project.id, person);
    const spec = { $schema: "orchestratia/task-spec/v1", requirements: [{ description: "Ship the parser", priority: "must" }] };
    const task = asTask(await client.sendMessage(send(userMessage([data(spec)]))));
    const hub = await expectOk(call(`/api/v1/tasks/${task.id}`, { token: w.admin }));
    expect(hub.json).toMatchObject({ title: "Ship the parser", spec: "", structured_spec: spec });
    expect(hub.json.payload).toMatchObject({ messageId: expect.any(String), parts: [{ data: spec }] });
  });

  it("answers the question put to people, not one the agent asked another agent, and acts once when sent again", async () => {
    const client = await a2aClient(w.project.id, person);
    const task = asTask(await client.sendMessage(send(userMessage([text("Two questions")], { metadata: { skills: ["rust"] } }))));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${task.id}/start`));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${task.id}/help`, { question: "Which region?" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${task.id}/help`, { question: "Did you run the migration?", target_session_id: w.orchestratorSession }));
    const asking = await client.getTask({ tenant: "", id: task.id });
    expect(asking.status?.message?.parts[0]?.content).toEqual({ $case: "text", value: "Which region?" });
    expect(asking.history.map((m) => m.parts[0]?.content)).not.toContainEqual({ $case: "text", value: "Did you run the migration?" });

    const answer = userMessage([text("eu-west-1")], { taskId: task.id });
    await client.sendMessage(send(answer));
    const retried = asTask(await client.sendMessage(send(answer)));
    expect(retried.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const asked = await expectOk(cli(w.worker.apiKey, "GET", `/api/v1/server/interventions?task_id=${task.id}`));
    const byQuestion = Object.fromEntries(
      asked.json.map((i: { question: string; status: string; response: string | null }) => [i.question, [i.status, i.response]]),
    );
    expect(byQuestion).toEqual({ "Which region?": ["responded", "eu-west-1"], "Did you run the migration?": ["pending", null] });
    // The retry was not taken as a note either.
    const notes = await expectOk(cli(w.worker.apiKey, "GET", `${T}/${task.id}/notes`));
    expect(notes.json.map((n: { content: string }) => n.content)).not.toContain("eu-west-1");
  });

  it("is cancelled on request; a finished task cannot be", async () => {
    const client = await a2aClient(w.project.id, person);
    const task = asTask(await client.sendMessage(send(userMessage([text("Cancel me")]))));
    const cancelled = await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await expectOk(call(`/api/v1/tasks/${task.id}`, { token: w.admin }))).json.status).toBe("cancelled");
    const again = await rpc(w.project.id, person, { jsonrpc: "2.0", id: 7, method: "CancelTask", params: { id: task.id } });
    expect(again.body.error?.code).toBe(-32002);
  });
});

describe("listing and following tasks", () => {
  it("lists a conversation's tasks, paged and filtered by state", async () => {
    const client = await a2aClient(w.project.id, person);
    const contextId = crypto.randomUUID();
    const made: string[] = [];
    for (const n of [1, 2, 3]) made.push(asTask(await client.sendMessage(send(userMessage([text(`Part ${n}`)], { contextId })))).id);
    await client.cancelTask({ tenant: "", id: made[0]!, metadata: undefined });
    const list = (more: object) =>
      client.listTasks({ tenant: "", contextId, status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: "", statusTimestampAfter: undefined, ...more });
    // Newest status first: the cancelled task changed last.
    const first = await list({ pageSize: 2 });
    expect(first.totalSize).toBe(3);
    expect(first.tasks.map((t) => t.id)).toEqual([made[0], made[2]]);
    const second = await list({ pageSize: 2, pageToken: first.nextPageToken });
    expect(second.tasks.map((t) => t.id)).toEqual([made[1]]);
    expect(second.nextPageToken).toBe("");
    const canceled = await list({ status: TaskState.TASK_STATE_CANCELED });
    expect(canceled.tasks.map((t) => t.id)).toEqual([made[0]]);
  });

  it("resubscribed, shows the task as it is, then each change once through its questions to the end", async () => {
    const client = await a2aClient(w.project.id, w.worker.apiKey);
    const task = asTask(await client.sendMessage(send(userMessage([text("Followed")], { metadata: { skills: ["rust"] } }))));
    // The first subscription sees the task start, then is dropped; the agent finishes meanwhile.
    const first = client.resubscribeTask({ tenant: "", id: task.id });
    const seen: StreamResponse[] = [];
    for await (const event of first) {
      seen.push(event);
      if (event.payload?.$case === "task") await expectOk(cli(w.worker.apiKey, "POST", `${T}/${task.id}/start`));
      if (event.payload?.$case === "statusUpdate") break;
    }
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${task.id}/help`, { question: "Proceed?" }));
    // The question came while no one listened: the new subscription starts from the task as it is, then follows it
    // through the answer to the end, each change once.
    const second: string[] = [];
    for await (const event of client.resubscribeTask({ tenant: "", id: task.id })) {
      const p = event.payload!;
      if (p.$case === "task") {
        second.push(`task:${TaskState[p.value.status!.state]}`);
        // A person answers (an agent may answer only another agent's questions).
        await (await a2aClient(w.project.id, person)).sendMessage(send(userMessage([text("Yes")], { taskId: task.id })));
      } else if (p.$case === "statusUpdate") {
        second.push(`status:${TaskState[p.value.status!.state]}`);
        if (p.value.status!.state === TaskState.TASK_STATE_WORKING)
          await expectOk(cli(w.worker.apiKey, "POST", `${T}/${task.id}/complete`, { result: { summary: "Went ahead", contracts: { go: { data: 1 } } } }));
      } else second.push(p.$case);
    }
    expect(seen.map((e) => e.payload?.$case)).toEqual(["task", "statusUpdate"]);
    expect(second).toEqual(["task:TASK_STATE_INPUT_REQUIRED", "status:TASK_STATE_WORKING", "artifactUpdate", "status:TASK_STATE_COMPLETED"]);
  });
});

describe("refusals", () => {
  it("answers unknown methods, bad params, other projects' tasks and unknown versions with A2A's JSON-RPC errors", async () => {
    const p = w.project.id;
    expect((await rpc(p, person, { jsonrpc: "2.0", id: 1, method: "FlyAway", params: {} })).body.error?.code).toBe(-32601);
    // Not found whatever its params: left out (JSON-RPC allows it), a list, or nested too deep; through either binding.
    const deep = JSON.parse(`${"{\"x\":".repeat(100)}{}${"}".repeat(100)}`);
    for (const params of [undefined, [], deep]) {
      for (const version of [{ "A2A-Version": "1.0" }, {}] as Record<string, string>[]) {
        const answer = await rpc(p, person, { jsonrpc: "2.0", id: 6, method: "FlyAway", ...(params === undefined ? {} : { params }) }, version);
        expect(answer.body.error, JSON.stringify({ params: params === deep ? "deep" : params, version })).toEqual({ code: -32601, message: "Method not found: FlyAway" });
      }
    }
    expect((await rpc(p, person, { jsonrpc: "2.0", id: 2, method: "GetTask", params: [] })).body.error?.code).toBe(-32602);
    expect((await rpc(p, person, { jsonrpc: "2.0", id: 3, method: "GetTask", params: { id: crypto.randomUUID() } })).body.error?.code).toBe(-32001);
    const parsing = await rpc(p, person, "{not json");
    expect([parsing.status, parsing.body.error?.code]).toEqual([400, -32700]);
    const version = await rpc(p, person, { jsonrpc: "2.0", id: 4, method: "GetTask", params: { id: crypto.randomUUID() } }, { "A2A-Version": "2.0" });
    expect(version.body.error?.code).toBe(-32009);

    // A task of another project is not found here, though the caller may see it.
    const other = await createProject(w.admin, "Other A2A");
    const otherTask = await expectOk(call("/api/v1/tasks", { token: w.admin, body: { title: "Elsewhere", project_id: other.id } }), 201);
    const foreign = await rpc(p, w.admin, { jsonrpc: "2.0", id: 5, method: "GetTask", params: { id: otherTask.json.id } });
    expect(foreign.body.error?.code).toBe(-32001);
  });

  it("refuses a message too large or without parts, writing nothing", async () => {
    const before = (await expectOk(call(`/api/v1/tasks?project_id=${w.project.id}&limit=200`, { token: w.admin }))).json.count;
    const big = userMessage([text("x".repeat(70 * 1024))]);
    const tooLarge = await rpc(w.project.id, person, {
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: { messageId: big.messageId, role: "ROLE_USER", parts: [{ text: "x".repeat(70 * 1024) }] } },
    });
    expect(tooLarge.body.error?.code).toBe(-32602);
    expect(tooLarge.body.error?.message).toMatch(/at most 65536/);
    const empty = await rpc(w.project.id, person, {
      jsonrpc: "2.0",
      id: 2,
      method: "SendMessage",
      params: { message: { messageId: "m-1", role: "ROLE_USER", parts: [] } },
    });
    expect(empty.body.error?.code).toBe(-32602);
    const huge = await rpc(w.project.id, person, {
      jsonrpc: "2.0",
      id: 3,
      method: "SendMessage",
      params: { message: { messageId: "m-2", role: "ROLE_USER", parts: [{ text: "y".repeat(300 * 1024) }] } },
    });
    expect([huge.status, huge.body.error?.code]).toEqual([413, -32602]);
    const push = await rpc(w.project.id, person, {
      jsonrpc: "2.0",
      id: 4,
      method: "CreateTaskPushNotificationConfig",
      params: { taskId: crypto.randomUUID(), url: "https://example.com/hook" },
    });
    expect(push.body.error?.code).toBe(-32003);
    expect((await expectOk(call(`/api/v1/tasks?project_id=${w.project.id}&limit=200`, { token: w.admin }))).json.count).toBe(before);
  });

  it("refuses JSON nested deeper than the REST API takes and DataRef pointers of no DataRef of the project", async () => {
    const before = (await expectOk(call(`/api/v1/tasks?project_id=${w.project.id}&limit=200`, { token: w.admin }))).json.count;
    let deep: unknown = "bottom";
    for (let i = 0; i < 100; i++) deep = [deep];
    const nested = await rpc(w.project.id, person, {
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: { messageId: "deep-1", role: "ROLE_USER", parts: [{ text: "x" }, { data: { deep } }] } },
    });
    expect(nested.body.error?.code).toBe(-32602);
    expect(nested.body.error?.message).toContain("must not nest");
    const pointer = { $dataref: crypto.randomUUID(), size: 3, sha256: "0".repeat(64), content_type: "text/plain" };
    const pointing = await rpc(w.project.id, person, {
      jsonrpc: "2.0",
      id: 2,
      method: "SendMessage",
      params: { message: { messageId: "ptr-1", role: "ROLE_USER", parts: [{ text: "x" }, { data: { input: pointer } }] } },
    });
    expect(pointing.body.error?.code).toBe(-32602);
    expect(pointing.body.error?.message).toContain("DataRef of this project");
    // Nothing was written, and the project's list still answers.
    expect((await expectOk(call(`/api/v1/tasks?project_id=${w.project.id}&limit=200`, { token: w.admin }))).json.count).toBe(before);
  });

  it("lets a viewer read but not send", async () => {
    const viewer = await call("/api/v1/users", {
      token: w.admin,
      body: { email: `viewer-${crypto.randomUUID().slice(0, 6)}@example.com`, password: "viewer-password-1", role: "viewer" },
    });
    expect(viewer.status).toBe(201);
    const token = (await call("/api/v1/auth/login", { body: { email: viewer.json.email, password: "viewer-password-1" } })).json.access_token;
    await expectOk(call(`/api/v1/projects/${w.project.id}/members`, { token: w.admin, body: { user_id: viewer.json.id } }), 201);
    const refused = await fetchAs(token)(a2aBase(w.project.id), {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: { messageId: "v-1", role: "ROLE_USER", parts: [{ text: "hi" }] } },
      }),
    });
    expect(refused.status).toBe(403);
    const listed = await rpc(w.project.id, token, { jsonrpc: "2.0", id: 2, method: "ListTasks", params: {} });
    expect(listed.body.result.tasks.length).toBeGreaterThan(0);
  });
});

describe("an A2A 0.3 client", () => {
  it("sends a message and reads the task through the SDK's compatibility layer", async () => {
    const client = await a2aClient(w.project.id, person, { legacy: true });
    const task = asTask(await client.sendMessage(send(userMessage([text("From an older client")], { metadata: { skills: ["rust"] } }))));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    await workerCompletes(task.id, "Old and new");
    const read = await client.getTask({ tenant: "", id: task.id });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(read.artifacts.map((a) => a.artifactId)).toEqual(["report", "note"]);
    // It spoke 0.3 on the wire.
    const raw = await rpc(w.project.id, person, { jsonrpc: "2.0", id: 9, method: "tasks/get", params: { id: task.id } }, {});
    expect(raw.body.result).toMatchObject({ kind: "task", id: task.id, status: { state: "completed" } });
  });
});
