/**
 * Every page of the dashboard (each route of web/src/router.ts, the list view and the signed-out pages), at 1440×900,
 * 1024×768 and 390×844, light and dark: axe-core finds no serious or critical violation, the page does not scroll
 * sideways, and a screenshot of each is written to docs/screenshots/pages/<page>-<width>-<theme>.png. One signed-in
 * context per size; each page is opened once per size and looked at in both colour schemes.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accessTokenOf, hub, launchChromium, openInvite, SCREENSHOTS, signIn, signedIn } from "./driver";
import { axeViolations, COLOUR_RULES, describeViolations, open, settle, sidewaysOverflow } from "./page-audit";
import { seedProject, type SeededProject } from "./seed-project";

const SIZES = [
  { width: 1440, height: 900 },
  { width: 1024, height: 768 },
  { width: 390, height: 844 },
] as const;
const THEMES = ["light", "dark"] as const;
const SHOTS = path.join(SCREENSHOTS, "pages");

let browser: Browser;
let seed: SeededProject;
/** Pages that still showed a loading state or had a request in flight after the wait (said, not failed: axe still runs). */
const unsettled: string[] = [];

/** Every signed-in page, by the name its screenshots take, and its path. */
function signedInPages(s: SeededProject): [string, string][] {
  const p = `/projects/${s.projectId}`;
  return [
    ["projects", "/projects"],
    ["overview", `${p}/overview`],
    ["board", `${p}/board`],
    ["list", `${p}/board?view=list`],
    ["graph", `${p}/graph`],
    ["code-health", `${p}/code-health`],
    ["usage", `${p}/usage`],
    ["activity", `${p}/activity`],
    ["sessions", `${p}/sessions`],
    ["session", `${p}/sessions/${s.sessionId}`],
    ["permissions", `${p}/permissions`],
    ["members", `${p}/members`],
    ["settings", `${p}/settings`],
    ["connect", `${p}/connect`],
    ["task", `${p}/tasks/${s.taskId}`],
    ["new-task", `${p}/tasks/new`],
    ["webhooks", `${p}/webhooks`],
    ["webhook", `${p}/webhooks/${s.webhookId}`],
    ["automation", `${p}/automation`],
    ["automation-schedules", `${p}/automation/schedules`],
    ["automation-triggers", `${p}/automation/triggers`],
    ["automation-runs", `${p}/automation/runs`],
    ["inbox", "/inbox"],
    ["agents", "/agents"],
    ["server", `/servers/${s.serverId}`],
    ["rules", "/rules"],
    ["access", "/access"],
    ["people", "/people"],
    ["slack", "/settings/slack"],
    ["account", "/account"],
    ["usage-all", "/usage"],
    ["not-found", "/nowhere-at-all"],
  ];
}

/** What was found wrong, one line each, across a size's pages. */
type Problems = string[];

/** Where findings are also written as they are found (a long run's progress, before its end). */
const FINDINGS = process.env.EVERY_PAGE_FINDINGS;
const found = (problems: Problems, ...lines: string[]) => {
  problems.push(...lines);
  if (FINDINGS && lines.length) appendFileSync(FINDINGS, lines.join("\n") + "\n");
};

/**
 * Looks at the open page in each colour scheme: axe, sideways scroll, screenshot. Every rule runs in light; in dark only
 * the rules that read colours, since nothing else differs between the two.
 */
async function audit(page: Page, name: string, width: number, problems: Problems) {
  if (await page.locator(".state-error").count())
    found(problems, `${name} at ${width}: shows an error: ${await page.locator(".state-error").first().innerText()}`);
  for (const theme of THEMES) {
    await page.emulateMedia({ colorScheme: theme });
    // Colours that ease from one theme to the other (a column's background) are read once they have arrived.
    // (Transitions only: a spinner's animation never finishes.)
    await page.evaluate(() => Promise.all(document.getAnimations().flatMap((a) => (a instanceof CSSTransition ? [a.finished.catch(() => undefined)] : []))));
    const where = `${name} at ${width} ${theme}`;
    found(problems, ...describeViolations(where, await axeViolations(page, theme === "dark" ? COLOUR_RULES : undefined)));
    const overflow = await sidewaysOverflow(page);
    if (overflow > 0) found(problems, `${where}: scrolls sideways by ${overflow} px`);
    await page.screenshot({ path: path.join(SHOTS, `${name}-${width}-${theme}.png`) });
  }
  await page.emulateMedia({ colorScheme: "light" });
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await launchChromium();
  const { context, page } = await signedIn(browser, hub().admin.email, hub().admin.password);
  seed = await seedProject(await accessTokenOf(page), `Portal ${Date.now().toString(36)}`);
  await context.close();
}, 300_000);
afterAll(async () => {
  seed?.stop();
  if (unsettled.length) console.log(`Not settled within the wait: ${unsettled.join(", ")}`);
  await browser?.close();
});

const contextAt = (size: (typeof SIZES)[number]): Promise<BrowserContext> =>
  browser.newContext({ viewport: size, colorScheme: "light", ...(size.width < 800 ? { isMobile: true, hasTouch: true } : {}) });

describe("every page", () => {
  for (const size of SIZES) {
    it(`has no serious accessibility violation and no sideways scroll at ${size.width}×${size.height}, light and dark`, { timeout: 600_000 }, async () => {
      const context = await contextAt(size);
      const page = await context.newPage();
      await signIn(page, hub().admin.email, hub().admin.password);
      const problems: Problems = [];
      for (const [name, pathname] of signedInPages(seed)) {
        if (!(await open(page, hub().url + pathname))) unsettled.push(`${name} at ${size.width}`);
        await audit(page, name, size.width, problems);
      }
      await context.close();
      expect(problems).toEqual([]);
    });
  }

  it("has none on the signed-out pages (sign-in and an invite) at each size", { timeout: 300_000 }, async () => {
    const problems: Problems = [];
    for (const size of SIZES) {
      const context = await contextAt(size);
      const page = await context.newPage();
      await open(page, hub().url + "/");
      await page.getByRole("button", { name: "Sign in" }).waitFor();
      await audit(page, "sign-in", size.width, problems);
      expect(await openInvite(page, seed.inviteUrl)).toBe(200);
      await settle(page);
      await audit(page, "invite", size.width, problems);
      await context.close();
    }
    expect(problems).toEqual([]);
  });

  it("has none in the theme chosen with the toggle over the system's light", { timeout: 120_000 }, async () => {
    const context = await contextAt(SIZES[0]);
    const page = await context.newPage();
    await signIn(page, hub().admin.email, hub().admin.password);
    await open(page, `${hub().url}/projects/${seed.projectId}/board`);
    await page.getByRole("radiogroup", { name: "Theme" }).getByRole("radio", { name: "Dark" }).click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
    // The page's own background follows the choice, not the system's light.
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).not.toBe("rgb(247, 248, 250)");
    const problems = describeViolations("board at 1440, dark chosen by the toggle", await axeViolations(page));
    await page.screenshot({ path: path.join(SHOTS, "board-1440-toggled-dark.png") });
    await page.getByRole("radio", { name: "System" }).click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBeUndefined();
    await context.close();
    expect(problems).toEqual([]);
  });
});
