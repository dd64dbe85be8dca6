/**
 * Webhooks and Telegram in real Chromium. A member adds a webhook from the
 * project's Webhooks tab pointing at a receiver in this test, keeps the secret
 * shown once, and follows test deliveries to "delivered" while the receiver
 * verifies every signature with the standardwebhooks library; the hub's
 * refusal of a URL shows beside the form; a viewer gets no webhook controls.
 * On the Account page an admin sets up the bot (a fake Bot API, test-browser/hub.ts)
 * and links Telegram by its deep link, which the page notices on its own.
 */
import { readFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../web/src/event-types";
import { addMember, accessTokenOf, hub, hubAs, launchChromium, ok, screenshot, signedIn } from "./driver";

interface Received {
  headers: Record<string, string>;
  body: string;
}

/** A webhook receiver: records every POST and answers 200. */
async function startReceiver() {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      if (req.method === "POST") received.push({ headers: flat(req.headers), body });
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end("thanks");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks/orchestratia`,
    received,
    /** What the deliveries from `from` on say, each signature checked with the secret (which throws if one does not match). */
    verified: (secret: string, from = 0) =>
      received.slice(from).map((r) => new Webhook(secret).verify(r.body, r.headers) as { type: string; data: Record<string, unknown> }),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const flat = (headers: IncomingHttpHeaders) => Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]));

let browser: Browser;
/** Signed in once each, through the form: sign-ins are limited to 10 a minute, which the other suites use up. */
let asAdmin: BrowserContext;
let asMember: BrowserContext;
let asViewer: BrowserContext;
let admin: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const people = { member: "", viewer: "" };

beforeAll(async () => {
  browser = await launchChromium();
  receiver = await startReceiver();
  const signedInAdmin = await signedIn(browser, hub().admin.email, hub().admin.password);
  asAdmin = signedInAdmin.context;
  admin = await accessTokenOf(signedInAdmin.page);
  await signedInAdmin.page.close();
  const stamp = Date.now();
  for (const role of ["member", "viewer"] as const) {
    const person = { email: `hooks-${role}-${stamp}@example.com`, password: `${role}-password-1` };
    people[role] = (await ok(hubAs({ token: admin }).POST("/api/v1/users", { body: { ...person, role } }), 201)).id;
    const { context, page } = await signedIn(browser, person.email, person.password);
    await page.close();
    if (role === "member") asMember = context;
    else asViewer = context;
  }
  await asMember.grantPermissions(["clipboard-read", "clipboard-write"], { origin: hub().url });
});
afterEach(async () => {
  for (const page of [...asAdmin.pages(), ...asMember.pages(), ...asViewer.pages()]) await page.close();
});
afterAll(async () => {
  receiver?.close();
  await browser?.close();
});

/** A project the member and the viewer belong to. */
async function sharedProject(name: string) {
  const api = hubAs({ token: admin });
  const project = await ok(api.POST("/api/v1/projects", { body: { name } }), 201);
  for (const id of [people.member, people.viewer]) await addMember(admin, project.id, id);
  return project;
}

/** Confirmations are accepted, and what they asked is kept. */
function acceptDialogs(page: Page) {
  const asked: string[] = [];
  page.on("dialog", (d) => {
    asked.push(d.message());
    void d.accept();
  });
  return asked;
}

async function openWebhooksTab(page: Page, projectName: string) {
  await page.goto(hub().url + "/");
  await page.getByRole("main").getByRole("link", { name: projectName, exact: true }).click();
  await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "Webhooks" }).click();
  await page.getByRole("heading", { name: "Add a webhook" }).waitFor();
  await page.locator("[data-feed=live]").waitFor();
}

const shownSecret = (page: Page) => page.locator(".secret-once input[name=webhook-secret]").inputValue();

describe("webhooks", () => {
  it("a member adds one from the Webhooks tab, copies the secret shown once, and sees signed deliveries arrive", async () => {
    const project = await sharedProject("Hooked");
    const page = await asMember.newPage();
    const confirmations = acceptDialogs(page);
    await openWebhooksTab(page, "Hooked");
    await page.getByText("No webhooks yet").waitFor();

    await page.getByLabel("URL").fill(receiver.url);
    await page.getByLabel("Description").fill("Our CI");
    // The events: all unless some are picked; this one wants tests and created tasks only.
    await page.locator(".event-picker summary").click();
    await page.getByRole("checkbox", { name: "task created" }).check();
    expect(await page.locator(".event-picker summary").textContent()).toBe("task created");
    await page.keyboard.press("Escape");
    expect(await page.locator(".event-picker details").getAttribute("open")).toBeNull();
    await page.getByRole("button", { name: "Add webhook" }).click();

    // The secret, shown once, copied with the button.
    const panel = page.locator(".secret-once");
    await panel.waitFor();
    expect(await panel.textContent()).toContain("Shown once.");
    const secret = await shownSecret(page);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    await panel.getByRole("button", { name: "Copy" }).click();
    await panel.getByText("Copied", { exact: true }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await panel.getByRole("button", { name: "I have copied it" }).click();
    expect(await panel.count()).toBe(0);

    const row = page.locator("tr[data-webhook-id]", { hasText: receiver.url });
    expect(await row.textContent()).toMatch(/Our CI.*task created.*enabled/);
    const webhookId = (await row.getAttribute("data-webhook-id"))!;
    const [listed] = (await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}/webhooks", { params: { path: { id: project.id } } }))).webhooks;
    expect(listed).toMatchObject({ id: webhookId, events: ["task_created"] });
    expect(listed).not.toHaveProperty("secret");

    // A test delivery: the page opens the webhook's deliveries and follows it to delivered, with the receiver's 200.
    await row.getByRole("button", { name: /^Send test/ }).click();
    await page.waitForURL(`**/projects/${project.id}/webhooks/${webhookId}`);
    const delivered = page.locator(".deliveries-list tr[data-status=delivered]", { hasText: "webhook.test" });
    await delivered.waitFor({ timeout: 20_000 });
    expect(await delivered.locator("td").nth(2).textContent()).toBe("200");
    expect(receiver.verified(secret).map((m) => m.type)).toEqual(["webhook.test"]);
    expect(receiver.verified(secret)[0]!.data).toMatchObject({ webhook_id: webhookId });

    // Its attempt: the status code and how long it took.
    expect(await delivered.locator("td").nth(1).textContent()).toMatch(/^1 /);
    await delivered.getByRole("button", { name: "Attempt log" }).click();
    const attempt = page.locator(".attempt-log li[data-status-code='200']");
    await attempt.waitFor();
    expect(await attempt.textContent()).toMatch(/ · 200 · \d+ ms/);
    // The start of the receiver's answer is for admins only: the member sees none, an admin reads it.
    expect(await attempt.locator(".response").count()).toBe(0);
    const deliveryId = (await delivered.getAttribute("data-delivery-id"))!;
    const path = { id: project.id, wid: webhookId, did: deliveryId };
    const asAdmin = await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}/webhooks/{wid}/deliveries/{did}", { params: { path } }));
    expect(asAdmin.attempt_log.map((a) => a.response_body)).toEqual(["thanks"]);

    // An event it wants: a new task's delivery shows up live in the same view.
    const task = await ok(hubAs({ token: admin }).POST("/api/v1/tasks", { body: { project_id: project.id, title: "Tell the receiver" } }), 201);
    await page.locator(".deliveries-list tr[data-status=delivered]", { hasText: "task_created" }).waitFor({ timeout: 20_000 });
    expect(receiver.verified(secret).map((m) => m.type)).toEqual(["webhook.test", "task_created"]);
    expect(JSON.stringify(receiver.verified(secret)[1]!.data)).toContain(task.id);

    // Sent again: the same webhook-id, so receivers can tell it is the same delivery.
    await delivered.getByRole("button", { name: "Redeliver" }).click();
    await expect.poll(() => receiver.received.length, { timeout: 20_000 }).toBe(3);
    expect(receiver.received[2]!.headers["webhook-id"]).toBe(receiver.received[0]!.headers["webhook-id"]);
    await expect.poll(() => page.locator(".attempt-log li[data-status-code='200']").count()).toBe(2);
    // The log numbers every attempt, the redelivery's included.
    expect(await page.locator(".attempt-log li").nth(1).textContent()).toMatch(/^#2 /);

    // A new secret, after a confirmation: shown once again; for a day both sign.
    await row.getByRole("button", { name: /^Rotate secret/ }).click();
    expect(confirmations.at(-1)).toContain("24 hours");
    await panel.waitFor();
    const rotated = await shownSecret(page);
    expect(rotated).not.toBe(secret);
    expect(await panel.textContent()).toContain("The previous secret keeps signing beside it until");
    await row.getByRole("button", { name: /^Send test/ }).click();
    await expect.poll(() => page.locator(".deliveries-list tr[data-status=delivered]", { hasText: "webhook.test" }).count(), { timeout: 20_000 }).toBe(2);
    await expect.poll(() => receiver.received.length).toBe(4);
    expect(receiver.verified(rotated, 3).map((m) => m.type)).toEqual(["webhook.test"]);
    expect(receiver.verified(secret, 3).map((m) => m.type)).toEqual(["webhook.test"]);
    expect(() => receiver.verified(rotated, 2)).toThrow(/signature/);
    await screenshot(page, "webhooks");

    // Disabled and enabled again; then deleted, after a confirmation.
    await row.getByRole("button", { name: /^Disable/ }).click();
    await row.locator("[data-enabled=false]").waitFor();
    await row.getByRole("button", { name: /^Enable/ }).click();
    await row.locator("[data-enabled=true]").waitFor();
    await row.getByRole("button", { name: /^Delete/ }).click();
    expect(confirmations.at(-1)).toContain(receiver.url);
    await page.getByText("No webhooks yet").waitFor();
    expect((await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}/webhooks", { params: { path: { id: project.id } } }))).webhooks).toEqual([]);
  });

  it("shows the hub's refusal of a URL beside the form", async () => {
    const project = await sharedProject("Refused hooks");
    const page = await asMember.newPage();
    await openWebhooksTab(page, "Refused hooks");
    await page.getByLabel("URL").fill("ftp://x");
    await page.getByRole("button", { name: "Add webhook" }).click();
    const refusal = page.locator("form", { has: page.getByLabel("URL") }).getByRole("alert");
    await refusal.waitFor();
    const refused = await fetch(`${hub().url}/api/v1/projects/${project.id}/webhooks`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${admin}` },
      body: JSON.stringify({ url: "ftp://x" }),
    });
    expect(refused.status).toBe(422);
    const problem = (await refused.json()) as { detail: string; errors: { path: string }[] };
    expect(problem.errors.map((e) => e.path)).toEqual(["url"]);
    expect(await refusal.textContent()).toBe(problem.detail);
    expect(problem.detail).toMatch(/^url: /);
    expect(await page.locator("tr[data-webhook-id]").count()).toBe(0);
  });

  it("gives a viewer no webhook controls", async () => {
    const project = await sharedProject("Hooks to watch");
    await ok(hubAs({ token: admin }).POST("/api/v1/projects/{id}/webhooks", { params: { path: { id: project.id } }, body: { url: receiver.url } }), 201);
    const page = await asViewer.newPage();
    await page.goto(hub().url + "/");
    await page.getByRole("main").getByRole("link", { name: "Hooks to watch", exact: true }).click();
    await page.locator("[data-feed=live]").waitFor();
    const tabs = page.getByRole("navigation", { name: "Project" });
    await tabs.getByRole("link", { name: "Members" }).waitFor();
    expect(await tabs.getByRole("link", { name: "Webhooks" }).count()).toBe(0);

    // Even at the tab's address: a note, and nothing to press.
    await page.goto(`${hub().url}/projects/${project.id}/webhooks`);
    await page.locator("[data-read-only]").waitFor();
    expect(await page.getByLabel("URL").count()).toBe(0);
    expect(await page.getByRole("button", { name: /Add webhook|Send test|Rotate|Disable|Enable|Delete/ }).count()).toBe(0);
    expect(await page.locator("tr[data-webhook-id]").count()).toBe(0);
  });

  it("offers exactly the event types the hub knows", () => {
    const source = readFileSync(path.resolve(import.meta.dirname, "../src/domain/event-types.ts"), "utf8");
    const list = /export const EVENT_TYPES = \[([^\]]*)\] as const/.exec(source)?.[1];
    expect([...(list ?? "").matchAll(/"(\w+)"/g)].map((m) => m[1])).toEqual([...EVENT_TYPES]);
  });
});

describe("the account page", () => {
  it("an admin sets up the bot, links Telegram by its deep link, sees it linked on its own, and unlinks", async () => {
    const page = await asAdmin.newPage();
    acceptDialogs(page);
    await page.goto(hub().url + "/");
    await page.getByRole("link", { name: `${hub().admin.email} · admin` }).click();
    await page.getByRole("heading", { name: "Account" }).waitFor();
    expect(await page.locator(".account > .facts").textContent()).toBe(`Email${hub().admin.email}Roleadmin`);
    await page.locator("[data-telegram=not-linked]").waitFor();

    // Before the bot is set up, linking is refused, and the refusal shows beside the button.
    const telegram = page.locator("section.telegram");
    await telegram.getByRole("button", { name: "Link Telegram" }).click();
    expect(await telegram.getByRole("alert").textContent()).toMatch(/Telegram is not set up/);

    await page.getByRole("button", { name: "Set up the bot" }).click();
    await page.locator("[data-bot=hub_test_bot]").waitFor();
    expect(await page.locator("[data-bot]").textContent()).toBe(`Bot@hub_test_botIts updates go to${hub().url}/telegram/webhook`);

    await telegram.getByRole("button", { name: "Link Telegram" }).click();
    const open = telegram.getByRole("link", { name: "Open in Telegram" });
    await open.waitFor();
    const deepLink = (await open.getAttribute("href"))!;
    expect(deepLink).toMatch(/^https:\/\/t\.me\/hub_test_bot\?start=[\w-]+$/);
    await screenshot(page, "account");

    // The person presses Start in Telegram: the bot receives /start <code>, and the page notices by itself.
    const code = new URL(deepLink).searchParams.get("start")!;
    const update = await fetch(`${hub().url}/telegram/webhook`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": hub().telegramWebhookSecret },
      body: JSON.stringify({
        update_id: 1,
        message: {
          message_id: 1,
          date: Math.floor(Date.now() / 1000),
          chat: { id: 9001, type: "private" },
          from: { id: 9001, is_bot: false, first_name: "Ada" },
          text: `/start ${code}`,
          entities: [{ type: "bot_command", offset: 0, length: 6 }],
        },
      }),
    });
    expect(update.status, await update.text()).toBe(200);
    await page.locator("[data-telegram=linked]").waitFor({ timeout: 10_000 });
    expect(await open.count()).toBe(0);
    expect(await ok(hubAs({ token: admin }).GET("/api/v1/auth/me/telegram"))).toMatchObject({ linked: true, muted: false });

    await telegram.getByRole("button", { name: "Unlink" }).click();
    await page.locator("[data-telegram=not-linked]").waitFor();
    expect(await ok(hubAs({ token: admin }).GET("/api/v1/auth/me/telegram"))).toMatchObject({ linked: false });
  });
});
