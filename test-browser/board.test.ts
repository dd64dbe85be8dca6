/**
 * The board in real Chromium: a card dragged to a column the lifecycle allows moves the task through the API; dragged
 * to one it does not, nothing changes and a toast says why; the same moves from a card's menu by keyboard; empty
 * columns folded to strips; a phone's board one status at a time with no sideways scroll; and 1,000 tasks in a
 * virtual list that draws a few cards and still scrolls to the last.
 */
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminToken, columnOrNull, hub, hubAs, launchChromium, ok, registerAgent, screenshot, signIn } from "./driver";

let browser: Browser;
let admin: string;

beforeAll(async () => {
  [browser, admin] = await Promise.all([launchChromium(), adminToken()]);
});
afterAll(async () => {
  await browser?.close();
});

const asAdmin = () => hubAs({ token: admin });
const newProject = async (name: string) => (await ok(asAdmin().POST("/api/v1/projects", { body: { name: `${name} ${Date.now().toString(36)}` } }), 201)).id;
const newTask = async (projectId: string, title: string, extra: { priority?: "low" | "normal" | "high" | "critical" } = {}) =>
  (await ok(asAdmin().POST("/api/v1/tasks", { body: { project_id: projectId, title, ...extra } }), 201)).id;
const statusOf = async (id: string) => (await ok(asAdmin().GET("/api/v1/tasks/{id}", { params: { path: { id } } }))).status;

/** Each board's answers to GET /api/v1/servers, as the page received them: what it counted its agents online from. */
const serverLists = new WeakMap<Page, Promise<unknown>[]>();

async function openBoard(projectId: string, viewport = { width: 1440, height: 900 }): Promise<Page> {
  const page = await (await browser.newContext({ viewport })).newPage();
  await signIn(page, hub().admin.email, hub().admin.password);
  const lists: Promise<unknown>[] = [];
  serverLists.set(page, lists);
  page.on("response", (r) => {
    if (r.request().method() === "GET" && new URL(r.url()).pathname === "/api/v1/servers") lists.push(r.json().catch(() => null));
  });
  await page.goto(`${hub().url}/projects/${projectId}/board`);
  await page.locator(".board[data-loaded=true]").waitFor();
  await page.locator("[data-feed=live]").waitFor();
  return page;
}

const card = (page: Page, id: string) => page.locator(`.card[data-task-id="${id}"]`);
const column = (page: Page, status: string) => page.locator(`.column[data-status="${status}"]`);
/** The hub's answer can lag its room on a busy machine: a status is waited for this long. */
const SETTLES = { timeout: 20_000 };
const boxOf = async (l: Locator) => (await l.boundingBox())!;

/** A project with a task in each of several statuses, moved there by its agent as a daemon would. */
async function boardWithWork() {
  const projectId = await newProject("Drag");
  const agent = await registerAgent(admin, projectId, `mover-${Date.now().toString(36)}`);
  const asAgent = hubAs({ apiKey: agent.apiKey });
  const created = async (title: string, require_plan = false) =>
    (await ok(asAgent.POST("/api/v1/server/tasks", { body: { project_id: projectId, title, require_plan } }), 201)).id;
  const ids = {
    plan: await created("Migrate the ledger to D1", true),
    running: await created("Build the login page with email and password, a remember-me box and a reset link that mails a code"),
    pending: await newTask(projectId, "Write the release notes", { priority: "high" }),
    urgent: await newTask(projectId, "Fix the broken deploy", { priority: "critical" }),
  };
  const path = (id: string) => ({ params: { path: { id } } });
  await ok(asAgent.POST("/api/v1/server/tasks/{id}/assign", { ...path(ids.plan), body: { server_name: agent.name } }));
  await ok(asAgent.POST("/api/v1/server/tasks/{id}/plan", { ...path(ids.plan), body: { plan: "1. Export\n2. Import\n3. Verify" } }));
  await ok(asAgent.POST("/api/v1/server/tasks/{id}/assign", { ...path(ids.running), body: { server_name: agent.name } }));
  await ok(asAgent.POST("/api/v1/server/tasks/{id}/start", path(ids.running)));
  return { projectId, ids };
}

describe("the board", () => {
  it("moves a card dragged to a column the lifecycle allows, refuses the others saying why, and folds empty columns", async () => {
    const { projectId, ids } = await boardWithWork();
    const page = await openBoard(projectId);
    await card(page, ids.plan).waitFor();
    expect(await columnOrNull(page, ids.plan)).toBe("plan_review");

    // Empty columns are narrow strips with their label and 0; one opens on a click.
    const done = column(page, "done");
    expect(await done.getAttribute("class")).toContain("collapsed");
    expect((await boxOf(done)).width).toBeLessThan(60);
    expect((await boxOf(column(page, "running"))).width).toBeGreaterThan(260);
    expect(await done.textContent()).toMatch(/Done\s*0/);
    // The running column says how many run against the agents online: as the list the page read said (other tests' agents
    // come and go meanwhile, so a list read later may differ).
    type Listed = { servers: { status: string; project_ids?: string[] | null }[] } | null;
    const counts = ((await Promise.all(serverLists.get(page)!)) as Listed[]).map(
      (l) => l?.servers.filter((s) => s.status === "online" && (s.project_ids == null || s.project_ids.includes(projectId))).length,
    );
    expect(counts.length).toBeGreaterThanOrEqual(1);
    const note = await column(page, "running").locator(".wip-note").textContent();
    const online = Number(note?.match(/^1 running · (\d+) agents? online$/)?.[1]);
    expect(online, `${note}; lists read: ${counts.join(", ")}`).toBeGreaterThanOrEqual(1);
    expect(counts).toContain(online);
    expect(note).toBe(`1 running · ${online} agent${online === 1 ? "" : "s"} online`);
    // A card: its long title cut at two lines, its assignee's initials, its age.
    const long = card(page, ids.running);
    const title = await long.locator(".clamp").evaluate((el) => ({
      lines: el.clientHeight / parseFloat(getComputedStyle(el).lineHeight),
      cut: el.scrollHeight > el.clientHeight,
    }));
    expect(title.cut).toBe(true);
    expect(Math.round(title.lines)).toBe(2);
    expect(await long.locator(".avatar [aria-hidden=true]").textContent()).toMatch(/^M[A-Z0-9]$/);
    expect(await long.locator(".avatar .visually-hidden").textContent()).toMatch(/^assigned to mover-/);
    expect(await long.locator("time.age").textContent()).toMatch(/^(now|\d+m)$/);
    await screenshot(page, "board-wide");

    // Mid-drag, the columns it may go to are marked and the others refuse it.
    const from = await boxOf(card(page, ids.plan).locator(".card-meta"));
    await page.mouse.move(from.x + 10, from.y + from.height / 2);
    await page.mouse.down();
    const to = await boxOf(column(page, "running"));
    await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2, { steps: 5 });
    expect(await column(page, "running").getAttribute("class")).toMatch(/drop-legal/);
    expect(await column(page, "done").getAttribute("class")).toMatch(/drop-illegal/);
    expect(await column(page, "planning").getAttribute("class")).toMatch(/drop-legal/);
    await screenshot(page, "board-dragging");
    await page.mouse.move(to.x + to.width / 2, to.y + to.height / 3, { steps: 2 });
    await page.mouse.up();
    // Dropped on Running: the plan is approved through the API, and the card follows.
    const toasts = () => page.locator(".toast").allTextContents();
    await expect.poll(async () => [await statusOf(ids.plan), await toasts()], SETTLES).toEqual(["running", expect.anything()]);
    await expect.poll(() => columnOrNull(page, ids.plan), SETTLES).toBe("running");
    await page.locator(".toast", { hasText: "Plan of “Migrate the ledger to D1” approved." }).waitFor();

    // Dragged to Done: only its agent completes a task. Nothing changes, and the toast says why.
    await card(page, ids.pending).dragTo(column(page, "done"));
    await page.locator(".toast-error", { hasText: "“Write the release notes” cannot go to Done: Only the agent working on a task marks it done." }).waitFor();
    expect(await statusOf(ids.pending)).toBe("pending");
    expect(await columnOrNull(page, ids.pending)).toBe("pending");

    // Dragged to Cancelled (a strip): it asks first, then cancels through the API.
    await card(page, ids.pending).dragTo(column(page, "cancelled"));
    const dialog = page.getByRole("dialog", { name: "Move “Write the release notes”" });
    await dialog.getByRole("button", { name: "Cancel task" }).click();
    await expect.poll(() => statusOf(ids.pending), SETTLES).toBe("cancelled");
    await expect.poll(() => columnOrNull(page, ids.pending), SETTLES).toBe("cancelled");
    expect(await column(page, "cancelled").getAttribute("class")).not.toContain("collapsed");

    // Opened by a click, an empty column shows as a full one.
    await done.getByRole("button").click();
    expect((await boxOf(done)).width).toBeGreaterThan(260);
  });

  it("moves a card from its menu by keyboard", async () => {
    const projectId = await newProject("Keyboard");
    const id = await newTask(projectId, "Tidy the changelog");
    const page = await openBoard(projectId);
    await card(page, id).waitFor();
    await card(page, id).getByRole("button", { name: "Move “Tidy the changelog”…" }).focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "Move “Tidy the changelog”" });
    // Only the moves a person may make are offered (beside the dialog's Close).
    expect(await dialog.getByRole("button").allTextContents()).toEqual(["", "Assigned Assign to the best-matching server", "Cancelled Cancel the task"]);
    await dialog.getByRole("button", { name: /Cancelled/ }).focus();
    await page.keyboard.press("Enter");
    await dialog.getByRole("button", { name: "Cancel task" }).focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => statusOf(id), SETTLES).toBe("cancelled");
    await expect.poll(() => columnOrNull(page, id), SETTLES).toBe("cancelled");
  });

  it("shows a phone one status at a time, picked with its count, with no sideways scroll and targets of 44 px", async () => {
    const { projectId, ids } = await boardWithWork();
    const page = await openBoard(projectId, { width: 390, height: 844 });
    // The first status with tasks shows: Pending.
    await card(page, ids.pending).waitFor();
    expect(await page.locator(".column").count()).toBe(1);
    const picker = page.getByLabel("Status shown");
    expect(await picker.locator("option").allTextContents()).toEqual([
      "Pending (2)",
      "Assigned (0)",
      "Planning (0)",
      "Plan review (1)",
      "Running (1)",
      "Needs a human (0)",
      "Done (0)",
      "Failed (0)",
      "Cancelled (0)",
    ]);
    await picker.selectOption("running");
    await card(page, ids.running).waitFor();
    expect(await page.locator(".column").getAttribute("data-status")).toBe("running");
    await page.getByRole("button", { name: "Next status" }).click();
    expect(await page.locator(".column").getAttribute("data-status")).toBe("needs_human");
    await page.getByRole("button", { name: "Previous status" }).click();
    await card(page, ids.running).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    for (const target of [picker, page.getByRole("button", { name: "Next status" }), card(page, ids.running).getByRole("button", { name: /^Move/ })])
      expect((await boxOf(target)).height).toBeGreaterThanOrEqual(44);
    expect((await boxOf(card(page, ids.running).getByRole("link"))).height).toBeGreaterThanOrEqual(44);
    await screenshot(page, "board-phone");
  });

  it("draws a board of 1,000 tasks as a virtual list that scrolls to the last card", { timeout: 600_000 }, async () => {
    const projectId = await newProject("Thousand");
    const priorities = ["low", "normal", "high", "critical"] as const;
    for (let batch = 0; batch < 1000; batch += 20)
      await Promise.all(Array.from({ length: 20 }, (_, i) => newTask(projectId, `Task ${batch + i}`, { priority: priorities[(batch + i) % 4] })));
    const page = await openBoard(projectId);
    const pending = column(page, "pending");
    expect(await pending.locator(".count").textContent()).toBe("1000");
    const drawn = await page.locator(".card").count();
    expect(drawn).toBeGreaterThan(5);
    expect(drawn).toBeLessThan(60);
    await screenshot(page, "board-1000");
    // Scrolled to its end, the column draws its last card (and still only a few).
    const body = pending.locator(".column-body");
    for (let i = 0; i < 5; i++) {
      await body.evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
      await page.waitForTimeout(100);
    }
    const last = pending.locator('.card[data-index="999"]');
    await last.waitFor();
    const [lastBox, bodyBox] = [await boxOf(last), await boxOf(body)];
    expect(lastBox.y + lastBox.height).toBeLessThanOrEqual(bodyBox.y + bodyBox.height + 1);
    expect(await last.locator(".priority-mark").getAttribute("aria-label")).toBe("low priority");
    expect(await page.locator(".card").count()).toBeLessThan(60);
  });
});
