/**
 * The archive on the dashboard: an admin sets after how many days finished tasks move to the archive (a refused value
 * shown beside its field), and a task that moved shows its page marked archived, with no actions to take on it.
 */
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminAndViewer, call, executeSql, hub, hubAs, launchChromium, ok, screenshot } from "./driver";

let browser: Browser;
let asAdmin: BrowserContext;
let admin: string;

beforeAll(async () => {
  browser = await launchChromium();
  ({ asAdmin, admin } = await adminAndViewer(browser, "archives"));
});
afterAll(async () => {
  await browser?.close();
});

describe("the archive on the dashboard", () => {
  it("an admin sets archive_after_days on the project's Settings, and an archived task's page is marked", async () => {
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Old work" } }), 201);
    const settings = async () => (await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}", { params: { path: { id: project.id } } }))).settings;
    const page = await asAdmin.newPage();
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${hub().url}/projects/${project.id}/settings`);

    const field = page.getByLabel("Archive after (days)");
    await field.waitFor();
    expect(await field.inputValue()).toBe("30");
    await field.fill("0");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.locator('[data-field-problem="archive_after_days"]').waitFor();
    expect((await settings()).archive_after_days).toBe(30);
    await field.fill("7");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.locator('[data-field-problem="archive_after_days"]').waitFor({ state: "detached" });
    await expect.poll(async () => (await settings()).archive_after_days).toBe(7);
    await field.scrollIntoViewIfNeeded();
    await screenshot(page, "project-settings-archive");

    // A task cancelled long ago (its completion moved back), and a later one.
    const task = await call(`/api/v1/tasks`, { token: admin, body: { project_id: project.id, title: "Finished long ago", spec: "Kept in the archive" } }, 201);
    await call(`/api/v1/tasks/${task.id}`, { token: admin, method: "DELETE" }, 200);
    await call(`/api/v1/tasks`, { token: admin, body: { project_id: project.id, title: "Later", spec: "s" } }, 201);
    executeSql(`UPDATE tasks SET completed_at = '2026-01-15T10:00:00.000Z' WHERE id = '${task.id}'`);
    // The hourly housekeeping wakes the project's room, which archives it.
    const ran = await fetch(`${hub().url}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent("17 * * * *")}`);
    expect(ran.status).toBe(200);
    await expect.poll(async () => (await call(`/api/v1/tasks/${task.id}`, { token: admin })).archived, { timeout: 15_000 }).toBe(true);

    await page.goto(`${hub().url}/projects/${project.id}/tasks/${task.id}`);
    const mark = page.locator("h2 .badge.archived");
    await mark.waitFor();
    expect(await mark.textContent()).toBe("archived");
    expect(await page.getByRole("heading", { name: /Finished long ago/ }).count()).toBe(1);
    expect(await page.getByRole("button", { name: "Retry" }).count()).toBe(0);
    await screenshot(page, "task-archived");
  });
});
