/**
 * The 2026-07-28 leg of the MCP endpoint on the wire: discovery instead of initialize, stateless requests that carry
 * their own envelope and headers, and the same credentials and refusals as 2025's.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { asModernAgent, MODERN, modernPost } from "./mcp-client-v2";
import { createWorld, newTask, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("MCP 2026");
});

const agentKey = () => ({ "X-API-Key": w.worker.apiKey });

describe("discovery and negotiation", () => {
  it("server/discover names 2026-07-28 and what the hub serves, without opening a session", async () => {
    const res = await modernPost(agentKey(), "server/discover");
    expect(res.status).toBe(200);
    expect(res.headers.get("Mcp-Session-Id")).toBeNull();
    const { result } = (await res.json()) as { result: Record<string, any> };
    expect(result.supportedVersions).toEqual([MODERN]);
    expect(result.capabilities).toMatchObject({ tools: {}, prompts: {}, resources: {} });
    expect(result._meta["io.modelcontextprotocol/serverInfo"]).toMatchObject({ name: "orchestratia-hub" });
  });

  it("the 2.x client settles on 2026-07-28, and its requests are given no session", async () => {
    const { client } = await asModernAgent(w.worker.apiKey);
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    await client.close();
    const res = await modernPost(agentKey(), "tools/list");
    expect(res.status).toBe(200);
    expect(res.headers.get("Mcp-Session-Id")).toBeNull();
  });

  it("a request is answered whatever came before it: no initialize, and a session id it does not need is ignored", async () => {
    const id = await newTask(w, { title: "Read cold" });
    const res = await modernPost(
      { Authorization: `Bearer ${w.admin}` },
      "tools/call",
      { name: "get_task", arguments: { id } },
      {
        name: "get_task",
        headers: { "Mcp-Session-Id": crypto.randomUUID() },
      },
    );
    expect(res.status).toBe(200);
    const { result } = (await res.json()) as { result: { structuredContent: { id: string; title: string } } };
    expect(result.structuredContent).toMatchObject({ id, title: "Read cold" });
  });
});

describe("what a 2026-07-28 request must carry", () => {
  it("without Mcp-Method, or with an Mcp-Name that is not the tool called, it is a 400 and nothing runs", async () => {
    const id = await newTask(w, { title: "Not started by a bad request" });
    const call = (headers: Record<string, string>, name?: string) =>
      modernPost(agentKey(), "tools/call", { name: "start_task", arguments: { id } }, { name, headers });
    const noMethod = await call({ "Mcp-Method": "" }, "start_task");
    expect(noMethod.status).toBe(400);
    const wrongName = await call({}, "get_task");
    expect(wrongName.status).toBe(400);
    expect(((await wrongName.json()) as { error: { code: number } }).error.code).toBeLessThan(-32000);
    const read = await modernPost(agentKey(), "tools/call", { name: "get_task", arguments: { id } }, { name: "get_task" });
    expect(((await read.json()) as { result: { structuredContent: { status: string } } }).result.structuredContent.status).toBe("pending");
  });

  it("a revision the hub does not serve is refused naming the ones it does", async () => {
    const future = "2099-01-01";
    const res = await modernPost(
      agentKey(),
      "tools/list",
      {},
      { headers: { "MCP-Protocol-Version": future }, meta: { "io.modelcontextprotocol/protocolVersion": future } },
    );
    const body = (await res.json()) as { error: { code: number; data: { supported: string[] } } };
    expect(body.error.code).toBe(-32022);
    expect(body.error.data.supported).toEqual([MODERN]);
  });

  it("credentials are checked first: none is 401 with the challenge, a foreign origin 403", async () => {
    const none = await modernPost({}, "tools/list");
    expect(none.status).toBe(401);
    expect(none.headers.get("WWW-Authenticate")).toContain("resource_metadata=");
    const foreign = await modernPost({ ...agentKey(), Origin: "https://evil.example" }, "tools/list");
    expect(foreign.status).toBe(403);
  });

  it("an agent may not call a person's tool, and a resource that is not there names its URI", async () => {
    const tool = await modernPost(agentKey(), "tools/call", { name: "create_task", arguments: {} }, { name: "create_task" });
    expect(((await tool.json()) as { error: { code: number } }).error.code).toBe(-32602);
    const uri = `orchestratia://tasks/${crypto.randomUUID()}`;
    const read = await modernPost(agentKey(), "resources/read", { uri }, { name: uri });
    const { error } = (await read.json()) as { error: { code: number; data: { uri: string } } };
    expect(error).toMatchObject({ code: -32602, data: { uri } });
  });
});
