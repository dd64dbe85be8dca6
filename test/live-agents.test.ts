/** Agent sockets speaking seeds/agent-orchestrator-messages.md, with real WebSockets in workerd. */
import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createProject, registerAgent } from "./helpers";
import { dashboard, isEvent, openSocket, type TestSocket } from "./sockets";
import { cli, createWorld, expectOk, newTask, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Agents");
});

const agentSocket = (apiKey?: string, projectId = w.project.id) => openSocket(`/api/v1/projects/${projectId}/agent-ws`, apiKey ? { "X-API-Key": apiKey } : {});
const request = (s: TestSocket, type: string, payload: unknown = {}) => {
  const id = `req-${crypto.randomUUID()}`;
  s.send({ type, id, timestamp: new Date().toISOString(), payload });
  return s.next((f) => f.correlationId === id);
};
const room = () => env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(w.project.id));

describe("authentication", () => {
  it("accepts the key in the header, or as a first auth message answered by auth_ok", async () => {
    const viaHeader = await agentSocket(w.worker.apiKey);
    expect(await request(viaHeader, "request:query-agents")).toMatchObject({ type: "response:success" });
    const viaMessage = await agentSocket();
    viaMessage.send({ type: "auth", api_key: w.worker.apiKey });
    expect(await viaMessage.next()).toMatchObject({ type: "auth_ok", protocol_version: "orchestratia/v1" });
    expect(await request(viaMessage, "request:query-agents")).toMatchObject({ type: "response:success" });
  });

  it("closes a socket that sends a wrong key or anything before its key", async () => {
    const wrong = await agentSocket();
    wrong.send({ type: "auth", api_key: "orc_nope" });
    expect(await wrong.next()).toMatchObject({ type: "response:error", error: { code: "UNAUTHORIZED" } });
    expect((await wrong.closed).code).toBe(4003);
    const eager = await agentSocket();
    eager.send({ type: "request:query-tasks", id: "r1" });
    expect(await eager.next()).toMatchObject({ correlationId: "r1", error: { code: "UNAUTHORIZED" } });
  });

  it("refuses an agent whose scope does not include the project", async () => {
    const other = await createProject(w.admin, "Not yours");
    const scoped = await registerAgent(w.admin, "scoped-agent", { project_ids: [other.id] });
    expect((await call(`/api/v1/projects/${w.project.id}/agent-ws`, { apiKey: scoped.apiKey, headers: { Upgrade: "websocket" } })).status).toBe(404);
    const byMessage = await agentSocket();
    byMessage.send({ type: "auth", api_key: scoped.apiKey });
    expect(await byMessage.next()).toMatchObject({ error: { code: "UNAUTHORIZED" } });
  });
});

describe("requests", () => {
  it("query-agents lists the project's servers in the seed's shape", async () => {
    const s = await agentSocket(w.worker.apiKey);
    const res = await request(s, "request:query-agents", { role: "worker" });
    expect(res).toMatchObject({ type: "response:success", id: expect.any(String), timestamp: expect.any(String) });
    expect(res.payload.agents.map((a: { name: string }) => a.name)).toEqual(expect.arrayContaining([w.worker.name, w.orchestrator.name]));
    expect(res.payload.agents[0]).toEqual(expect.objectContaining({ role: "worker", status: expect.stringMatching(/idle|busy|offline/), capabilities: expect.any(Array), currentTask: null }));
    expect((await request(s, "request:query-agents", { role: "planner" })).payload.agents).toEqual([]);
  });

  it("submit-task creates a task; get-task and query-tasks read the agent's own", async () => {
    const s = await agentSocket(w.orchestrator.apiKey);
    const submitted = await request(s, "request:submit-task", { type: "implementation", name: "Fix bug in auth", description: "details", payload: { file: "src/auth.ts" }, priority: 3 });
    expect(submitted.payload.task).toMatchObject({ name: "Fix bug in auth", status: "queued", priority: "high" });
    const id = submitted.payload.task.id;
    // The payload stays the task's payload; the description is the spec.
    expect((await cli(w.orchestrator.apiKey, "GET", `${T}/${id}`)).json).toMatchObject({ spec: "details", payload: { file: "src/auth.ts" } });
    expect((await request(s, "request:get-task", { taskId: id })).payload.task).toMatchObject({ id, status: "queued" });
    expect(await request(s, "request:get-task", { taskId: crypto.randomUUID() })).toMatchObject({ type: "response:error", error: { code: "NOT_FOUND" } });

    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { server_name: w.worker.name }));
    const worker = await agentSocket(w.worker.apiKey);
    const mine = await request(worker, "request:query-tasks", { status: "queued" });
    expect(mine.payload.tasks.map((t: { id: string }) => t.id)).toContain(id);
    // An agent's own tasks include those it submitted.
    expect((await request(s, "request:query-tasks", {})).payload.tasks.map((t: { id: string }) => t.id)).toContain(id);
  });

  it("answers malformed JSON as a log line, invalid payloads and unknown types with errors", async () => {
    const s = await agentSocket(w.worker.apiKey);
    s.send("compiling... 42%");
    await expect.poll(async () => (await env.DB.prepare("SELECT count(*) AS n FROM agent_logs WHERE message = 'compiling... 42%'").first<{ n: number }>())!.n).toBe(1);
    expect(await request(s, "request:teleport")).toMatchObject({ error: { code: "INVALID_MESSAGE_TYPE" } });
    const bad = await request(s, "request:submit-task", { name: 7 });
    expect(bad).toMatchObject({ type: "response:error", error: { code: "INVALID_REQUEST", details: [expect.objectContaining({ path: "payload.name" })] } });
    s.send({ id: "no-type" });
    expect(await s.next((f) => f.type === "response:error")).toMatchObject({ error: { code: "INVALID_REQUEST" } });
  });

  it("rate-limits more than 100 messages a second, and keeps the connection", async () => {
    const s = await agentSocket(w.worker.apiKey);
    // Frames the hub answers without I/O, so the burst is counted at the rate it was sent, however loaded the machine.
    for (let i = 0; i < 130; i++) s.send({ type: "request:no-such-request", id: `burst-${i}` });
    const limited = await s.next((f) => f.type === "response:error" && /Rate limit/.test(f.error?.message), 10_000);
    expect(limited.error.code).toBe("INVALID_REQUEST");
    await new Promise((r) => setTimeout(r, 1100));
    expect(await request(s, "request:query-agents")).toMatchObject({ type: "response:success" });
  });
});

describe("events from agents", () => {
  it("stores event:progress on the task and broadcasts it", async () => {
    const board = await dashboard(w.project.id, w.member.token);
    const id = await newTask(w);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    const s = await agentSocket(w.worker.apiKey);
    s.send({ type: "event:progress", id: "p1", payload: { taskId: id, progress: 0.75, message: "Tests passing, writing docs" } });
    expect(await board.next((f) => isEvent(f) && f.event_type === "task_progress")).toMatchObject({ task_id: id, data: { progress: 0.75, message: "Tests passing, writing docs" } });
    expect((await cli(w.worker.apiKey, "GET", `${T}/${id}`)).json).toMatchObject({ progress: 0.75, progress_message: "Tests passing, writing docs" });
    const other = await agentSocket(w.orchestrator.apiKey);
    other.send({ type: "event:progress", id: "p2", payload: { taskId: id, progress: 1 } });
    expect(await other.next((f) => f.correlationId === "p2")).toMatchObject({ error: { code: "UNAUTHORIZED" } });
  });

  it("keeps event:log and event:error, and makes event:question an open question", async () => {
    const s = await agentSocket(w.worker.apiKey);
    const id = await newTask(w);
    s.send({ type: "event:log", id: "l1", payload: { level: "warn", message: "slow disk", context: { free_gb: 2 } } });
    s.send({ type: "event:error", id: "e1", payload: { taskId: id, error: "TypeError: x", stack: "at y", recoverable: false } });
    s.send({ type: "event:question", id: "q1", payload: { question: "Proceed with breaking changes?", context: { files: 15 } } });
    await expect.poll(async () => (await env.DB.prepare("SELECT count(*) AS n FROM agent_logs WHERE message IN ('slow disk', 'TypeError: x')").first<{ n: number }>())!.n).toBe(2);
    const log = (await call(`/api/v1/projects/${w.project.id}/events?limit=1000`, { token: w.admin })).json.events;
    expect(log.find((e: any) => e.type === "agent_error" && e.task_id === id).data).toMatchObject({ error: "TypeError: x" });
    const open = await cli(w.orchestrator.apiKey, "GET", "/api/v1/server/interventions?status=pending");
    expect(open.json.find((i: any) => i.question === "Proceed with breaking changes?")).toMatchObject({ task_id: null, intervention_type: "question" });
  });
});

describe("ask-user", () => {
  it("answers when a person responds", async () => {
    const s = await agentSocket(w.worker.apiKey);
    s.send({ type: "request:ask-user", id: "ask-1", payload: { question: "Which authentication method?", options: [{ label: "OAuth 2.0", value: "oauth" }, { label: "JWT", value: "jwt" }], timeout: 300000 } });
    let pending: any;
    await expect.poll(async () => {
      pending = (await call("/api/v1/interventions?status=pending", { token: w.member.token })).json.find((i: any) => i.question === "Which authentication method?");
      return pending;
    }).toBeTruthy();
    expect(pending.options).toHaveLength(2);
    await expectOk(call(`/api/v1/interventions/${pending.id}/respond`, { token: w.member.token, body: { response: "oauth" } }));
    expect(await s.next((f) => f.correlationId === "ask-1")).toMatchObject({ type: "response:success", payload: { answer: "oauth", metadata: { answeredAt: expect.any(String) } } });
  });

  it("answers TIMEOUT when nobody responds in time", async () => {
    const s = await agentSocket(w.worker.apiKey);
    s.send({ type: "request:ask-user", id: "ask-2", payload: { question: "Anyone there?", timeout: 1000 } });
    await expect.poll(async () => (await call("/api/v1/interventions?status=pending", { token: w.admin })).json.some((i: any) => i.question === "Anyone there?")).toBe(true);
    await new Promise((r) => setTimeout(r, 1100));
    await runDurableObjectAlarm(room());
    expect(await s.next((f) => f.correlationId === "ask-2")).toMatchObject({ type: "response:error", error: { code: "TIMEOUT" } });
    const expired = (await call("/api/v1/interventions", { token: w.admin })).json.find((i: any) => i.question === "Anyone there?");
    expect(expired.status).toBe("timed_out");
  });
});

describe("notifications", () => {
  it("notify:task-assigned on assignment (auto-assignment in a cascade included) and notify:task-cancelled", async () => {
    const s = await agentSocket(w.worker.apiKey);
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: w.worker.apiKey, body: { capabilities: { languages: ["zig"], max_concurrent_tasks: 50 } } }));
    const id = await newTask(w);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    expect(await s.next((f) => f.type === "notify:task-assigned")).toMatchObject({ payload: { taskId: id, message: expect.any(String) } });

    const up = await newTask(w);
    const down = await newTask(w, { dependency_ids: [up], requirements: { languages: ["zig"] } });
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${up}/assign`, { server_name: w.orchestrator.name }));
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${up}/start`));
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${up}/complete`, { result: "up" }));
    expect(await s.next((f) => f.type === "notify:task-assigned" && f.payload.taskId === down)).toBeTruthy();

    await expectOk(cli(w.orchestrator.apiKey, "DELETE", `${T}/${down}`, { reason: "not needed" }));
    expect(await s.next((f) => f.type === "notify:task-cancelled")).toMatchObject({ payload: { taskId: down, reason: "not needed" } });
  });

  it("delivers a subscribed task's events until unsubscribed", async () => {
    const s = await agentSocket(w.orchestrator.apiKey);
    const id = await newTask(w);
    expect(await request(s, "request:subscribe-task", { taskId: id })).toMatchObject({ payload: { subscriptions: [id] } });
    await cli(w.worker.apiKey, "POST", `${T}/${id}/notes`, { content: "hello", urgent: false });
    expect(await s.next((f) => f.type === "notify:task-event")).toMatchObject({ payload: { taskId: id, event: { type: "note_added", task_id: id } } });
    await request(s, "request:unsubscribe-task", { taskId: id });
    await cli(w.worker.apiKey, "POST", `${T}/${id}/notes`, { content: "again", urgent: false });
    await new Promise((r) => setTimeout(r, 100));
    expect(s.frames.filter((f) => f.type === "notify:task-event")).toHaveLength(1);
  });

  it("keeps subscriptions and sockets across an eviction", async () => {
    const s = await agentSocket(w.orchestrator.apiKey);
    const id = await newTask(w);
    await request(s, "request:subscribe-task", { taskId: id });
    await evictDurableObject(room());
    await cli(w.worker.apiKey, "POST", `${T}/${id}/notes`, { content: "after eviction", urgent: false });
    expect(await s.next((f) => f.type === "notify:task-event")).toMatchObject({ payload: { event: { data: { content: "after eviction" } } } });
  });

  it("sends notify:shutdown and closes when the server's key is revoked", async () => {
    const doomed = await registerAgent(w.admin, "doomed-agent");
    const s = await agentSocket(doomed.apiKey);
    await request(s, "request:query-agents");
    await expectOk(call(`/api/v1/servers/${doomed.id}/revoke`, { method: "POST", token: w.admin }));
    expect(await s.next((f) => f.type === "notify:shutdown")).toMatchObject({ payload: { reason: expect.stringContaining("revoked") } });
    expect((await s.closed).code).toBe(4004);
  });
});

describe("presence", () => {
  it("announces server_online when a heartbeat brings a server back, and server_offline once its heartbeats stop", async () => {
    const agent = await registerAgent(w.admin, "beating-agent");
    const board = await dashboard(w.project.id, w.member.token);
    const lapse = () => env.DB.prepare("UPDATE servers SET last_heartbeat = ?1 WHERE id = ?2").bind(new Date(Date.now() - 120_000).toISOString(), agent.id).run();
    await lapse();
    await runDurableObjectAlarm(room());
    expect(await board.next((f) => isEvent(f) && f.event_type === "server_offline" && f.data.server_id === agent.id)).toBeTruthy();
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: agent.apiKey, body: {} }));
    expect(await board.next((f) => isEvent(f) && f.event_type === "server_online" && f.data.server_id === agent.id)).toBeTruthy();
    // Fresh heartbeats keep it present.
    await runDurableObjectAlarm(room());
    await lapse();
    await runDurableObjectAlarm(room());
    expect(await board.next((f) => isEvent(f) && f.event_type === "server_offline" && f.data.server_id === agent.id)).toBeTruthy();
    const log = (await call(`/api/v1/projects/${w.project.id}/events?limit=1000`, { token: w.admin })).json.events.filter((e: any) => e.data.server_id === agent.id);
    expect(log.map((e: any) => e.type)).toEqual(["server_online", "server_offline", "server_online", "server_offline"]);
  });

  it("counts agent sockets too: online with the first socket, offline when the last leaves without heartbeats", async () => {
    const board = await dashboard(w.project.id, w.member.token);
    const agent = await registerAgent(w.admin, "present-agent");
    await env.DB.prepare("UPDATE servers SET last_heartbeat = ?1 WHERE id = ?2").bind(new Date(Date.now() - 120_000).toISOString(), agent.id).run();
    await runDurableObjectAlarm(room());
    const gone = (f: any) => isEvent(f) && f.event_type === "server_offline" && f.data.server_id === agent.id;
    await board.next(gone);
    const first = await agentSocket(agent.apiKey);
    expect(await board.next((f) => isEvent(f) && f.event_type === "server_online")).toMatchObject({ data: { server_id: agent.id, server_name: "present-agent" } });
    const second = await agentSocket(agent.apiKey);
    first.ws.close(1000, "bye");
    await new Promise((r) => setTimeout(r, 100));
    expect(board.frames.filter(gone)).toHaveLength(1);
    second.ws.close(1000, "bye");
    await board.next(gone);
    expect(board.frames.filter(gone)).toHaveLength(2);
  });
});
