/**
 * The admin's pages in real Chromium, as one visual language: the breakages once seen on them (a webhook's address run
 * into "Deliveries", the member picker left blank after adding, Settings switches with no pending state, the same
 * server offered at both ends of a grant), and every page at 390×844 with no sideways scroll and touch targets of 44 px.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { adminAndViewer, hub, hubAs, launchChromium, ok, registerAgent, screenshot } from "./driver";

let browser: Browser;
let asAdmin: BrowserContext;
let admin: string;
let projectId: string;
let source: Awaited<ReturnType<typeof registerAgent>>;
let target: Awaited<ReturnType<typeof registerAgent>>;
const hookUrl = "https://hooks.example.com/orchestratia/a-long-path-to-the-receiver";

beforeAll(async () => {
  browser = await launchChromium();
  ({ asAdmin, admin } = await adminAndViewer(browser, "pages"));
  projectId = (await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Pages in one language" } }), 201)).id;
  source = await registerAgent(admin, projectId, `pages-src-${Date.now()}`);
  target = await registerAgent(admin, projectId, `pages-tgt-${Date.now()}`);
  await ok(
    hubAs({ token: admin }).POST("/api/v1/projects/{id}/webhooks", {
      params: { path: { id: projectId } },
      body: { url: hookUrl, description: "the team's bot" },
    }),
    201,
  );
});
afterEach(async () => {
  for (const page of asAdmin.pages()) await page.close();
});
afterAll(async () => {
  await browser?.close();
});

/** How far the page scrolls sideways (0: it fits its window). */
const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** The visible controls in the page's main area smaller than a finger (44 px) in height, named. */
const smallTargets = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>("main button, main select, main input:not([type=checkbox]):not([type=radio]), main a.button, main label.switch")]
      .filter((e) => e.offsetParent !== null && e.getBoundingClientRect().width > 0)
      .filter((e) => e.getBoundingClientRect().height < 44)
      .map((e) => `${e.tagName.toLowerCase()} "${(e.textContent || e.getAttribute("aria-label") || e.getAttribute("name") || "").trim().slice(0, 40)}"`),
  );

describe("the webhooks page", () => {
  it("shows a webhook's address, description and Deliveries link each on a line of its own", async () => {
    const page = await asAdmin.newPage();
    await page.goto(`${hub().url}/projects/${projectId}/webhooks`);
    const endpoint = page.locator("tr[data-webhook-id] .endpoint");
    await endpoint.waitFor();
    const url = (await endpoint.locator(".url").boundingBox())!;
    const link = (await endpoint.getByRole("link", { name: "Deliveries" }).boundingBox())!;
    expect(link.y).toBeGreaterThanOrEqual(url.y + url.height);
    // Read aloud or copied, the address ends before the link begins.
    expect((await endpoint.innerText()).split("\n").map((l) => l.trim())).toEqual([hookUrl, "the team's bot", "Deliveries"]);
    await screenshot(page, "webhooks");
  });
});

describe("the members page", () => {
  it("adds a member, lists them, and sets the picker back to asking", async () => {
    const person = { email: `pages-member-${Date.now()}@example.com`, password: "member-password-1" };
    await ok(hubAs({ token: admin }).POST("/api/v1/users", { body: { ...person, role: "member" } }), 201);
    const page = await asAdmin.newPage();
    await page.goto(`${hub().url}/projects/${projectId}/members`);
    const picker = page.getByLabel("Add a member");
    await picker.selectOption({ label: `${person.email} (member)` });
    await page.getByRole("button", { name: "Add member" }).click();
    await page.locator(`tr[data-member="${person.email}"]`).waitFor();
    expect(await picker.inputValue()).toBe("");
    expect(await picker.evaluate((s: HTMLSelectElement) => s.selectedOptions[0]?.textContent)).toMatch(/choose a person|everyone is a member/);
    expect(await picker.locator("option", { hasText: person.email }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Add member" }).isDisabled()).toBe(true);
    await page.locator(".toast", { hasText: `Added ${person.email} as member.` }).waitFor();
    await screenshot(page, "members");
  });
});

describe("the settings page", () => {
  it("holds a switch busy while its change is on its way, and puts it back with the reason when refused", async () => {
    const page = await asAdmin.newPage();
    await page.goto(`${hub().url}/projects/${projectId}/settings`);
    const toggle = page.locator("input[name=remote-exec]");
    await toggle.waitFor();
    expect(await toggle.isChecked()).toBe(false);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route(`**/api/v1/projects/${projectId}`, async (route) => {
      if (route.request().method() !== "PATCH") return route.continue();
      await held;
      await route.fulfill({
        status: 503,
        contentType: "application/problem+json",
        body: JSON.stringify({ type: "about:blank", title: "Unavailable", status: 503, detail: "The hub is busy: try again" }),
      });
    });
    await toggle.click();
    await expect.poll(() => toggle.getAttribute("aria-busy")).toBe("true");
    expect(await toggle.isDisabled()).toBe(true);
    expect(await toggle.isChecked()).toBe(true);
    release();
    await expect.poll(() => toggle.getAttribute("aria-busy")).toBe("false");
    expect(await toggle.isChecked()).toBe(false);
    expect(await toggle.isDisabled()).toBe(false);
    expect(await page.getByRole("alert").filter({ hasText: "Not changed: The hub is busy: try again" }).count()).toBe(1);

    // Let through, the change holds.
    await page.unroute(`**/api/v1/projects/${projectId}`);
    await toggle.click();
    await expect.poll(() => toggle.getAttribute("aria-busy"), { timeout: 20_000 }).toBe("false");
    expect(await toggle.isChecked()).toBe(true);
    const project = await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}", { params: { path: { id: projectId } } }));
    expect(project.settings.remote_exec).toBe(true);
    await screenshot(page, "project-settings");
  });
});

describe("the access page", () => {
  it("does not offer the source server as the target", async () => {
    const page = await asAdmin.newPage();
    await page.goto(`${hub().url}/access`);
    await page.getByLabel("From (source)").selectOption({ label: source.name });
    const targets = await page.getByLabel("To (target)").locator("option").allTextContents();
    expect(targets).toContain(target.name);
    expect(targets).not.toContain(source.name);
    // Chosen as the source after being the target, a server leaves the target picker empty again.
    await page.getByLabel("To (target)").selectOption({ label: target.name });
    await page.getByLabel("From (source)").selectOption({ label: target.name });
    expect(await page.getByLabel("To (target)").inputValue()).toBe("");
  });
});

describe("the agents page", () => {
  it("lists each server in a row of the shared table, its capabilities missing said in place", async () => {
    const page = await asAdmin.newPage();
    await page.goto(`${hub().url}/agents`);
    for (const server of [source, target]) {
      const row = page.locator(`tr[data-server="${server.name}"]`);
      await row.waitFor();
      expect(await row.getByRole("rowheader").getByRole("link").textContent()).toBe(server.name);
      expect(await row.locator(".no-capabilities").textContent()).toContain("No capabilities");
    }
    expect(await page.getByRole("table", { name: "Servers" }).locator("thead th").allTextContents()).toEqual([
      "Server",
      "Presence",
      "Load",
      "Languages",
      "Tools",
      "Tags",
      "Sessions",
      "Last heartbeat",
    ]);
    await screenshot(page, "agents");
  });
});

/** Every page this suite restyled, at the address a person opens it by. */
const PAGES: [name: string, path: () => string][] = [
  ["agents", () => "/agents"],
  ["server", () => `/servers/${source.id}`],
  ["rules", () => "/rules"],
  ["access", () => "/access"],
  ["people", () => "/people"],
  ["account", () => "/account"],
  ["members", () => `/projects/${projectId}/members`],
  ["project-settings", () => `/projects/${projectId}/settings`],
  ["webhooks", () => `/projects/${projectId}/webhooks`],
  ["activity", () => `/projects/${projectId}/activity`],
  ["permissions", () => `/projects/${projectId}/permissions`],
  ["connect", () => `/projects/${projectId}/connect`],
  ["usage", () => `/projects/${projectId}/usage`],
];

describe("on a phone (390×844)", () => {
  it.each(PAGES)("%s fits the screen, and its controls are large enough to touch", async (name, path) => {
    const page = await asAdmin.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(hub().url + path());
    await page.locator("main h1").first().waitFor();
    // Wait out the first reads: no page is left loading.
    await expect.poll(() => page.locator(".state-loading").count(), { timeout: 15_000 }).toBe(0);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    expect(await smallTargets(page)).toEqual([]);
    await screenshot(page, `${name}-narrow`);
  });
});
