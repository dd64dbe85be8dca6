/**
 * A project's Permissions tab in real Chromium: the calls a server posts to the permission log, as hub.py posts them,
 * listed with their session, task, decision, rule and tool input; narrowed by decision and tool (kept in the address);
 * a call posted while the page is open appears without a reload; "Make a rule from this" opens the Rules page's form
 * prefilled, and a viewer is offered no such link.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { addMember, adminAndViewer, call, hub, hubAs, launchChromium, ok, registerAgent, screenshot } from "./driver";

let browser: Browser;
let asAdmin: BrowserContext;
let asViewer: BrowserContext;
let admin: string;
let projectId: string;
let apiKey: string;
let sessionId: string;
let taskId: string;
let denyId: string;
let allowId: string;

/** A log line as the daemon's hook writes it and hub.py posts it. */
const line = (
  tool_name: string,
  tool_input: Record<string, unknown>,
  decision: string,
  matched_rule_id: string | null = null,
  reason: string | null = null,
) => ({
  session_id: sessionId,
  project_id: projectId,
  tool_name,
  tool_input,
  decision,
  matched_rule_id,
  reason,
  agent_name: "claude",
  created_at: new Date().toISOString(),
});

const post = async (...entries: ReturnType<typeof line>[]) =>
  expect(await call("/api/v1/server/permissions/log", { apiKey, body: { entries } }, 201)).toMatchObject({ accepted: entries.length });

const entries = (page: Page) => page.locator(".permission-entry");
const tools = (page: Page) => entries(page).locator(".entry-head").allTextContents();

async function openLog(page: Page, query = "") {
  await page.goto(`${hub().url}/projects/${projectId}/permissions${query}`);
  await page.locator("[data-feed=live]").waitFor();
  await page.locator(".permission-log[data-loaded]").waitFor();
}

beforeAll(async () => {
  browser = await launchChromium();
  const roles = await adminAndViewer(browser, "log");
  ({ asAdmin, admin, asViewer } = roles);
  const { viewerId } = roles;

  projectId = (await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Logged" } }), 201)).id;
  await addMember(admin, projectId, viewerId);
  // A server registered as the daemon registers, with the session "logged-worker" in the project.
  apiKey = (await registerAgent(admin, projectId, "logged")).apiKey;
  sessionId = (await ok(hubAs({ apiKey }).GET("/api/v1/server/sessions"))).sessions.find((s) => s.name === "logged-worker")!.id;
  const rule = (body: Record<string, unknown>) =>
    call("/api/v1/approval-rules", { token: admin, body: { tool_pattern: "Bash", scope_type: "tenant", ...body } }, 201);
  denyId = (await rule({ name: "no force pushes", param_pattern: "*--force*", action: "deny" })).id;
  allowId = (await rule({ name: "npm tests", param_pattern: "npm test*", action: "allow" })).id;
  // The session works on a task, so what it logs is filed under it.
  taskId = (await call("/api/v1/server/tasks", { apiKey, body: { title: "Tidy the build", project_id: projectId } }, 201)).id;
  await call(`/api/v1/server/tasks/${taskId}/assign`, { apiKey, body: { session_name: "logged-worker" } });
  await post(
    line("Read", { file_path: "/repo/package.json" }, "asked"),
    line("Bash", { command: "git push --force origin main" }, "denied", denyId, "Blocked by rule: no force pushes"),
    line("Bash", { command: "npm test", description: "x".repeat(40) }, "allowed", allowId, "Auto-approved"),
  );
});
afterEach(async () => {
  for (const page of [...asAdmin.pages(), ...asViewer.pages()]) await page.close();
});
afterAll(async () => {
  await browser?.close();
});

describe("the Permissions tab", () => {
  it("lists the posted calls with their session, task, decision, rule and tool input", async () => {
    const page = await asAdmin.newPage();
    await page.goto(`${hub().url}/projects/${projectId}/board`);
    await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "Permissions" }).click();
    await page.locator(".permission-log[data-loaded]").waitFor();
    expect(page.url()).toBe(`${hub().url}/projects/${projectId}/permissions`);
    await expect.poll(() => entries(page).count()).toBe(3);

    const denied = entries(page).filter({ hasText: "git push --force origin main" });
    expect(await denied.getAttribute("data-decision")).toBe("denied");
    expect(await denied.locator(".badge.decision").textContent()).toBe("denied");
    expect(await denied.locator(".session").textContent()).toBe("logged-worker");
    // Titled once the project's tasks are read (the task's id until then).
    await expect.poll(() => denied.locator("a.task").textContent()).toBe("Tidy the build");
    expect(await denied.locator("a.task").getAttribute("href")).toBe(`/projects/${projectId}/tasks/${taskId}`);
    expect(await denied.locator(".agent").textContent()).toBe("claude");
    // The rules list names the rule the admin may read.
    await expect.poll(() => denied.locator(".rule strong").textContent()).toBe("no force pushes");
    // The rule is named once: the daemon's "Blocked by rule: no force pushes" leads, not repeated after it.
    expect(await denied.locator(".rule").textContent()).toBe("Blocked by rule no force pushes");
    expect(await denied.locator(".reason").count()).toBe(0);
    expect((await denied.locator(".entry-meta").textContent())!.split("no force pushes")).toHaveLength(2);

    const asked = entries(page).filter({ hasText: "/repo/package.json" });
    expect(await asked.locator(".rule").textContent()).toBe("no rule matched");
    await asked.getByRole("button", { name: "tool input" }).click();
    expect(JSON.parse((await asked.locator(".tool-input pre").textContent())!)).toEqual({ file_path: "/repo/package.json" });
    expect(await asked.locator(".truncated").count()).toBe(0);
  });

  it("narrows the list by decision, tool, session and task, and keeps the filters in the address", async () => {
    const page = await asAdmin.newPage();
    await openLog(page);
    await page.getByLabel("Decision").selectOption("denied");
    await expect.poll(() => tools(page)).toEqual([expect.stringContaining("git push --force origin main")]);
    expect(new URL(page.url()).searchParams.get("decision")).toBe("denied");

    await page.getByLabel("Decision").selectOption("");
    await page.getByLabel("Tool").fill("Read");
    await page.getByLabel("Tool").press("Enter");
    await expect.poll(() => tools(page)).toEqual([expect.stringContaining("/repo/package.json")]);
    expect(new URL(page.url()).search).toBe("?tool=Read");

    // Another session of the project, working on no task: picked by name, it alone is shown; the task narrows to the first.
    const other = await ok(hubAs({ apiKey }).POST("/api/v1/server/sessions", { body: { name: "other-worker", project_id: projectId } }), 201);
    await call(
      "/api/v1/server/permissions/log",
      { apiKey, body: { entries: [{ ...line("Glob", { pattern: "**/*.md" }, "asked"), session_id: other.id }] } },
      201,
    );
    await openLog(page);
    await page.getByLabel("Session").selectOption({ label: "other-worker" });
    await expect.poll(() => tools(page)).toEqual([expect.stringContaining("**/*.md")]);
    expect(new URL(page.url()).searchParams.get("session_id")).toBe(other.id);
    await openLog(page, `?task_id=${taskId}`);
    await expect.poll(() => entries(page).count()).toBe(3);
    expect(await entries(page).filter({ hasText: "**/*.md" }).count()).toBe(0);

    // The address alone brings the same view back.
    await openLog(page, "?tool=Bash&decision=allowed");
    await expect.poll(() => tools(page)).toEqual([expect.stringContaining("npm test")]);
    expect(await page.getByLabel("Decision").inputValue()).toBe("allowed");
    expect(await page.getByLabel("Tool").inputValue()).toBe("Bash");
  });

  it("shows a call posted while the page is open, without a reload", async () => {
    const page = await asAdmin.newPage();
    await openLog(page);
    const before = await entries(page).count();
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    await post(line("WebFetch", { url: "https://example.com/live", prompt: "read it" }, "denied", null, "Blocked while away"));
    await expect.poll(() => entries(page).count()).toBe(before + 1);
    const first = entries(page).first();
    expect(await first.locator(".param").textContent()).toBe("https://example.com/live");
    expect(await first.getAttribute("class")).toContain("fresh");
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
  });

  it("links each call to the Rules page's form prefilled to decide calls like it", async () => {
    const page = await asAdmin.newPage();
    await openLog(page, "?tool=Bash");
    const forced = entries(page).filter({ hasText: "git push --force origin main" });
    const href = await forced.getByRole("link", { name: "Make a rule from this" }).getAttribute("href");
    const url = new URL(href!, hub().url);
    expect(url.pathname).toBe("/rules");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      new: "1",
      tool_pattern: "Bash",
      param_pattern: "git push --force origin main*",
      scope_type: "project",
      scope_id: projectId,
    });
    await openLog(page, "?tool=Read");
    const read = await entries(page).first().getByRole("link", { name: "Make a rule from this" }).getAttribute("href");
    expect(new URL(read!, hub().url).searchParams.get("param_pattern")).toBe("/repo/package.json");

    await openLog(page);
    await entries(page).filter({ hasText: "git push" }).getByRole("button", { name: "tool input" }).click();
    await screenshot(page, "permissions");
  });

  it("pages back through older calls, counts the calls that arrive meanwhile, and marks a cut tool input", async () => {
    // One more than a page, oldest first as a daemon posts them; the first holds an input over the 8 KiB kept.
    const start = Date.now() - 60_000;
    await post(
      ...Array.from({ length: 51 }, (_, i) => ({
        ...line("Grep", { pattern: i === 0 ? "y".repeat(10_000) : `needle-${i}` }, "asked"),
        created_at: new Date(start + i * 1000).toISOString(),
      })),
    );
    const page = await asAdmin.newPage();
    await openLog(page, "?tool=Grep");
    await expect.poll(() => entries(page).count()).toBe(50);
    await page.getByRole("button", { name: "Older" }).click();
    await expect.poll(() => entries(page).count()).toBe(1);
    expect(new URL(page.url()).searchParams.get("before")).toBeTruthy();
    expect(await page.getByRole("button", { name: "Older" }).count()).toBe(0);
    const oldest = entries(page).first();
    await oldest.getByRole("button", { name: "tool input" }).click();
    expect(await oldest.locator(".truncated").textContent()).toContain("cut");
    expect((await oldest.locator(".tool-input pre").textContent())!.length).toBeLessThan(10_000);

    // Paged back, a new call is counted rather than shown, until asked for.
    await post(line("Grep", { pattern: "late-needle" }, "asked"));
    const newer = page.getByRole("link", { name: "1 new call in the project — show the newest" });
    await newer.waitFor();
    expect(await entries(page).count()).toBe(1);
    await newer.click();
    await expect.poll(() => entries(page).first().locator(".param").textContent()).toBe("late-needle");
    expect(new URL(page.url()).search).toBe("?tool=Grep");
  });

  it("offers a viewer the log and no rule to make", async () => {
    const page = await asViewer.newPage();
    await openLog(page);
    await expect.poll(() => entries(page).count()).toBeGreaterThanOrEqual(3);
    expect(await page.getByRole("link", { name: "Make a rule from this" }).count()).toBe(0);
  });
});
