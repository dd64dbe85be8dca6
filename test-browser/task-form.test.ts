/**
 * The task form in real Chromium, as a person uses it: tasks made from the board's dialog and from the new-task page,
 * then one with every kind of field, two typed dependencies (one reading a contract) and a session as its assignee;
 * once its upstream completes (reported by a fake of the official daemon) its page shows the contract it received.
 * The hub's refusals show beside the fields they name; both pages fit a phone.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { accessTokenOf, hub, hubAs, launchChromium, ok, screenshot, signedIn } from "./driver";
import { FakeDaemon } from "./fake-daemon";

let browser: Browser;
let asAdmin: BrowserContext;
let admin: string;
const daemons: FakeDaemon[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  const signed = await signedIn(browser, hub().admin.email, hub().admin.password);
  asAdmin = signed.context;
  admin = await accessTokenOf(signed.page);
  await signed.page.close();
});
afterEach(async () => {
  for (const page of asAdmin.pages()) await page.close();
});
afterAll(async () => {
  daemons.forEach((d) => d.close());
  await browser?.close();
});

const asAdminApi = () => hubAs({ token: admin });
const readTask = async (id: string) => {
  const t = await ok(asAdminApi().GET("/api/v1/tasks/{id}", { params: { path: { id } } }));
  if (!("project_id" in t)) throw new Error("not the hub's task shape");
  return t;
};

/** A project served by a connected fake daemon, with a running session on it. */
async function projectWithSession(name: string) {
  const project = await ok(asAdminApi().POST("/api/v1/projects", { body: { name } }), 201);
  const daemon = await FakeDaemon.register(admin, project.id, `${name.toLowerCase().replaceAll(" ", "-")}-box`);
  daemons.push(daemon);
  await daemon.connect();
  const session = await ok(
    asAdminApi().POST("/api/v1/projects/{id}/sessions", { params: { path: { id: project.id } }, body: { server_id: daemon.id, name: "builder-1" } }),
    201,
  );
  await expect
    .poll(async () => (await ok(asAdminApi().GET("/api/v1/projects/{id}/sessions/{sid}", { params: { path: { id: project.id, sid: session.id } } }))).status)
    .toBe("running");
  return { project, daemon, session };
}

/** The id of the task whose page is open. */
const taskIdOf = (page: Page) => /\/tasks\/([0-9a-f-]{36})$/.exec(page.url())?.[1];

/** What inside `selector` reaches past the window's right edge (nothing, when it fits a phone). */
const fitsWidth = (page: Page, selector: string) =>
  page
    .locator(selector)
    .evaluate((root) =>
      [root, ...root.querySelectorAll("*")]
        .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
        .map((e) => `${e.tagName.toLowerCase()}.${e.className}`),
    );

/** Replaces what the structured spec's editor holds, typing as a person would. */
async function typeStructuredSpec(page: Page, json: string) {
  const editor = page.locator(".structured-spec-field .cm-content");
  await editor.click();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(json);
}

async function addDependency(page: Page, search: string, title: string) {
  await page.getByLabel("Find a task to depend on").fill(search);
  await page.getByRole("button", { name: `Depend on “${title}”` }).click();
}

const SPEC = [
  "# The client",
  "",
  "Calls the API with **fetch**; see [the docs](https://example.com/docs).",
  "",
  "- retries with back-off",
  "- a timeout per call",
  "",
  "<img src=x onerror=alert(1)> and [a trap](javascript:alert(1))",
].join("\n");

describe("the task form", () => {
  it("creates tasks from the board's dialog and the new-task page, then one with typed dependencies for a session, which shows its upstream's contract", async () => {
    const { project, daemon, session } = await projectWithSession("Contracts");
    const page = await asAdmin.newPage();
    await page.goto(`${hub().url}/projects/${project.id}/board`);
    await page.locator("[data-feed=live]").waitFor();

    // From the board: the dialog, which leads to the new task's page.
    await page.getByRole("button", { name: "New task" }).click();
    const dialog = page.getByRole("dialog", { name: "New task" });
    await dialog.getByLabel("Title").fill("Design the API schema");
    await screenshot(page, "new-task-dialog");
    await dialog.getByRole("button", { name: "Create task" }).click();
    await page.getByRole("heading", { name: /Design the API schema/ }).waitFor();
    const schemaTask = taskIdOf(page)!;
    expect(schemaTask).toBeDefined();

    // From its own page, which the board links to.
    await page.goto(`${hub().url}/projects/${project.id}/tasks/new`);
    await page.getByLabel("Title").fill("Set up the database");
    await page.getByLabel("Type", { exact: true }).fill("chore");
    await page.getByRole("button", { name: "Create task" }).click();
    await page.getByRole("heading", { name: /Set up the database/ }).waitFor();
    const databaseTask = taskIdOf(page)!;
    expect((await readTask(databaseTask)).type).toBe("chore");

    // The downstream task, with every kind of field.
    await page.goto(`${hub().url}/projects/${project.id}/tasks/new`);
    await page.locator("[data-feed=live]").waitFor();
    await page.getByLabel("Title").fill("Build the API client");
    await page.getByLabel("Priority").selectOption("high");
    await page.getByLabel("Spec (markdown)").fill(SPEC);
    const preview = page.getByRole("region", { name: "Spec preview" });
    await preview.getByRole("heading", { name: "The client" }).waitFor();
    expect(await preview.locator("strong").textContent()).toBe("fetch");
    await page.getByRole("button", { name: "Add a criterion" }).click();
    await page.getByLabel("Criterion 1", { exact: true }).fill("Every call times out");
    await page.getByRole("button", { name: "Add a criterion" }).click();
    await page.getByLabel("Criterion 2", { exact: true }).fill("Failures are retried three times");
    await page.getByLabel("Languages (all required)").fill("typescript");
    await page.getByLabel("Environments (one required)").fill("linux, macos");
    await page.getByText("Structured spec", { exact: true }).click();
    await page.getByRole("button", { name: "Start from the template" }).click();
    await page.locator(".structured-spec-field .cm-content").waitFor();
    await addDependency(page, "schema", "Design the API schema");
    await addDependency(page, "database", "Set up the database");
    const schemaRow = page.locator(`[data-dependency="${schemaTask}"]`);
    await schemaRow.getByLabel("Dependency type").selectOption("input");
    await schemaRow.getByLabel("Contract key").fill("api_schema");
    await page.getByLabel("Assignee").selectOption(`session:${session.id}`);
    await page.evaluate(() => scrollTo(0, 0));
    await screenshot(page, "new-task");
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await fitsWidth(page, ".task-form")).toEqual([]);
    await schemaRow.scrollIntoViewIfNeeded();
    await screenshot(page, "new-task-narrow");
    await page.setViewportSize({ width: 1440, height: 900 });

    await page.getByRole("button", { name: "Create task" }).click();
    await page.getByRole("heading", { name: /Build the API client/ }).waitFor();
    const clientTask = taskIdOf(page)!;
    const created = await readTask(clientTask);
    expect(created).toMatchObject({
      priority: "high",
      spec: SPEC,
      acceptance_criteria: ["Every call times out", "Failures are retried three times"],
      requirements: { $schema: "orchestratia/requirements/v1", languages: ["typescript"], environments: ["linux", "macos"] },
      structured_spec: { $schema: "orchestratia/task-spec/v1" },
      target_session_id: session.id,
      assigned_server_id: daemon.id,
      status: "assigned",
      blocked: true,
    });
    expect(created.dependencies.map((d) => [d.depends_on_task_id, d.dependency_type, d.contract_key])).toEqual(
      expect.arrayContaining([
        [schemaTask, "input", "api_schema"],
        [databaseTask, "blocks", null],
      ]),
    );

    // Its page: the spec as markdown with nothing of its HTML let through, and the session that has it, with its terminal.
    const spec = page.locator(".task-section", { has: page.getByRole("heading", { name: "Spec", exact: true }) });
    await spec.getByRole("heading", { name: "The client" }).waitFor();
    expect(await spec.getByRole("link", { name: "the docs" }).getAttribute("href")).toBe("https://example.com/docs");
    expect(await spec.locator("img").count()).toBe(0);
    expect(await spec.locator('a[href^="javascript"]').count()).toBe(0);
    expect(await spec.textContent()).toContain("<img src=x onerror=alert(1)>");
    const sessions = page.locator(".worked-by");
    expect(await sessions.getByRole("link", { name: "open its terminal" }).getAttribute("href")).toBe(`/projects/${project.id}/sessions/${session.id}`);
    expect(await sessions.textContent()).toContain(`Assigned to session builder-1 on ${daemon.name}`);
    await page.locator(`[data-upstream="${schemaTask}"]`).getByText("unresolved").waitFor();

    // Edit, now that it has left pending: what the hub keeps fixed is not offered; the rest saves.
    await page.getByText("Edit", { exact: true }).click();
    const edit = page.locator(".edit-task");
    await edit.getByText("its type, spec, structured spec, requirements and dependencies are fixed now").waitFor();
    expect(await edit.getByLabel("Spec (markdown)").count()).toBe(0);
    expect(await edit.getByLabel("Find a task to depend on").count()).toBe(0);
    await edit.getByLabel("Priority").selectOption("critical");
    await edit.getByRole("button", { name: "Add a criterion" }).click();
    await edit.getByLabel("Criterion 3", { exact: true }).fill("Errors name the call");
    await edit.getByRole("button", { name: "Save changes" }).click();
    await edit.getByRole("status").getByText("Saved.").waitFor();
    await page.locator(".meta .badge.priority-critical").waitFor();
    expect((await readTask(clientTask)).acceptance_criteria).toEqual(["Every call times out", "Failures are retried three times", "Errors name the call"]);
    await page.getByText("Edit", { exact: true }).click();

    // The upstreams complete, reported with the daemon's key as its CLI would; one result holds the contract.
    const asDaemon = hubAs({ apiKey: daemon.apiKey });
    const endpoints = { endpoints: ["GET /users", "POST /users"] };
    for (const [id, result] of [
      [schemaTask, { $schema: "orchestratia/task-result/v1", summary: "Schema designed", contracts: { api_schema: { status: "fulfilled", data: endpoints } } }],
      [databaseTask, "Database ready"],
    ] as const) {
      const path = { params: { path: { id } } };
      await ok(asDaemon.POST("/api/v1/server/tasks/{id}/assign", { ...path, body: { server_name: daemon.name } }));
      await ok(asDaemon.POST("/api/v1/server/tasks/{id}/start", path));
      await ok(asDaemon.POST("/api/v1/server/tasks/{id}/complete", { ...path, body: { result } }));
    }
    // Live: the downstream page shows what it received, with no reload.
    const received = page.locator(`[data-upstream="${schemaTask}"] .contract.received`);
    await received.waitFor();
    expect(JSON.parse((await received.locator("pre").textContent())!)).toEqual(endpoints);
    await page.locator(".meta .badge.blocked").waitFor({ state: "detached" });
    expect(await page.evaluate(() => performance.getEntriesByType("navigation").length)).toBe(1);
    await page.locator(".phase-times [data-phase=waited]").waitFor();
    await screenshot(page, "task-page");
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await fitsWidth(page, ".task-page article")).toEqual([]);
    await received.scrollIntoViewIfNeeded();
    await screenshot(page, "task-page-narrow");
    await page.setViewportSize({ width: 1440, height: 900 });

    // The upstream's page: the task it held back, linked; how long it ran; and no empty action box now that it is done.
    await page.locator(`[data-upstream="${schemaTask}"]`).getByRole("link", { name: "Design the API schema" }).click();
    await page.getByRole("heading", { name: /Design the API schema/ }).waitFor();
    const dependent = page.locator(`[data-dependent="${clientTask}"]`);
    await dependent.waitFor();
    expect(await dependent.textContent()).toContain("waits for its api_schema contract (released)");
    await page.locator(".phase-times [data-phase=ran]").waitFor();
    expect(await page.locator(".actions").count()).toBe(0);
    expect(await page.locator(".edit-task").count()).toBe(0);
    await dependent.getByRole("link", { name: "Build the API client" }).click();
    await page.getByRole("heading", { name: /Build the API client/ }).waitFor();
  });

  it("shows the hub's refusals beside the fields they name, and creates nothing until the form holds", async () => {
    const project = await ok(asAdminApi().POST("/api/v1/projects", { body: { name: "Refused fields" } }), 201);
    await ok(asAdminApi().POST("/api/v1/tasks", { body: { project_id: project.id, title: "An upstream" } }), 201);
    const taskCount = async () => (await ok(asAdminApi().GET("/api/v1/tasks", { params: { query: { project_id: project.id } } }))).count;
    const page = await asAdmin.newPage();
    await page.goto(`${hub().url}/projects/${project.id}/tasks/new`);
    await page.locator("[data-feed=live]").waitFor();
    const problem = (field: string) => page.locator(`[data-field-problem="${field}"]`);
    let sent = 0;
    page.on("request", (r) => void (r.method() === "POST" && r.url().endsWith("/api/v1/tasks") && sent++));

    // JSON that does not parse is said at once, beside the editor, and nothing is sent.
    await page.getByLabel("Title").fill("   ");
    await page.getByText("Structured spec", { exact: true }).click();
    await page.getByRole("button", { name: "Start from the template" }).click();
    await typeStructuredSpec(page, '{ "nope": ');
    await page.getByRole("button", { name: "Create task" }).click();
    await problem("structured_spec").waitFor();
    expect(await problem("structured_spec").textContent()).toMatch(/^is not JSON/);
    expect(sent).toBe(0);

    // The hub's refusals: an empty title and a contract key it does not accept, each beside its field.
    await typeStructuredSpec(page, '{ "goal": "no schema" }');
    await addDependency(page, "upstream", "An upstream");
    await page.getByLabel("Contract key (optional)").fill("api schema");
    await page.getByRole("button", { name: "Create task" }).click();
    await problem("title").waitFor();
    expect(await problem("title").textContent()).toBe("must not be empty");
    expect(await problem("dependencies.0").textContent()).toBe("contract_key: must be alphanumeric with underscores");
    expect(await problem("structured_spec").count()).toBe(0);

    // Once those hold, the structured spec is the hub's next refusal: it is not a task-spec.
    await page.getByLabel("Title").fill("Fixed title");
    await page.getByLabel("Contract key (optional)").fill("api_schema");
    await page.getByRole("button", { name: "Create task" }).click();
    await problem("structured_spec").waitFor();
    expect(await problem("structured_spec").textContent()).toBe("$schema: must be orchestratia/task-spec/v1");
    expect(await problem("title").count()).toBe(0);
    expect(sent).toBe(2);
    expect(await taskCount()).toBe(1);
    await screenshot(page, "new-task-refused");
  });
});
