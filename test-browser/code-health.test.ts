/**
 * A project's Code health tab in real Chromium: snapshots the daemon's scanner made (test/fixtures), posted as
 * `orchestratia code scan` posts them, shown as the score over time (uPlot), the factors, the tech-debt table, the
 * hotspots and the module graph drawn by mermaid, which is fetched only on this tab; "Scan now" asks a running
 * session's daemon to scan, and its snapshot appears without a reload (and the notice that it was asked for goes).
 * A single scan is charted over the day around it.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import srcSnapshot from "../test/fixtures/code-health-src.json";
import webSnapshot from "../test/fixtures/code-health-web.json";
import { addMember, adminAndViewer, call, hub, hubAs, launchChromium, ok, screenshot } from "./driver";
import { FakeDaemon } from "./fake-daemon";

let browser: Browser;
let asAdmin: BrowserContext;
let asViewer: BrowserContext;
let admin: string;
let projectId: string;
let daemon: FakeDaemon;

/** `orchestratia code scan` on the daemon's machine. */
const codeScan = (snapshot: unknown) => call("/api/v1/server/architecture/snapshot", { apiKey: daemon.apiKey, body: { project_id: projectId, snapshot } }, 201);

/** Every script the page fetched, by file name. */
function scriptsOf(page: Page): string[] {
  const names: string[] = [];
  page.on("request", (r) => r.resourceType() === "script" && names.push(r.url().split("/").pop()!));
  return names;
}

beforeAll(async () => {
  browser = await launchChromium();
  const roles = await adminAndViewer(browser, "health");
  ({ asAdmin, admin, asViewer } = roles);
  projectId = (await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Scanned" } }), 201)).id;
  await addMember(admin, projectId, roles.viewerId);
  daemon = await FakeDaemon.register(admin, projectId, `scanner-${Date.now().toString(36)}`);
  await daemon.connect();
  await ok(
    hubAs({ token: admin }).POST("/api/v1/projects/{id}/sessions", {
      params: { path: { id: projectId } },
      body: { server_id: daemon.id, name: "hub-worker", working_directory: "/home/dev/hub" },
    }),
    201,
  );
  await codeScan(webSnapshot);
  await codeScan(srcSnapshot);
});
afterAll(async () => {
  daemon?.close();
  await browser?.close();
});

describe("the Code health tab", () => {
  it("charts the scores, lists the factors, debt and hotspots, and draws the module graph with mermaid loaded only here", async () => {
    const page = await asAdmin.newPage();
    const scripts = scriptsOf(page);
    await page.goto(`${hub().url}/projects/${projectId}/board`);
    await page.locator("[data-feed=live]").waitFor();
    expect(scripts.some((s) => s.startsWith("mermaid") || s.startsWith("code-health"))).toBe(false);

    await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "Code health" }).click();
    await page.locator(".code-health[data-loaded]").waitFor();
    expect(page.url()).toBe(`${hub().url}/projects/${projectId}/code-health`);
    expect(await page.locator(".health-score").getAttribute("data-score")).toBe(String(srcSnapshot.health.score));
    // uPlot draws the two scans on a canvas.
    expect(await page.locator(".score-chart").getAttribute("data-points")).toBe("2");
    await page.locator(".score-chart canvas").waitFor();
    const factors = await page.locator("table.factors tr").allTextContents();
    expect(factors).toHaveLength(Object.keys(srcSnapshot.health.factors).length);
    expect(factors[0]).toContain(`${Object.values(srcSnapshot.health.factors)[0]!.score}/100`);
    const debt = page.locator("table.tech-debt tbody tr");
    expect(await debt.count()).toBe(Math.min(10, srcSnapshot.health.tech_debt.files.length));
    expect(await debt.first().textContent()).toContain(srcSnapshot.health.tech_debt.files[0]!.path);
    expect(await page.locator(".hotspots li").allTextContents()).toEqual(srcSnapshot.health.hotspots);

    // The module graph: mermaid's SVG with a node per module of the scan.
    await page.locator(".module-graph[data-rendered] svg").waitFor({ timeout: 20_000 });
    const labels = await page.locator(".module-graph svg .node").allTextContents();
    const modules = [...srcSnapshot.mermaid_graph.matchAll(/\["([^<"]+)<br\/>/g)].map((m) => m[1]!);
    expect(labels).toHaveLength(modules.length);
    for (const m of modules) expect(labels.some((l) => l.includes(m))).toBe(true);
    const arrows = srcSnapshot.mermaid_graph.split("\n").filter((l) => l.includes("-->")).length;
    expect(await page.locator(".module-graph svg .edgePaths path").count()).toBe(arrows);
    expect(scripts.some((s) => s.startsWith("mermaid"))).toBe(true);
    // mermaid's own stylesheet, taken out of its SVG (the policy refuses <style> elements), applies: its edges are stroked.
    expect(
      await page
        .locator(".module-graph svg .edgePaths path")
        .first()
        .evaluate((e) => getComputedStyle(e).stroke),
    ).not.toBe("none");
    await screenshot(page, "code-health");
    await page.locator(".module-graph").scrollIntoViewIfNeeded();
    await screenshot(page, "code-health-graph");
  });

  it("scans a running session on Scan now, and shows its snapshot when the daemon sends it", async () => {
    daemon.scanSnapshot = webSnapshot;
    const page = await asAdmin.newPage();
    await page.goto(`${hub().url}/projects/${projectId}/code-health`);
    await page.locator(".code-health[data-loaded]").waitFor();
    await page.locator("[data-feed=live]").waitFor();
    await expect.poll(() => page.getByLabel("Session").locator("option").allTextContents()).toEqual([expect.stringContaining("hub-worker")]);
    // The notice that the scan was asked for may show only for a moment: the fake daemon answers at once.
    await page.getByRole("button", { name: "Scan now" }).click();
    await expect.poll(() => daemon.scans.length).toBe(1);
    expect(daemon.scans[0]).toMatchObject({ working_directory: "/home/dev/hub", project_id: projectId });
    // The snapshot comes back on the daemon's socket: the page reads again on its event.
    await expect.poll(() => page.locator(".score-chart").getAttribute("data-points"), { timeout: 10_000 }).toBe("3");
    expect(await page.locator(".health-score").getAttribute("data-score")).toBe(String(webSnapshot.health.score));
    expect(await page.locator(".health-summary").textContent()).toContain("on demand");
    // The scan asked for has landed: the notice that it was asked for goes.
    await page.getByRole("status").filter({ hasText: "Scan of hub-worker requested" }).waitFor({ state: "detached" });
  });

  it("charts a single scan over the day around it", async () => {
    const once = (await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Scanned once" } }), 201)).id;
    const scanner = await FakeDaemon.register(admin, once, `once-${Date.now().toString(36)}`);
    await call("/api/v1/server/architecture/snapshot", { apiKey: scanner.apiKey, body: { project_id: once, snapshot: srcSnapshot } }, 201);
    const page = await asAdmin.newPage();
    await page.goto(`${hub().url}/projects/${once}/code-health`);
    const chart = page.locator(".score-chart[data-points='1']");
    await chart.locator("canvas").waitFor();
    const at = Date.parse(srcSnapshot.scanned_at) / 1000;
    expect([Number(await chart.getAttribute("data-from")), Number(await chart.getAttribute("data-to"))]).toEqual([at - 12 * 3600, at + 12 * 3600]);
  });

  it("shows a viewer the scores without Scan now", async () => {
    const page = await asViewer.newPage();
    await page.goto(`${hub().url}/projects/${projectId}/code-health`);
    await page.locator(".code-health[data-loaded]").waitFor();
    expect(await page.getByRole("button", { name: "Scan now" }).count()).toBe(0);
    await page.locator(".module-graph[data-rendered] svg").waitFor({ timeout: 20_000 });
  });
});
