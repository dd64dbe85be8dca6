/**
 * A daemon's first day in real Chromium: a freshly registered server declares no capabilities; the task page says why
 * it cannot take a task that needs a language and greys out Auto-assign; an admin opens the server from the Agents page,
 * declares the language on the server's page, and the waiting task goes to it, as does the next one by Auto-assign.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { addMember, adminAndViewer, hub, hubAs, launchChromium, ok, screenshot } from "./driver";

/** A language no other test's server declares, so only this test's server can take the tasks. */
const LANGUAGE = "zig";

let browser: Browser;
let asAdmin: BrowserContext;
let asViewer: BrowserContext;
let admin: string;
let projectId: string;
let server: { id: string; name: string };

beforeAll(async () => {
  browser = await launchChromium();
  let viewerId: string;
  ({ asAdmin, admin, asViewer, viewerId } = await adminAndViewer(browser, "servers"));
  projectId = (await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Day one" } }), 201)).id;
  await addMember(admin, projectId, viewerId);
  // Registered as the official daemon does, with no capabilities, for this project only.
  const { token } = await ok(hubAs({ token: admin }).POST("/api/v1/servers/tokens", { body: { project_ids: [projectId] } }), 201);
  const name = `day-one-${Date.now()}`;
  const reg = await ok(
    hubAs().POST("/api/v1/servers/register", { body: { name, hostname: `${name}.internal`, os: "linux", registration_token: token, machine_id: `${name}-m` } }),
    201,
  );
  server = { id: reg.id, name };
});
afterEach(async () => {
  for (const page of [...asAdmin.pages(), ...asViewer.pages()]) await page.close();
});
afterAll(async () => {
  await browser?.close();
});

const newTask = (title: string) =>
  ok(hubAs({ token: admin }).POST("/api/v1/tasks", { body: { project_id: projectId, title, requirements: { languages: [LANGUAGE] } } }), 201);
const taskOf = (id: string) => ok(hubAs({ token: admin }).GET("/api/v1/tasks/{id}", { params: { path: { id } } }));

/** The element's right edge is within the viewport's width. */
async function fitsWidth(page: Page, selector: string, width: number) {
  for (const box of await page.locator(selector).evaluateAll((els) => els.map((e) => e.getBoundingClientRect().right))) expect(box).toBeLessThanOrEqual(width);
}

describe("a server with no capabilities", () => {
  it("is declared from its page, and then takes the tasks that need what was declared", async () => {
    const first = await newTask("Port the parser");
    const page = await asAdmin.newPage();

    // The task page: Auto-assign is greyed out with the precise reason.
    await page.goto(`${hub().url}/projects/${projectId}/tasks/${first.id}`);
    const auto = page.getByRole("button", { name: "Auto-assign" });
    await page.locator(".auto-assign .why-not").waitFor();
    expect(await auto.isDisabled()).toBe(true);
    expect(await page.locator(".auto-assign .why-not").textContent()).toContain(`declares no languages; the task needs ${LANGUAGE}`);
    await screenshot(page, "task-auto-assign-disabled");

    // The Agents page says it has none, and leads to its page.
    await page.goto(`${hub().url}/agents`);
    const row = page.locator(`tr[data-server="${server.name}"]`);
    expect(await row.locator(".no-capabilities").textContent()).toContain("No capabilities");
    await row.getByRole("link", { name: "Declare them" }).click();
    await page.getByRole("heading", { name: server.name }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/servers/${server.id}`);
    expect(await page.getByRole("note").textContent()).toContain("No capabilities.");
    await page.setViewportSize({ width: 1440, height: 900 });
    await screenshot(page, "server-no-capabilities");

    // Declared from the page: the language, a tool, two tasks at once.
    await page.getByRole("button", { name: "Declare capabilities" }).click();
    const form = page.getByRole("form", { name: "Declare capabilities" });
    await form.getByLabel("Languages").fill(`${LANGUAGE}, c`);
    await form.getByLabel("Tools").fill("make");
    await form.getByLabel("Tasks at once").fill("2");
    await form.getByRole("button", { name: "Save capabilities" }).click();
    await form.waitFor({ state: "detached" });
    const matched = page.locator('tr[data-capability="Languages"] td[data-label="Used for matching"] .chip');
    expect(await matched.allTextContents()).toEqual([LANGUAGE, "c"]);
    expect(await page.locator('tr[data-capability="Languages"] td[data-label="Sent by the daemon"]').textContent()).toBe("—");
    expect(await page.getByRole("note").count()).toBe(0);
    const { declared, effective } = await ok(hubAs({ token: admin }).GET("/api/v1/servers/{id}", { params: { path: { id: server.id } } }));
    expect(declared).toMatchObject({ languages: [LANGUAGE, "c"], tools: ["make"], max_concurrent_tasks: 2 });
    expect(effective).toMatchObject({ languages: [LANGUAGE, "c"], max_concurrent_tasks: 2 });

    // The waiting task was offered to it; it shows among its current tasks.
    await page.locator(".server-tasks li", { hasText: "Port the parser" }).waitFor({ timeout: 20_000 });
    expect(await taskOf(first.id)).toMatchObject({ status: "assigned", assigned_server_id: server.id });
    await screenshot(page, "server");
    await page.setViewportSize({ width: 390, height: 844 });
    await fitsWidth(page, ".server-page button, .server-page table.capabilities, .server-page input", 390);
    await screenshot(page, "server-narrow");

    // A new task needing the language: Auto-assign is enabled, and gives it to the server.
    const second = await newTask("Port the lexer");
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${hub().url}/projects/${projectId}/tasks/${second.id}`);
    await page.locator(".matches li", { hasText: server.name }).waitFor();
    expect(await auto.isDisabled()).toBe(false);
    await auto.click();
    await page.locator(".task-page .meta strong", { hasText: server.name }).waitFor();
    expect(await taskOf(second.id)).toMatchObject({ status: "assigned", assigned_server_id: server.id });
  });

  it("renames and removes a server from its page, after asking; a viewer sees the page without the controls", async () => {
    const { token } = await ok(hubAs({ token: admin }).POST("/api/v1/servers/tokens", { body: { project_ids: [projectId] } }), 201);
    const name = `short-lived-${Date.now()}`;
    const reg = await ok(hubAs().POST("/api/v1/servers/register", { body: { name, hostname: "h", registration_token: token, machine_id: `${name}-m` } }), 201);

    const viewer = await asViewer.newPage();
    await viewer.goto(`${hub().url}/servers/${server.id}`);
    await viewer.getByRole("heading", { name: server.name }).waitFor();
    expect(await viewer.getByRole("button", { name: /Declare|Edit declared|Rename|Remove/ }).count()).toBe(0);

    const page = await asAdmin.newPage();
    await page.goto(`${hub().url}/servers/${reg.id}`);
    await page.getByRole("heading", { name }).waitFor();
    // A name another server has is refused with the hub's reason.
    await page.getByLabel("Name", { exact: true }).fill(server.name);
    await page.getByRole("button", { name: "Rename" }).click();
    expect(await page.locator(".server-admin [role=alert]").textContent()).toContain("exists already");
    await page.getByLabel("Name", { exact: true }).fill(`${name}-renamed`);
    await page.getByRole("button", { name: "Rename" }).click();
    await page.getByRole("heading", { name: `${name}-renamed` }).waitFor();

    const asked: string[] = [];
    page.on("dialog", (d) => void (asked.push(d.message()), d.accept()));
    await page.getByRole("button", { name: "Remove server" }).click();
    await page.waitForURL(`${hub().url}/agents`);
    expect(asked).toEqual([expect.stringContaining(`Remove ${name}-renamed?`)]);
    const { response } = await hubAs({ token: admin }).GET("/api/v1/servers/{id}", { params: { path: { id: reg.id } } });
    expect(response.status).toBe(404);
  });
});
