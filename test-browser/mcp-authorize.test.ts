/**
 * An MCP client's OAuth sign-in as a person sees it in Chromium: the client registers itself, the browser opens the
 * hub's authorize page, the person signs in with their hub password and allows it, and the browser is sent to the
 * client's redirect URI with a code; the client exchanges the code with its PKCE verifier and lists its tools. The
 * person then sees the client on their account page and revokes it there.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PERSON_TOOLS } from "../test/mcp-tool-names";
import { SIGN_IN_RETRY_MS, SIGN_IN_WAIT_MS, adminToken, call, hub, launchChromium, screenshot, signedIn } from "./driver";

const REDIRECT = "http://127.0.0.1:33418/callback";

let browser: Browser;
/** A person of their own: sign-ins are throttled per email, and the other files sign the admin in often. */
const person = { email: `mcp-${crypto.randomUUID().slice(0, 8)}@example.com`, password: "mcp-person-password-1" };
beforeAll(async () => {
  browser = await launchChromium();
  await call("/api/v1/users", { token: await adminToken(), body: { ...person, role: "member" } }, 201);
});
afterAll(async () => {
  await browser?.close();
});

/** What an MCP client does before it sends the person to the authorize page: it registers, and keeps a PKCE verifier. */
async function registeredClient() {
  const client = await call<{ client_id: string }>(
    "/oauth/register",
    { body: { client_name: "Chromium's MCP client", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", grant_types: ["authorization_code"] } },
    201,
  );
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const authorize = new URL(`${hub().url}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "state-1",
    resource: `${hub().url}/mcp`,
  }))
    authorize.searchParams.set(k, v);
  return { clientId: client.client_id, verifier, authorize };
}

/**
 * Submits the page's form with this password. Sign-ins are also throttled per address, which every browser test
 * shares: a throttled attempt shows the page again (429), so it is tried again once the minute has passed.
 */
async function submitSignIn(page: Page, password: string) {
  for (const start = Date.now(); ;) {
    await page.getByLabel("Password").fill(password);
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/oauth/authorize"),
      page.getByRole("button", { name: "Sign in and allow" }).click(),
    ]);
    if (answer.status() !== 429 || Date.now() - start > SIGN_IN_WAIT_MS) return answer;
    await page.waitForTimeout(SIGN_IN_RETRY_MS);
  }
}

describe("signing an MCP client in", () => {
  it(
    "asks the person to sign in and allow the client, then hands the client a code it exchanges for a working token, which the person revokes on their account page",
    async () => {
      const { clientId, verifier, authorize } = await registeredClient();
      const page = await browser.newPage();
      // The client's loopback listener: the browser's visit to the redirect URI is answered here and its address kept.
      const redirected: string[] = [];
      await page.route(`${REDIRECT}**`, async (route) => {
        redirected.push(route.request().url());
        await route.fulfill({ status: 200, contentType: "text/plain", body: "You may close this window." });
      });
      await page.goto(authorize.href);
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Allow Chromium's MCP client to work as you on this hub?");
      expect(await page.locator(".warn").textContent()).toContain("an app on your computer");

      await page.getByLabel("Email").fill(person.email);
      expect((await submitSignIn(page, "not the password")).status()).toBe(401);
      await page.getByRole("alert").waitFor();
      expect(await page.getByRole("alert").textContent()).toBe("Wrong email or password");
      expect(redirected).toEqual([]);
      // The email stays; only the password is typed again.
      expect(await page.getByLabel("Email").inputValue()).toBe(person.email);
      await screenshot(page, "mcp-authorize");

      expect((await submitSignIn(page, person.password)).status()).toBe(302);
      // Checking a password takes a while on purpose.
      await page.waitForURL(`${REDIRECT}**`, { timeout: 15_000 });
      expect(redirected).toHaveLength(1);
      const back = new URL(redirected[0]!);
      expect(back.searchParams.get("state")).toBe("state-1");
      const code = back.searchParams.get("code")!;
      expect(code).toBeTruthy();

      const exchange = (codeVerifier: string) =>
        fetch(`${hub().url}/oauth/token`, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: codeVerifier }),
        });
      // The code goes only with its verifier, and only once.
      expect((await exchange(randomBytes(32).toString("base64url"))).status).toBe(400);
      const tokens = await exchange(verifier);
      expect(tokens.status).toBe(200);
      const { access_token } = (await tokens.json()) as { access_token: string };
      const listed = await fetch(`${hub().url}/mcp`, {
        method: "POST",
        headers: { Authorization: `Bearer ${access_token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(listed.status).toBe(200);
      const answer = (await listed.json()) as { result: { tools: { name: string }[] } };
      expect(answer.result.tools.map((t) => t.name)).toEqual(PERSON_TOOLS);
      await page.close();

      // The person finds the client on their account page, and revokes it there: its token stops working at once.
      const { context, page: dashboard } = await signedIn(browser, person.email, person.password);
      const asked: string[] = [];
      dashboard.on("dialog", (d) => {
        asked.push(d.message());
        void d.accept();
      });
      await dashboard.getByRole("link", { name: `${person.email} · member` }).click();
      const section = dashboard.locator("section.mcp-clients");
      const row = section.getByRole("row", { name: /Chromium's MCP client/ });
      await row.waitFor();
      expect(await row.getByRole("rowheader").textContent()).toBe("Chromium's MCP client");
      expect(await row.locator("time").count()).toBe(2);
      await screenshot(dashboard, "account-mcp-clients");
      // On a phone the list still fits and its button is in reach.
      await dashboard.setViewportSize({ width: 390, height: 844 });
      await section.scrollIntoViewIfNeeded();
      await screenshot(dashboard, "account-mcp-clients-narrow");
      const button = (await row.getByRole("button", { name: "Revoke" }).boundingBox())!;
      expect(button.x + button.width).toBeLessThanOrEqual(390);
      await dashboard.setViewportSize({ width: 1440, height: 900 });
      await row.getByRole("button", { name: "Revoke" }).click();
      await section.getByText("None.").waitFor();
      expect(asked).toEqual(["Revoke Chromium's MCP client? It can no longer work as you until you allow it again."]);
      const refused = await fetch(`${hub().url}/mcp`, {
        method: "POST",
        headers: { Authorization: `Bearer ${access_token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
      });
      expect(refused.status).toBe(401);
      await context.close();
    },
    3 * 60_000,
  );
});
