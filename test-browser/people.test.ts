/**
 * People in real Chromium: an admin invites a teammate by link as a viewer of a project, the teammate opens the link
 * in a browser of their own, sets a password and lands in the project, where they read and cannot write; the admin
 * changes their role on the Members page and deactivates them from the People page.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessTokenOf, adminToken, call, hub, hubAs, joinInvite, launchChromium, ok, openInvite, screenshot, signedIn } from "./driver";

let browser: Browser;
let admin: string;

beforeAll(async () => {
  browser = await launchChromium();
  admin = await adminToken();
});
afterAll(async () => {
  await browser?.close();
});

/** What on the page reaches past its window (nothing, for no sideways scrolling on a phone). */
const overflowing = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll("body *")]
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1)
      .map((el) => `${el.tagName.toLowerCase()}.${el.className}`)
      .slice(0, 8),
  );

/** The admin makes an invite link on the People page: the link as shown once. */
async function inviteOnPage(page: Page, projectName: string, projectRole: "member" | "viewer") {
  await page.goto(`${hub().url}/people`);
  const form = page.locator("form.new-invite");
  await form.getByLabel("Role").selectOption("member");
  await form.getByLabel(projectName).check();
  await form.getByLabel(`Role in ${projectName}`).selectOption(projectRole);
  await form.getByRole("button", { name: "Create invite link" }).click();
  const link = await page.locator("input[name=invite-link]").inputValue();
  expect(link).toMatch(new RegExp(`^${hub().url}/invite\\?token=orci_`));
  return link;
}

describe("people", () => {
  it("invites a teammate by link as a viewer of a project: they set a password, land in the project and cannot write", async () => {
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: `Ledger ${Date.now() % 100000}` } }), 201);
    const { context: adminContext, page } = await signedIn(browser, hub().admin.email, hub().admin.password);
    await page.getByRole("link", { name: "People" }).click();
    await page.getByRole("heading", { name: "People", level: 1 }).waitFor();
    await page.locator(`tr[data-user="${hub().admin.email}"]`).waitFor();

    const link = await inviteOnPage(page, project.name, "viewer");
    const pending = page.locator(".pending-invites li", { hasText: project.name });
    await expect.poll(() => pending.count()).toBe(1);
    expect(await pending.textContent()).toContain(`${project.name} (viewer)`);

    // The teammate: a browser of their own, never signed in.
    const teammate = { email: `teammate-${Date.now()}@example.com`, password: "teammate-password-1" };
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const theirs = await context.newPage();
    expect(await openInvite(theirs, link)).toBe(200);
    await theirs.getByRole("heading", { name: "Join the Orchestratia hub" }).waitFor();
    expect(await theirs.locator(".invite-offer").textContent()).toContain("You are invited as member");
    expect(await theirs.locator(".invite-projects").textContent()).toContain(`${project.name} (viewer: reads only)`);
    await screenshot(theirs, "invite-accept");
    await theirs.getByLabel("Email").fill(teammate.email);
    await theirs.getByLabel("Name").fill("Tess Mate");
    await theirs.getByLabel("Password").fill(teammate.password);
    expect(await joinInvite(theirs)).toBe(201);

    // Signed in, in the project, as a viewer of it.
    await theirs.getByRole("heading", { name: project.name }).waitFor();
    expect(new URL(theirs.url()).pathname).toBe(`/projects/${project.id}`);
    await theirs.locator("[data-feed=live]").waitFor();
    expect(await theirs.locator(".who").textContent()).toContain(teammate.email);
    await theirs.getByRole("note").filter({ hasText: "You are a viewer of this project" }).waitFor();
    expect(await theirs.getByRole("button", { name: "New task" }).count()).toBe(0);
    // The hub refuses a write all the same, and a reload keeps them signed in.
    const token = await accessTokenOf(theirs);
    const refused = await call("/api/v1/tasks", { token, body: { project_id: project.id, title: "by a viewer" } }, 403);
    expect(refused.detail).toBe("Viewers can only read this project");
    await theirs.reload();
    await theirs.getByRole("note").filter({ hasText: "You are a viewer of this project" }).waitFor();

    // The link worked once.
    const again = await context.newPage();
    expect(await openInvite(again, link)).toBe(410);
    await again.getByRole("alert").filter({ hasText: "used already" }).waitFor();

    // Made a member of the project: the board offers New task once it reconnects.
    await page.goto(`${hub().url}/projects/${project.id}/members`);
    await page.getByLabel(`Role of ${teammate.email} in this project`).selectOption("member");
    await expect.poll(() => page.getByLabel(`Role of ${teammate.email} in this project`).inputValue()).toBe("member");
    await theirs.reload();
    await theirs.getByRole("button", { name: "New task" }).waitFor();
    expect(await theirs.getByRole("note").filter({ hasText: "You are a viewer of this project" }).count()).toBe(0);

    // Deactivated from the People page (after a confirmation): their next request signs them out.
    await page.goto(`${hub().url}/people`);
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: `Deactivate ${teammate.email}` }).click();
    await page.locator(`tr[data-user="${teammate.email}"][data-active="false"]`).waitFor();
    await theirs.reload();
    await theirs.getByRole("button", { name: "Sign in" }).waitFor();
    await screenshot(page, "people");
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await overflowing(page)).toEqual([]);
    await screenshot(page, "people-phone");
    await again.close();
    await context.close();
    await adminContext.close();
  });

  it("shows the accept page on a phone, with the invite's address filled in", async () => {
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Payments" } }), 201);
    const made = await ok(
      hubAs({ token: admin }).POST("/api/v1/invites", {
        body: { role: "member", email: "phone-invitee@example.com", projects: [{ project_id: project.id, role: "member" }] },
      }),
      201,
    );
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await context.newPage();
    expect(await openInvite(page, made.url)).toBe(200);
    await page.getByRole("heading", { name: "Join the Orchestratia hub" }).waitFor();
    expect(await page.getByLabel("Email").inputValue()).toBe("phone-invitee@example.com");
    expect(await page.getByLabel("Email").getAttribute("readonly")).not.toBeNull();
    expect(await overflowing(page)).toEqual([]);
    const join = await page.getByRole("button", { name: "Join" }).boundingBox();
    expect(join!.x + join!.width).toBeLessThanOrEqual(390);
    await screenshot(page, "invite-accept-phone");
    await context.close();
  });
});
