/**
 * The inbox in real Chromium, as a person: an agent's question raises the unread count beside Inbox and in the tab's
 * title, and (once the person turned them on) shows a browser notification that opens the item; opening the inbox
 * marks it seen; the answer sent from the inbox reaches the agent's daemon. A task an agent created waits in the
 * inbox and is approved from there.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "../client";
import { accessTokenOf, addMember, adminToken, hub, hubAs, launchChromium, ok, screenshot, signIn } from "./driver";
import { FakeDaemon } from "./fake-daemon";

let browser: Browser;
let context: BrowserContext;
let page: Page;
let admin: string;
let daemon: FakeDaemon;
let project: Schemas["Project"];
let sessionId: string;
const person = { email: `inbox-${Date.now()}@example.com`, password: "inbox-password-1" };

beforeAll(async () => {
  browser = await launchChromium();
  admin = await adminToken();
  const user = await ok(hubAs({ token: admin }).POST("/api/v1/users", { body: { ...person, role: "member" } }), 201);
  project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Checkout" } }), 201);
  await addMember(admin, project.id, user.id);
  daemon = await FakeDaemon.register(admin, project.id, `inbox-box-${Date.now()}`);
  await daemon.connect();
  sessionId = (await ok(hubAs({ apiKey: daemon.apiKey }).POST("/api/v1/server/sessions", { body: { name: "payments-agent", project_id: project.id } }), 201))
    .id;

  context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.grantPermissions(["notifications"], { origin: hub().url });
  // Every notification the page shows is recorded (and kept, to be clicked).
  await context.addInitScript(() => {
    const Shown = window.Notification;
    const shown: Notification[] = [];
    (window as unknown as { shown: Notification[] }).shown = shown;
    window.Notification = class extends Shown {
      constructor(title: string, options?: NotificationOptions) {
        super(title, options);
        shown.push(this);
      }
    } as typeof Notification;
  });
  page = await context.newPage();
  await signIn(page, person.email, person.password);
});
afterAll(async () => {
  daemon?.close();
  await browser?.close();
});

const asAgent = () => hubAs({ apiKey: daemon.apiKey });
const nav = () => page.getByRole("navigation", { name: "Main" });
const badge = () => nav().locator(".unread-count");
const shown = () => page.evaluate(() => (window as unknown as { shown: Notification[] }).shown.map((n) => ({ title: n.title, body: n.body, tag: n.tag })));

/** A task of the project given to the daemon's session and started, as its agent would. */
async function runningTask(title: string) {
  const task = await ok(asAgent().POST("/api/v1/server/tasks", { body: { project_id: project.id, title, spec: "See the ticket" } }), 201);
  const path = { params: { path: { id: task.id } } };
  await ok(asAgent().POST("/api/v1/server/tasks/{id}/assign", { ...path, body: { session_name: "payments-agent" } }));
  await ok(asAgent().POST("/api/v1/server/tasks/{id}/start", path));
  return task;
}

describe("the inbox", () => {
  it("counts a new question in the navigation and the title, notifies it, and its answer reaches the agent", async () => {
    await nav().getByRole("link", { name: "Inbox" }).click();
    await page.getByText("Nothing waits on you").waitFor();
    expect(await page.title()).toBe("Orchestratia hub");
    await page.getByRole("button", { name: "Turn on notifications" }).click();
    await page.getByText("Notifications are on.").waitFor();

    // The person watches the project's board: its live feed says at once that something waits on people.
    await page.goto(`${hub().url}/projects/${project.id}`);
    await page.getByRole("heading", { name: "Checkout" }).waitFor();
    const task = await runningTask("Refund the duplicate charge");
    const help = await ok(
      asAgent().POST("/api/v1/server/tasks/{id}/help", {
        params: { path: { id: task.id } },
        body: { question: "Refund to the card or as store credit?", intervention_type: "question", context: { order: "A-1042", amount: "19.99 EUR" } },
      }),
    );
    await expect.poll(() => badge().textContent(), { timeout: 15_000 }).toBe("1");
    await expect.poll(() => page.title()).toBe("(1) Orchestratia hub");
    await screenshot(page, "inbox-unread-count");
    await expect
      .poll(shown)
      .toEqual([
        { title: "Question · Checkout", body: "Refund the duplicate charge\nRefund to the card or as store credit?", tag: `question:${help.intervention_id}` },
      ]);

    // Clicking the notification opens the item in the inbox; opening the inbox marks it seen.
    await page.evaluate(() => (window as unknown as { shown: Notification[] }).shown[0]!.onclick!(new Event("click")));
    await page.waitForURL(`**/inbox?item=${help.intervention_id}`);
    const item = page.locator(`.inbox-item[data-item-id="${help.intervention_id}"]`);
    await item.waitFor();
    expect(await item.getAttribute("class")).toContain("focused");
    expect(await item.getByRole("link", { name: "Refund the duplicate charge" }).getAttribute("href")).toBe(`/projects/${project.id}/tasks/${task.id}`);
    await item.getByText("payments-agent on").waitFor();
    expect(await item.locator("time").first().textContent()).toBe("just now");
    expect(await item.locator("time").first().getAttribute("title")).toBeTruthy();
    await expect.poll(() => badge().count()).toBe(0);
    expect(await page.title()).toBe("Orchestratia hub");
    expect((await ok(hubAs({ token: await accessTokenOf(page) }).GET("/api/v1/inbox/count"))).unread).toBe(0);

    await item.getByLabel("Answer").fill("Store credit, and say sorry");
    await item.getByRole("button", { name: "Send answer" }).click();
    await item.waitFor({ state: "detached" });
    await expect
      .poll(() => daemon.frames.find((f) => f.type === "intervention_response" && f.task_id === task.id))
      .toMatchObject({ session_id: sessionId, response: "Store credit, and say sorry" });
    const answered = await ok(asAgent().GET("/api/v1/server/interventions", { params: { query: { task_id: task.id } } }));
    expect(answered.map((i) => [i.status, i.response, i.responded_by])).toEqual([["responded", "Store credit, and say sorry", person.email]]);
  });

  it("holds agents' tasks awaiting approval, plans and tool approvals, each answered in place (screenshots at 1440 and 390 px)", async () => {
    await ok(
      hubAs({ token: admin }).PATCH("/api/v1/projects/{id}", { params: { path: { id: project.id } }, body: { settings: { approve_agent_tasks: true } } }),
    );
    const toApprove = await ok(
      asAgent().POST("/api/v1/server/tasks", {
        body: { project_id: project.id, title: "Purge refunds older than 7 years", spec: "Delete rows from refunds where created_at < now() - 7y." },
      }),
      201,
    );
    await ok(
      hubAs({ token: admin }).PATCH("/api/v1/projects/{id}", { params: { path: { id: project.id } }, body: { settings: { approve_agent_tasks: false } } }),
    );
    const planned = await ok(asAgent().POST("/api/v1/server/tasks", { body: { project_id: project.id, title: "Move refunds to the ledger service" } }), 201);
    const plannedPath = { params: { path: { id: planned.id } } };
    await ok(asAgent().POST("/api/v1/server/tasks/{id}/assign", { ...plannedPath, body: { session_name: "payments-agent", require_plan: true } }));
    await ok(asAgent().POST("/api/v1/server/tasks/{id}/plan", { ...plannedPath, body: { plan: "1. Dual-write refunds\n2. Backfill\n3. Switch reads" } }));
    const tool = await runningTask("Rotate the payment provider's key");
    await ok(
      asAgent().POST("/api/v1/server/tasks/{id}/help", {
        params: { path: { id: tool.id } },
        body: { question: "Run `stripe keys roll --live`?", intervention_type: "approval" },
      }),
    );

    await page.goto(`${hub().url}/inbox`);
    const approval = page.locator(`.inbox-item[data-item-id="${toApprove.id}"]`);
    await approval.waitFor();
    expect(await page.locator(".inbox-item").count()).toBe(3);
    expect(await approval.locator(".badge.kind").textContent()).toBe("Task to approve");
    await approval.getByText("Delete rows from refunds").waitFor();
    await page.locator(`.inbox-item[data-item-id="${planned.id}"]`).getByText("2. Backfill").waitFor();
    await screenshot(page, "inbox");
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "inbox-narrow");
    // Every item, and each of its buttons, fits the phone's screen.
    for (const box of await page.locator(".inbox-item, .inbox-item button").evaluateAll((all) => all.map((el) => el.getBoundingClientRect().right))) {
      expect(box).toBeLessThanOrEqual(390);
    }
    await page.setViewportSize({ width: 1440, height: 900 });

    await approval.getByRole("button", { name: "Approve" }).click();
    await approval.waitFor({ state: "detached" });
    const approved = (await ok(hubAs({ token: admin }).GET("/api/v1/tasks/{id}", { params: { path: { id: toApprove.id }, query: {} } }))) as Schemas["Task"];
    expect(approved.awaiting_approval).toBe(false);
    const toolItem = page.locator(".inbox-item.kind-approval");
    await toolItem.getByRole("button", { name: "Reject" }).click();
    await toolItem.waitFor({ state: "detached" });
    const [rejected] = await ok(asAgent().GET("/api/v1/server/interventions", { params: { query: { task_id: tool.id } } }));
    expect(rejected).toMatchObject({ status: "responded", response: "rejected" });
  });
});
