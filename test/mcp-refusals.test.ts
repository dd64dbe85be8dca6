/** What the MCP endpoint refuses, as the REST API refuses it, with nothing written: bad arguments, others' tasks, viewers' writes, bad credentials, foreign origins. */
import { env } from "cloudflare:workers";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, describe, expect, it } from "vitest";
import { issueAccessToken } from "../src/auth/jwt";
import { addMember, call, createProject, createUser, registerAgent } from "./helpers";
import { asAgent, asPerson, MCP_URL, refusal, structured, workerFetch } from "./mcp-client";
import { cli, createWorld, expectOk, newTask, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("MCP refusals");
});

const tasksOf = async (projectId: string) =>
  (await expectOk(call(`/api/v1/tasks?project_id=${projectId}&limit=200`, { token: w.admin }))).json.tasks as { title: string }[];

/** One JSON-RPC message POSTed as a client would, with these headers. */
const post = (headers: Record<string, string>, message: Record<string, unknown>) =>
  workerFetch(MCP_URL, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", "MCP-Protocol-Version": LATEST_PROTOCOL_VERSION, ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...message }),
  });

const initialize = (protocolVersion: string) => ({
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

describe("tool calls the REST API refuses", () => {
  it("arguments that break the route's schema are a tool error naming the field, and nothing is written", async () => {
    const id = await newTask(w);
    const { client } = await asAgent(w.worker.apiKey);
    const problem = refusal(await client.callTool({ name: "add_note", arguments: { id, content: "   " } }), 422, "VALIDATION_FAILED");
    expect(problem.errors).toEqual([{ path: "content", message: "must not be empty" }]);
    refusal(await client.callTool({ name: "start_task", arguments: { id: "not-a-uuid" } }), 404, "NOT_FOUND");
    expect((await expectOk(cli(w.worker.apiKey, "GET", `${T}/${id}/notes`))).json).toEqual([]);
    await client.close();
  });

  it("another project's task is not found, to read or to change, and stays as it was", async () => {
    const elsewhere = await createProject(w.admin, "Elsewhere");
    const scoped = await registerAgent(w.admin, `scoped-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [elsewhere.id] });
    const id = await newTask(w);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    const { client } = await asAgent(scoped.apiKey);
    refusal(await client.callTool({ name: "get_task", arguments: { id } }), 404, "NOT_FOUND");
    refusal(await client.callTool({ name: "fail_task", arguments: { id, error: "not mine" } }), 404, "NOT_FOUND");
    await expect(client.readResource({ uri: `orchestratia://tasks/${id}` })).rejects.toThrow(/Task not found/);
    await expect(client.subscribeResource({ uri: `orchestratia://projects/${w.project.id}/board` })).rejects.toThrow(/not found/);
    expect((await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}`))).json.status).toBe("assigned");
    await client.close();
  });

  it("a viewer reads but every write is forbidden, and nothing is written", async () => {
    const viewer = await createUser(w.admin, "viewer");
    await addMember(w.admin, w.project.id, viewer.id);
    const id = await newTask(w, { title: "Viewed" });
    const { client } = await asPerson(viewer.token);
    expect(structured(await client.callTool({ name: "get_task", arguments: { id } })).title).toBe("Viewed");
    refusal(await client.callTool({ name: "create_task", arguments: { project_id: w.project.id, title: "By a viewer" } }), 403, "FORBIDDEN");
    refusal(await client.callTool({ name: "cancel_task", arguments: { id } }), 403, "FORBIDDEN");
    expect((await tasksOf(w.project.id)).map((t) => t.title)).not.toContain("By a viewer");
    expect((await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}`))).json.status).toBe("pending");
    await client.close();
  });

  it("an agent's tool is not a person's: calling another audience's tool is a protocol error", async () => {
    const { client } = await asAgent(w.worker.apiKey);
    await expect(client.callTool({ name: "create_task", arguments: { title: "x" } })).rejects.toThrow(/No tool named create_task for agents/);
    await client.close();
  });
});

describe("credentials", () => {
  const metadata = 'resource_metadata="https://hub.test/.well-known/oauth-protected-resource/mcp"';

  it("without credentials, or with an expired token, is 401 naming the protected resource's metadata", async () => {
    const none = await post({}, initialize(LATEST_PROTOCOL_VERSION));
    expect(none.status).toBe(401);
    expect(none.headers.get("WWW-Authenticate")).toContain(metadata);
    const member = await createUser(w.admin, "member");
    const expired = await issueAccessToken(env, member.id, "member", Math.floor(Date.now() / 1000) - 60);
    const refused = await post(
      { Authorization: `Bearer ${expired}` },
      { method: "tools/call", params: { name: "create_task", arguments: { project_id: w.project.id, title: "Expired" } } },
    );
    expect(refused.status).toBe(401);
    expect(refused.headers.get("WWW-Authenticate")).toContain(metadata);
    await expect(asPerson(expired)).rejects.toThrow();
    expect((await tasksOf(w.project.id)).map((t) => t.title)).not.toContain("Expired");
  });

  it("an unknown API key is 401 INVALID_API_KEY with the same challenge", async () => {
    const res = await post({ "X-API-Key": "orc_not-a-key" }, initialize(LATEST_PROTOCOL_VERSION));
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: "INVALID_API_KEY" });
    expect(res.headers.get("WWW-Authenticate")).toContain(metadata);
  });

  it("a page of a foreign origin is refused 403 before anything runs; the hub's own origin is not", async () => {
    const write = { method: "tools/call", params: { name: "create_task", arguments: { project_id: w.project.id, title: "From a foreign page" } } };
    const foreign = await post({ Authorization: `Bearer ${w.admin}`, Origin: "https://evil.example" }, write);
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get("Content-Type")).toBe("application/problem+json");
    expect(await foreign.json()).toMatchObject({ code: "FORBIDDEN_ORIGIN", detail: expect.stringContaining("https://evil.example") });
    expect((await tasksOf(w.project.id)).map((t) => t.title)).not.toContain("From a foreign page");
    const own = await post({ Authorization: `Bearer ${w.admin}`, Origin: "https://hub.test" }, initialize(LATEST_PROTOCOL_VERSION));
    expect(own.status).toBe(200);
    const otherHost = await workerFetch("https://rebound.example/mcp", { method: "POST", headers: { "X-API-Key": w.worker.apiKey }, body: "{}" });
    expect(otherHost.status).toBe(403);
    expect(await otherHost.json()).toMatchObject({ code: "FORBIDDEN_HOST" });
  });
});

describe("protocol", () => {
  it("answers the newest revision the SDK speaks and an older one a client asks for, each with a session", async () => {
    for (const version of [LATEST_PROTOCOL_VERSION, "2025-06-18", "2025-03-26", "2024-11-05"]) {
      const res = await post({ "X-API-Key": w.worker.apiKey }, initialize(version));
      expect(res.status).toBe(200);
      expect(((await res.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(version);
      expect(res.headers.get("Mcp-Session-Id")).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it("a body that is not JSON is JSON-RPC's parse error", async () => {
    const res = await workerFetch(MCP_URL, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", "X-API-Key": w.worker.apiKey },
      body: "{not json",
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32700 } });
  });

  it("a session is its opener's: another caller can neither use nor end it, its opener can, and then it is gone", async () => {
    const opened = await post({ "X-API-Key": w.worker.apiKey }, initialize(LATEST_PROTOCOL_VERSION));
    const session = opened.headers.get("Mcp-Session-Id")!;
    const end = (key: string) => workerFetch(MCP_URL, { method: "DELETE", headers: { "X-API-Key": key, "Mcp-Session-Id": session } });
    const ping = (key: string) => post({ "X-API-Key": key, "Mcp-Session-Id": session }, { method: "ping" });
    expect((await ping(w.worker.apiKey)).status).toBe(200);
    expect((await ping(w.orchestrator.apiKey)).status).toBe(404);
    expect((await end(w.orchestrator.apiKey)).status).toBe(404);
    expect((await end(w.worker.apiKey)).status).toBe(204);
    expect((await end(w.worker.apiKey)).status).toBe(404);
    const stream = await workerFetch(MCP_URL, { headers: { "X-API-Key": w.worker.apiKey, "Mcp-Session-Id": session, Accept: "text/event-stream" } });
    expect(stream.status).toBe(404);
    // A request naming the ended session is told so, and initializes again.
    expect((await ping(w.worker.apiKey)).status).toBe(404);
  });
});
