/**
 * The keyboard in real Chromium: the command palette (Ctrl-K) finds a task by its title and by the start of its id, a
 * project and a page by name, and Enter opens what it found; `g` then a letter moves, `?` lists the shortcuts and
 * Escape closes them, `/` focuses the board's search, `c` opens the new-task dialog, and keys typed in a field stay
 * there. The palette fits a phone.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { accessTokenOf, hub, hubAs, launchChromium, ok, screenshot, signedIn } from "./driver";
import { FakeDaemon } from "./fake-daemon";

let browser: Browser;
let context: BrowserContext;
let admin: string;
let project: { id: string; name: string };
let daemon: FakeDaemon;
let session: { id: string; name: string };
const tasks: { id: string; title: string }[] = [];

const TITLES = ["Rotate the signing keys", "Write the release notes", "Audit the billing exports"];

beforeAll(async () => {
  browser = await launchChromium();
  const signed = await signedIn(browser, hub().admin.email, hub().admin.password);
  context = signed.context;
  admin = await accessTokenOf(signed.page);
  await signed.page.close();
  const name = `Keys ${Date.now().toString(36)}`;
  project = { id: (await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name } }), 201)).id, name };
  for (const title of TITLES) {
    const task = await ok(hubAs({ token: admin }).POST("/api/v1/tasks", { body: { project_id: project.id, title } }), 201);
    tasks.push({ id: task.id, title });
  }
  daemon = await FakeDaemon.register(admin, project.id, `keys-box-${Date.now().toString(36)}`);
  await daemon.connect();
  const sessionName = `keys-agent-${Date.now().toString(36)}`;
  const made = await ok(
    hubAs({ token: admin }).POST("/api/v1/projects/{id}/sessions", {
      params: { path: { id: project.id } },
      body: { server_id: daemon.id, name: sessionName, working_directory: "/home/dev/keys" },
    }),
    201,
  );
  session = { id: made.id, name: sessionName };
});
afterEach(async () => {
  for (const page of context.pages()) await page.close();
});
afterAll(async () => {
  daemon?.close();
  await browser?.close();
});

/** Polls for a while: the page answers within a few seconds even on a busy machine. */
const soon = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 10_000 });

const url = (path: string) => `${hub().url}${path}`;

/** A page of this context (signed in: another context would spend its refresh cookie, which works once). */
async function newPage(width = 1440, height = 900): Promise<Page> {
  const page = await context.newPage();
  await page.setViewportSize({ width, height });
  return page;
}

/** The page at this path, once the app has shown it (keys pressed before that reach nothing). */
async function open(path: string, width?: number, height?: number): Promise<Page> {
  const page = await newPage(width, height);
  await page.goto(url(path));
  await page.locator("main.page").waitFor();
  return page;
}

async function board(width?: number, height?: number): Promise<Page> {
  const page = await newPage(width, height);
  await page.goto(url(`/projects/${project.id}/board`));
  await page.locator(".board[data-loaded=true]").waitFor();
  return page;
}

const palette = (page: Page) => page.getByRole("dialog", { name: "Go to" });
const field = (page: Page) => palette(page).getByRole("combobox");
/** The option the palette has active (aria-activedescendant), as the person hears it. */
const activeOption = (page: Page) =>
  field(page).evaluate((input) => document.getElementById(input.getAttribute("aria-activedescendant") ?? "")?.textContent ?? null);

async function openPalette(page: Page) {
  await page.keyboard.press("Control+k");
  await field(page).waitFor();
  await soon(() => page.evaluate(() => document.activeElement?.getAttribute("role"))).toBe("combobox");
}

describe("the command palette", () => {
  it("finds a task by its title, and Enter opens it", async () => {
    const page = await board();
    await openPalette(page);
    await field(page).fill("release not");
    const task = tasks[1]!;
    await soon(() => activeOption(page)).toContain(task.title);
    await screenshot(page, "palette-1440");
    await page.keyboard.press("Enter");
    await page.waitForURL(url(`/projects/${project.id}/tasks/${task.id}`));
    await expect(palette(page).isVisible()).resolves.toBe(false);
  });

  it("finds a task by the start of its id from a page that does not show the tasks, and the arrows choose among options", async () => {
    const page = await open(`/projects/${project.id}/sessions`);
    await openPalette(page);
    const task = tasks[2]!;
    await field(page).fill(task.id.slice(0, 8));
    await soon(() => activeOption(page)).toContain(task.title);
    // Every title has "the": the arrows move the active option, which aria-activedescendant names.
    await field(page).fill("the");
    await soon(() => palette(page).getByRole("option").count()).toBeGreaterThanOrEqual(3);
    const first = await activeOption(page);
    await page.keyboard.press("ArrowDown");
    await soon(() => activeOption(page)).not.toBe(first);
    const second = await activeOption(page);
    await expect(palette(page).getByRole("option", { selected: true }).textContent()).resolves.toBe(second);
    await page.keyboard.press("ArrowUp");
    await soon(() => activeOption(page)).toBe(first);
    await field(page).fill(task.id.slice(0, 8));
    await soon(() => activeOption(page)).toContain(task.title);
    await page.keyboard.press("Enter");
    await page.waitForURL(url(`/projects/${project.id}/tasks/${task.id}`));
  });

  it("finds a project and a page by name, opened from the sidebar's button too", async () => {
    const page = await open("/inbox");
    await page.getByRole("button", { name: /Search/ }).click();
    await field(page).waitFor();
    await field(page).fill(project.name);
    await soon(() => activeOption(page)).toContain(project.name);
    await page.keyboard.press("Enter");
    await page.waitForURL(url(`/projects/${project.id}/board`));
    await openPalette(page);
    await field(page).fill("rules");
    await soon(() => activeOption(page)).toContain("Rules");
    await page.keyboard.press("Enter");
    await page.waitForURL(url("/rules"));
  });

  it("finds the open project's session and a server by name", async () => {
    const page = await board();
    await openPalette(page);
    await field(page).fill(session.name);
    await soon(() => activeOption(page)).toContain(session.name);
    await page.keyboard.press("Enter");
    await page.waitForURL(url(`/projects/${project.id}/sessions/${session.id}`));
    await openPalette(page);
    await field(page).fill(daemon.name);
    // The server itself (its detail is its host name), not the session on it.
    await soon(() => activeOption(page)).toContain(`${daemon.name}.internal`);
    await page.keyboard.press("Enter");
    await page.waitForURL(url(`/servers/${daemon.id}`));
  });

  it("closes on Escape, and fits a phone without sideways scroll", async () => {
    const page = await board(390, 844);
    await openPalette(page);
    await field(page).fill("the");
    await soon(() => palette(page).getByRole("option").count()).toBeGreaterThanOrEqual(3);
    const box = (await palette(page).boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    // No option reaches past the palette's edge (long titles are cut with an ellipsis).
    const widest = await palette(page)
      .getByRole("option")
      .evaluateAll((options) => Math.max(...options.map((o) => o.getBoundingClientRect().right)));
    expect(widest).toBeLessThanOrEqual(box.x + box.width);
    await screenshot(page, "palette-390");
    await page.keyboard.press("Escape");
    await soon(() => palette(page).isVisible()).toBe(false);
  });
});

describe("shortcuts", () => {
  it("g then a letter moves: g b to the board, g i to the inbox", async () => {
    const page = await open(`/projects/${project.id}/sessions`);
    await page.getByRole("heading", { name: project.name }).waitFor();
    await page.keyboard.press("g");
    await page.keyboard.press("b");
    await page.waitForURL(url(`/projects/${project.id}/board`));
    // Straight after another: g b left nothing half-pressed (g g would go to the graph).
    await page.keyboard.press("g");
    await page.keyboard.press("l");
    await page.waitForURL(url(`/projects/${project.id}/board?view=list`));
    await page.keyboard.press("g");
    await page.keyboard.press("g");
    await page.waitForURL(url(`/projects/${project.id}/graph`));
    await page.keyboard.press("g");
    await page.keyboard.press("i");
    await page.waitForURL(url("/inbox"));
  });

  it("? lists the shortcuts and Escape closes the list", async () => {
    const page = await board();
    await page.keyboard.press("Shift+Slash");
    const list = page.getByRole("dialog", { name: "Keyboard shortcuts" });
    await list.waitFor();
    await expect(list.getByRole("row").filter({ hasText: "Go to the project's board" }).textContent()).resolves.toMatch(/^g then b/);
    await screenshot(page, "shortcuts-1440");
    await page.keyboard.press("Escape");
    await soon(() => list.isVisible()).toBe(false);

    const small = await board(390, 844);
    await small.keyboard.press("Shift+Slash");
    await small.getByRole("dialog", { name: "Keyboard shortcuts" }).waitFor();
    expect(await small.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await screenshot(small, "shortcuts-390");
  });

  it("/ focuses the board's search, and keys typed there stay there", async () => {
    const page = await board();
    await page.keyboard.press("/");
    const search = page.locator("main input[type=search]").first();
    await soon(() => search.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.type("g b c");
    await expect(search.inputValue()).resolves.toBe("g b c");
    expect(page.url()).toBe(url(`/projects/${project.id}/board`));
    await expect(page.locator("dialog[open]").count()).resolves.toBe(0);
  });

  it("c opens the board's new-task dialog", async () => {
    const page = await board();
    await page.keyboard.press("c");
    const dialog = page.getByRole("dialog", { name: "New task" });
    await dialog.waitFor();
    await soon(() => page.evaluate(() => document.querySelector("dialog.task-dialog")?.hasAttribute("open"))).toBe(true);
  });

  it("/ opens the palette on a page with no search of its own", async () => {
    const page = await open("/rules");
    await page.keyboard.press("/");
    await field(page).waitFor();
  });
});
