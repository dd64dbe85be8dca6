/**
 * What the agents cost, in real Chromium: tasks completed over the API with a usage block (as an agent that exports no
 * telemetry reports it), counted by the project's room within about a second, then shown on the board's cards, the
 * project's Usage page (totals, a uPlot chart of cost per day, per model, per agent, the costliest tasks), a task's
 * page with its graph's total, and the graph view; a new usage batch updates an open task page with no reload.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { paths } from "../client";
import { accessTokenOf, hub, hubAs, launchChromium, ok, registerAgent, screenshot, signedIn } from "./driver";

type NewTask = Extract<paths["/api/v1/tasks"]["post"]["requestBody"]["content"]["application/json"], { title: string }>;
type Usage = { model: string; input_tokens: number; output_tokens: number; cost_usd: number };

const SONNET: Usage = { model: "claude-sonnet-4-5", input_tokens: 12_000, output_tokens: 3_000, cost_usd: 0.42 };
const CODEX: Usage = { model: "gpt-5-codex", input_tokens: 8_000, output_tokens: 1_000, cost_usd: 0.25 };
const REVIEW: Usage = { model: "claude-sonnet-4-5", input_tokens: 2_000, output_tokens: 500, cost_usd: 0.1 };

let browser: Browser;
let context: BrowserContext;
let admin: string;
let projectId: string;
let agent: { id: string; name: string; apiKey: string };
const ids: Record<"schema" | "migrations" | "review", string> = { schema: "", migrations: "", review: "" };

const asAdmin = () => hubAs({ token: admin });
const asAgent = () => hubAs({ apiKey: agent.apiKey });

async function createTask(title: string, dependencies: NewTask["dependencies"] = []) {
  return (await ok(asAdmin().POST("/api/v1/tasks", { body: { project_id: projectId, title, dependencies } }), 201)).id;
}

/** Assigned to the agent and started: running. */
async function run(taskId: string) {
  const path = { id: taskId };
  await ok(asAgent().POST("/api/v1/server/tasks/{id}/assign", { params: { path }, body: { server_name: agent.name } }));
  await ok(asAgent().POST("/api/v1/server/tasks/{id}/start", { params: { path } }));
}

const complete = (taskId: string, usage: Usage) =>
  ok(asAgent().POST("/api/v1/server/tasks/{id}/complete", { params: { path: { id: taskId } }, body: { result: "Done", usage } }));

/** The project's cost as the hub counts it (its room counts a batch about once a second). */
const projectCost = async () =>
  (await ok(asAdmin().GET("/api/v1/projects/{id}/usage", { params: { path: { id: projectId }, query: { group_by: "day" } } }))).totals.cost_usd;

/** Whether the page can be scrolled sideways (it must not, at any width). */
const scrollsSideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);

beforeAll(async () => {
  browser = await launchChromium();
  const signed = await signedIn(browser, hub().admin.email, hub().admin.password);
  context = signed.context;
  admin = await accessTokenOf(signed.page);
  await signed.page.close();
  const name = `Usage ${Date.now().toString(36)}`;
  projectId = (await ok(asAdmin().POST("/api/v1/projects", { body: { name } }), 201)).id;
  agent = await registerAgent(admin, projectId, `spender-${Date.now().toString(36)}`);
  ids.schema = await createTask("Design the schema");
  ids.migrations = await createTask("Write the migrations", [{ depends_on_task_id: ids.schema, dependency_type: "blocks" }]);
  ids.review = await createTask("Review the migrations", [{ depends_on_task_id: ids.migrations, dependency_type: "blocks" }]);
  await run(ids.schema);
  await complete(ids.schema, SONNET);
  await run(ids.migrations);
  await complete(ids.migrations, CODEX);
  // Counted by the room within about a second (expect.poll is for tests, not their setup).
  for (const start = Date.now(); (await projectCost()) !== 0.67;) {
    if (Date.now() - start > 15_000) throw new Error(`The project's cost is ${await projectCost()}, not 0.67`);
    await new Promise((r) => setTimeout(r, 200));
  }
});
afterAll(async () => {
  await browser?.close();
});

describe("usage on the dashboard", () => {
  it("shows each card's cost and tokens, and none on a card without usage", async () => {
    const page = await context.newPage();
    await page.goto(`${hub().url}/projects/${projectId}/board`);
    await page.locator(".board[data-loaded=true]").waitFor();
    const badge = (id: string) => page.locator(`.card[data-task-id="${id}"] .usage-badge`);
    expect(await badge(ids.schema).textContent()).toBe("$0.42 · 15k tok");
    expect(await badge(ids.migrations).textContent()).toBe("$0.25 · 9k tok");
    expect(await badge(ids.schema).getAttribute("title")).toContain("12,000 in, 3,000 out");
    expect(await badge(ids.review).count()).toBe(0);
    await page.close();
  });

  it("shows the project's Usage page: totals, the cost per day on a chart, per model, per agent and the costliest tasks", async () => {
    const page = await context.newPage();
    await page.goto(`${hub().url}/projects/${projectId}/board`);
    await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "Usage", exact: true }).click();
    await page.locator(".usage-report[data-loaded]").waitFor();
    expect(page.url()).toBe(`${hub().url}/projects/${projectId}/usage`);

    const total = (key: string) => page.locator(`.usage-total-${key} dd`).textContent();
    expect(await total("cost")).toBe("$0.67");
    expect(await total("input")).toBe("20k");
    expect(await total("output")).toBe("4k");
    expect(await page.locator(".usage-total-input dd").getAttribute("title")).toBe("20,000");

    // uPlot draws the 30 days of the period on a canvas, today's bar among them.
    await page.locator(".cost-chart canvas").waitFor();
    expect(await page.locator(".cost-chart").getAttribute("data-days")).toBe("30");
    expect(await page.locator(".cost-chart").getAttribute("data-days-with-usage")).toBe("1");

    const rows = (label: string) => page.getByRole("table", { name: label }).locator("tbody tr").allTextContents();
    const models = await rows("Usage per model");
    expect(models).toHaveLength(2);
    expect(models[0]).toContain("claude-sonnet-4-5");
    expect(models[0]).toContain("$0.42");
    expect(models[1]).toContain("gpt-5-codex");
    expect(models[1]).toContain("$0.25");
    const agents = await rows("Usage per agent");
    expect(agents).toHaveLength(1);
    expect(agents[0]).toContain(agent.name);
    expect(agents[0]).toContain("$0.67");
    const tasks = page.getByRole("table", { name: "Costliest tasks" });
    expect(await tasks.locator("tbody tr").allTextContents()).toEqual([
      expect.stringContaining("Design the schema"),
      expect.stringContaining("Write the migrations"),
    ]);

    // Another period keeps the same usage (it is today's) and stays in the address.
    await page.getByRole("group", { name: "Period" }).getByRole("button", { name: "7 days" }).click();
    await expect.poll(() => page.locator(".cost-chart").getAttribute("data-days")).toBe("7");
    expect(page.url()).toBe(`${hub().url}/projects/${projectId}/usage?days=7`);
    expect(await total("cost")).toBe("$0.67");
    await screenshot(page, "usage");

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.locator(".usage-report[data-loaded] .cost-chart canvas").waitFor();
    expect(await page.locator(".cost-chart").getAttribute("data-days")).toBe("7");
    expect(await scrollsSideways(page)).toBe(false);
    // The chart fits the phone's width.
    const chart = await page.locator(".cost-chart canvas").boundingBox();
    expect(chart!.x + chart!.width).toBeLessThanOrEqual(390);
    await screenshot(page, "usage-narrow");

    // A task of the table opens its page.
    await tasks.getByRole("link", { name: "Design the schema" }).click();
    await page.getByRole("heading", { name: /Design the schema/ }).waitFor();
    expect(page.url()).toBe(`${hub().url}/projects/${projectId}/tasks/${ids.schema}`);
    await page.close();
  });

  it("shows a task's usage and its graph's total, and updates both live when a new usage batch arrives", async () => {
    await run(ids.review);
    const upstream = await context.newPage();
    await upstream.goto(`${hub().url}/projects/${projectId}/tasks/${ids.schema}`);
    await upstream.locator("[data-feed=live]").waitFor();
    const facts = upstream.locator(".usage-facts");
    await facts.waitFor();
    expect(await facts.getAttribute("data-cost")).toBe("0.42");
    const text = await facts.textContent();
    for (const part of ["$0.42", "12k in ·", "3k out ·", "0 cache read ·", "0 cache write"]) expect(text).toContain(part);
    // A completion's usage block says nothing of API time: no row claims it took none.
    expect(text).not.toContain("API time");
    // Its graph: the schema, the migrations that wait for it, and the review that waits for them.
    // The graph's total is read after the task, so its row is looked for once it is there.
    expect(await upstream.locator(".usage-graph-total").getAttribute("data-cost")).toBe("0.67");
    expect(await facts.textContent()).toContain("Its graph (3 tasks)");

    const page = await context.newPage();
    await page.goto(`${hub().url}/projects/${projectId}/tasks/${ids.review}`);
    await page.locator("[data-feed=live]").waitFor();
    await page.locator(".usage-facts").waitFor();
    expect(await page.locator(".usage-facts").textContent()).toContain("No usage reported yet.");

    await complete(ids.review, REVIEW);
    // Its own cost appears, and the graph's total grows on both pages; nothing reloaded.
    await expect.poll(() => page.locator(".usage-facts").getAttribute("data-cost"), { timeout: 10_000 }).toBe("0.1");
    expect(await page.locator(".usage-cost").textContent()).toBe("$0.10");
    await expect.poll(() => page.locator(".usage-graph-total").getAttribute("data-cost")).toBe("0.77");
    // The schema's page heard of it only through the usage batch: no event of its own task came.
    await expect.poll(() => upstream.locator(".usage-graph-total").getAttribute("data-cost"), { timeout: 10_000 }).toBe("0.77");
    for (const p of [page, upstream]) expect(await p.evaluate(() => performance.getEntriesByType("navigation").length)).toBe(1);
    await upstream.close();

    await page.locator(".usage-facts").scrollIntoViewIfNeeded();
    await screenshot(page, "task-usage");
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator(".usage-facts").scrollIntoViewIfNeeded();
    expect(await scrollsSideways(page)).toBe(false);
    await screenshot(page, "task-usage-narrow");
    await page.close();
  });

  it("shows the graph's total cost on the graph view, and each task's on its node", async () => {
    const page = await context.newPage();
    await page.goto(`${hub().url}/projects/${projectId}/graph`);
    await page.locator(".graph[data-loaded=true] .node").first().waitFor();
    await expect.poll(() => page.locator(".graph-usage").getAttribute("data-cost")).toBe("0.77");
    expect(await page.locator(".graph-usage").textContent()).toBe("Total: $0.77 · 27k tok");
    expect(await page.locator(`.node[data-task-id="${ids.schema}"] .node-cost`).textContent()).toBe(" · $0.42");
    await page.close();
  });

  it("says how to send usage when a project has none, linking to the Connect page's telemetry lines", async () => {
    const empty = (await ok(asAdmin().POST("/api/v1/projects", { body: { name: `Unspent ${Date.now().toString(36)}` } }), 201)).id;
    const page = await context.newPage();
    await page.goto(`${hub().url}/projects/${empty}/usage`);
    const note = page.locator(".usage-empty");
    await note.waitFor();
    expect(await note.textContent()).toContain("No usage reported in the last 30 days.");
    await note.getByRole("link", { name: "How to send it" }).click();
    const telemetry = page.locator("#telemetry");
    await telemetry.waitFor();
    expect(page.url()).toBe(`${hub().url}/projects/${empty}/connect#telemetry`);
    expect(await telemetry.textContent()).toContain('OTEL_RESOURCE_ATTRIBUTES="orchestratia.session_id=$ORCHESTRATIA_SESSION_ID"');
    await expect.poll(() => telemetry.evaluate((el) => el.getBoundingClientRect().top < window.innerHeight)).toBe(true);
    await page.close();
  });
});
