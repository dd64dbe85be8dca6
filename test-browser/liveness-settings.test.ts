/**
 * A project's liveness rules on its Settings page: an admin turns on the result a completion must carry, sets how long
 * a task may stay silent or unassignable, sees a value the hub refuses beside its field, and turns a rule off again;
 * on a phone the form fits the screen with touch-sized controls.
 */
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminAndViewer, hub, hubAs, launchChromium, ok, screenshot } from "./driver";

let browser: Browser;
let asAdmin: BrowserContext;
let admin: string;

beforeAll(async () => {
  browser = await launchChromium();
  ({ asAdmin, admin } = await adminAndViewer(browser, "liveness"));
});
afterAll(async () => {
  await browser?.close();
});

describe("liveness rules on a project's Settings page", () => {
  it("an admin sets them, sees a refused value beside its field, and turns a rule off", async () => {
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Kept alive" } }), 201);
    const settings = async () => (await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}", { params: { path: { id: project.id } } }))).settings;
    const page = await asAdmin.newPage();
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${hub().url}/projects/${project.id}/settings`);

    const required = page.getByLabel("A completed task must say what it did");
    await required.waitFor();
    await required.click();
    await expect.poll(() => required.getAttribute("aria-busy")).toBe("false");
    expect((await settings()).require_result).toBe(true);

    const form = page.getByRole("form", { name: "Silent and stuck tasks" });
    await form.getByLabel("Stalled after (minutes)").fill("2000");
    await form.getByRole("button", { name: "Save rules" }).click();
    await form.locator('[data-field-problem="stall_minutes"]').waitFor();
    expect(await form.locator('[data-field-problem="stall_minutes"]').textContent()).toMatch(/1440/);
    expect((await settings()).stall_minutes).toBeNull();

    await form.getByLabel("Stalled after (minutes)").fill("15");
    await form.getByLabel("A stall").selectOption("needs_human");
    await form.getByLabel("Unassignable after (minutes)").fill("30");
    await form.getByRole("button", { name: "Save rules" }).click();
    await form.locator('[data-field-problem="stall_minutes"]').waitFor({ state: "detached" });
    await expect.poll(async () => (await settings()).unassignable_minutes).toBe(30);
    expect(await settings()).toMatchObject({ require_result: true, stall_minutes: 15, stall_action: "needs_human", unassignable_minutes: 30 });
    await form.scrollIntoViewIfNeeded();
    await screenshot(page, "project-settings-liveness");

    await form.getByLabel("Unassignable after (minutes)").fill("");
    await form.getByRole("button", { name: "Save rules" }).click();
    await expect.poll(async () => (await settings()).unassignable_minutes).toBeNull();
    expect((await settings()).stall_minutes).toBe(15);

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await form.waitFor();
    expect(await form.getByLabel("Stalled after (minutes)").inputValue()).toBe("15");
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    for (const control of [form.getByLabel("Stalled after (minutes)"), form.getByLabel("A stall"), form.getByRole("button", { name: "Save rules" })]) {
      expect((await control.boundingBox())!.height).toBeGreaterThanOrEqual(44);
    }
    await form.scrollIntoViewIfNeeded();
    await screenshot(page, "project-settings-liveness-phone");
  });
});
