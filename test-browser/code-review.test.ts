/**
 * The code-review loop in the dashboard: an admin sets a project's review policy on its Settings page (a refused
 * score beside its field, a model's key kept and never shown, then an agent reviewer), a viewer reads it; then agents
 * drive reviewed tasks through the API as the CLI would (a completion with its diff stats, the server tagged
 * `code-review` completing each review task with its `review` contract). The task page lists every attempt and follows
 * the loop live, a review task links to the task it reviews, and the board and the list mark tasks in review and
 * failing review. Phones get both pages without sideways scrolling.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addMember, adminAndViewer, call, hub, hubAs, launchChromium, ok, registerAgent, screenshot } from "./driver";

let browser: Browser;
let asAdmin: BrowserContext;
let asViewer: BrowserContext;
let admin: string;
let projectId: string;
let worker: { id: string; name: string; apiKey: string };
let reviewer: { id: string; apiKey: string };
let heartbeats: ReturnType<typeof setInterval>;

const T = "/api/v1/server/tasks";

/** What `orchestratia task complete` sends beside its summary: the diff stats it measured of the last commit. */
const diff = (head: string) => ({
  files_changed: 1,
  insertions: 40,
  deletions: 3,
  files: [{ path: "src/auth.ts", insertions: 40, deletions: 3 }],
  head_commit: head,
  base_commit: null,
  binary_files: [],
});

const aFinding = { severity: "error", title: "Token never expires", detail: "exp is not set on the JWT", path: "src/auth.ts", line: 12 };
const aNote = { severity: "info", title: "Name the secret's variable", detail: "JWT_SECRET reads better than S." };

/** The result a reviewer's agent completes its review task with: the `review` contract. */
const reviewResult = (score: number, findings: unknown[] = []) => ({
  $schema: "orchestratia/task-result/v1",
  summary: `Reviewed: ${score}`,
  contracts: {
    review: {
      status: "fulfilled",
      data: { score, status: score >= 80 ? "pass" : "fail", summary: score >= 80 ? "The change is sound." : "The tokens never expire.", findings },
    },
  },
});

const reviewsOf = async (taskId: string) => (await call(`/api/v1/tasks/${taskId}/reviews`, { token: admin })).reviews as Record<string, any>[];
const taskOf = async (taskId: string) => call(`/api/v1/tasks/${taskId}`, { token: admin });

/** A task the worker took and started. */
async function workingTask(title: string) {
  const { id } = await ok(hubAs({ token: admin }).POST("/api/v1/tasks", { body: { project_id: projectId, title, spec: "Add JWT auth to the API." } }), 201);
  await call(`${T}/${id}/assign`, { apiKey: worker.apiKey, body: { server_name: worker.name } });
  await call(`${T}/${id}/start`, { apiKey: worker.apiKey, body: {} });
  return id as string;
}

/** The worker completes the task (again), as `orchestratia task complete` does after a commit. */
const complete = (taskId: string, head: string, summary: string) =>
  call(`${T}/${taskId}/complete`, { apiKey: worker.apiKey, body: { result: summary, git_diff_stats: diff(head) } });

/** The reviewer's agent takes attempt `attempt`'s review task and completes it with this score. */
async function review(taskId: string, attempt: number, score: number, findings: unknown[] = []) {
  let reviewTaskId = "";
  await expect.poll(async () => (reviewTaskId = (await reviewsOf(taskId))[attempt - 1]?.review_task_id ?? ""), { timeout: 20_000 }).not.toBe("");
  await expect.poll(async () => (await taskOf(reviewTaskId)).assigned_server_id, { timeout: 20_000 }).toBe(reviewer.id);
  await call(`${T}/${reviewTaskId}/start`, { apiKey: reviewer.apiKey, body: {} });
  await call(`${T}/${reviewTaskId}/complete`, { apiKey: reviewer.apiKey, body: { result: reviewResult(score, findings) } });
  return reviewTaskId;
}

const reviewStatus = async (taskId: string) => (await taskOf(taskId)).review?.status ?? null;
const noSidewaysScroll = async (page: Page) => expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

beforeAll(async () => {
  browser = await launchChromium();
  const roles = await adminAndViewer(browser, "review");
  ({ asAdmin, admin, asViewer } = roles);
  projectId = (await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Reviewed" } }), 201)).id;
  await addMember(admin, projectId, roles.viewerId);
  worker = await registerAgent(admin, projectId, `builder-${Date.now().toString(36)}`);
  const { token } = await ok(hubAs({ token: admin }).POST("/api/v1/servers/tokens", { body: {} }), 201);
  const name = `reviewer-${Date.now().toString(36)}`;
  const reg = await call(
    "/api/v1/servers/register",
    {
      body: {
        name,
        hostname: `${name}.internal`,
        os: "linux",
        repos: {},
        registration_token: token,
        machine_id: `${name}-machine`,
        capabilities: { tags: ["code-review"], max_concurrent_tasks: 5 },
      },
    },
    201,
  );
  reviewer = { id: reg.id, apiKey: reg.api_key };
  // Without heartbeats the hub takes the agents offline and gives their tasks back.
  const beat = () => Promise.all([worker.apiKey, reviewer.apiKey].map((apiKey) => call("/api/v1/servers/heartbeat", { apiKey, body: {} })));
  await beat();
  heartbeats = setInterval(() => void beat().catch(() => undefined), 20_000);
});
afterAll(async () => {
  clearInterval(heartbeats);
  await browser?.close();
});

describe("code review in the dashboard", () => {
  it("an admin sets the policy on the Settings page, with refusals by their fields and a key never shown; a viewer reads it", async () => {
    const page = await asAdmin.newPage();
    await page.setViewportSize({ width: 1440, height: 1000 });
    await page.goto(`${hub().url}/projects/${projectId}/settings`);
    const form = page.getByRole("form", { name: "Code review policy" });
    await form.waitFor();
    const policy = () => call(`/api/v1/projects/${projectId}/review-policy`, { token: admin });

    // A model reviewer: its key is sent once and never answered back.
    await form.getByLabel("Review agents' code changes").check();
    await form.getByLabel("Reviewed by").selectOption("model");
    // The model reads the diff through the worker's session: the project's remote commands are off, and it says so.
    expect(await form.locator("[data-remote-exec]").getAttribute("data-remote-exec")).toBe("off");
    await form.getByLabel("Endpoint").fill("http://127.0.0.1:8089/v1/messages");
    await form.getByLabel("API style").selectOption("anthropic");
    await form.getByLabel("Model").fill("claude-sonnet-4-5");
    await form.getByLabel("API key").fill("sk-test-review-key");
    await form.getByLabel("Warn score").fill("90");
    await form.getByRole("button", { name: "Save review policy" }).click();
    await form.locator('[data-field-problem="warn_score"]').waitFor();
    expect(await form.locator('[data-field-problem="warn_score"]').textContent()).toMatch(/pass_score/);
    expect((await policy()).enabled).toBe(false);

    await form.getByLabel("Warn score").fill("60");
    await form.getByRole("button", { name: "Save review policy" }).click();
    await expect
      .poll(async () => (await policy()).reviewer)
      .toMatchObject({ kind: "model", api_style: "anthropic", model: "claude-sonnet-4-5", has_api_key: true });
    expect(JSON.stringify(await policy())).not.toContain("sk-test-review-key");
    await page.reload();
    await form.getByLabel("API key").waitFor();
    expect(await form.getByLabel("API key").inputValue()).toBe("");
    expect(await form.getByLabel("API key").getAttribute("placeholder")).toBe("a key is kept");
    expect(await form.getByText("A key is kept. Leave this empty to keep it.").count()).toBe(1);

    // Then an agent tagged code-review, for paths under src/ with at least 10 changed lines, and one fix asked.
    await form.getByLabel("Reviewed by").selectOption("agent");
    expect(await form.getByLabel("Capability tag").inputValue()).toBe("code-review");
    await form.getByLabel("Fixes asked (max retries)").fill("1");
    await form.getByLabel("Path patterns").fill("src/*, migrations/*");
    await form.getByLabel("Minimum changed lines").fill("10");
    await form.getByRole("button", { name: "Save review policy" }).click();
    await expect.poll(async () => (await policy()).reviewer.kind).toBe("agent");
    expect(await policy()).toMatchObject({
      enabled: true,
      reviewer: { kind: "agent", capability: "code-review", has_api_key: false },
      pass_score: 80,
      warn_score: 60,
      max_retries: 1,
      on_final_failure: "keep_done",
      match: { paths: ["src/*", "migrations/*"], min_lines: 10 },
    });
    await page.getByRole("heading", { name: "Code review" }).scrollIntoViewIfNeeded();
    await screenshot(page, "code-review-policy");

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await form.waitFor();
    await noSidewaysScroll(page);
    for (const control of [form.getByLabel("Reviewed by"), form.getByLabel("Pass score"), form.getByRole("button", { name: "Save review policy" })]) {
      expect((await control.boundingBox())!.height).toBeGreaterThanOrEqual(44);
    }
    // Its top just under the phone's header bar.
    await page.locator(".review-policy").evaluate((panel) => window.scrollBy(0, panel.getBoundingClientRect().top - 60));
    await screenshot(page, "code-review-policy-phone");
    await page.close();

    const viewer = await asViewer.newPage();
    await viewer.goto(`${hub().url}/projects/${projectId}/settings`);
    const read = viewer.getByRole("form", { name: "Code review policy" });
    await read.waitFor();
    expect(await read.getByLabel("Path patterns").inputValue()).toBe("src/*, migrations/*");
    expect(await read.getByLabel("Path patterns").isDisabled()).toBe(true);
    expect(await read.getByRole("button", { name: "Save review policy" }).count()).toBe(0);
    await viewer.close();
  });

  it("shows each attempt on the task page as the loop goes, and marks tasks in review and failing review on the board and the list", async () => {
    const passing = await workingTask("Add JWT auth to the API");
    const failing = await workingTask("Rotate the signing keys");
    expect((await complete(passing, "a1b2c3d", "Added JWT auth")).review).toEqual({ status: "reviewing", attempt: 1 });
    expect((await complete(failing, "0f0f0f0", "Rotated the keys")).review).toEqual({ status: "reviewing", attempt: 1 });

    const page = await asAdmin.newPage();
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${hub().url}/projects/${projectId}/board`);
    const markOf = (taskId: string) => page.locator(`.card[data-task-id="${taskId}"] [data-review-mark]`);
    await markOf(passing).waitFor();
    expect(await markOf(passing).getAttribute("data-review-mark")).toBe("in-review");
    expect(await markOf(passing).getAttribute("title")).toBe("Code review: attempt 1 is being reviewed");

    // The first review fails: the worker is asked for a fix, and the board says so without a reload.
    const firstReview = await review(passing, 1, 45, [aNote, aFinding]);
    await expect.poll(() => markOf(passing).getAttribute("title")).toMatch(/fell short, and its worker was asked for a fix/);

    await page.goto(`${hub().url}/projects/${projectId}/tasks/${passing}`);
    const section = page.locator(".task-section").filter({ has: page.getByRole("heading", { name: "Code review" }) });
    const attempt = (n: number) => section.locator(`.review-attempt[data-attempt="${n}"]`);
    await attempt(1).waitFor();
    expect(await section.locator(".review-loop").textContent()).toBe("Attempt 1: changes requested of its worker.");
    expect(await attempt(1).locator(".review-status").textContent()).toBe("fail");
    expect(await attempt(1).locator(".review-score").textContent()).toBe("45/100");
    // Findings worst first, each with where it is.
    expect(await attempt(1).locator(".finding strong").allTextContents()).toEqual(["Token never expires", "Name the secret's variable"]);
    expect(await attempt(1).locator(".finding-where").first().textContent()).toBe("src/auth.ts:12");
    expect(await attempt(1).locator(".review-diff").textContent()).toBe("1 file, +40 −3 at a1b2c3d");
    expect(await attempt(1).getByRole("link", { name: "its review task" }).getAttribute("href")).toBe(`/projects/${projectId}/tasks/${firstReview}`);

    // The worker's fix is attempt 2; its passing review shows on the open page.
    expect((await complete(passing, "d4e5f6a", "Set exp on the JWT")).review).toEqual({ status: "reviewing", attempt: 2 });
    await attempt(2).waitFor();
    await review(passing, 2, 92);
    await expect.poll(() => section.locator(".review-loop").textContent()).toBe("Attempt 2: passed.");
    await expect.poll(() => attempt(2).locator(".review-status").textContent()).toBe("pass");
    expect(await attempt(2).locator(".review-score").textContent()).toBe("92/100");
    expect(await section.locator(".review-attempt").evaluateAll((els) => els.map((e) => e.getAttribute("data-attempt")))).toEqual(["2", "1"]);
    expect(await page.locator(".task-page h2 .status").textContent()).toBe("done");
    await section.scrollIntoViewIfNeeded();
    await screenshot(page, "task-reviews");

    // The review task links back to the task it reviewed.
    await attempt(1).getByRole("link", { name: "its review task" }).click();
    await page.locator(".review-of").waitFor();
    await page.locator(".review-of").getByRole("link", { name: "Add JWT auth to the API" }).click();
    await attempt(2).waitFor();

    // The other task fails both attempts: done, with its review failed for good.
    await review(failing, 1, 30, [aFinding]);
    await expect.poll(() => reviewStatus(failing)).toBe("changes_requested");
    await complete(failing, "1e1e1e1", "Tried again");
    await review(failing, 2, 40, [aFinding]);
    await expect.poll(() => reviewStatus(failing)).toBe("failed");
    expect((await taskOf(failing)).status).toBe("done");

    await page.goto(`${hub().url}/projects/${projectId}/board`);
    await markOf(failing).waitFor();
    expect(await markOf(failing).getAttribute("data-review-mark")).toBe("review-failing");
    expect(await markOf(failing).getAttribute("aria-label")).toBe("Code review failed on its last attempt (2)");
    expect(await markOf(passing).count()).toBe(0);

    await page.goto(`${hub().url}/projects/${projectId}/board?view=list`);
    const row = page.locator(`tr[data-task-id="${failing}"]`);
    await row.waitFor();
    expect(await row.locator("[data-review-mark]").getAttribute("data-review-mark")).toBe("review-failing");
    expect(await page.locator(`tr[data-task-id="${passing}"] [data-review-mark]`).count()).toBe(0);

    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${hub().url}/projects/${projectId}/tasks/${passing}`);
    await attempt(1).waitFor();
    await noSidewaysScroll(page);
    await section.scrollIntoViewIfNeeded();
    await screenshot(page, "task-reviews-phone");
    await page.close();
  });
});
