/**
 * Elicitation on a 2025-11-25 session (today's Claude Code, Codex and Gemini CLI): a person's client that made a task
 * and declared it answers forms is asked the agent's question as `elicitation/create` on its session's stream; its
 * answer resumes the task. A client that declared nothing is asked nothing. (On 2026-07-28 the same question is an
 * input request of tasks/get: test/mcp-tasks.test.ts.)
 */
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, describe, expect, it } from "vitest";
import { call, until } from "./helpers";
import { mcpClient, structured, workerFetch } from "./mcp-client";
import { cli, createWorld, expectOk, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("MCP elicitation");
});

/** A person's 1.x client: what it is asked, answered with `reply`; and whether its session's stream is open. */
async function personClient(reply: ElicitResult | null) {
  let open = false;
  const asked: string[] = [];
  const { client } = await mcpClient(
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
  return { client, asked };
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
});
