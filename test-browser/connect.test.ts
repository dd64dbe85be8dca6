/**
 * The Connect page and the account page as a person uses them: a personal access token made on the spot for Claude
 * Code fills its line, and the official MCP SDK client lists the hub's tools with it (this project only); the token is
 * listed on the account page with its last use and revoked there. An admin makes a registration token for the
 * daemon's lines; a member is told to ask one. The password is changed on the account page.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PERSON_TOOLS } from "../test/mcp-tool-names";
import { accessTokenOf, addMember, call, hub, hubAs, launchChromium, ok, screenshot, signedIn, signInStatus } from "./driver";

let browser: Browser;
let admin: string;
let asMember: BrowserContext;
let asAdmin: BrowserContext;
let project: { id: string; name: string };
let other: { id: string };
const member = { email: `connect-${Date.now()}@example.com`, password: "connect-password-1" };

beforeAll(async () => {
  browser = await launchChromium();
  const signedInAdmin = await signedIn(browser, hub().admin.email, hub().admin.password);
  asAdmin = signedInAdmin.context;
  admin = await accessTokenOf(signedInAdmin.page);
  project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Connected" } }), 201);
  other = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Not for this token" } }), 201);
  const { id } = await ok(hubAs({ token: admin }).POST("/api/v1/users", { body: { ...member, role: "member" } }), 201);
  await addMember(admin, project.id, id);
  await addMember(admin, other.id, id);
  asMember = (await signedIn(browser, member.email, member.password)).context;
});
afterAll(async () => {
  await browser?.close();
});

/** The official MCP SDK's client over Streamable HTTP, with this bearer token. */
async function mcpClientWith(token: string) {
  const transport = new StreamableHTTPClientTransport(new URL(`${hub().url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: "connect-page-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** Nothing on the page is wider than the window (no sideways scrolling at 390 px). */
const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

const line = (page: Page, client: string, i = 0) => page.locator(`[data-client=${client}] [name=${client}-line-${i}]`).inputValue();

describe("the Connect page", () => {
  it("makes a token for Claude Code that the official MCP SDK client lists the hub's tools with, for this project only", async () => {
    const page = await asMember.newPage();
    await page.goto(`${hub().url}/projects/${project.id}/connect`);
    await page.getByRole("heading", { name: "Connected" }).waitFor();
    expect(await page.getByRole("link", { name: "Connect", exact: true }).getAttribute("aria-current")).toBe("page");
    expect(await page.getByLabel("MCP endpoint (Streamable HTTP)").inputValue()).toBe(`${hub().url}/mcp`);
    expect(await line(page, "claude")).toBe(`claude mcp add --transport http orchestratia ${hub().url}/mcp --header "Authorization: Bearer YOUR_TOKEN"`);
    expect(await line(page, "codex", 1)).toBe(`codex mcp add orchestratia --url ${hub().url}/mcp --bearer-token-env-var ORCHESTRATIA_TOKEN`);
    expect(await line(page, "gemini")).toBe(
      `gemini mcp add --transport http --scope user --header "Authorization: Bearer YOUR_TOKEN" orchestratia ${hub().url}/mcp`,
    );
    // The A2A card's address and the API reference are here too.
    expect(await page.getByLabel("Agent card").inputValue()).toBe(`${hub().url}/a2a/${project.id}/.well-known/agent-card.json`);
    expect(await page.getByRole("link", { name: "/docs" }).getAttribute("href")).toBe("/docs");
    // A member cannot make registration tokens, and is told so; the daemon's lines name what to put in.
    await page.getByText("Only an admin makes registration tokens").waitFor();
    expect(await page.locator("[name=daemon-pipx]").inputValue()).toBe(
      "pipx install git+https://github.com/kumarimlab/orchestratia-agent.git && orchestratia-agent --register YOUR_REGISTRATION_TOKEN",
    );
    await screenshot(page, "connect");

    await page.locator("[data-client=claude]").getByRole("button", { name: "Make a token for this" }).click();
    await page.locator("[data-client=claude]").getByText("Shown once").waitFor();
    const claude = await line(page, "claude");
    const token = claude.match(/Bearer (orcpat_[\w-]+)"/)?.[1];
    expect(token, claude).toBeTruthy();
    // The other clients' lines wait for their own token.
    expect(await line(page, "gemini")).toContain("YOUR_TOKEN");

    const client = await mcpClientWith(token!);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(PERSON_TOOLS);
    const listed = await client.callTool({ name: "list_projects", arguments: {} });
    const projects = (listed.structuredContent as { projects: { id: string }[] }).projects.map((p) => p.id);
    expect(projects).toEqual([project.id]);
    await client.close();

    await page.setViewportSize({ width: 390, height: 844 });
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await screenshot(page, "connect-narrow");
    await page.close();
  });

  it("lets an admin make a registration token that fills the daemon's lines and registers a server", async () => {
    const page = await asAdmin.newPage();
    await page.goto(`${hub().url}/projects/${project.id}/connect`);
    await page.getByRole("button", { name: "Make a registration token" }).click();
    await page.locator(".connect-daemon").getByText("Shown once").waitFor();
    const venv = await page.locator("[name=daemon-venv]").inputValue();
    const registration = venv.match(/--register (orcreg_\S+)$/)?.[1];
    expect(venv.startsWith("python3 -m venv ~/.orchestratia-agent && ~/.orchestratia-agent/bin/pip install ")).toBe(true);
    expect(registration, venv).toBeTruthy();
    expect(await page.locator("[name=daemon-pipx]").inputValue()).toContain(`--register ${registration}`);
    await page.locator(".connect-daemon").scrollIntoViewIfNeeded();
    await screenshot(page, "connect-daemon");
    // The token registers a server, which serves this project only (the box was left ticked).
    const registered = await call(
      "/api/v1/servers/register",
      { body: { name: `connected-${Date.now()}`, hostname: "connected.internal", registration_token: registration, machine_id: `m-${Date.now()}` } },
      201,
    );
    const server = await call(`/api/v1/servers/${registered.id}`, { token: admin });
    expect(server.project_ids).toEqual([project.id]);
    await page.close();
  });
});

describe("the account page", () => {
  it("lists the token made on the Connect page with its last use, and revokes it", async () => {
    const page = await asMember.newPage();
    await page.goto(`${hub().url}/account`);
    const row = page.locator("tr[data-token]", { hasText: "Claude Code: Connected" });
    await row.waitFor();
    expect(await row.locator("td[data-label='Scope']").textContent()).toBe("write");
    expect(await row.locator("td[data-label='Projects']").textContent()).toBe("Connected");
    expect(await row.locator("td[data-label='Last used'] time").count()).toBe(1);
    await screenshot(page, "account-tokens");

    // A token made here, for every project and only to read, is shown once.
    await page.getByLabel("Name").fill("Reader");
    await page.getByLabel("Scope").selectOption("read");
    await page.getByRole("button", { name: "Make token" }).click();
    const shown = page.locator(".token-once");
    await shown.waitFor();
    const reader = await shown.getByLabel("Token").inputValue();
    expect(reader).toMatch(/^orcpat_/);
    const readerClient = await mcpClientWith(reader);
    const refused = await readerClient.callTool({ name: "create_task", arguments: { project_id: project.id, title: "No" } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain("TOKEN_SCOPE");
    await readerClient.close();
    await shown.getByRole("button", { name: "I have copied it" }).click();
    expect(await page.locator(".token-once").count()).toBe(0);

    await page.setViewportSize({ width: 390, height: 844 });
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await page.locator(".personal-tokens").scrollIntoViewIfNeeded();
    await screenshot(page, "account-tokens-narrow");
    await page.setViewportSize({ width: 1440, height: 900 });

    const token = (await call("/api/v1/auth/me/tokens", { token: await accessTokenOf(page) })).tokens.find(
      (t: { name: string }) => t.name === "Claude Code: Connected",
    );
    page.once("dialog", (d) => void d.accept());
    await row.getByRole("button", { name: "Revoke" }).click();
    await row.waitFor({ state: "detached" });
    const listed = await call("/api/v1/auth/me/tokens", { token: await accessTokenOf(page) });
    expect(listed.tokens.map((t: { id: string }) => t.id)).not.toContain(token.id);
    await page.close();
  });

  it("changes the password: a wrong current one and a mismatch are refused with a reason, then the new one signs in", async () => {
    const person = { email: `password-${Date.now()}@example.com`, password: "first-password-1" };
    await ok(hubAs({ token: admin }).POST("/api/v1/users", { body: { ...person, role: "member" } }), 201);
    const { context, page } = await signedIn(browser, person.email, person.password);
    await page.goto(`${hub().url}/account`);
    const form = page.locator(".password");
    const fill = async (current: string, next: string, confirmed: string) => {
      await form.getByLabel("Current password").fill(current);
      await form.getByLabel("New password", { exact: true }).fill(next);
      await form.getByLabel("Confirm the new password").fill(confirmed);
      await form.getByRole("button", { name: "Change password" }).click();
    };
    await fill(person.password, "second-password-2", "second-password-3");
    expect(await form.getByRole("alert").textContent()).toBe("The new password and its confirmation differ");
    await fill("not-the-password", "second-password-2", "second-password-2");
    await form.getByText("The current password is wrong").waitFor();
    // The wrong guess counted against the sign-in limit every browser test shares: a refusal for it is waited out.
    for (const start = Date.now(); ;) {
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith("/api/v1/auth/password")),
        fill(person.password, "second-password-2", "second-password-2"),
      ]);
      if (answer.status() !== 429 || Date.now() - start > 90_000) break;
      await page.waitForTimeout(5_000);
    }
    await form.getByText("Password changed.").waitFor({ timeout: 90_000 });
    await screenshot(page, "account-password");
    // Still signed in (the page signed in again with the new password), and the old password no longer works.
    await page.reload();
    await page.getByRole("heading", { name: "Account" }).waitFor();
    expect(await signInStatus(person.email, person.password)).toBe(401);
    expect(await signInStatus(person.email, "second-password-2")).toBe(200);
    await context.close();
  }, 240_000);
});
