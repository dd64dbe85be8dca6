/**
 * Elicitation on a 2025-11-25 session (today's Claude Code, Codex and Gemini CLI): a person's client that made a task
 * and declared it answers forms is asked the agent's question as `elicitation/create` on its session's stream; its
 * answer resumes the task. A client that declared nothing is asked nothing. (On 2026-07-28 the same question is an
 * input request of tasks/get: test/mcp-tasks.test.ts.)
 */
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createUser, addMember, until } from "./helpers";
import { MCP_URL, mcpClient, structured, workerFetch } from "./mcp-client";
import { cli, createWorld, expectOk, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("MCP elicitation");
});

/** A person's 1.x client: what it is asked, answered with `reply`; and whether its session's stream is open. */
async function personClient(reply: ElicitResult | null) {
  let open = false;
  const asked: string[] = [];
  const { client, transport } = await mcpClient(
    { Authorization: `Bearer ${w.admin}` },
    {
      fetch: async (url, init) => {
        const res = await workerFetch(url, init);
        if (init?.method === "GET" && res.ok) open = true;
        return res;
      },
    },
    reply ? { elicitation: {} } : {},
  );
  if (reply)
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return reply;
    });
  // A client that declared nothing would still see any request the hub sent it.
  else client.fallbackRequestHandler = async (request) => (asked.push(request.method), {});
  await until(() => open, Boolean, "the session's stream");
  return { client, asked, session: transport.sessionId! };
}

async function questionOn(client: Awaited<ReturnType<typeof personClient>>["client"], question: string) {
  const task = structured(await client.callTool({ name: "create_task", arguments: { project_id: w.project.id, title: `Asks: ${question}` } }));
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${task.id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${task.id}/start`));
  const help = (await expectOk(cli(w.worker.apiKey, "POST", `${T}/${task.id}/help`, { question, intervention_type: "question" }))).json;
  return { taskId: task.id as string, interventionId: help.intervention_id as string };
}

const intervention = async (taskId: string) => (await expectOk(call(`/api/v1/interventions?task_id=${taskId}`, { token: w.admin }))).json[0];

describe("an agent's question put to the person's MCP client", () => {
  it("is asked as a form on the session's stream, and the answer resumes the task", async () => {
    const { client, asked } = await personClient({ action: "accept", content: { answer: "Postgres" } });
    const { taskId, interventionId } = await questionOn(client, "Which database?");
    await until(
      () => intervention(taskId),
      (i) => i.status === "responded",
      "the answer",
    );
    expect(asked).toEqual(["Which database?"]);
    expect(await intervention(taskId)).toMatchObject({ id: interventionId, response: "Postgres" });
    expect((await expectOk(call(`/api/v1/tasks/${taskId}`, { token: w.admin }))).json.status).toBe("running");
    await client.close();
  });

  it("declined, the question stays open for a person to answer elsewhere", async () => {
    const { client, asked } = await personClient({ action: "decline" });
    const { taskId } = await questionOn(client, "Deploy now?");
    await until(
      () => asked,
      (a) => a.length > 0,
      "the form",
    );
    expect(asked).toEqual(["Deploy now?"]);
    await new Promise((r) => setTimeout(r, 300));
    expect(await intervention(taskId)).toMatchObject({ status: "pending", response: null });
    await client.close();
  });

  it("a client that does not answer forms is asked nothing", async () => {
    const { client, asked } = await personClient(null);
    const { taskId } = await questionOn(client, "Which region?");
    // The board hears the question; the client, within the same time, hears nothing.
    await until(
      () => expectOk(call(`/api/v1/tasks/${taskId}`, { token: w.admin })),
      (r) => r.json.status === "needs_human",
      "the question",
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect(asked).toEqual([]);
    await client.close();
  });

  it("a question asked while no stream was open is asked when one opens", async () => {
    const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${w.admin}` };
    const post = (message: Record<string, unknown>, session?: string) =>
      workerFetch(MCP_URL, {
        method: "POST",
        headers: { ...headers, "MCP-Protocol-Version": "2025-11-25", ...(session ? { "Mcp-Session-Id": session } : {}) },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...message }),
      });
    const opened = await post({
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: { elicitation: {} }, clientInfo: { name: "raw", version: "1" } },
    });
    const session = opened.headers.get("Mcp-Session-Id")!;
    const made = await post(
      { method: "tools/call", params: { name: "create_task", arguments: { project_id: w.project.id, title: "Asked before the stream" } } },
      session,
    );
    const taskId = ((await made.json()) as { result: { structuredContent: { id: string } } }).result.structuredContent.id;
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${taskId}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${taskId}/start`));
    const help = (await expectOk(cli(w.worker.apiKey, "POST", `${T}/${taskId}/help`, { question: "Blue or green?", intervention_type: "question" }))).json;
    await new Promise((r) => setTimeout(r, 300));
    const stream = await workerFetch(MCP_URL, { headers: { ...headers, "Mcp-Session-Id": session, Accept: "text/event-stream" } });
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes("\n\n")) text += (await reader.read()).value ?? "";
    await reader.cancel();
    const first = JSON.parse(
      text
        .split("\n")
        .find((l) => l.startsWith("data: "))!
        .slice(6),
    );
    expect(first).toMatchObject({ id: `elicit:${help.intervention_id}`, method: "elicitation/create", params: { message: "Blue or green?" } });
  });

  it("an answer to a question the session never asked, or under another caller's session, is not taken", async () => {
    const { client, asked, session } = await personClient({ action: "decline" });
    const { taskId, interventionId } = await questionOn(client, "Which cloud?");
    await until(
      () => asked,
      (a) => a.length > 0,
      "the form",
    );
    const answer = (credentials: Record<string, string>, sessionId: string, id: string) =>
      workerFetch(MCP_URL, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": "2025-11-25",
          "Mcp-Session-Id": sessionId,
          ...credentials,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id, result: { action: "accept", content: { answer: "forged" } } }),
      });
    // Another person's session (their own, so the request is theirs): the question was never asked there.
    const other = await createUser(w.admin, "member");
    await addMember(w.admin, w.project.id, other.id);
    const { transport } = await mcpClient({ Authorization: `Bearer ${other.token}` }, {}, { elicitation: {} });
    expect((await answer({ Authorization: `Bearer ${other.token}` }, transport.sessionId!, `elicit:${interventionId}`)).status).toBe(202);
    // Another caller naming this session is refused outright.
    expect((await answer({ Authorization: `Bearer ${other.token}` }, session, `elicit:${interventionId}`)).status).toBe(404);
    // This session, naming a question it was never asked (another task's).
    const unasked = await questionOn(client, "Not for this session?");
    await expectOk(call(`/api/v1/tasks/${unasked.taskId}`, { token: w.admin }));
    expect((await answer({ Authorization: `Bearer ${w.admin}` }, session, `elicit:${crypto.randomUUID()}`)).status).toBe(202);
    await new Promise((r) => setTimeout(r, 200));
    expect(await intervention(taskId)).toMatchObject({ status: "pending", response: null });
    await client.close();
  });
});
