/** Usage blocks sent with results, and usage read back: on the task, its graph, the project per day, model, agent and task. */
import { beforeAll, describe, expect, it } from "vitest";
import { call, createProject, expectProblem, until } from "./helpers";
import { asAgent, structured } from "./mcp-client";
import { cli, createWorld, expectOk, newTask, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Usage reads");
});

async function running(body: Record<string, unknown> = {}) {
  const id = await newTask(w, body);
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
  return id;
}

const viewOf = async (id: string) => (await expectOk(call(`/api/v1/tasks/${id}`, { token: w.admin }))).json;
const usageOn = (id: string, done: (usage: Record<string, number> | null) => boolean) =>
  until(async () => (await viewOf(id)).usage as Record<string, number> | null, done, `usage of ${id}`);

describe("a usage block sent with a result", () => {
  it("is counted on the task once, wherever the completion carries it", async () => {
    const beside = await running();
    await expectOk(
      cli(w.worker.apiKey, "POST", `${T}/${beside}/complete`, {
        result: "done",
        usage: { model: "claude-opus-4-1", input_tokens: 1200, output_tokens: 300, cost_usd: 0.42 },
      }),
    );
    // The same completion again changes nothing and counts nothing.
    await expectOk(
      cli(w.worker.apiKey, "POST", `${T}/${beside}/complete`, {
        result: "done",
        usage: { model: "claude-opus-4-1", input_tokens: 1200, output_tokens: 300, cost_usd: 0.42 },
      }),
    );
    const inside = await running();
    const v1 = { $schema: "orchestratia/task-result/v1", summary: "built", usage: { model: "gpt-5", output_tokens: 50, cache_read_tokens: 7, cost_usd: 0.01 } };
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${inside}/complete`, { result: v1 }));
    const response = await running();
    await expectOk(
      cli(w.worker.apiKey, "POST", `${T}/${response}/complete`, { result: { summary: "ok" }, metadata: { usage: { cache_write_tokens: 90, cost_usd: 0.2 } } }),
    );

    const a = await usageOn(beside, (u) => (u?.cost_usd ?? 0) > 0);
    expect(a).toEqual({ input_tokens: 1200, output_tokens: 300, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.42, api_ms: 0 });
    expect(await usageOn(inside, (u) => u !== null)).toMatchObject({ output_tokens: 50, cache_read_tokens: 7, cost_usd: 0.01 });
    expect(await usageOn(response, (u) => u !== null)).toMatchObject({ cache_write_tokens: 90, cost_usd: 0.2 });
    // Still once, after the intake has had time for another batch.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await viewOf(beside)).usage.cost_usd).toBe(0.42);
  });

  it("is refused with the field and the rule when malformed, and the task is not completed", async () => {
    const id = await running();
    const reply = await cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: { summary: "x", usage: { cost_usd: -1 } } });
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors).toEqual([{ path: "result.usage.cost_usd", message: "must not be negative" }]);
    const beside = await cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "x", usage: { input_tokens: 1.5 } });
    expectProblem(beside, 422, "VALIDATION_FAILED");
    expect(beside.json.errors[0].path).toBe("usage.input_tokens");
    expect((await viewOf(id)).status).toBe("running");
  });

  it("comes through the MCP tool complete_task", async () => {
    const id = await running();
    const { client } = await asAgent(w.worker.apiKey);
    const done = structured(
      await client.callTool({ name: "complete_task", arguments: { id, result: "via MCP", usage: { output_tokens: 64, cost_usd: 0.03 } } }),
    );
    expect(done.status).toBe("done");
    expect(await usageOn(id, (u) => u !== null)).toMatchObject({ output_tokens: 64, cost_usd: 0.03 });
  });
});

describe("usage read back", () => {
  it("answers a task's graph: what it depends on and what depends on it, not its siblings", async () => {
    const a = await running();
    const b = await newTask(w, { dependencies: [{ depends_on_task_id: a, dependency_type: "blocks" }] });
    const c = await newTask(w, { dependencies: [{ depends_on_task_id: b, dependency_type: "blocks" }] });
    const sibling = await newTask(w, { dependencies: [{ depends_on_task_id: a, dependency_type: "blocks" }] });
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${a}/complete`, { result: "a", usage: { cost_usd: 0.5, input_tokens: 10 } }));
    await usageOn(a, (u) => u !== null);
    const usage = (await expectOk(call(`/api/v1/tasks/${b}/usage`, { token: w.admin }))).json;
    expect(usage.totals.cost_usd).toBe(0);
    expect([...usage.graph.task_ids].sort()).toEqual([a, b, c].sort());
    expect(usage.graph.task_ids).not.toContain(sibling);
    expect(usage.graph.totals).toMatchObject({ cost_usd: 0.5, input_tokens: 10 });
    // Agents read it too, on their surface.
    expect((await expectOk(cli(w.worker.apiKey, "GET", `${T}/${a}/usage`))).json.totals.cost_usd).toBe(0.5);
  });

  it("answers a project's usage per day, model, agent and task, with the same totals", async () => {
    const by = async (group: string) => (await expectOk(call(`/api/v1/projects/${w.project.id}/usage?group_by=${group}`, { token: w.member.token }))).json;
    const [day, model, agent, task] = await Promise.all(["day", "model", "agent", "task"].map(by));
    expect(day.totals.cost_usd).toBeGreaterThan(1);
    for (const view of [model, agent, task]) expect(view.totals).toEqual(day.totals);
    const sum = (rows: { cost_usd: number }[]) => rows.reduce((s, r) => s + r.cost_usd, 0);
    expect(sum(day.rows)).toBeCloseTo(day.totals.cost_usd, 6);
    expect(sum(model.rows)).toBeCloseTo(day.totals.cost_usd, 6);
    expect(day.rows[0].day).toBe(new Date().toISOString().slice(0, 10));
    expect(model.rows.map((r: { model: string | null }) => r.model)).toEqual(expect.arrayContaining(["claude-opus-4-1", "gpt-5"]));
    expect(agent.rows[0]).toMatchObject({ server_id: w.worker.id, server_name: w.worker.name });
    expect(task.rows[0]).toMatchObject({ title: "A task", status: "done" });
    expect(task.rows.map((r: { cost_usd: number }) => r.cost_usd)).toEqual([...task.rows.map((r: { cost_usd: number }) => r.cost_usd)].sort((x, y) => y - x));
  });

  it("refuses bad ranges and groups by name, and another project's usage", async () => {
    const bad = async (query: string, field: string) => {
      const reply = await call(`/api/v1/projects/${w.project.id}/usage?${query}`, { token: w.admin });
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors[0].path).toContain(field);
    };
    await bad("group_by=week", "group_by");
    await bad("from=2026-13-45", "from");
    await bad("from=2026-12-02&to=2026-11-01", "from");
    await bad("from=2020-01-01&to=2026-01-01", "from");
    const other = await createProject(w.admin, `Other ${crypto.randomUUID().slice(0, 6)}`);
    expectProblem(await call(`/api/v1/projects/${other.id}/usage`, { token: w.member.token }), 404, "NOT_FOUND");
  });
});
