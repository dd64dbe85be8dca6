/**
 * Slack in real Chromium, against the fake Web API beside the hub (test-browser/hub.ts): an admin installs the app by
 * pasting a bot token (a token of another workspace refused beside its field), adds a project's channel with two
 * groups of events, mutes and removes it, and on the Account page gets the `/orc link` code to type in Slack.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CHAT_EVENT_GROUPS as HUB_GROUPS } from "../src/domain/chat-events";
import { CHAT_EVENT_GROUPS } from "../web/src/chat-event-groups";
import { accessTokenOf, hub, hubAs, launchChromium, ok, screenshot, signedIn } from "./driver";

let browser: Browser;
let asAdmin: BrowserContext;
let admin: string;
const TEAM = `TB${Date.now().toString(36).toUpperCase()}`;

beforeAll(async () => {
  browser = await launchChromium();
  const signedInAdmin = await signedIn(browser, hub().admin.email, hub().admin.password);
  asAdmin = signedInAdmin.context;
  admin = await accessTokenOf(signedInAdmin.page);
  await signedInAdmin.page.close();
  await asAdmin.grantPermissions(["clipboard-read", "clipboard-write"], { origin: hub().url });
});
afterEach(async () => {
  for (const page of asAdmin.pages()) await page.close();
});
afterAll(async () => {
  await browser?.close();
});

/** Confirmations are accepted. */
const acceptDialogs = (page: Page) => page.on("dialog", (d) => void d.accept());

/** Both sizes the screenshots are taken at, the wide one last (the size the test goes on at). */
async function shots(page: Page, name: string, scrollTo?: string) {
  for (const [width, height, suffix] of [
    [390, 844, "phone"],
    [1440, 900, "wide"],
  ] as const) {
    await page.setViewportSize({ width, height });
    // The sidebar slides in or out as the width crosses the phone's.
    await page.waitForTimeout(600);
    if (scrollTo) await page.locator(scrollTo).scrollIntoViewIfNeeded();
    await screenshot(page, `${name}-${suffix}`);
  }
}

describe("Slack", () => {
  it("the dashboard's event groups are the hub's", () => {
    expect(CHAT_EVENT_GROUPS).toEqual(HUB_GROUPS);
  });

  it("an admin installs the app by its bot token, a wrong one refused beside its field", async () => {
    const page = await asAdmin.newPage();
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(hub().url + "/account");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Slack" }).click();
    await page.getByRole("heading", { name: "Create the app", exact: true }).waitFor();
    await page.getByRole("button", { name: "Copy manifest" }).click();
    const copied = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
    expect(copied.settings.interactivity.request_url).toBe(`${hub().url}/slack/interactions`);
    await page.getByRole("button", { name: "Install to Slack" }).waitFor();

    await page.getByLabel("Workspace id").fill(TEAM);
    await page.getByLabel("Bot token").fill("xoxb-T999-not-theirs");
    await page.getByRole("button", { name: "Install", exact: true }).click();
    const refusal = page.locator("[data-field-problem=bot_token]");
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain("T999");

    await page.getByLabel("Bot token").fill(`xoxb-${TEAM}-browser-token`);
    await page.getByRole("button", { name: "Install", exact: true }).click();
    const row = page.locator(`[data-team-id=${TEAM}]`);
    await row.waitFor();
    expect(await row.textContent()).toContain(`Team ${TEAM}`);
    expect(await page.locator("[data-field-problem]").count()).toBe(0);
    await shots(page, "slack-settings");

    await page.goto(`${hub().url}/settings/slack?installed=${TEAM}`);
    expect(await page.locator(`[data-installed=${TEAM}]`).textContent()).toContain("installed");
  });

  it("a project's channel with two groups of events, muted and removed", async () => {
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Slack posts" } }), 201);
    const page = await asAdmin.newPage();
    acceptDialogs(page);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${hub().url}/projects/${project.id}/settings`);
    const panel = page.locator(".slack-channels");
    await panel.getByText("No Slack channels yet.").waitFor();
    // Several workspaces when other tests installed some: this test's is picked.
    if (await panel.getByLabel("Workspace").count()) await panel.getByLabel("Workspace").selectOption(TEAM);
    await panel.getByLabel("Channel id").fill("COUTBROWSER");
    await panel.getByRole("checkbox", { name: "Failures" }).uncheck();
    expect(await panel.getByRole("checkbox", { checked: true }).count()).toBe(2);
    await panel.getByRole("button", { name: "Add channel" }).click();
    const row = panel.locator("[data-channel-id=COUTBROWSER]");
    await row.waitFor();
    expect(await row.textContent()).toContain("questions and approvals, plans to review");
    const listed = async () =>
      (await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}/slack-channels", { params: { path: { id: project.id } } }))).channels;
    expect((await listed())[0]).toMatchObject({ team_id: TEAM, events: ["intervention_requested", "task_awaiting_approval", "plan_submitted"], muted: false });

    await row.getByRole("checkbox", { name: "Mute COUTBROWSER" }).check();
    await panel.locator("[data-channel-id=COUTBROWSER][data-muted=true]").waitFor();
    expect((await listed())[0]!.muted).toBe(true);
    await shots(page, "slack-channels", ".slack-channels");

    await row.getByRole("button", { name: "Remove" }).click();
    await panel.getByText("No Slack channels yet.").waitFor();
    expect(await listed()).toEqual([]);
  });

  it("the account page gives the /orc link command to type in Slack", async () => {
    const page = await asAdmin.newPage();
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(hub().url + "/account");
    const section = page.locator(".slack-link");
    await section.locator("[data-slack=not-linked]").waitFor();
    await section.getByRole("button", { name: "Link Slack" }).click();
    const command = section.locator("input[name=slack-link-command]");
    await command.waitFor();
    expect(await command.inputValue()).toMatch(/^\/orc link [\w-]{20,}$/);
    expect(await section.textContent()).toContain("It works once, until");
    await shots(page, "slack-account-link", ".slack-link");
  });
});
