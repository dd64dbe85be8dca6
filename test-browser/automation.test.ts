/**
 * The Automation page in real Chromium, as a member of the project: a template of two dependent tasks with a parameter
 * made in the editor (its refusals beside the fields they name), run with a parameter (the run and its tasks shown, and
 * on the board), a template saved from an existing graph, a schedule with its cron in words and next runs, paused, a
 * GitHub trigger with its URL and secret shown once; a viewer reads it all with no control. Screenshots of each section.
 */
import { sign } from "@octokit/webhooks-methods";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { axeViolations, describeViolations, sidewaysOverflow } from "./page-audit";
import { addMember, adminAndViewer, call, hub, hubAs, launchChromium, ok, screenshot, signedIn } from "./driver";

let browser: Browser;
let member: BrowserContext;
let viewer: BrowserContext;
let page: Page;
let admin: string;
let projectId: string;

/** A wait on what the page shows, long enough for a hub shared by other tests on a busy machine. */
const poll = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 15_000 });
const base = () => `${hub().url}/projects/${projectId}/automation`;
const editor = () => page.locator("form.template-editor");
const field = (name: string) => editor().locator(`[name="${name}"]`);
const problemAt = (name: string) => page.locator(`[data-field-problem="${name}"]`);
const templateRow = (name: string) => page.locator(`tr[data-template="${name}"]`);

/** Once the sidebar's slide (a resize moves it) is over. */
const transitionsDone = (p: Page) => p.waitForFunction(() => document.getAnimations().every((a) => !(a instanceof CSSTransition) || a.playState !== "running"));

/** A screenshot at 1440×900 and at 390×844, where nothing scrolls sideways; axe-core finds nothing serious at either. */
async function bothSizes(name: string, p: Page = page) {
  for (const [width, height, suffix] of [
    [1440, 900, ""],
    [390, 844, "-narrow"],
  ] as const) {
    await p.setViewportSize({ width, height });
    await transitionsDone(p);
    expect(await sidewaysOverflow(p), `${name} at ${width}`).toBe(0);
    expect(describeViolations(`${name} at ${width}`, await axeViolations(p))).toEqual([]);
    await screenshot(p, `${name}${suffix}`);
  }
  await p.setViewportSize({ width: 1440, height: 900 });
}

beforeAll(async () => {
  browser = await launchChromium();
  const roles = await adminAndViewer(browser, "automation");
  admin = roles.admin;
  viewer = roles.asViewer;
  await roles.asAdmin.close();
  projectId = (await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: `Automation ${Date.now().toString(36)}` } }), 201)).id;
  await addMember(admin, projectId, roles.viewerId);
  const person = { email: `automation-member-${Date.now()}@example.com`, password: "member-password-1" };
  const memberId = (await ok(hubAs({ token: admin }).POST("/api/v1/users", { body: { ...person, role: "member" } }), 201)).id;
  await addMember(admin, projectId, memberId);
  member = (await signedIn(browser, person.email, person.password)).context;
  page = await member.newPage();
});
afterAll(async () => {
  await browser?.close();
});

describe("templates", () => {
  it("makes a template of two dependent tasks with a parameter, showing a refusal beside the field it names", async () => {
    await page.goto(`${base()}/templates`);
    await page.getByText("No templates yet.").waitFor();
    await page.getByRole("link", { name: "New template" }).click();
    await field("name").fill("Fix an issue");
    await page.getByRole("button", { name: "Add a parameter" }).click();
    await field("parameters.0.name").fill("issue");
    await field("parameters.0.required").check();
    await field("tasks.0.key").fill("plan");
    // A placeholder naming no parameter: the hub names the title.
    await field("tasks.0.title").fill("Plan the fix of {{isue}}");
    await page.getByRole("button", { name: "Add a task" }).click();
    await field("tasks.1.key").fill("ship");
    await field("tasks.1.title").fill("Ship the fix of {{issue}}");
    await field("tasks.1.acceptance_criteria").fill("The issue is closed\nA test covers it");
    await editor().locator('[data-task-key="ship"]').getByRole("button", { name: "Add a dependency" }).click();
    expect(await field("tasks.1.dependencies.0.on").inputValue()).toBe("plan");
    await field("tasks.1.dependencies.0.dependency_type").selectOption("input");
    await field("tasks.1.dependencies.0.contract_key").fill("fix_plan");
    await page.getByRole("button", { name: "Save template" }).click();
    await poll(() => problemAt("tasks.0.title").textContent()).toContain("{{isue}} names no parameter");
    await screenshot(page, "automation-template-refused");

    await field("tasks.0.title").fill("Plan the fix of {{issue}}");
    await page.getByRole("button", { name: "Save template" }).click();
    await templateRow("Fix an issue").waitFor();
    expect(await templateRow("Fix an issue").textContent()).toContain("issue: string");
    const saved = await call<{ templates: { name: string; tasks: { key: string; dependencies?: unknown[] }[] }[] }>(`/api/v1/projects/${projectId}/templates`, {
      token: admin,
    });
    expect(saved.templates[0]!.tasks[1]).toMatchObject({
      key: "ship",
      acceptance_criteria: ["The issue is closed", "A test covers it"],
      dependencies: [{ on: "plan", dependency_type: "input", contract_key: "fix_plan" }],
    });
  });

  it("runs it with a parameter, refusing a missing one beside its field, and shows the run and its tasks", async () => {
    await templateRow("Fix an issue").getByRole("button", { name: "Run now" }).click();
    const dialog = page.getByRole("dialog", { name: "Run Fix an issue" });
    await dialog.getByText("(required)").waitFor();
    await dialog.getByRole("button", { name: "Run now" }).click();
    await poll(() => dialog.locator('[data-field-problem="parameters.issue"]').textContent()).toContain("is required");
    await dialog.locator('[name="parameters.issue"]').fill("the login bug");
    await dialog.getByRole("button", { name: "Run now" }).click();
    const made = dialog.locator(".run-made");
    await made.waitFor();
    expect(await made.locator(".run-tasks a").allTextContents()).toEqual(["Plan the fix of the login bug", "Ship the fix of the login bug"]);
    await screenshot(page, "automation-run-made");

    await dialog.getByRole("link", { name: "Runs of Fix an issue" }).click();
    const run = page.locator("tr[data-run-id]");
    await poll(() => run.count()).toBe(1);
    expect(await run.getAttribute("data-status")).toBe("open");
    expect(await run.textContent()).toContain('issue = "the login bug"');
    await poll(() => run.locator(".run-tasks a").allTextContents()).toEqual(["Plan the fix of the login bug", "Ship the fix of the login bug"]);
    expect(await page.getByRole("heading", { name: "Runs of the template Fix an issue" }).count()).toBe(1);
    await bothSizes("automation-runs");

    await page.goto(`${hub().url}/projects/${projectId}/board`);
    await page.locator(".card", { hasText: "Plan the fix of the login bug" }).waitFor();
    await page.locator(".card", { hasText: "Ship the fix of the login bug" }).waitFor();
  });

  it("saves a template from an existing graph, from a task's page", async () => {
    const asAdmin = hubAs({ token: admin });
    const design = (await ok(asAdmin.POST("/api/v1/tasks", { body: { project_id: projectId, title: "Design the export" } }), 201)).id;
    await ok(
      asAdmin.POST("/api/v1/tasks", {
        body: { project_id: projectId, title: "Build the export", dependencies: [{ depends_on_task_id: design, dependency_type: "blocks" }] },
      }),
      201,
    );
    await page.goto(`${hub().url}/projects/${projectId}/tasks/${design}`);
    await page.getByRole("link", { name: "Save as template" }).click();
    await editor().getByRole("heading", { name: "Save a graph as a template" }).waitFor();
    expect(await editor().locator("fieldset.template-task").count()).toBe(2);
    expect(await field("tasks.0.title").inputValue()).toBe("Design the export");
    expect(await field("tasks.1.dependencies.0.on").inputValue()).toBe(await field("tasks.0.key").inputValue());
    await field("name").fill("Export feature");
    await bothSizes("automation-template-editor");
    // The whole template as JSON in the code editor, and back to the form with nothing lost.
    await page.getByRole("button", { name: "Edit as JSON" }).click();
    const code = editor().locator(".code-editor .cm-content");
    await poll(() => code.textContent()).toContain('"name": "Export feature"');
    expect(await code.textContent()).toContain('"title": "Build the export"');
    await screenshot(page, "automation-template-json");
    await page.getByRole("button", { name: "Back to the form" }).click();
    expect(await field("name").inputValue()).toBe("Export feature");
    expect(await editor().locator("fieldset.template-task").count()).toBe(2);
    await page.getByRole("button", { name: "Save template" }).click();
    await templateRow("Export feature").waitFor();
    expect(await templateRow("Export feature").textContent()).toContain("2 tasks");
    await bothSizes("automation-templates");
  });
});

describe("runs", () => {
  it("changes a saved template, and pages through its runs, newest first", async () => {
    await page.goto(`${base()}/templates`);
    await templateRow("Export feature").getByRole("link", { name: "Edit Export feature" }).click();
    await editor().getByRole("heading", { name: "Edit Export feature" }).waitFor();
    await field("description").fill("Design, then build");
    await page.getByRole("button", { name: "Save template" }).click();
    await poll(() => templateRow("Export feature").textContent()).toContain("Design, then build");

    const [exportTemplate] = (await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}/templates", { params: { path: { id: projectId } } }))).templates;
    for (let i = 0; i < 26; i++)
      await ok(
        hubAs({ token: admin }).POST("/api/v1/projects/{id}/templates/{tid}/instantiate", {
          params: { path: { id: projectId, tid: exportTemplate!.id } },
          body: { parameters: {} },
        }),
        201,
      );
    await templateRow("Export feature").getByRole("link", { name: "Runs of Export feature" }).click();
    const rows = page.locator("tr[data-run-id]");
    await poll(() => rows.count()).toBe(25);
    await page.getByRole("button", { name: "Older runs" }).click();
    await poll(() => rows.count()).toBe(26);
    expect(await page.getByRole("button", { name: "Older runs" }).count()).toBe(0);
    const ids = await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute("data-run-id")));
    expect(new Set(ids).size).toBe(26);
    await page.getByRole("link", { name: "All runs" }).click();
    await poll(() => rows.count()).toBe(25);
  });
});

describe("schedules", () => {
  it("sets up a schedule with its cron in words, refusing a bad expression beside it, shows its next runs, and pauses it", async () => {
    await page.goto(`${base()}/schedules`);
    await page.getByText("No schedules yet.").waitFor();
    await page.getByRole("button", { name: "New schedule" }).click();
    const form = page.locator("form.schedule-form");
    await form.locator("[name=template_id]").selectOption({ label: "Fix an issue" });
    await form.locator("[name=name]").fill("Weekday triage");
    await form.locator("[name=cron]").fill("0 7 * * 1-5");
    await poll(() => form.locator(".cron-preview").textContent()).toBe("At 07:00, Monday through Friday");
    await form.locator("[name=timezone]").selectOption("Europe/Berlin");
    await form.locator('[name="parameters.issue"]').fill("the triage queue");
    await form.locator("[name=cron]").fill("61 7 * * *");
    await form.getByRole("button", { name: "Add schedule" }).click();
    await poll(() => form.locator('[data-field-problem="cron"]').textContent()).toBeTruthy();

    await form.locator("[name=cron]").fill("0 7 * * 1-5");
    await form.getByRole("button", { name: "Add schedule" }).click();
    const saved = page.locator(".schedule-saved");
    await saved.waitFor();
    expect(await saved.textContent()).toContain("At 07:00, Monday through Friday (Europe/Berlin)");
    expect(await saved.locator(".next-runs time").count()).toBe(5);
    const row = page.locator("tr[data-schedule-id]");
    await row.waitFor();
    expect(await row.textContent()).toContain("Europe/Berlin");
    await poll(() => row.locator(".cron-words").textContent()).toBe("At 07:00, Monday through Friday");
    // The next runs shown are the hub's, each a weekday at 07:00 in Berlin.
    const shown = await row.locator(".next-runs time").evaluateAll((ts) => ts.map((t) => t.getAttribute("datetime")));
    const [schedule] = (await call<{ schedules: { next_runs: string[] }[] }>(`/api/v1/projects/${projectId}/schedules`, { token: admin })).schedules;
    expect(shown).toEqual(schedule!.next_runs);
    for (const at of shown) {
      const berlin = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", weekday: "short", hour: "2-digit", minute: "2-digit" }).format(
        new Date(at!),
      );
      expect(berlin).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 07:00$/);
    }
    await bothSizes("automation-schedules");

    // Changed: a new expression, its new next runs.
    await page.locator(".schedule-saved").getByRole("button", { name: "Done" }).click();
    await row.getByRole("button", { name: "Edit" }).click();
    expect(await form.locator('[name="parameters.issue"]').inputValue()).toBe("the triage queue");
    await form.locator("[name=cron]").fill("30 6 * * *");
    await form.getByRole("button", { name: "Save schedule" }).click();
    await poll(() => page.locator(".schedule-saved").textContent()).toContain("At 06:30");
    await poll(() => row.locator(".cron-words").textContent()).toBe("At 06:30");

    await row.getByRole("button", { name: "Pause" }).click();
    await poll(() => row.getAttribute("data-paused")).toBe("true");
    expect(await row.textContent()).toContain("none while paused");
    await row.getByRole("button", { name: "Resume" }).waitFor();
  });
});

describe("triggers", () => {
  it("adds a GitHub trigger, showing its URL and secret once with GitHub's setup steps", async () => {
    await page.goto(`${base()}/triggers`);
    await page.getByText("No triggers yet.").waitFor();
    await page.getByRole("button", { name: "New trigger" }).click();
    const form = page.locator("form.trigger-form");
    await form.locator("[name=template_id]").selectOption({ label: "Fix an issue" });
    await form.locator("[name=name]").fill("Agent issues");
    await form.getByLabel("a GitHub repository's webhook").check();
    await form.locator('[name="event-issue_comment.created"]').check();
    await form.locator('[name="github.label"]').fill("agent");
    await form.locator('[name="github.command"]').fill("/agent");
    await form.getByRole("button", { name: "Map a parameter" }).click();
    await form.locator("[name=mapping-0-path]").fill("issue.title");
    await form.getByRole("button", { name: "Add trigger" }).click();

    const shown = page.locator(".trigger-secret");
    await shown.waitFor();
    const secret = await shown.locator("[name=trigger-secret]").inputValue();
    expect(secret).toMatch(/^whsec_/);
    const url = await shown.locator("[name=trigger-url]").inputValue();
    expect(url).toMatch(/\/hooks\/triggers\/[0-9a-f-]{36}$/);
    expect(await shown.locator(".setup-steps").textContent()).toContain("tick Issues and Issue comments");
    expect(await shown.locator(".setup-steps").textContent()).toContain("application/json");
    const row = page.locator("tr[data-trigger-id]");
    await row.waitFor();
    expect(await row.textContent()).toContain(url);
    expect(await row.textContent()).toContain('issues labelled "agent", comments starting /agent');
    const [trigger] = (await call<{ triggers: { github: unknown }[] }>(`/api/v1/projects/${projectId}/triggers`, { token: admin })).triggers;
    expect(trigger!.github).toMatchObject({
      events: ["issues.labeled", "issue_comment.created"],
      label: "agent",
      command: "/agent",
      mapping: { issue: "issue.title" },
    });
    await bothSizes("automation-triggers");

    // Once put away, the secret is not shown again anywhere on the page.
    await shown.getByRole("button", { name: "I have copied it" }).click();
    await shown.waitFor({ state: "detached" });
    expect(await page.content()).not.toContain(secret);

    // GitHub delivers a labelled issue: the trigger's runs list it, with the parameter read from the event.
    const payload = JSON.stringify({
      action: "labeled",
      label: { name: "agent" },
      issue: { number: 7, title: "Checkout loses the basket", body: "", html_url: "https://github.com/acme/shop/issues/7" },
      repository: { full_name: "acme/shop" },
      sender: { login: "octocat" },
    });
    const delivered = await fetch(url, {
      method: "POST",
      body: payload,
      headers: {
        "Content-Type": "application/json",
        "X-GitHub-Event": "issues",
        "X-GitHub-Delivery": crypto.randomUUID(),
        "X-Hub-Signature-256": await sign(secret, payload),
      },
    });
    expect(delivered.status, await delivered.clone().text()).toBeLessThan(300);
    await row.getByRole("link", { name: "Runs" }).click();
    await page.getByRole("heading", { name: "Runs of the trigger Agent issues" }).waitFor();
    const run = page.locator("tr[data-run-id]");
    await poll(() => run.count()).toBe(1);
    expect(await run.textContent()).toContain('issue = "Checkout loses the basket"');
    expect(await run.textContent()).toContain("trigger Agent issues");
    await poll(() => run.locator(".run-tasks a").allTextContents()).toEqual([
      "Plan the fix of Checkout loses the basket",
      "Ship the fix of Checkout loses the basket",
    ]);
    await page.getByRole("navigation", { name: "Automation" }).getByRole("link", { name: "Triggers" }).click();
    await row.waitFor();
    await row.getByRole("button", { name: "Pause" }).click();
    await poll(() => row.getAttribute("data-paused")).toBe("true");
  });
});

describe("a viewer", () => {
  it("reads templates, schedules, triggers and runs with no control", async () => {
    const view = await viewer.newPage();
    await view.goto(`${base()}/templates`);
    await view.locator('tr[data-template="Fix an issue"]').waitFor();
    expect(await view.getByRole("button", { name: "Run now" }).count()).toBe(0);
    expect(await view.getByRole("link", { name: "New template" }).count()).toBe(0);
    expect(await view.getByRole("button", { name: /Delete/ }).count()).toBe(0);
    await view.getByRole("navigation", { name: "Automation" }).getByRole("link", { name: "Schedules" }).click();
    await view.locator("tr[data-schedule-id]").waitFor();
    expect(await view.locator("main").getByRole("button").count()).toBe(0);
    await view.getByRole("navigation", { name: "Automation" }).getByRole("link", { name: "Triggers" }).click();
    await view.locator("tr[data-trigger-id]").waitFor();
    expect(
      await view
        .locator("main")
        .getByRole("button", { name: /Pause|Resume|Rotate|Delete|New/ })
        .count(),
    ).toBe(0);
    await view.getByRole("navigation", { name: "Automation" }).getByRole("link", { name: "Runs" }).click();
    await view.locator("tr[data-run-id]").first().waitFor();
    await bothSizes("automation-viewer", view);
    await view.close();
  });
});
