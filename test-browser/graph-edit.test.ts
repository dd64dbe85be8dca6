/**
 * Drawing dependencies on the graph in real Chromium: a writer drags from one task to another with the mouse, picks
 * the type and contract key, and sees the edge (and the downstream task blocked); the hub's refusals (a missing
 * contract key, a cycle, a task that has left pending) are shown in its words; an edge is picked and removed; the
 * form under the graph does the same without dragging, on a phone too. A viewer sees the graph with no way to edit it.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { addMember, adminAndViewer, hub, hubAs, launchChromium, ok, screenshot } from "./driver";

let browser: Browser;
let asAdmin: BrowserContext;
let asViewer: BrowserContext;
let admin: string;
let projectId: string;
let schema: string;
let api: string;

const newTask = async (title: string) => (await ok(hubAs({ token: admin }).POST("/api/v1/tasks", { body: { project_id: projectId, title } }), 201)).id;
/** A task's dependencies as the hub has them (read without `format`, the answer is the hub's own task). */
const dependenciesOf = async (id: string) =>
  ((await ok(hubAs({ token: admin }).GET("/api/v1/tasks/{id}", { params: { path: { id } } }))) as { dependencies: unknown[] }).dependencies;

beforeAll(async () => {
  browser = await launchChromium();
  let viewerId: string;
  ({ asAdmin, admin, asViewer, viewerId } = await adminAndViewer(browser, "graph"));
  projectId = (await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Drawn dependencies" } }), 201)).id;
  await addMember(admin, projectId, viewerId);
  schema = await newTask("Design the schema");
  api = await newTask("Build the API");
});
afterEach(async () => {
  for (const page of [...asAdmin.pages(), ...asViewer.pages()]) await page.close();
});
afterAll(async () => {
  await browser?.close();
});

async function openGraph(context: BrowserContext, viewport = { width: 1440, height: 900 }) {
  const page = await context.newPage();
  await page.setViewportSize(viewport);
  await page.goto(`${hub().url}/projects/${projectId}/graph`);
  await page.locator(`.graph[data-loaded=true] .node[data-task-id="${api}"]`).waitFor();
  return page;
}

/** Presses on one task's node, moves the mouse in steps to another's and releases there, as a person drags; says what was drawn meanwhile. */
async function drag(page: Page, from: string, to: string) {
  const centre = async (id: string) => {
    const box = (await page.locator(`.node[data-task-id="${id}"] .box`).boundingBox())!;
    return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  };
  const [a, b] = [await centre(from), await centre(to)];
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move(a.x + 10, a.y + 10, { steps: 3 });
  await page.mouse.move(b.x, b.y, { steps: 12 });
  // What the page showed just before the release: the line following the pointer, and the task marked to drop on.
  const shown = {
    line: await page.locator(".drag-line").count(),
    target: await page
      .locator(".node.drop-target")
      .getAttribute("data-task-id", { timeout: 500 })
      .catch(() => null),
  };
  await page.mouse.up();
  return shown;
}

const edge = (page: Page, type: string, from: string, to: string) => page.locator(`.edge-${type}[data-from="${from}"][data-to="${to}"]`);
/** Waits for an edge to be drawn: a straight one has no width, which the browser counts as not visible, so it is waited for in the page. */
const drawn = (page: Page, type: string, from: string, to: string) => edge(page, type, from, to).waitFor({ state: "attached" });

describe("drawing a dependency", () => {
  it("adds one by dragging from a task to another, refuses a cycle in the hub's words, and removes it from the graph", async () => {
    const page = await openGraph(asAdmin);
    expect(await drag(page, schema, api)).toEqual({ line: 1, target: api });
    const dialog = page.getByRole("dialog", { name: "Add a dependency" });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain("Build the API will depend on Design the schema");

    // An input without its contract key: the hub's refusal is shown and the dialog stays.
    await dialog.getByLabel("Type").selectOption("input");
    await dialog.getByRole("button", { name: "Add dependency" }).click();
    await expect.poll(() => dialog.getByRole("alert").textContent()).toBe("contract_key: is required for an input dependency");
    await dialog.getByLabel("Contract key").fill("api_schema");
    await dialog.getByRole("button", { name: "Add dependency" }).click();
    await dialog.waitFor({ state: "detached" });

    // The edge arrives over the live feed, named by its contract; the task that now waits shows it is blocked.
    await drawn(page, "input", schema, api);
    expect(await edge(page, "input", schema, api).locator(".edge-label").textContent()).toBe("api_schema");
    await expect.poll(() => page.locator(`.node[data-task-id="${api}"]`).getAttribute("data-blocked")).toBe("true");
    expect(await page.locator(`.node[data-task-id="${api}"] .node-status`).textContent()).toBe("pending · blocked");
    expect(await page.locator(`.node[data-task-id="${schema}"]`).getAttribute("data-blocked")).toBe("false");
    expect(await dependenciesOf(api)).toEqual([expect.objectContaining({ depends_on_task_id: schema, dependency_type: "input", contract_key: "api_schema" })]);

    // Back the other way closes a cycle: refused, with the tasks named by their titles.
    await drag(page, api, schema);
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Add dependency" }).click();
    await expect
      .poll(() => dialog.getByRole("alert").textContent())
      .toBe("This dependency would close a cycle: “Design the schema” → “Build the API” → “Design the schema”");
    await screenshot(page, "graph-edit-dialog");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "detached" });
    expect(await dependenciesOf(schema)).toEqual([]);

    // Picking the edge shows what it is, with Remove.
    await edge(page, "input", schema, api).locator(".edge-hit").click({ force: true });
    const picked = page.getByRole("region", { name: "Selected dependency" });
    expect(await picked.textContent()).toMatch(/Build the API depends on Design the schema\s*input\s*api_schema/);
    await screenshot(page, "graph-edit");
    await picked.getByRole("button", { name: "Remove" }).click();
    await edge(page, "input", schema, api).waitFor({ state: "detached" });
    await picked.waitFor({ state: "detached" });
    await expect.poll(() => page.locator(`.node[data-task-id="${api}"]`).getAttribute("data-blocked")).toBe("false");
    expect(await dependenciesOf(api)).toEqual([]);
    // A plain click, with no drag, still opens the task.
    await page.locator(`.node[data-task-id="${api}"]`).click();
    await page.getByRole("heading", { name: /Build the API/ }).waitFor();
  });

  it("adds and removes with the form and the list on a phone, and shows why a task that has left pending cannot change", async () => {
    const cancelled = await newTask("Dropped idea");
    await ok(hubAs({ token: admin }).DELETE("/api/v1/tasks/{id}", { params: { path: { id: cancelled } } }));
    const page = await openGraph(asAdmin, { width: 390, height: 844 });
    const form = page.locator(".add-dependency");
    await form.locator("select[name=task]").selectOption({ label: "Dropped idea (cancelled)" });
    await form.locator("select[name=depends_on]").selectOption({ label: "Design the schema (pending)" });
    await form.getByRole("button", { name: "Add dependency" }).click();
    await expect.poll(() => form.getByRole("alert").textContent()).toMatch(/^A task is immutable once it has left pending; this one is cancelled/);

    await form.locator("select[name=task]").selectOption({ label: "Build the API (pending)" });
    await form.getByLabel("Type").selectOption("related");
    await form.getByRole("button", { name: "Add dependency" }).click();
    const row = page.locator(".dependency-list li", { hasText: "Build the API depends on Design the schema" });
    await row.waitFor();
    expect(await row.textContent()).toContain("related");
    await drawn(page, "related", schema, api);
    // A related dependency does not hold the task back.
    expect(await page.locator(`.node[data-task-id="${api}"]`).getAttribute("data-blocked")).toBe("false");
    // Nothing of the page's own overflows the phone's width: the graph scrolls inside its frame.
    const outside = await page.evaluate(() =>
      [...document.querySelectorAll(".graph-page > :not(.project-head), .graph-page > :not(.project-head):not(.graph) *")]
        .filter((e) => e.getBoundingClientRect().right > 390)
        .map((e) => e.outerHTML.slice(0, 80)),
    );
    expect(outside).toEqual([]);
    await form.scrollIntoViewIfNeeded();
    await screenshot(page, "graph-edit-narrow");

    await row.getByRole("button", { name: "Remove: Build the API depends on Design the schema" }).click();
    await row.waitFor({ state: "detached" });
    expect(await dependenciesOf(api)).toEqual([]);
  });
});

describe("a viewer", () => {
  it("sees the graph and its dependencies but nothing to change them with", async () => {
    await ok(
      hubAs({ token: admin }).POST("/api/v1/tasks/{id}/dependencies", {
        params: { path: { id: api } },
        body: { depends_on_task_id: schema, dependency_type: "blocks" },
      }),
      201,
    );
    const page = await openGraph(asViewer);
    await drawn(page, "blocks", schema, api);
    await page.locator(".dependency-list li", { hasText: "Build the API depends on Design the schema" }).waitFor();
    expect(await page.locator(`.node[data-task-id="${api}"]`).getAttribute("data-blocked")).toBe("true");
    expect(await page.getByRole("button", { name: /Remove/ }).count()).toBe(0);
    expect(await page.locator(".add-dependency").count()).toBe(0);
    expect(await page.locator(".graph-hint").count()).toBe(0);
    // A drag draws nothing and asks nothing.
    expect(await drag(page, schema, api)).toEqual({ line: 0, target: null });
    await page.waitForTimeout(300);
    expect(await page.getByRole("dialog").count()).toBe(0);
    // Picking an edge shows what it is, without Remove.
    await edge(page, "blocks", schema, api).locator(".edge-hit").click({ force: true });
    expect(await page.getByRole("region", { name: "Selected dependency" }).textContent()).toContain("blocks");
    expect(await page.getByRole("button", { name: /Remove/ }).count()).toBe(0);
  });
});
