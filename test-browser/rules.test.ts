/**
 * The Rules page in real Chromium: a member writes a rule for their project, previews it against the calls an
 * agent's hook logged (posted as the official daemon posts them), sees a refusal beside the field the hub named, saves
 * the rule, switches it off and deletes it; the Permissions tab's "make a rule from this" address opens the form
 * prefilled; a viewer reads the rules with no control.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { addMember, accessTokenOf, call, hub, hubAs, launchChromium, ok, registerAgent, screenshot, signedIn } from "./driver";

let browser: Browser;
let asMember: BrowserContext;
let asViewer: BrowserContext;
let admin: string;
let project: { id: string; name: string };
const people = { member: "", viewer: "" };

/** A hook log line as the official hook writes it (a time like `time.strftime('%Y-%m-%dT%H:%M:%S+00:00')`). */
const logged = (tool_name: string, tool_input: Record<string, unknown>, secondsAgo: number, decision = "asked") => ({
  session_id: null,
  project_id: project.id,
  tool_name,
  tool_input,
  decision,
  matched_rule_id: null,
  reason: null,
  agent_name: "claude",
  created_at: `${new Date(Date.now() - secondsAgo * 1000).toISOString().slice(0, 19)}+00:00`,
});

beforeAll(async () => {
  browser = await launchChromium();
  const signedInAdmin = await signedIn(browser, hub().admin.email, hub().admin.password);
  admin = await accessTokenOf(signedInAdmin.page);
  await signedInAdmin.context.close();
  const stamp = Date.now();
  const api = hubAs({ token: admin });
  project = await ok(api.POST("/api/v1/projects", { body: { name: `Ruled ${stamp}` } }), 201);
  for (const role of ["member", "viewer"] as const) {
    const person = { email: `rules-${role}-${stamp}@example.com`, password: `${role}-password-1` };
    people[role] = (await ok(api.POST("/api/v1/users", { body: { ...person, role } }), 201)).id;
    await addMember(admin, project.id, people[role]);
    const { context, page } = await signedIn(browser, person.email, person.password);
    await page.close();
    if (role === "member") asMember = context;
    else asViewer = context;
  }
  // What the project's agents did, posted as hub.py's permlog_flush_loop posts it.
  const server = await registerAgent(admin, project.id);
  const posted = await call(
    "/api/v1/server/permissions/log",
    {
      apiKey: server.apiKey,
      body: {
        entries: [
          logged("Bash", { command: "npm test -- --run", description: "Run the tests" }, 300),
          logged("Bash", { command: "rm -rf dist" }, 200),
          logged("WebFetch", { url: "https://example.com/" }, 100, "denied"),
        ],
      },
    },
    201,
  );
  expect(posted.accepted).toBe(3);
  await call(
    "/api/v1/approval-rules",
    { token: admin, body: { name: "no web for anyone", tool_pattern: "WebFetch", action: "deny", scope_type: "tenant" } },
    201,
  );
});
afterEach(async () => {
  for (const page of [...asMember.pages(), ...asViewer.pages()]) await page.close();
});
afterAll(async () => {
  await browser?.close();
});

const rowOf = (page: Page, name: string) => page.locator("tr[data-rule-id]", { has: page.getByRole("rowheader", { name, exact: true }) });

describe("the Rules page", () => {
  it("lets a member preview a rule against the logged calls, save it, switch it off and delete it", async () => {
    const page = await asMember.newPage();
    await page.goto(hub().url + "/");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Rules" }).click();
    await page.getByRole("heading", { name: "Approval rules" }).waitFor();
    // The tenant rule is read, not managed, by a member.
    await expect.poll(() => rowOf(page, "no web for anyone").count()).toBe(1);
    expect(await rowOf(page, "no web for anyone").getByRole("button").count()).toBe(0);

    await page.getByRole("button", { name: "New rule" }).click();
    const form = page.getByRole("region", { name: "New rule" });
    // A member may put rules on their projects only.
    expect(await form.locator("select[name=scope_type]").locator("option").allTextContents()).toEqual(["A project"]);
    // The form's projects are read when it opens: its own project is chosen once they are there.
    await expect.poll(() => form.locator("select[name=scope_id]").inputValue(), { timeout: 10_000 }).toBe(project.id);
    await form.getByLabel("Name").fill("npm tests run");
    await form.getByLabel("Tool pattern").fill("Bash tool");
    await form.getByRole("button", { name: "Preview" }).click();
    const refusal = form.locator("[data-field-problem=tool_pattern]");
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain("can never match a tool name");

    await form.getByLabel("Tool pattern").fill("Bash");
    await form.getByLabel("Parameter pattern").fill("npm test*");
    await form.getByRole("button", { name: "Preview" }).click();
    const preview = form.locator("[data-preview]");
    await preview.waitFor();
    expect(await refusal.count()).toBe(0);
    // Other files' tenant rules share this hub, so what the rules decide now is read from the hub; the project rule comes
    // before any tenant rule in the hook's order, so it decides the one call it matches.
    const expected = await call<any>("/api/v1/approval-rules/preview", {
      token: admin,
      body: { rule: { tool_pattern: "Bash", param_pattern: "npm test*", action: "allow", scope_type: "project", scope_id: project.id } },
    });
    expect(expected).toMatchObject({ scanned: 3, matched: 1, decided: 1 });
    expect((await preview.locator("p").first().textContent())!.replace(/\s+/g, " ")).toBe(
      `Matches 1 of 3 calls logged in the last 30 days and would decide 1 of them. With it, ${expected.would_change} would be decided otherwise than the rules decide them now.`,
    );
    const sample = preview.locator("tr[data-sample-id]");
    expect(await sample.count()).toBe(1);
    expect(await sample.locator("td").allTextContents()).toEqual([
      expect.any(String),
      "Bash",
      "npm test -- --run",
      "asked",
      expected.samples[0].decision_now,
      "allowed",
    ]);
    await screenshot(page, "rules");

    await form.getByRole("button", { name: "Create rule" }).click();
    await form.waitFor({ state: "detached" });
    const row = rowOf(page, "npm tests run");
    await row.waitFor();
    expect(await page.locator(".rule-group", { has: row }).getByRole("heading").textContent()).toBe(`Project ${project.name}`);
    expect(await row.locator("td").allTextContents()).toEqual(["Bash", "npm test*", "allow", "all", "on", "EditDelete"]);
    const [saved] = (await call<{ rules: any[] }>(`/api/v1/approval-rules?scope_type=project&scope_id=${project.id}`, { token: admin })).rules;
    expect(saved).toMatchObject({ name: "npm tests run", tool_pattern: "Bash", param_pattern: "npm test*", action: "allow", is_active: true });

    await row.getByLabel("npm tests run active").click();
    await expect.poll(async () => (await call(`/api/v1/approval-rules/${saved.id}`, { token: admin })).is_active).toBe(false);
    await expect.poll(() => row.getByLabel("npm tests run active").isChecked()).toBe(false);

    const asked: string[] = [];
    page.on("dialog", (d) => {
      asked.push(d.message());
      void d.accept();
    });
    await row.getByRole("button", { name: "Delete npm tests run" }).click();
    await row.waitFor({ state: "detached" });
    expect(asked).toEqual([expect.stringContaining("Delete the rule “npm tests run”?")]);
    await call(`/api/v1/approval-rules/${saved.id}`, { token: admin }, 404);
  });

  it("opens the form prefilled from a logged call's address", async () => {
    const page = await asMember.newPage();
    await page.goto(`${hub().url}/rules?new=1&tool_pattern=Bash&param_pattern=npm%20test*&scope_type=project&scope_id=${project.id}`);
    const form = page.getByRole("region", { name: "New rule" });
    await form.waitFor();
    expect(await form.getByLabel("Tool pattern").inputValue()).toBe("Bash");
    expect(await form.getByLabel("Parameter pattern").inputValue()).toBe("npm test*");
    expect(await form.locator("select[name=scope_type]").inputValue()).toBe("project");
    await expect.poll(() => form.locator("select[name=scope_id]").inputValue(), { timeout: 10_000 }).toBe(project.id);
    await form.getByRole("button", { name: "Cancel" }).click();
    await form.waitFor({ state: "detached" });
    expect(new URL(page.url()).search).toBe("");
  });

  it("shows a viewer the rules and no control", async () => {
    await call(
      "/api/v1/approval-rules",
      { token: admin, body: { name: "viewer sees", tool_pattern: "Read", action: "allow", scope_type: "project", scope_id: project.id } },
      201,
    );
    const page = await asViewer.newPage();
    await page.goto(`${hub().url}/rules?new=1&tool_pattern=Bash`);
    await page.locator("[data-read-only]").waitFor();
    await rowOf(page, "viewer sees").waitFor();
    await rowOf(page, "no web for anyone").waitFor();
    expect(await page.getByRole("button", { name: "New rule" }).count()).toBe(0);
    expect(await page.getByRole("region", { name: "New rule" }).count()).toBe(0);
    expect(await page.locator(".rules-page button, .rules-page input").count()).toBe(0);
    expect(await rowOf(page, "viewer sees").locator("td").allTextContents()).toEqual(["Read", "any", "allow", "all", "on"]);
  });
});
