/**
 * The overviews in real Chromium: tasks made through the API and driven to done, failed (one retried first), running,
 * pending and waiting on a person; then the projects page's card and the project's overview show the numbers the API
 * answers, at 1440×900 and 390×844 with no sideways scroll; usage across projects leads to the project's Usage page.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessTokenOf, hub, hubAs, launchChromium, ok, registerAgent, screenshot, signedIn } from "./driver";

let browser: Browser;
let context: BrowserContext;
let admin: string;
let projectId: string;
let agent: { id: string; name: string; apiKey: string };

const asAdmin = () => hubAs({ token: admin });
const asAgent = () => hubAs({ apiKey: agent.apiKey });
const task = (id: string) => ({ params: { path: { id } } });

async function createTask(title: string, type = "feature") {
  return (await ok(asAdmin().POST("/api/v1/tasks", { body: { project_id: projectId, title, type } }), 201)).id;
}
async function run(id: string) {
  await ok(asAgent().POST("/api/v1/server/tasks/{id}/assign", { ...task(id), body: { server_name: agent.name } }));
  await ok(asAgent().POST("/api/v1/server/tasks/{id}/start", task(id)));
}
const complete = (id: string, cost = 0) =>
  ok(
    asAgent().POST("/api/v1/server/tasks/{id}/complete", {
      ...task(id),
      body: { result: "Done", ...(cost ? { usage: { model: "claude-sonnet-4-5", input_tokens: 1000, output_tokens: 200, cost_usd: cost } } : {}) },
    }),
  );
const fail = (id: string) => ok(asAgent().POST("/api/v1/server/tasks/{id}/fail", { ...task(id), body: { error: "The build broke" } }));

const glanceOf = async () => (await ok(asAdmin().GET("/api/v1/projects/overview"))).projects.find((p) => p.project_id === projectId)!;
const overviewOf = async () => ok(asAdmin().GET("/api/v1/projects/{id}/overview", { params: { path: { id: projectId }, query: { days: 14 } } }));
const scrollsSideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
const stat = (scope: ReturnType<Page["locator"]>, name: string) => scope.locator(`[data-stat="${name}"]`).innerText();

beforeAll(async () => {
  browser = await launchChromium();
  const signed = await signedIn(browser, hub().admin.email, hub().admin.password);
  context = signed.context;
  admin = await accessTokenOf(signed.page);
  await signed.page.close();
  projectId = (await ok(asAdmin().POST("/api/v1/projects", { body: { name: `Overview ${Date.now().toString(36)}`, description: "Numbers at a glance" } }), 201))
    .id;
  agent = await registerAgent(admin, projectId, `overseer-${Date.now().toString(36)}`);
  await ok(
    asAdmin().POST("/api/v1/projects/{id}/budgets", {
      params: { path: { id: projectId } },
      body: { scope: "project", period: "day", limit_usd: 2, actions: [{ at_percent: 80, action: "warn" }] },
    }),
    201,
  );
  for (const [title, type, cost] of [
    ["Add the login page", "feature", 0.42],
    ["Fix the flaky upload", "bugfix", 0.3],
    ["Document the API", "docs", 0.12],
  ] as const) {
    const id = await createTask(title, type);
    await run(id);
    await complete(id, cost);
  }
  const flaky = await createTask("Migrate the database");
  await run(flaky);
  await fail(flaky);
  await ok(asAdmin().POST("/api/v1/tasks/{id}/retry", task(flaky)));
  await run(flaky);
  await fail(flaky);
  const broken = await createTask("Upgrade the compiler");
  await run(broken);
  await fail(broken);
  await run(await createTask("Write the release notes", "docs"));
  await createTask("Plan the next quarter");
  const asking = await createTask("Choose a region");
  await run(asking);
  await ok(asAgent().POST("/api/v1/server/tasks/{id}/help", { ...task(asking), body: { question: "Which region?", intervention_type: "question" } }));
  // Spend is counted by the project's room about a second after the completions.
  for (const start = Date.now(); (await glanceOf()).spend_today_usd < 0.84;) {
    if (Date.now() - start > 15_000) throw new Error(`Today's spend is ${(await glanceOf()).spend_today_usd}, not 0.84`);
    await new Promise((r) => setTimeout(r, 200));
  }
}, 120_000);
afterAll(async () => {
  await browser?.close();
});

describe("the overviews", () => {
  it("shows each project's card with the numbers the API answers, on a wide screen and a phone", async () => {
    const g = await glanceOf();
    expect(g).toMatchObject({ open_tasks: 3, questions_waiting: 1, agents_online: 1, failures_today: 3 });
    const page = await context.newPage();
    await page.goto(`${hub().url}/projects`);
    const card = page.locator(`.project-card[data-project-id="${projectId}"]`);
    await card.waitFor();
    expect(await stat(card, "open_tasks")).toBe(String(g.open_tasks));
    expect(await stat(card, "questions_waiting")).toBe(String(g.questions_waiting));
    expect(await stat(card, "agents_online")).toBe(String(g.agents_online));
    expect(await stat(card, "failures_today")).toBe(String(g.failures_today));
    expect(await stat(card, "spend_today_usd")).toBe(`$${g.spend_today_usd.toFixed(2)}`);
    expect(await card.locator(".status-bar").getAttribute("aria-label")).toBe("Open tasks: 1 pending, 1 running, 1 needs human");
    await card.scrollIntoViewIfNeeded();
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshot(page, "projects");
    // Opened afresh at a phone's size: the sidebar's drawer does not slide shut into the picture.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await card.waitFor();
    expect(await scrollsSideways(page)).toBe(false);
    await screenshot(page, "projects-narrow");
    // The card's name leads to the project's board, its Overview link to the overview.
    await card.locator("a.project-name").click();
    await page.waitForURL(`**/projects/${projectId}/board`);
    await page.goBack();
    await card.getByRole("link", { name: "Overview", exact: true }).click();
    await page.waitForURL(`**/projects/${projectId}/overview`);
    await page.close();
  });

  it("shows the project's overview with the API's numbers, its charts, and what happened last", async () => {
    const o = await overviewOf();
    expect(o.totals).toEqual({ done: 3, failed: 3, retried: 1, cancelled: 0 });
    const page = await context.newPage();
    await page.goto(`${hub().url}/projects/${projectId}/overview`);
    const tiles = page.locator(".tiles");
    await tiles.waitFor();
    expect(await stat(tiles, "open_tasks")).toBe(String(o.open_tasks));
    expect(await stat(tiles, "questions_waiting")).toBe(String(o.questions_waiting));
    expect(await stat(tiles, "agents_online")).toBe(String(o.agents.length));
    expect(await stat(tiles, "done")).toBe(String(o.totals.done));
    expect(await stat(tiles, "failed")).toBe(String(o.totals.failed));
    expect(await stat(tiles, "failure_rate")).toBe(`${o.failure_rate * 100}%`);
    expect(await stat(tiles, "retry_rate")).toBe(`${Math.round(o.retry_rate * 1000) / 10}%`);
    // Three small charts, drawn (uPlot's canvas), each over the period's days.
    const charts = page.locator(".mini-chart");
    await expect.poll(() => page.locator(".mini-chart canvas").count()).toBe(3);
    for (const chart of await charts.all()) expect(await chart.getAttribute("data-days")).toBe("14");
    expect(await charts.nth(0).getAttribute("aria-label")).toContain(`Done ${o.totals.done}`);
    // Time to done per type, as the API reads it from its histogram.
    const rows = page.locator("table.by-type tbody tr");
    expect(await rows.evaluateAll((trs) => trs.map((tr) => [tr.getAttribute("data-type"), tr.children[1]!.textContent, tr.children[2]!.textContent]))).toEqual(
      o.by_type.map((t) => [t.type, String(t.done), String(t.failed)]),
    );
    // Spend over the period, the latest code-health score (none here: no scan), and the open question in words.
    expect(await stat(tiles, "spend")).toBe(`$${o.days.reduce((n, d) => n + d.spend_usd, 0).toFixed(2)}`);
    expect(o.code_health).toBeNull();
    expect(await stat(tiles, "code_health")).toBe("—");
    expect(await page.locator(".open-questions").innerText()).toBe(`${o.questions_waiting} waiting on people in the inbox: 1 task needs an answer (board)`);
    // Each agent online with its load, as the API counts it.
    const load = o.agents.find((a) => a.server_id === agent.id)!;
    const agentRow = page.locator(`table.agents-load tr[data-server-id="${agent.id}"] td`);
    await expect
      .poll(async () => (await agentRow.allInnerTexts()).map((t) => t.trim()))
      .toEqual([agent.name, String(load.sessions), String(load.running_tasks)]);
    expect(await page.locator(".budget-line").innerText()).toContain("of $2.00");
    expect(await page.locator(".recent-events li").count()).toBe(o.recent_events.length);
    await screenshot(page, "overview");
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await tiles.waitFor();
    expect(await scrollsSideways(page)).toBe(false);
    await screenshot(page, "overview-narrow");
    await page.close();
  });

  it("lists usage across projects this month, each leading to its project's Usage page", async () => {
    const page = await context.newPage();
    await page.goto(`${hub().url}/usage`);
    const row = page.locator(`table.usage-projects tr[data-project-id="${projectId}"]`);
    await row.waitFor();
    expect(await row.locator("td").nth(1).innerText()).toContain("$0.84");
    await row.getByRole("link").click();
    await page.waitForURL(`**/projects/${projectId}/usage`);
    await page.close();
  });
});
