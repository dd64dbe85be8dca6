/**
 * What the seeds ask of the agent socket beyond its messages: declared protocol
 * versions (compute-protocol.md, core §7), the base fields of every message,
 * a log line per message with its agent, and the hub's half of the heartbeat
 * (pings on the room's alarm, silent sockets closed), under hibernation.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { livenessAction, livenessBounds } from "../src/protocol/agent-liveness";
import { requestTimeoutMs, socketProtocol } from "../src/protocol/agent-orchestrator-messages";
import type { AgentAttachment } from "../src/room/sockets";
import { call, daemonRegistration, expectProblem, registerAgent, registrationToken } from "./helpers";
import { openSocket, type TestSocket } from "./sockets";
import { createWorld, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Agent socket seeds");
});

const agentSocket = (apiKey?: string) => openSocket(`/api/v1/projects/${w.project.id}/agent-ws`, apiKey ? { "X-API-Key": apiKey } : {});
const room = () => env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(w.project.id));
const register = (name: string, token: string, extra: Record<string, unknown> = {}) =>
  call("/api/v1/servers/register", { body: { ...daemonRegistration(name, token), machine_id: crypto.randomUUID(), ...extra } });
const named = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 6)}`;

describe("declared protocol versions", () => {
  it("the rule: undeclared is v1 with a warning, the registration's declaration counts, [] and other majors are refused", () => {
    expect(socketProtocol(undefined, null)).toEqual({ ok: true, version: "orchestratia/v1", warnings: [expect.stringContaining("not declared")] });
    expect(socketProtocol(undefined, ["v1"])).toEqual({ ok: true, version: "orchestratia/v1", warnings: [] });
    expect(socketProtocol(["1.2.0"], null)).toEqual({ ok: true, version: "orchestratia/v1", warnings: [] });
    expect(socketProtocol([], ["v1"])).toMatchObject({ ok: false, message: expect.stringContaining("must not be empty") });
    expect(socketProtocol(["orchestratia/v2"], null)).toMatchObject({ ok: false, message: expect.stringContaining("must include one of orchestratia/v1") });
  });

  it("registration refuses [] with 422 naming protocol_versions, spending nothing, and warns an agent that declares nothing", async () => {
    const token = await registrationToken(w.admin);
    const empty = await register(named("empty"), token, { protocol_versions: [] });
    expectProblem(empty, 422, "INCOMPATIBLE_PROTOCOL");
    expect(empty.json.errors).toEqual([{ path: "protocol_versions", message: expect.stringContaining("must not be empty") }]);
    // The token's one use was not spent by the refusal.
    const silent = await register(named("silent"), token);
    expect(silent.status, silent.text).toBe(201);
    expect(silent.json.warnings).toEqual([expect.stringContaining("protocol_versions not declared: taken as orchestratia/v1")]);
    const declared = await register(named("declared"), await registrationToken(w.admin), { protocol_versions: ["orchestratia/v1"] });
    expect(declared.status, declared.text).toBe(201);
    expect(declared.json).not.toHaveProperty("warnings");
  });

  it("a heartbeat refuses [] too, and keeps the registered versions when it names none", async () => {
    const agent = await registerAgent(w.admin, named("beating"));
    const empty = await call("/api/v1/servers/heartbeat", { apiKey: agent.apiKey, body: { protocol_versions: [] } });
    expectProblem(empty, 422, "INCOMPATIBLE_PROTOCOL");
    expect(empty.json.errors).toEqual([{ path: "protocol_versions", message: expect.stringContaining("must not be empty") }]);
    expect((await call("/api/v1/servers/heartbeat", { apiKey: agent.apiKey, body: {} })).json).not.toHaveProperty("warnings");
  });

  it("the auth frame carries versions: auth_ok names the version, with a warning when none was ever declared", async () => {
    const undeclared = await agentSocket();
    undeclared.send({ type: "auth", api_key: w.worker.apiKey });
    expect(await undeclared.next()).toEqual({ type: "auth_ok", protocol_version: "orchestratia/v1", warnings: [expect.stringContaining("not declared")] });
    const declared = await agentSocket();
    declared.send({ type: "auth", api_key: w.worker.apiKey, protocol_versions: ["orchestratia/v1"] });
    expect(await declared.next()).toEqual({ type: "auth_ok", protocol_version: "orchestratia/v1" });
    // A server that declared its versions when it registered has declared them for its sockets too.
    const registered = await register(named("versioned"), await registrationToken(w.admin), { protocol_versions: ["v1"] });
    const versioned = await agentSocket();
    versioned.send({ type: "auth", api_key: registered.json.api_key });
    expect(await versioned.next()).toEqual({ type: "auth_ok", protocol_version: "orchestratia/v1" });
  });

  it("refuses [] or a version the hub does not speak with INCOMPATIBLE_PROTOCOL and closes 4005, before and after the key", async () => {
    for (const protocol_versions of [[], ["orchestratia/v2"]]) {
      const s = await agentSocket();
      s.send({ type: "auth", id: "auth-1", api_key: w.worker.apiKey, protocol_versions });
      expect(await s.next()).toMatchObject({
        type: "response:error",
        correlationId: "auth-1",
        error: { code: "INVALID_REQUEST", details: { problem: "INCOMPATIBLE_PROTOCOL", errors: [{ path: "protocol_versions" }], protocol_versions: ["orchestratia/v1"] } },
      });
      expect((await s.closed).code).toBe(4005);
    }
    // A socket the header opened declares with an auth frame of its own.
    const byHeader = await agentSocket(w.worker.apiKey);
    byHeader.send({ type: "auth", protocol_versions: ["1.4"] });
    expect(await byHeader.next()).toEqual({ type: "auth_ok", protocol_version: "orchestratia/v1" });
    byHeader.send({ type: "auth", protocol_versions: ["orchestratia/v3"] });
    expect(await byHeader.next((f) => f.type === "response:error")).toMatchObject({ error: { details: { problem: "INCOMPATIBLE_PROTOCOL" } } });
    expect((await byHeader.closed).code).toBe(4005);
  });

  it("refuses an auth frame whose versions are not a list of strings, naming the field", async () => {
    const s = await agentSocket();
    s.send({ type: "auth", api_key: w.worker.apiKey, protocol_versions: "v1" });
    expect(await s.next()).toMatchObject({ type: "response:error", error: { code: "INVALID_REQUEST", details: [{ path: "protocol_versions" }] } });
    expect((await s.closed).code).toBe(4003);
  });
});

describe("the base message's fields", () => {
  const request = (s: TestSocket, frame: Record<string, unknown>) => {
    s.send(frame);
    return s.next((f) => f.type?.startsWith("response:"));
  };
  const tasksTitled = async (title: string) => (await env.DB.prepare("SELECT count(*) AS n FROM tasks WHERE title = ?1").bind(title).first<{ n: number }>())!.n;

  it("a request with an effect and no string id is INVALID_REQUEST naming id, and does nothing", async () => {
    const s = await agentSocket(w.orchestrator.apiKey);
    const title = named("no-id task");
    const submit = await request(s, { type: "request:submit-task", timestamp: new Date().toISOString(), payload: { name: title } });
    expect(submit).toMatchObject({ correlationId: null, error: { code: "INVALID_REQUEST", details: [{ path: "id", message: "is required for request:submit-task" }] } });
    expect(await tasksTitled(title)).toBe(0);
    const ask = await request(s, { type: "request:ask-user", payload: { question: "Anyone?" } });
    expect(ask).toMatchObject({ error: { code: "INVALID_REQUEST", details: [{ path: "id" }] } });
    // A read without an id is still answered (nothing to repeat).
    expect(await request(s, { type: "request:query-agents" })).toMatchObject({ type: "response:success", correlationId: null });
    // An id that is not a string names the field.
    const numbered = await request(s, { type: "request:submit-task", id: 7, payload: { name: title } });
    expect(numbered).toMatchObject({ correlationId: null, error: { code: "INVALID_REQUEST", details: [{ path: "id", message: "must be a string" }] } });
    expect(await tasksTitled(title)).toBe(0);
  });

  it("checks timestamp as ISO-8601, and a refusal for a bad base field answers to the message's string id", async () => {
    const s = await agentSocket(w.orchestrator.apiKey);
    for (const timestamp of ["yesterday", "2026-02-04", "2026-13-45T99:00:00Z", 1_700_000_000]) {
      const title = named("stamped");
      const reply = await request(s, { type: "request:submit-task", id: `ts-${title}`, timestamp, payload: { name: title } });
      expect(reply, String(timestamp)).toMatchObject({
        correlationId: `ts-${title}`,
        error: { code: "INVALID_REQUEST", details: [{ path: "timestamp", message: expect.stringContaining("ISO-8601") }] },
      });
      expect(await tasksTitled(title)).toBe(0);
    }
    for (const timestamp of ["2026-02-04T14:30:00Z", "2026-02-04T14:30:00.123+02:00"]) {
      expect(await request(s, { type: "request:query-agents", id: `ok-${timestamp}`, timestamp }), timestamp).toMatchObject({ type: "response:success" });
    }
    // A missing type is refused by name, answering to the id all the same.
    expect(await request(s, { id: "typeless" })).toMatchObject({ correlationId: "typeless", error: { code: "INVALID_REQUEST", details: [{ path: "type" }] } });
  });

  it("an event:log line may name its task", async () => {
    const s = await agentSocket(w.worker.apiKey);
    const taskId = (await call("/api/v1/tasks", { token: w.admin, body: { title: "Logged", project_id: w.project.id } })).json.id;
    s.send({ type: "event:log", id: "log-1", payload: { level: "warn", message: "disk almost full", taskId } });
    await expect
      .poll(async () => env.DB.prepare("SELECT level, message FROM agent_logs WHERE task_id = ?1").bind(taskId).all().then((r) => r.results))
      .toEqual([{ level: "warn", message: "disk almost full" }]);
    s.send({ type: "event:log", id: "log-2", payload: { message: "x", taskId: "not-a-task" } });
    expect(await s.next((f) => f.correlationId === "log-2")).toMatchObject({ error: { code: "INVALID_REQUEST", details: [{ path: "payload.taskId" }] } });
  });
});

describe("a log line per message, with its agent", () => {
  const levelBefore = env.LOG_LEVEL;
  afterEach(() => {
    env.LOG_LEVEL = levelBefore;
    vi.restoreAllMocks();
  });

  it("writes the message's type, id, agent, outcome and duration, for answers and refusals alike", async () => {
    env.LOG_LEVEL = "info";
    const written: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: unknown) => void written.push(String(line)));
    const s = await agentSocket(w.worker.apiKey);
    s.send({ type: "request:query-agents", id: "logged-1", payload: {} });
    await s.next((f) => f.correlationId === "logged-1");
    s.send({ type: "request:get-task", id: "logged-2", payload: { taskId: crypto.randomUUID() } });
    await s.next((f) => f.correlationId === "logged-2");
    s.send({ type: "request:submit-task", id: "logged-3", timestamp: "soon", payload: { name: "x" } });
    await s.next((f) => f.correlationId === "logged-3");
    const lines = written.map((l) => JSON.parse(l)).filter((l) => l.msg === "agent message");
    const of = (id: string) => lines.find((l) => l.message_id === id);
    expect(of("logged-1")).toMatchObject({
      level: "info",
      project_id: w.project.id,
      operation: "request:query-agents",
      actor: { kind: "server", id: w.worker.id, name: w.worker.name },
      outcome: "ok",
      duration_ms: expect.any(Number),
    });
    expect(of("logged-2")).toMatchObject({ operation: "request:get-task", outcome: "NOT_FOUND" });
    expect(of("logged-3")).toMatchObject({ operation: "request:submit-task", outcome: "INVALID_REQUEST", actor: { id: w.worker.id } });
    // Never the payload.
    expect(JSON.stringify(lines)).not.toContain('"name":"x"');
  });
});

describe("liveness: the hub pings, and closes a silent socket", () => {
  it("the rule and its bounds", () => {
    const bounds = livenessBounds({});
    expect(bounds).toEqual({ pingMs: 30_000, silenceMs: 90_000 });
    expect(livenessBounds({ AGENT_PING_SECONDS: "10", AGENT_SILENCE_SECONDS: "5" })).toEqual({ pingMs: 10_000, silenceMs: 10_000 });
    expect(livenessBounds({ AGENT_PING_SECONDS: "nope" }).pingMs).toBe(30_000);
    expect(livenessAction(0, 89_999, bounds)).toBe("ping");
    expect(livenessAction(0, 90_000, bounds)).toBe("close");
    expect(requestTimeoutMs(undefined)).toBe(30_000);
    expect(requestTimeoutMs("5")).toBe(5_000);
    expect(requestTimeoutMs("0")).toBe(30_000);
  });

  /** Makes the room believe it last heard from this server's sockets `ago` ms back. */
  const silence = (serverId: string, ago: number) =>
    runInDurableObject(room(), (_room, state) => {
      for (const ws of state.getWebSockets("agent")) {
        const a = ws.deserializeAttachment() as AgentAttachment;
        if (a.serverId === serverId) ws.serializeAttachment({ ...a, connectedAt: Date.now() - ago, lastSeenAt: Date.now() - ago });
      }
    });

  it("the room's alarm pings each agent socket; a socket silent past the bound is closed 4008, one that answered stays", async () => {
    const quiet = await registerAgent(w.admin, named("quiet"));
    const lively = await registerAgent(w.admin, named("lively"));
    const q = await agentSocket(quiet.apiKey);
    const l = await agentSocket(lively.apiKey);
    // Authenticating set the room's alarm for the first ping.
    expect(await runDurableObjectAlarm(room())).toBe(true);
    expect(await q.next((f) => f.type === "notify:ping")).toMatchObject({ payload: { silenceLimitMs: 90_000 } });
    await l.next((f) => f.type === "notify:ping");
    l.send({ type: "pong" });
    await silence(quiet.id, 91_000);
    await silence(lively.id, 91_000);
    // The lively one speaks after being aged: that frame is what the room heard last.
    l.send({ type: "request:query-agents", id: "still-here" });
    await l.next((f) => f.correlationId === "still-here");
    expect(await runDurableObjectAlarm(room())).toBe(true);
    expect(await q.closed).toMatchObject({ code: 4008 });
    expect(await l.next((f) => f.type === "notify:ping")).toBeTruthy();
    l.send({ type: "request:query-agents", id: "after" });
    expect(await l.next((f) => f.correlationId === "after")).toMatchObject({ type: "response:success" });
  });

  it("a ping the runtime answers without waking the room counts as hearing from the agent", async () => {
    const agent = await registerAgent(w.admin, named("hibernating"));
    const s = await agentSocket(agent.apiKey);
    await silence(agent.id, 91_000);
    s.send({ type: "ping" });
    expect(await s.next((f) => f.type === "pong")).toEqual({ type: "pong" });
    expect(await runDurableObjectAlarm(room())).toBe(true);
    expect(await s.next((f) => f.type === "notify:ping")).toBeTruthy();
    s.send({ type: "request:query-agents", id: "awake" });
    expect(await s.next((f) => f.correlationId === "awake")).toMatchObject({ type: "response:success" });
  });
});

describe("captured agent logs are readable", () => {
  it("GET …/tasks/{id}/logs answers the task's lines newest first, with their server, paged, filtered by level", async () => {
    const s = await agentSocket(w.worker.apiKey);
    const taskId = (await call("/api/v1/tasks", { token: w.admin, body: { title: "Chatty", project_id: w.project.id } })).json.id;
    const other = (await call("/api/v1/tasks", { token: w.admin, body: { title: "Quiet", project_id: w.project.id } })).json.id;
    for (const [n, level] of [[1, "info"], [2, "warn"], [3, "info"]] as const) {
      s.send({ type: "event:log", id: `line-${n}`, payload: { level, message: `line ${n}`, context: { n }, taskId } });
      // One line per turn, so their times tell them apart.
      await new Promise((r) => setTimeout(r, 5));
    }
    s.send({ type: "event:error", id: "oops", payload: { taskId, error: "it broke", recoverable: true } });
    s.send({ type: "event:log", id: "elsewhere", payload: { message: "not this task", taskId: other } });
    const path = `/api/v1/tasks/${taskId}/logs`;
    await expect.poll(async () => (await call(path, { token: w.member.token })).json.logs?.length).toBe(4);
    const all = (await call(path, { token: w.member.token })).json;
    expect(all.logs.map((l: any) => l.message)).toEqual(["it broke", "line 3", "line 2", "line 1"]);
    expect(all.logs[0]).toMatchObject({ level: "error", server_id: w.worker.id, server_name: w.worker.name, task_id: taskId, context: { recoverable: true } });
    expect(all.logs[3]).toMatchObject({ level: "info", context: { n: 1 }, created_at: expect.any(String) });
    expect(all.next_cursor).toBeNull();

    const first = (await call(`${path}?limit=3`, { token: w.member.token })).json;
    expect(first.logs).toHaveLength(3);
    const rest = (await call(`${path}?limit=3&cursor=${first.next_cursor}`, { token: w.member.token })).json;
    expect(rest).toEqual({ logs: [expect.objectContaining({ message: "line 1" })], next_cursor: null });
    expect((await call(`${path}?level=warn`, { token: w.member.token })).json.logs.map((l: any) => l.message)).toEqual(["line 2"]);
    // Agents read it on their surface.
    expect((await call(`/api/v1/server/tasks/${taskId}/logs`, { apiKey: w.orchestrator.apiKey })).json.logs).toHaveLength(4);

    const badCursor = await call(`${path}?cursor=nope`, { token: w.member.token });
    expectProblem(badCursor, 422, "VALIDATION_FAILED");
    expect(badCursor.json.errors).toEqual([expect.objectContaining({ path: "cursor" })]);
    expectProblem(await call(`${path}?level=loud`, { token: w.member.token }), 422, "VALIDATION_FAILED");
    expectProblem(await call(`/api/v1/tasks/${crypto.randomUUID()}/logs`, { token: w.member.token }), 404, "NOT_FOUND");
  });
});
