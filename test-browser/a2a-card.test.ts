/**
 * A project's A2A card as a person finds it on the project's Settings page: its address to hand to another agent, and
 * the skills the project's online servers offer now. The address shown is the card the hub serves.
 */
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, adminAndViewer, hub, hubAs, launchChromium, ok, registerAgent, screenshot } from "./driver";

let browser: Browser;
let asAdmin: BrowserContext;
let asViewer: BrowserContext;
let admin: string;
let viewerId: string;

beforeAll(async () => {
  browser = await launchChromium();
  ({ asAdmin, admin, asViewer, viewerId } = await adminAndViewer(browser, "a2a-card"));
});
afterAll(async () => {
  await browser?.close();
});

describe("a project's A2A card on its Settings page", () => {
  it("gives the card's address and lists the skills its online servers declare, or says why there are none", async () => {
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Delegated to" } }), 201);
    const page = await asAdmin.newPage();
    await page.goto(`${hub().url}/projects/${project.id}/settings`);
    const panel = page.getByRole("region", { name: "Delegating to this project (A2A)" });
    await panel.getByText("No skills yet").waitFor();

    const agent = await registerAgent(admin, project.id, `a2a-${Date.now()}`);
    const capabilities = { $schema: "orchestratia/capabilities/v1", languages: ["go"], tools: ["make"] };
    await ok(hubAs({ apiKey: agent.apiKey }).POST("/api/v1/servers/heartbeat", { body: { capabilities } }));
    await page.reload();
    await panel.locator(".skills").waitFor();
    expect(await panel.locator(".skills li").allTextContents()).toEqual(["go", "make"]);
    const address = await panel.getByLabel("Agent card").inputValue();
    expect(address).toBe(`${hub().url}/a2a/${project.id}/.well-known/agent-card.json`);
    await screenshot(page, "project-a2a-card");

    // The address is the card itself, for the hub's credentials.
    const card = await fetch(address, { headers: { Authorization: `Bearer ${admin}`, "A2A-Version": "1.0" } });
    expect(card.status).toBe(200);
    expect(((await card.json()) as { name: string }).name).toBe("Delegated to");
  });

  it("shows a viewer of the project the card too, with the skills of servers that serve every project", async () => {
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Watched" } }), 201);
    await addMember(admin, project.id, viewerId);
    const page = await asViewer.newPage();
    await page.goto(`${hub().url}/projects/${project.id}/settings`);
    const panel = page.getByRole("region", { name: "Delegating to this project (A2A)" });
    // The first test's server serves every project, so its skills are offered here too.
    await panel.locator(".skills").waitFor();
    expect(await panel.locator(".skills li").allTextContents()).toEqual(["go", "make"]);
    expect(await panel.getByLabel("Agent card").inputValue()).toBe(`${hub().url}/a2a/${project.id}/.well-known/agent-card.json`);
  });
});
