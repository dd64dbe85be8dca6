/**
 * The pages a person opens from a phone, at 390×844: a task (with long ids, URLs and code in it), the inbox, the
 * session list and a session's terminal. None scrolls sideways (the page is no wider than the screen), every control
 * that acts is at least 44 px tall (and icon-only ones as wide), and the terminal fits the screen's width and still
 * takes what the person types.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "../client";
import { accessTokenOf, hub, hubAs, launchChromium, ok, screenshot, signedIn } from "./driver";
import { FakeDaemon } from "./fake-daemon";

const PHONE = { width: 390, height: 844 };
const TOUCH = 44;

let browser: Browser;
let context: BrowserContext;
let admin: string;
let daemon: FakeDaemon;
let project: Schemas["Project"];
let session: Schemas["Session"];
let task: Schemas["Task"];

const LONG_URL = "https://ci.example.com/orgs/checkout-platform/pipelines/ledger-service/builds/2026-12-02T14-05-00Z-8f3a9c1d2e4b/artifacts/report.html";
const SPEC = [
  "Refunds are written twice when the provider retries its webhook.",
  "",
  `The failing run: ${LONG_URL}`,
  "",
  "```",
  "UPDATE refunds SET ledger_entry_id = (SELECT id FROM ledger_entries WHERE ledger_entries.refund_id = refunds.id ORDER BY created_at DESC LIMIT 1);",
  "```",
].join("\n");

beforeAll(async () => {
  browser = await launchChromium();
  const signed = await signedIn(browser, hub().admin.email, hub().admin.password);
  context = signed.context;
  admin = await accessTokenOf(signed.page);
  await signed.page.close();
  project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Pocket checkout" } }), 201);
  daemon = await FakeDaemon.register(admin, project.id, `pocket-box-with-a-long-machine-name-${Date.now().toString(36)}`);
  await daemon.connect();
  session = await ok(
    hubAs({ token: admin }).POST("/api/v1/projects/{id}/sessions", {
      params: { path: { id: project.id } },
      body: { server_id: daemon.id, name: "refunds-agent", working_directory: "/home/dev/checkout-platform/services/ledger-service/refunds" },
    }),
    201,
  );
  while (daemon.starts.length === 0) await new Promise((r) => setTimeout(r, 50));
  const agent = hubAs({ apiKey: daemon.apiKey });
  const upstream = await ok(agent.POST("/api/v1/server/tasks", { body: { project_id: project.id, title: "Add an idempotency key to refund webhooks" } }), 201);
  task = await ok(
    agent.POST("/api/v1/server/tasks", {
      body: {
        project_id: project.id,
        title: "Stop writing duplicate refunds when the payment provider retries its webhook deliveries",
        spec: SPEC,
        target_repo: "git@github.com:checkout-platform/ledger-service-with-a-rather-long-repository-name.git",
        target_branch: "fix/refunds-written-twice-on-provider-webhook-retries",
        dependencies: [{ depends_on_task_id: upstream.id, dependency_type: "related" }],
      },
    }),
    201,
  );
  const path = { params: { path: { id: task.id } } };
  await ok(agent.POST("/api/v1/server/tasks/{id}/assign", { ...path, body: { session_name: "refunds-agent" } }));
  await ok(agent.POST("/api/v1/server/tasks/{id}/start", path));
  await ok(
    agent.POST("/api/v1/server/tasks/{id}/notes", { ...path, body: { content: `Reproduced with ${LONG_URL}; the second write has the same provider id.` } }),
  );
  await ok(
    agent.POST("/api/v1/server/tasks/{id}/help", {
      ...path,
      body: {
        question: `Run \`psql "$LEDGER_URL" -c 'DELETE FROM refunds WHERE id IN (SELECT id FROM duplicates_2026_12_02)'\`?`,
        intervention_type: "approval",
      },
    }),
  );
  daemon.output(session.id, "refunds-agent ready\r\n$ ");
});
afterAll(async () => {
  daemon?.close();
  await browser?.close();
});

/** How much wider than the screen the page is (0: no sideways scroll), and the elements that stick out. */
const overflow = (page: Page) =>
  page.evaluate(() => ({
    by: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    out: [...document.querySelectorAll("body *")]
      .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
      // What scrolls within a box of its own (the project's tabs, a wide table's wrapper) leaves the page as it is.
      .filter((e) => {
        for (let up = e.parentElement; up && up !== document.body; up = up.parentElement)
          if (/auto|scroll|hidden/.test(getComputedStyle(up).overflowX)) return false;
        return true;
      })
      .map((e) => `${e.tagName.toLowerCase()}.${String(e.className)}`)
      .slice(0, 12),
  }));

/**
 * The controls that act and are smaller than a finger: buttons, fields, menus and links standing on their own (a link
 * inside a sentence is spared, as WCAG 2.5.8 spares it), shown on screen.
 */
const smallTargets = (page: Page, min = TOUCH) =>
  page.evaluate((min) => {
    const controls = document.querySelectorAll<HTMLElement>("button, select, input:not([type=hidden]), textarea, summary, [role=button], [role=tab], a[href]");
    const inSentence = (e: HTMLElement) =>
      e.tagName === "A" && /^(P|LI|SPAN|TD|DD|H\d|SMALL|STRONG|EM|CODE)$/.test(e.parentElement?.tagName ?? "") && !e.matches(".button, nav a");
    return (
      [...controls]
        .filter((e) => e.checkVisibility({ visibilityProperty: true }) && !e.closest(".xterm, [aria-hidden=true]") && !inSentence(e))
        // A checkbox or radio is hit through its label.
        .map((e) => ({ e, box: (e.matches("[type=checkbox], [type=radio]") ? (e.closest("label") ?? e) : e).getBoundingClientRect() }))
        .filter(({ box }) => box.width > 0 && box.height > 0 && (box.height < min - 0.5 || box.width < min - 0.5))
        .map(
          ({ e, box }) =>
            `${e.tagName.toLowerCase()}${e.className ? "." + String(e.className).split(" ").join(".") : ""} "${(e.textContent ?? e.getAttribute("aria-label") ?? "").trim().slice(0, 30)}" ${Math.round(box.width)}×${Math.round(box.height)}`,
        )
    );
  }, min);

async function onPhone(path: string, ready: (page: Page) => Promise<unknown>) {
  const page = await context.newPage();
  await page.setViewportSize(PHONE);
  await page.goto(hub().url + path);
  await ready(page);
  return page;
}

async function expectFits(page: Page) {
  expect(await overflow(page)).toEqual({ by: 0, out: [] });
  expect(await smallTargets(page)).toEqual([]);
}

describe("on a phone", () => {
  it("keeps the navigation in a menu that opens from the top bar and closes on a choice, on Escape and beside it", async () => {
    const page = await onPhone(`/projects/${project.id}/board`, (p) => p.locator(".board[data-loaded=true]").waitFor());
    const menu = page.getByRole("button", { name: "Menu" });
    const nav = page.getByRole("navigation", { name: "Main" });
    expect(await nav.isVisible()).toBe(false);
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    await menu.click();
    await nav.waitFor();
    expect(await menu.getAttribute("aria-expanded")).toBe("true");
    // Measured and pictured once it has slid in.
    await page.waitForFunction(() => document.getElementById("sidebar")!.getAnimations().length === 0);
    await expectFits(page);
    await screenshot(page, "menu-phone");
    // A choice goes there and puts the menu away.
    await nav.getByRole("link", { name: "Inbox" }).click();
    await page.waitForURL(/\/inbox$/);
    await nav.waitFor({ state: "hidden" });
    expect(await menu.getAttribute("aria-expanded")).toBe("false");
    await menu.click();
    await nav.waitFor();
    await page.keyboard.press("Escape");
    await nav.waitFor({ state: "hidden" });
    // A tap beside the open menu closes it too, and leaves the page where it was.
    await menu.click();
    await nav.waitFor();
    await page.mouse.click(PHONE.width - 10, PHONE.height / 2);
    await nav.waitFor({ state: "hidden" });
    expect(new URL(page.url()).pathname).toBe("/inbox");
  });

  it("shows a task with no sideways scroll, its long ids, URLs and code wrapped, every control within reach", async () => {
    const page = await onPhone(`/projects/${project.id}/tasks/${task.id}`, (p) => p.getByRole("heading", { name: /Stop writing duplicate refunds/ }).waitFor());
    await page.getByText("The failing run").waitFor();
    await expectFits(page);
    await screenshot(page, "task-phone");
  });

  it("shows the inbox with no sideways scroll, each answer within reach", async () => {
    const page = await onPhone("/inbox", (p) => p.locator(".inbox-item").first().waitFor());
    await expectFits(page);
    await screenshot(page, "inbox-phone");
  });

  it("lists the sessions as stacked rows with no sideways scroll", async () => {
    const page = await onPhone(`/projects/${project.id}/sessions`, (p) => p.locator("[data-feed=live]").waitFor());
    await page.getByRole("link", { name: "refunds-agent" }).waitFor();
    await expectFits(page);
    await screenshot(page, "sessions-narrow");
  });

  it("fits a session's terminal to the screen, and what is typed still reaches the session", async () => {
    const page = await onPhone(`/projects/${project.id}/sessions/${session.id}`, (p) => p.locator("[data-terminal=live]").waitFor());
    await page.locator(".terminal-screen[data-writer=true]").waitFor();
    await expect.poll(() => page.locator(".xterm-rows").textContent(), { timeout: 10_000 }).toContain("refunds-agent ready");
    await expectFits(page);
    // The terminal is as wide as the screen leaves it, and no wider.
    const [terminal, screen] = await Promise.all([page.locator(".xterm-screen").boundingBox(), page.locator(".terminal-frame").boundingBox()]);
    expect(terminal!.x + terminal!.width).toBeLessThanOrEqual(screen!.x + screen!.width + 1);
    expect(terminal!.width).toBeGreaterThan(screen!.width * 0.8);
    await page.locator(".terminal-screen").click();
    await page.keyboard.type("ls");
    await expect.poll(() => daemon.received(session.id).toString("utf8"), { timeout: 10_000 }).toBe("ls");
    await screenshot(page, "terminal-narrow");
  });
});
