/**
 * The list view of a project's tasks (`/projects/{id}/board?view=list`) in real Chromium: sorting checked against the
 * tasks' own fields, grouping with counts, bulk assign, priority and cancel checked through the API (one refusal
 * reported), a viewer offered nothing, a long list drawn only near the viewport, and the phone layout measured.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "../client";
import { addMember, adminToken, hub, hubAs, launchChromium, ok, registerAgent, screenshot, signIn, signedIn } from "./driver";

type Task = Schemas["Task"];

let browser: Browser;
let admin: string;
let projectId: string;
let agent: { name: string; apiKey: string };
/** Task ids by title. */
const ids = new Map<string, string>();

const SEED = [
  { title: "Alpha: write the docs", priority: "low", type: "docs" },
  { title: "Bravo: login page", priority: "high", type: "feature" },
  { title: "Charlie: cache warmup", priority: "critical", type: "bugfix" },
  { title: "Delta: export CSV", priority: "normal", type: "feature" },
  { title: "Echo: log rotation", priority: "normal", type: "bugfix" },
  { title: "Foxtrot: flaky test", priority: "high", type: "chore" },
] as const;
const PRIORITY_RANK: Record<string, number> = { critical: 0, high: 1, normal: 2, low: 3 };

const asAdmin = () => hubAs({ token: admin });
const readTask = async (id: string) => (await ok(asAdmin().GET("/api/v1/tasks/{id}", { params: { path: { id } } }))) as Task;
const readTasks = () => Promise.all([...ids.values()].map(readTask));

beforeAll(async () => {
  browser = await launchChromium();
  admin = await adminToken();
  projectId = (await ok(asAdmin().POST("/api/v1/projects", { body: { name: "List view" } }), 201)).id;
  agent = await registerAgent(admin, projectId, `lister-${Date.now().toString(36)}`);
  for (const t of SEED) {
    const created = await ok(asAdmin().POST("/api/v1/tasks", { body: { project_id: projectId, title: t.title, priority: t.priority, type: t.type } }), 201);
    ids.set(t.title, created.id);
  }
  // Echo is finished: cancelling it later must be refused.
  const path = { id: ids.get("Echo: log rotation")! };
  const asAgent = hubAs({ apiKey: agent.apiKey });
  await ok(asAgent.POST("/api/v1/server/tasks/{id}/assign", { params: { path }, body: { server_name: agent.name } }));
  await ok(asAgent.POST("/api/v1/server/tasks/{id}/start", { params: { path } }));
  await ok(asAgent.POST("/api/v1/server/tasks/{id}/complete", { params: { path }, body: { result: "Rotated" } }));
});
afterAll(async () => {
  await browser?.close();
});

async function openList(page: Page, id = projectId) {
  page.on("console", (m) => console.log("CONSOLE", m.type(), m.text()));
  page.on("pageerror", (e) => console.log("PAGEERROR", e.message, e.stack));
  await page.goto(`${hub().url}/projects/${id}/board?view=list`);
  await page.locator("[data-loaded=true] table.task-table").waitFor();
}

/** The titles of the rows drawn, top to bottom. */
const shownTitles = (page: Page) => page.locator("table.task-table tbody tr[data-task-id] td.col-title a").allTextContents();
const header = (page: Page, name: string) => page.locator("table.task-table thead th", { has: page.getByRole("button", { name, exact: true }) });
const row = (page: Page, title: string) => page.locator(`tr[data-task-id="${ids.get(title)}"]`);
const checkbox = (page: Page, title: string) => page.getByRole("checkbox", { name: `Select ${title}`, exact: true });

describe("the list view", () => {
  let page: Page;
  beforeAll(async () => {
    page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    await signIn(page, hub().admin.email, hub().admin.password);
    await openList(page);
  });

  it("sorts by a column either way, in the order the tasks' own fields give", async () => {
    const tasks = await readTasks();
    await header(page, "Title").getByRole("button").click();
    expect(await header(page, "Title").getAttribute("aria-sort")).toBe("ascending");
    const byTitle = tasks.map((t) => t.title).sort((a, b) => a.localeCompare(b));
    expect(await shownTitles(page)).toEqual(byTitle);
    await header(page, "Title").getByRole("button").click();
    expect(await header(page, "Title").getAttribute("aria-sort")).toBe("descending");
    expect(await shownTitles(page)).toEqual(byTitle.slice().reverse());

    await header(page, "Priority").getByRole("button").click();
    expect(await header(page, "Priority").getAttribute("aria-sort")).toBe("ascending");
    expect(await header(page, "Title").getAttribute("aria-sort")).toBeNull();
    // Most urgent first; equal priorities by the newest change first.
    const byPriority = tasks
      .slice()
      .sort((a, b) => PRIORITY_RANK[a.priority]! - PRIORITY_RANK[b.priority]! || b.updated_at.localeCompare(a.updated_at) || a.id.localeCompare(b.id))
      .map((t) => t.title);
    expect(await shownTitles(page)).toEqual(byPriority);
    expect(await page.locator("tbody tr[data-task-id] td.col-priority").allTextContents()).toEqual(
      byPriority.map((title) => tasks.find((t) => t.title === title)!.priority),
    );
  });

  it("groups by status with each group's count, and folds a group away", async () => {
    const tasks = await readTasks();
    await page.getByLabel("Group by").selectOption("status");
    const groups = page.locator("tr.group-row button.group-toggle");
    const counts = new Map<string, number>();
    for (const t of tasks) counts.set(t.status, (counts.get(t.status) ?? 0) + 1);
    expect(await groups.count()).toBe(counts.size);
    const pending = groups.filter({ hasText: "Pending" });
    expect(await pending.locator(".count").textContent()).toBe(String(counts.get("pending")));
    expect(await groups.filter({ hasText: "Done" }).locator(".count").textContent()).toBe(String(counts.get("done")));
    // The first group is Pending (the lifecycle's order), its rows under it.
    expect(await groups.first().locator(".group-label").textContent()).toBe("Pending");

    await pending.click();
    expect(await pending.getAttribute("aria-expanded")).toBe("false");
    expect(await row(page, "Alpha: write the docs").count()).toBe(0);
    expect(await row(page, "Echo: log rotation").count()).toBe(1);
    await pending.click();
    expect(await row(page, "Alpha: write the docs").count()).toBe(1);
    await page.getByLabel("Group by").selectOption("none");
  });

  it("finds tasks by title or id prefix in a search field", async () => {
    const search = page.locator('input[type="search"]');
    await search.fill("cache");
    expect(await shownTitles(page)).toEqual(["Charlie: cache warmup"]);
    await search.fill(ids.get("Delta: export CSV")!.slice(0, 8));
    expect(await shownTitles(page)).toEqual(["Delta: export CSV"]);
    await search.fill("");
    expect((await shownTitles(page)).length).toBe(SEED.length);
  });

  it("assigns three tasks to an agent's server at once (a shift-click selects the range)", async () => {
    await header(page, "Title").getByRole("button").click();
    expect(await header(page, "Title").getAttribute("aria-sort")).toBe("ascending");
    await checkbox(page, "Alpha: write the docs").click();
    await checkbox(page, "Charlie: cache warmup").click({ modifiers: ["Shift"] });
    const bar = page.getByRole("region", { name: "Selected tasks" });
    await expect.poll(() => bar.locator(".bulk-count").textContent()).toBe("3 selected");
    expect(await checkbox(page, "Bravo: login page").isChecked()).toBe(true);

    await bar.getByLabel("Assign to").selectOption(agent.name);
    await screenshot(page, "task-list-1440");
    await bar.getByRole("button", { name: "Assign" }).click();
    await page.locator(".toast", { hasText: `Assigned 3 tasks to ${agent.name}.` }).waitFor();
    for (const title of ["Alpha: write the docs", "Bravo: login page", "Charlie: cache warmup"]) {
      const t = await readTask(ids.get(title)!);
      expect(t.assigned_server_name, title).toBe(agent.name);
      expect(t.status, title).toBe("assigned");
      // The row follows live, through the board's store.
      await expect.poll(() => row(page, title).locator("td.col-assignee").textContent()).toBe(agent.name);
      await expect.poll(() => row(page, title).locator("td.col-status").textContent()).toBe("Assigned");
    }
    expect(await bar.count()).toBe(0);
  });

  it("sets the priority of the selected tasks", async () => {
    await checkbox(page, "Delta: export CSV").click();
    await checkbox(page, "Foxtrot: flaky test").click();
    const bar = page.getByRole("region", { name: "Selected tasks" });
    await bar.getByLabel("Priority").selectOption("low");
    await bar.getByRole("button", { name: "Set priority" }).click();
    await page.locator(".toast", { hasText: "Set 2 tasks to low priority." }).waitFor();
    for (const title of ["Delta: export CSV", "Foxtrot: flaky test"]) {
      expect((await readTask(ids.get(title)!)).priority, title).toBe("low");
      await expect.poll(() => row(page, title).locator("td.col-priority").textContent()).toBe("low");
    }
  });

  it("cancels the selected tasks after a confirmation, reporting the one that cannot be cancelled", async () => {
    for (const title of ["Delta: export CSV", "Echo: log rotation", "Foxtrot: flaky test"]) await checkbox(page, title).click();
    const bar = page.getByRole("region", { name: "Selected tasks" });
    await bar.getByRole("button", { name: "Cancel tasks" }).click();
    const dialog = page.getByRole("dialog", { name: "Cancel 3 tasks?" });
    await dialog.getByRole("button", { name: "Cancel 3 tasks" }).click();
    const report = page.locator(".toast-error", { hasText: "Cancelled 2 of 3 tasks; 1 failed" });
    await report.waitFor();
    expect(await report.textContent()).toContain("Echo: log rotation");
    expect((await readTask(ids.get("Delta: export CSV")!)).status).toBe("cancelled");
    expect((await readTask(ids.get("Foxtrot: flaky test")!)).status).toBe("cancelled");
    expect((await readTask(ids.get("Echo: log rotation")!)).status).toBe("done");
    await expect.poll(() => row(page, "Delta: export CSV").locator("td.col-status").textContent()).toBe("Cancelled");
    // What failed stays selected, to look at or try again.
    await expect.poll(() => bar.locator(".bulk-count").textContent()).toBe("1 selected");
    expect(await checkbox(page, "Echo: log rotation").isChecked()).toBe(true);
    await bar.getByRole("button", { name: "Clear" }).click();
  });

  it("on a phone, stacks each task's facts under its title with no sideways scroll and 44 px targets", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await checkbox(page, "Alpha: write the docs").click();
    await page.getByRole("region", { name: "Selected tasks" }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const title = await row(page, "Bravo: login page").locator("td.col-title a").boundingBox();
    const status = await row(page, "Bravo: login page").locator("td.col-status").boundingBox();
    expect(status!.y).toBeGreaterThanOrEqual(title!.y + title!.height - 1);
    for (const target of [row(page, "Bravo: login page").locator("label.check-target"), row(page, "Bravo: login page").locator("td.col-title a")]) {
      const box = (await target.boundingBox())!;
      expect(box.height).toBeGreaterThanOrEqual(44);
      expect(box.x + box.width).toBeLessThanOrEqual(390);
    }
    // The headers give way to a sort select there: the most urgent first.
    await page.getByLabel("Sort by").selectOption("priority");
    expect((await shownTitles(page))[0]).toBe("Charlie: cache warmup");
    await page.evaluate(() => window.scrollTo(0, 0));
    await expect.poll(() => page.locator(".toast").count(), { timeout: 8000 }).toBe(0);
    await screenshot(page, "task-list-390");
    await page.getByRole("region", { name: "Selected tasks" }).getByRole("button", { name: "Clear" }).click();
    await page.setViewportSize({ width: 1440, height: 900 });
  });
});

describe("the list view for a viewer", () => {
  it("shows the tasks with no checkboxes and no bulk actions", async () => {
    const viewer = { email: `list-viewer-${Date.now()}@example.com`, password: "viewer-password-1" };
    const viewerId = (await ok(asAdmin().POST("/api/v1/users", { body: { ...viewer, role: "viewer" } }), 201)).id;
    await addMember(admin, projectId, viewerId);
    const { page } = await signedIn(browser, viewer.email, viewer.password);
    await openList(page);
    expect((await shownTitles(page)).length).toBe(SEED.length);
    expect(await page.getByRole("checkbox").count()).toBe(0);
    expect(await page.getByRole("region", { name: "Selected tasks" }).count()).toBe(0);
  });
});

describe("a long list", () => {
  it("draws only the rows near the viewport, and reaches the last one by scrolling", async () => {
    const big = (await ok(asAdmin().POST("/api/v1/projects", { body: { name: "Long list" } }), 201)).id;
    const COUNT = 230;
    const titles = Array.from({ length: COUNT }, (_, i) => `Item ${String(i).padStart(3, "0")}`);
    for (let i = 0; i < COUNT; i += 20)
      await Promise.all(titles.slice(i, i + 20).map((title) => ok(asAdmin().POST("/api/v1/tasks", { body: { project_id: big, title } }), 201)));
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    await signIn(page, hub().admin.email, hub().admin.password);
    await openList(page, big);
    expect(await page.locator("table.task-table").getAttribute("data-virtual")).toBe("true");
    expect(await page.locator("span.list-count").textContent()).toBe(`${COUNT} of ${COUNT} tasks`);
    await header(page, "Title").getByRole("button").click();
    const drawn = await page.locator("tbody tr[data-task-id]").count();
    expect(drawn).toBeGreaterThan(10);
    expect(drawn).toBeLessThan(100);
    expect((await shownTitles(page))[0]).toBe("Item 000");
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    await expect.poll(async () => (await shownTitles(page)).at(-1)).toBe(`Item ${COUNT - 1}`);
    expect(await page.locator("tbody tr[data-task-id]").count()).toBeLessThan(100);
    // Select-all covers every shown task, drawn or not.
    await page.getByRole("checkbox", { name: "Select all shown tasks" }).click();
    await expect.poll(() => page.getByRole("region", { name: "Selected tasks" }).locator(".bulk-count").textContent()).toBe(`${COUNT} selected`);
  }, 240_000);
});
