/**
 * The API reference as a person reads it, in real Chromium: Scalar's page at
 * /docs renders the hub's own description under a Content-Security-Policy that
 * refuses nothing it needs, every script and style it loads comes from the hub,
 * and a problem's `type` link lands on its code's entry.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, hub, launchChromium, screenshot } from "./driver";

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe("the API reference", () => {
  it("renders the hub's operations from the hub's own assets", async () => {
    const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
    const elsewhere: string[] = [];
    page.on("request", (r) => {
      const url = new URL(r.url());
      if (url.origin !== hub().url && url.protocol !== "data:" && url.protocol !== "blob:") elsewhere.push(r.url());
    });
    // What the page's Content-Security-Policy refused: the page must need nothing it forbids.
    await page.addInitScript(() => {
      (window as unknown as { refused: string[] }).refused = [];
      document.addEventListener("securitypolicyviolation", (e) =>
        (window as unknown as { refused: string[] }).refused.push(`${e.effectiveDirective} ${e.blockedURI}`),
      );
    });
    const answer = await page.goto(`${hub().url}/docs`);
    const headers = answer!.headers();
    expect(headers["content-security-policy"]).toContain("default-src 'none'");
    expect(headers["content-security-policy"]).toContain("script-src 'self'");
    expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(headers["x-frame-options"]).toBe("DENY");
    expect(headers["x-content-type-options"]).toBe("nosniff");
    await page.getByRole("heading", { name: "Orchestratia hub", level: 1 }).waitFor({ timeout: 30_000 });
    // An operation's summary, from its documented() description, under its tag.
    await page.getByRole("button", { name: "Projects" }).first().click();
    await page.getByRole("heading", { name: "Create a project" }).waitFor();
    await page.getByRole("heading", { name: "Create a project" }).scrollIntoViewIfNeeded();
    await screenshot(page, "api-reference");
    expect(elsewhere).toEqual([]);
    // zod, inside Scalar, probes whether it may compile code (`new Function("")`) and does without when it may not.
    const refused = await page.evaluate(() => (window as unknown as { refused: string[] }).refused);
    expect(refused.filter((r) => r !== "script-src eval")).toEqual([]);
    await page.context().close();
  });

  it("takes a refusal's problem type to the explanation of its code, on a page that runs no script", async () => {
    const refused = await call<{ type: string; code: string }>("/api/v1/projects", { body: { name: "x" } }, 401);
    const page = await (await browser.newContext({ viewport: { width: 1000, height: 700 } })).newPage();
    const answer = await page.goto(new URL(refused.type, `${hub().url}/api/v1/projects`).href);
    // No script at all, and its one style block by its hash: the style applies.
    expect(answer!.headers()["content-security-policy"]).toMatch(/^default-src 'none';.* frame-ancestors 'none'; style-src 'sha256-[\w+/=]+'$/);
    expect(answer!.headers()["x-frame-options"]).toBe("DENY");
    const entry = page.locator("dt:target");
    await expect(entry.textContent()).resolves.toBe(refused.code);
    await expect(entry.evaluate((dt) => getComputedStyle(dt).backgroundColor)).resolves.toBe("rgb(255, 248, 197)");
    await expect(page.locator("dt:target + dd").textContent()).resolves.toMatch(/credentials/);
    await screenshot(page, "problem-codes");
    await page.context().close();
  });
});
