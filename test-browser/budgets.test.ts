/**
 * Budgets on a project's Usage page, in real Chromium: a project budget per day with the default thresholds, a task
 * graph's budget in tokens picked by its task, refusals shown beside the field they name, spend and state following
 * usage batches live, a lowered limit holding the project (shown on a task's page too), and a budget deleted.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { paths } from "../client";
import { accessTokenOf, call, hub, hubAs, launchChromium, ok, registerAgent, screenshot, signedIn } from "./driver";

type NewTask = Extract<paths["/api/v1/tasks"]["post"]["requestBody"]["content"]["application/json"], { title: string }>;
type Usage = { model: string; input_tokens: number; output_tokens: number; cost_usd: number };

let browser: Browser;
let context: BrowserContext;
let page: Page;
let admin: string;
let projectId: string;
let agent: { id: string; name: string; apiKey: string };
let plan: string;
let ship: string;

const asAdmin = () => hubAs({ token: admin });
const asAgent = () => hubAs({ apiKey: agent.apiKey });

const createTask = async (title: string, dependencies: NewTask["dependencies"] = []) =>
  (await ok(asAdmin().POST("/api/v1/tasks", { body: { project_id: projectId, title, dependencies } }), 201)).id;

async function runAndComplete(taskId: string, usage: Usage) {
  const path = { id: taskId };
  await ok(asAgent().POST("/api/v1/server/tasks/{id}/assign", { params: { path }, body: { server_name: agent.name } }));
  await ok(asAgent().POST("/api/v1/server/tasks/{id}/start", { params: { path } }));
  await ok(asAgent().POST("/api/v1/server/tasks/{id}/complete", { params: { path }, body: { result: "Done", usage } }));
}

const projectCost = async () =>
  (await ok(asAdmin().GET("/api/v1/projects/{id}/usage", { params: { path: { id: projectId }, query: { group_by: "day" } } }))).totals.cost_usd;

const budgetItems = () => page.locator(".budget-list > li");
const budgetFor = (text: string) => page.locator(".budget-list > li", { hasText: text });
const form = () => page.locator("form.budget-form");

beforeAll(async () => {
  browser = await launchChromium();
  const signed = await signedIn(browser, hub().admin.email, hub().admin.password);
  context = signed.context;
  admin = await accessTokenOf(signed.page);
  await signed.page.close();
  projectId = (await ok(asAdmin().POST("/api/v1/projects", { body: { name: `Budgets ${Date.now().toString(36)}` } }), 201)).id;
  agent = await registerAgent(admin, projectId, `budgeted-${Date.now().toString(36)}`);
  plan = await createTask("Plan the release");
  ship = await createTask("Ship the release", [{ depends_on_task_id: plan, dependency_type: "blocks" }]);
  await runAndComplete(plan, { model: "claude-sonnet-4-5", input_tokens: 12_000, output_tokens: 3_000, cost_usd: 0.42 });
  for (const start = Date.now(); (await projectCost()) !== 0.42;) {
    if (Date.now() - start > 15_000) throw new Error("The completion's usage was not counted");
    await new Promise((r) => setTimeout(r, 200));
  }
  page = await context.newPage();
  await page.goto(`${hub().url}/projects/${projectId}/usage`);
  await page.locator("[data-feed=live]").waitFor();
});
afterAll(async () => {
  await browser?.close();
});

describe("budgets on the Usage page", () => {
  it("adds a project budget per day with the default thresholds, and shows what it has spent of its limit", async () => {
    await page.locator(".budgets").getByText("No budget yet.").waitFor();
    // The defaults: a warning at half, a hold at 80 %, a stop at the limit.
    const thresholds = await form()
      .locator(".budget-action")
      .evaluateAll((rows) => rows.map((r) => `${r.querySelector("input")!.value} ${r.querySelector("select")!.value}`));
    expect(thresholds).toEqual(["50 warn", "80 hold", "100 stop"]);
    await form().getByLabel("Per").selectOption("day");
    await form().locator("input[name=limit]").fill("1");
    await form().getByRole("button", { name: "Add budget" }).click();

    const budget = budgetFor("The project, per day");
    await budget.waitFor();
    expect(await budget.getAttribute("data-state")).toBe("ok");
    expect(await budget.locator(".budget-numbers").textContent()).toBe("$0.42 of $1.00 (42%) · $0.58 left");
    const meter = budget.getByRole("meter");
    expect(await meter.getAttribute("aria-valuenow")).toBe("0.42");
    expect(await meter.getAttribute("aria-valuemax")).toBe("1");
    expect(await meter.locator(".spend-mark").count()).toBe(3);
    expect(await budget.locator(".budget-state").textContent()).toBe("within budget");
    expect(await budget.textContent()).toContain(`counting ${new Date().toISOString().slice(0, 10)}`);
  });

  it("shows the hub's refusals beside the field they name", async () => {
    await form().getByLabel("a task's graph").check();
    await form().locator("input[name=limit]").fill("5");
    await form().getByRole("button", { name: "Add budget" }).click();
    // No task picked: the refusal names task_id.
    await expect.poll(() => form().locator("[data-field-problem=task_id]").textContent()).toBeTruthy();

    await form().locator("select[name=task_id]").selectOption({ label: "Ship the release (pending)" });
    await form().locator("input[name=at_percent-1]").fill("50");
    await form().getByRole("button", { name: "Add budget" }).click();
    await expect.poll(() => form().locator("[data-field-problem=actions]").textContent()).toContain("same at_percent twice");
    expect(await form().locator("[data-field-problem=task_id]").count()).toBe(0);
    expect(await budgetItems().count()).toBe(1);
  });

  it("adds a graph's budget in tokens, and follows the spend of usage batches without a reload", async () => {
    await form().locator("input[name=at_percent-1]").fill("80");
    await form().locator("select[name=unit]").selectOption("tokens");
    await form().locator("input[name=limit]").fill("100000");
    await form().getByRole("button", { name: "Add budget" }).click();
    const graph = budgetFor("The graph of Ship the release");
    await graph.waitFor();
    expect(await graph.locator(".budget-numbers").textContent()).toBe("15k tokens of 100k tokens (15%) · 85k tokens left");
    // The form is ready for the next budget.
    expect(await form().locator("input[name=limit]").inputValue()).toBe("");

    await runAndComplete(ship, { model: "claude-sonnet-4-5", input_tokens: 4_000, output_tokens: 1_000, cost_usd: 0.1 });
    await expect.poll(() => graph.locator(".budget-numbers").textContent(), { timeout: 10_000 }).toBe("20k tokens of 100k tokens (20%) · 80k tokens left");
    // The project's budget passed its warning threshold on the way.
    const project = budgetFor("The project, per day");
    await expect.poll(() => project.getAttribute("data-state")).toBe("warned");
    expect(await project.locator(".budget-numbers").textContent()).toBe("$0.52 of $1.00 (52%) · $0.48 left");
    expect(await project.locator(".budget-thresholds").textContent()).toBe("warn at 50% (crossed) · hold at 80% · stop at 100%");
    expect(await page.evaluate(() => performance.getEntriesByType("navigation").length)).toBe(1);
  });

  it("changes a limit, refusing one of nothing beside its field: the lower limit holds the project, which a task's page shows", async () => {
    const project = budgetFor("The project, per day");
    await project.getByRole("button", { name: "Change limit" }).click();
    await project.locator("input[name=limit_usd]").fill("0");
    await project.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => project.locator("[data-field-problem=limit_usd]").textContent()).toContain("more than 0");
    await project.locator("input[name=limit_usd]").fill("0.6");
    await project.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => project.getAttribute("data-state")).toBe("held");
    expect(await project.locator(".budget-state").textContent()).toBe("held");
    expect(await project.locator(".budget-numbers").textContent()).toBe("$0.52 of $0.60 (87%) · $0.08 left");

    await page.locator(".budgets").scrollIntoViewIfNeeded();
    await screenshot(page, "usage-budgets");
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator(".budget-list").scrollIntoViewIfNeeded();
    expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).toBe(false);
    await screenshot(page, "usage-budgets-narrow");
    await page.setViewportSize({ width: 1440, height: 900 });

    // A task in the held scope says so on its page, with what is left of its tightest budget.
    const task = await context.newPage();
    await task.goto(`${hub().url}/projects/${projectId}/tasks/${ship}`);
    const line = task.locator(".task-budget");
    await line.waitFor();
    expect(await line.locator(".budget-state").textContent()).toBe("held");
    expect(await line.textContent()).toContain("$0.08 left");
    await task.close();
  });

  it("deletes a budget once the person confirms", async () => {
    page.once("dialog", (d) => void d.accept());
    await budgetFor("The graph of Ship the release").getByRole("button", { name: "Delete" }).click();
    await expect.poll(() => budgetItems().count()).toBe(1);
    const left = await call<{ budgets: { scope: string }[] }>(`/api/v1/projects/${projectId}/budgets`, { token: admin });
    expect(left.budgets.map((b) => b.scope)).toEqual(["project"]);
  });
});
