/**
 * SSH access in real Chromium: an admin grants one server's machine access to another's on the Access page, sees it
 * live with the command the source runs, and revokes it; a viewer has no Access page. On a session's page, "Connect"
 * gives a writer the `orchestratia-connect` command to copy.
 */
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { adminAndViewer, call, hub, hubAs, launchChromium, ok, registerAgent, screenshot } from "./driver";

let browser: Browser;
let asAdmin: BrowserContext;
let asViewer: BrowserContext;
let admin: string;
let projectId: string;
let source: Awaited<ReturnType<typeof registerAgent>>;
let target: Awaited<ReturnType<typeof registerAgent>>;

beforeAll(async () => {
  browser = await launchChromium();
  ({ asAdmin, admin, asViewer } = await adminAndViewer(browser, "access"));
  projectId = (await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Access between machines" } }), 201)).id;
  source = await registerAgent(admin, projectId, `access-src-${Date.now()}`);
  target = await registerAgent(admin, projectId, `access-tgt-${Date.now()}`);
});
afterEach(async () => {
  for (const page of [...asAdmin.pages(), ...asViewer.pages()]) await page.close();
});
afterAll(async () => {
  await browser?.close();
});

describe("the Access page", () => {
  it("grants access between two servers, shows the grant with the source's ssh command, and revokes it", async () => {
    const page = await asAdmin.newPage();
    await page.goto(`${hub().url}/`);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Access" }).click();
    await page.getByRole("heading", { name: "Access", exact: true }).waitFor();
    await page.getByLabel("From (source)").selectOption({ label: source.name });
    await page.getByLabel("To (target)").selectOption({ label: target.name });
    await page.getByLabel("Level").selectOption("elevated");
    await page.getByLabel("Target port").fill("2222");
    await page.getByLabel("For").selectOption({ label: "7 days" });
    await page.getByRole("button", { name: "Grant", exact: true }).click();

    const row = page.locator(".grants tbody tr", { hasText: source.name });
    await row.waitFor();
    const { grants } = await ok(hubAs({ token: admin }).GET("/api/v1/access-grants", { params: { query: {} } }));
    const grant = grants.find((g) => g.source_server_id === source.id)!;
    expect(grant).toMatchObject({ target_server_id: target.id, privilege_level: "elevated", target_port: 2222, status: "active" });
    expect(Date.parse(grant.expires_at) - Date.parse(grant.created_at)).toBe(7 * 86_400_000);
    expect(await row.locator("code").textContent()).toBe(
      `ssh -i ~/.orchestratia/ssh_keys/grant_${grant.id} -p ${grant.local_bind_port} orchestratia@localhost`,
    );
    expect(await row.locator("[data-status]").getAttribute("data-status")).toBe("active");
    expect(await page.content()).not.toContain("PRIVATE KEY");
    await screenshot(page, "access");

    // The same server on both sides: the page does not offer it, and the hub refuses it naming the field.
    expect(await page.getByLabel("To (target)").locator("option").allTextContents()).not.toContain(source.name);
    const same = await call(
      "/api/v1/access-grants",
      { token: admin, body: { source_server_id: source.id, target_server_id: source.id, privilege_level: "standard" } },
      422,
    );
    expect(same.errors).toEqual([{ path: "target_server_id", message: expect.stringMatching(/another server/) }]);

    page.once("dialog", (d) => void d.accept());
    await row.getByRole("button", { name: /Revoke/ }).click();
    await expect.poll(() => row.locator("[data-status]").getAttribute("data-status")).toBe("revoked");
    await expect.poll(() => row.getByRole("button", { name: /Revoke/ }).count()).toBe(0);
  });

  it("is not offered to viewers", async () => {
    const page = await asViewer.newPage();
    await page.goto(`${hub().url}/`);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Agents" }).waitFor();
    expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Access" }).count()).toBe(0);
    await page.goto(`${hub().url}/access`);
    await page.getByText("Only admins grant access between servers.").waitFor();
  });
});

describe("Connect on a session's page", () => {
  it("gives a writer the orchestratia-connect command for the session's machine", async () => {
    const { sessions } = await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}/sessions", { params: { path: { id: projectId }, query: {} } }));
    const session = sessions.find((s) => s.server_id === target.id)!;
    const page = await asAdmin.newPage();
    await page.goto(`${hub().url}/projects/${projectId}/sessions/${session.id}`);
    await page.getByRole("button", { name: "Connect" }).click();
    const command = page.locator(".session-connect input[readonly]");
    await command.waitFor();
    const value = await command.inputValue();
    expect(value).toMatch(/^orchestratia-connect [\w-]+\.[\w-]+\.[\w-]+$/);
    const payload = JSON.parse(Buffer.from(value.split(" ")[1]!.split(".")[1]!, "base64url").toString());
    expect(payload).toMatchObject({ session_id: session.id, target_port: 22, mode: "ssh", hub_url: hub().url });
  });
});
