/** What the browser tests share: Chromium, the hub's API as agents and admins call it, and signing in on the page. */
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { expect, inject } from "vitest";
import { hubClient, type HubCredentials } from "../client";

export { launchChromium } from "./chromium";

export const hub = () => inject("hub");
export const SCREENSHOTS = path.resolve(import.meta.dirname, "../docs/screenshots");

export async function screenshot(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: false });
}

/** The typed client (client/), calling the hub as this person or server: a path or field the description lacks fails the typecheck. */
export const hubAs = (credentials: HubCredentials = {}) => hubClient({ baseUrl: hub().url, ...credentials });

/** The body of an answer with this status (any 2xx when none is given); fails the test otherwise. */
export async function ok<A extends { data?: unknown; error?: unknown; response: Response }>(
  pending: Promise<A>,
  status?: number,
): Promise<Extract<A, { error?: never }>["data"]> {
  const { data, error, response } = await pending;
  const said = `${response.url}: ${response.status} ${JSON.stringify(error)}`;
  if (status !== undefined) expect(response.status, said).toBe(status);
  else expect(response.ok, said).toBe(true);
  return data;
}

export interface CallOptions {
  token?: string;
  apiKey?: string;
  body?: unknown;
  method?: string;
}

/** Calls the hub's API over HTTP, untyped, and checks the status: for requests the description does not allow, on purpose. */
export async function call<T = any>(pathname: string, opts: CallOptions = {}, status?: number): Promise<T> {
  const res = await fetch(hub().url + pathname, {
    method: opts.method ?? (opts.body === undefined ? "GET" : "POST"),
    headers: {
      ...(opts.body === undefined ? {} : { "Content-Type": "application/json" }),
      ...(opts.token ? { Authorization: `Bearer ${opts.token}` } : {}),
      ...(opts.apiKey ? { "X-API-Key": opts.apiKey } : {}),
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  if (status !== undefined) expect(res.status, `${opts.method ?? "GET"} ${pathname}: ${text}`).toBe(status);
  else expect(res.ok, `${opts.method ?? "GET"} ${pathname}: ${res.status} ${text}`).toBe(true);
  return (text ? JSON.parse(text) : undefined) as T;
}

/**
 * Runs SQL on the hub's local D1 (to make history a test needs, such as a long backlog of events). The running hub
 * holds the same SQLite file, so a write of its (other test files run beside this one) can hold the lock for a moment:
 * the command is tried again, and its own words are in the error when it never succeeds.
 */
export function executeSql(sql: string) {
  for (let attempt = 1; ; attempt++) {
    try {
      execFileSync(
        path.resolve(import.meta.dirname, "../node_modules/.bin/wrangler"),
        ["d1", "execute", "DB", "--local", "--persist-to", hub().state, "--command", sql],
        { cwd: path.resolve(import.meta.dirname, ".."), stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, CI: "true" } },
      );
      return;
    } catch (e) {
      if (attempt === 5) throw new Error(`wrangler d1 execute failed 5 times: ${String((e as { stderr?: unknown }).stderr ?? e).slice(-600)}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500 * attempt);
    }
  }
}

/** Sign-ins are limited to 10 a minute from one address: past that, a run waits for the next minute. */
export const SIGN_IN_RETRY_MS = 2_000;
export const SIGN_IN_WAIT_MS = 70_000;

export async function adminToken(): Promise<string> {
  for (const start = Date.now(); ;) {
    const answer = hubAs().POST("/api/v1/auth/login", { body: hub().admin });
    const { response } = await answer;
    if (response.status !== 429 || Date.now() - start > SIGN_IN_WAIT_MS) return (await ok(answer, 200)).access_token;
    await new Promise((r) => setTimeout(r, SIGN_IN_RETRY_MS));
  }
}

/** The status of a sign-in through the API, once the minute's limit lets it through (as the sign-ins above wait). */
export async function signInStatus(email: string, password: string): Promise<number> {
  for (const start = Date.now(); ;) {
    const { response } = await hubAs().POST("/api/v1/auth/login", { body: { email, password } });
    if (response.status !== 429 || Date.now() - start > SIGN_IN_WAIT_MS) return response.status;
    await new Promise((r) => setTimeout(r, SIGN_IN_RETRY_MS));
  }
}

/** Makes this person a member of the project (as an admin, with the admin's access token). */
export const addMember = (admin: string, projectId: string, userId: string) =>
  ok(hubAs({ token: admin }).POST("/api/v1/projects/{id}/members", { params: { path: { id: projectId } }, body: { user_id: userId } }), 201);

/** An agent registered the way the official daemon registers, with a session in the project. */
export async function registerAgent(admin: string, projectId: string, name = `agent-${Math.random().toString(36).slice(2, 8)}`) {
  const { token } = await ok(hubAs({ token: admin }).POST("/api/v1/servers/tokens", { body: {} }), 201);
  const reg = await ok(
    hubAs().POST("/api/v1/servers/register", {
      body: { name, hostname: `${name}.internal`, os: "linux", repos: {}, registration_token: token, machine_id: `${name}-machine` },
    }),
    201,
  );
  await ok(hubAs({ apiKey: reg.api_key }).POST("/api/v1/server/sessions", { body: { name: `${name}-worker`, project_id: projectId } }), 201);
  return { id: reg.id, name, apiKey: reg.api_key };
}

/** Opens the dashboard and signs in through the form, as a person would. */
/**
 * Opens an invite link. Looking an invite up is counted with sign-ins (one limit per address, which every browser test
 * shares): a refusal for too many attempts is waited out as signIn waits, then the page is opened again.
 */
export async function openInvite(page: Page, link: string) {
  for (const start = Date.now(); ;) {
    const [answer] = await Promise.all([page.waitForResponse((r) => r.url().includes("/api/v1/invites/accept")), page.goto(link)]);
    if (answer.status() !== 429 || Date.now() - start > SIGN_IN_WAIT_MS) return answer.status();
    await page.waitForTimeout(SIGN_IN_RETRY_MS);
  }
}

/** Presses an invite page's Join, again while the shared sign-in limit refuses it. */
export async function joinInvite(page: Page) {
  for (const start = Date.now(); ;) {
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().includes("/api/v1/invites/accept") && r.request().method() === "POST"),
      page.getByRole("button", { name: "Join" }).click(),
    ]);
    if (answer.status() !== 429 || Date.now() - start > SIGN_IN_WAIT_MS) return answer.status();
    await page.waitForTimeout(SIGN_IN_RETRY_MS);
  }
}

export async function signIn(page: Page, email: string, password: string) {
  await page.goto(hub().url + "/");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  for (const start = Date.now(); ;) {
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/api/v1/auth/login")),
      page.getByRole("button", { name: "Sign in" }).click(),
    ]);
    if (answer.status() !== 429 || Date.now() - start > SIGN_IN_WAIT_MS) break;
    await page.waitForTimeout(SIGN_IN_RETRY_MS);
  }
  await page.getByRole("main").getByRole("heading", { name: "Projects", level: 1 }).waitFor();
}

/** A new access token from the page's refresh cookie, as the dashboard gets one (no sign-in spent). */
export const accessTokenOf = (page: Page) =>
  page.evaluate(async () => {
    const res = await fetch("/api/v1/auth/refresh", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    return ((await res.json()) as { access_token: string }).access_token;
  });

/** The board column a task's card is in. */
export const columnOf = (page: Page, taskId: string) =>
  page.locator(`.card[data-task-id="${taskId}"]`).evaluate((card) => card.closest(".column")?.getAttribute("data-status") ?? null);

/** The column a task's card is in, or null while it is not on the board. */
export async function columnOrNull(page: Page, taskId: string): Promise<string | null> {
  const card = page.locator(`.card[data-task-id="${taskId}"]`);
  return (await card.count()) === 0 ? null : columnOf(page, taskId);
}

/** A browser context of its own, signed in as this person, with its first page. */
export async function signedIn(browser: Browser, email: string, password: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await signIn(page, email, password);
  return { context, page };
}

/**
 * The admin signed in (its browser context and access token) and a new viewer signed in beside it: what a page's
 * tests need to show what each role sees. `label` names the viewer's address.
 */
export async function adminAndViewer(browser: Browser, label: string) {
  const signedInAdmin = await signedIn(browser, hub().admin.email, hub().admin.password);
  const admin = await accessTokenOf(signedInAdmin.page);
  await signedInAdmin.page.close();
  const viewer = { email: `${label}-viewer-${Date.now()}@example.com`, password: "viewer-password-1" };
  const viewerId = (await ok(hubAs({ token: admin }).POST("/api/v1/users", { body: { ...viewer, role: "viewer" } }), 201)).id;
  const asViewer = (await signedIn(browser, viewer.email, viewer.password)).context;
  return { asAdmin: signedInAdmin.context, admin, viewerId, asViewer };
}
