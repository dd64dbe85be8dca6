/**
 * Pages that open without a word in the console: the sign-in page on a cold load (no session to refresh yet), and a
 * session's terminal (xterm.js's styles under the page's Content-Security-Policy).
 */
import type { Browser, ConsoleMessage, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessTokenOf, hub, hubAs, launchChromium, ok, signIn } from "./driver";
import { FakeDaemon } from "./fake-daemon";

let browser: Browser;
const daemons: FakeDaemon[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  daemons.forEach((d) => d.close());
  await browser?.close();
});

/** Every error and warning the page logs, and every response the browser logs as failed. */
function consoleOf(page: Page): string[] {
  const said: string[] = [];
  page.on("console", (m: ConsoleMessage) => {
    if (m.type() === "error" || m.type() === "warning") said.push(`${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => said.push(`pageerror: ${e.message}`));
  return said;
}

describe("the console", () => {
  it("stays empty on a cold load of the sign-in page", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const said = consoleOf(page);
    await page.goto(hub().url + "/");
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    await page.waitForLoadState("networkidle");
    expect(said).toEqual([]);
    await context.close();
  });

  it("stays empty when a session's terminal opens, shows output and resizes", async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    await signIn(page, hub().admin.email, hub().admin.password);
    const admin = await accessTokenOf(page);
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Quiet terminals" } }), 201);
    const daemon = await FakeDaemon.register(admin, project.id, "quiet-box");
    daemons.push(daemon);
    await daemon.connect();
    const session = await ok(
      hubAs({ token: admin }).POST("/api/v1/projects/{id}/sessions", { params: { path: { id: project.id } }, body: { server_id: daemon.id, name: "quiet" } }),
      201,
    );
    await expect.poll(() => daemon.starts.length).toBe(1);
    const said = consoleOf(page);
    await page.goto(`${hub().url}/projects/${project.id}/sessions/${session.id}`);
    await page.locator("[data-terminal=live]").waitFor();
    daemon.output(session.id, "\x1b[1;31mred\x1b[0m and \x1b[38;2;10;200;30mtrue colour\x1b[0m\r\n");
    await expect.poll(() => page.locator(".xterm-rows").textContent()).toContain("true colour");
    // xterm.js's own rules still apply: its theme colours a red cell red, and its sizes make cells inline blocks.
    const red = page.locator(".xterm-rows span", { hasText: /^red$/ });
    const [r, g, b] = (await red.evaluate((span) => getComputedStyle(span).color)).match(/\d+/g)!.map(Number);
    expect(r! > 150 && g! < 120 && b! < 120, `red is ${r},${g},${b}`).toBe(true);
    expect(await red.evaluate((span) => getComputedStyle(span).display)).toBe("inline-block");
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(300);
    await page.setViewportSize({ width: 1024, height: 768 });
    await page.waitForTimeout(300);
    expect(said).toEqual([]);
    await context.close();
  });
});
