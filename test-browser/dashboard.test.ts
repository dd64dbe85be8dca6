/**
 * The dashboard as a person uses it, in real Chromium: signing in, creating a
 * project and a task, watching an agent move the task across the board with no
 * reload, answering a question and approving a plan from the task page, a
 * dropped connection resuming without losing an event, and a viewer seeing no
 * actions. Agents are driven over the API, as the official daemon would.
 */
import type { Browser, Page, WebSocketRoute } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { paths } from "../client";
import { addMember, adminToken, columnOrNull, executeSql, hub, hubAs, launchChromium, ok, registerAgent, screenshot, signIn } from "./driver";

/** A task in the core protocol's body (the operation also takes a task-format request). */
type NewTask = Extract<paths["/api/v1/tasks"]["post"]["requestBody"]["content"]["application/json"], { title: string }>;

let browser: Browser;
let admin: string;

beforeAll(async () => {
  browser = await launchChromium();
  admin = await adminToken();
});
afterAll(async () => {
  await browser?.close();
});

async function newPage(colorScheme: "light" | "dark" = "light"): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme });
  return context.newPage();
}

/** Creates a project on the page and returns its id (from the board's address). */
async function createProjectOnPage(page: Page, name: string): Promise<string> {
  await page.getByLabel("New project").fill(name);
  await page.getByRole("button", { name: "Create project" }).click();
  await page.getByRole("heading", { name }).waitFor();
  const id = /\/projects\/([0-9a-f-]{36})\/board/.exec(page.url())?.[1];
  expect(id, page.url()).toBeTruthy();
  return id!;
}

/**
 * A project's board, signed in, live, with its socket behind a network the
 * test controls: it can drop the socket and refuse reconnections for a while.
 */
async function liveBoardBehindANetwork(name: string) {
  const page = await newPage();
  const sockets: WebSocketRoute[] = [];
  /** What the hub sent on each socket, in order. */
  const received: string[][] = [];
  let down = false;
  await page.routeWebSocket(/\/api\/v1\/projects\/.*\/ws/, (ws) => {
    if (down) return void ws.close({ code: 1006, reason: "network down" });
    const frames: string[] = [];
    ws.connectToServer().onMessage((message) => {
      frames.push(String(message));
      ws.send(message);
    });
    sockets.push(ws);
    received.push(frames);
  });
  const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name } }), 201);
  await signIn(page, hub().admin.email, hub().admin.password);
  await page.goto(`${hub().url}/projects/${project.id}/board`);
  await page.locator("[data-feed=live]").waitFor();
  const network = {
    async goDown() {
      down = true;
      await sockets.at(-1)!.close({ code: 1006, reason: "network down" });
    },
    comeBack() {
      down = false;
    },
  };
  return { page, project, network, received };
}

const cardTitled = (page: Page, title: string) => page.locator(".card", { hasText: title });

describe("the page itself", () => {
  it("is served by the Worker with a strict Content-Security-Policy, and answers any app path with the app", async () => {
    for (const path of ["/", "/projects/00000000-0000-0000-0000-000000000000/board"]) {
      const res = await fetch(hub().url + path);
      expect(res.status, path).toBe(200);
      expect(await res.text()).toContain('<div id="app">');
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
    expect((await fetch(`${hub().url}/api/v1/nothing-here`)).headers.get("content-type")).toBe("application/problem+json");
  });
});

describe("the board", () => {
  it("signs in, creates a project and a task, and follows an agent's work live", async () => {
    const page = await newPage();
    await signIn(page, hub().admin.email, hub().admin.password);
    const projectId = await createProjectOnPage(page, "Apollo");
    await page.locator("[data-feed=live]").waitFor();

    await page.getByRole("button", { name: "New task" }).click();
    const dialog = page.getByRole("dialog", { name: "New task" });
    await dialog.getByLabel("Title").fill("Build the login page");
    await dialog.getByLabel("Spec (markdown)").fill("Email and password, with a Sign in button.");
    await dialog.getByRole("button", { name: "Create task" }).click();
    // The new task's page opens; the board is a link away.
    await page.getByRole("heading", { name: /Build the login page/ }).waitFor();
    await page.getByRole("link", { name: "← Board" }).click();
    await cardTitled(page, "Build the login page").waitFor();
    const taskId = (await cardTitled(page, "Build the login page").getAttribute("data-task-id"))!;
    expect(await columnOrNull(page, taskId)).toBe("pending");

    const agent = await registerAgent(admin, projectId, "builder");
    const asAgent = hubAs({ apiKey: agent.apiKey });
    const path = { id: taskId };
    await ok(asAgent.POST("/api/v1/server/tasks/{id}/assign", { params: { path }, body: { server_name: agent.name } }));
    await expect.poll(() => columnOrNull(page, taskId)).toBe("assigned");
    await ok(asAgent.POST("/api/v1/server/tasks/{id}/start", { params: { path } }));
    await expect.poll(() => columnOrNull(page, taskId)).toBe("running");
    expect(await cardTitled(page, "Build the login page").textContent()).toContain("builder");
    await screenshot(page, "board");
    await ok(asAgent.POST("/api/v1/server/tasks/{id}/complete", { params: { path }, body: { result: "Login page done" } }));
    await expect.poll(() => columnOrNull(page, taskId)).toBe("done");
    // Followed live: the page never reloaded.
    expect(await page.evaluate(() => performance.getEntriesByType("navigation").length)).toBe(1);

    // The agent on the Agents page: online, its load, its session in this project.
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Agents" }).click();
    const row = page.locator('tr[data-server="builder"]');
    await row.waitFor();
    expect(await row.textContent()).toMatch(/online.*0\/1.*builder-worker \(Apollo\)/);
    await screenshot(page, "agents");
  });

  it("resumes after a dropped connection without losing an event, showing that it reconnects", async () => {
    const { page, project, network } = await liveBoardBehindANetwork("Resume");

    // The network goes down: the socket drops and reconnecting fails for a while.
    await network.goDown();
    await page.locator("[data-feed=reconnecting]").waitFor();
    const created = [];
    for (let i = 0; i < 12; i++)
      created.push(await ok(hubAs({ token: admin }).POST("/api/v1/tasks", { body: { project_id: project.id, title: `While offline ${i}` } }), 201));
    await screenshot(page, "board-reconnecting");
    network.comeBack();
    await page.locator("[data-feed=live]").waitFor({ timeout: 20_000 });
    for (const t of created) await page.locator(`.card[data-task-id="${t.id}"]`).waitFor();
    expect(await page.locator(".card").count()).toBe(12);
  });
});

describe("a board far behind", () => {
  it("pages the log when the socket says it is too far behind, then goes live with every event applied", async () => {
    const { page, project, network, received } = await liveBoardBehindANetwork("Far behind");

    await network.goDown();
    await page.locator("[data-feed=reconnecting]").waitFor();
    const before = await ok(hubAs({ token: admin }).POST("/api/v1/tasks", { body: { project_id: project.id, title: "Before the backlog" } }), 201);
    // More than the 5,000 events a socket replays: the hub answers resync_required.
    const { last_seq } = await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}", { params: { path: { id: project.id } } }));
    executeSql(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5200)
       INSERT INTO events (project_id, seq, type, task_id, actor, data, created_at)
       SELECT '${project.id}', ${last_seq} + i, 'filler', NULL, 'test', '{}', '2026-01-01T00:00:00.000Z' FROM n`,
    );
    const after = await ok(hubAs({ token: admin }).POST("/api/v1/tasks", { body: { project_id: project.id, title: "After the backlog" } }), 201);
    const paged: string[] = [];
    page.on("request", (r) => r.url().includes("/events?since=") && paged.push(r.url()));
    network.comeBack();
    // Tasks keep coming while it reconnects, pages the log and resumes.
    const meanwhile = Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        ok(hubAs({ token: admin }).POST("/api/v1/tasks", { body: { project_id: project.id, title: `Meanwhile ${i}` } }), 201),
      ),
    );
    await page.locator("[data-feed=live]").waitFor({ timeout: 30_000 });
    await page.locator(`.card[data-task-id="${before.id}"]`).waitFor();
    await page.locator(`.card[data-task-id="${after.id}"]`).waitFor();
    for (const t of await meanwhile) await page.locator(`.card[data-task-id="${t.id}"]`).waitFor();
    expect(paged.length).toBeGreaterThanOrEqual(6);
    // Live again: a new task shows without a reload.
    const live = await ok(hubAs({ token: admin }).POST("/api/v1/tasks", { body: { project_id: project.id, title: "Live again" } }), 201);
    await page.locator(`.card[data-task-id="${live.id}"]`).waitFor();
    // On the socket that paged the log: nothing before resync_required's resume, then every event once, in seq order,
    // up to the live one (what committed while the log was paged may all have come with the pages).
    const frames = received.at(-1)!.map((f) => JSON.parse(f));
    const resync = frames.findIndex((f) => f.type === "resync_required");
    expect(resync).toBeGreaterThanOrEqual(0);
    const seqs = frames
      .slice(resync)
      .filter((f) => f.type === "event")
      .map((f) => f.seq);
    const { last_seq: lastSeq } = await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}", { params: { path: { id: project.id } } }));
    expect(seqs.at(-1)).toBe(lastSeq);
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0] + i));
  });
});

describe("the graph", () => {
  it("lays out a three-level DAG, upstream above downstream, each kind of edge drawn apart", async () => {
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Layers" } }), 201);
    const create = (title: string, dependencies: NewTask["dependencies"] = []) =>
      ok(hubAs({ token: admin }).POST("/api/v1/tasks", { body: { project_id: project.id, title, dependencies } }), 201);
    const schema = await create("Design the schema");
    const api = await create("Build the API", [{ depends_on_task_id: schema.id, dependency_type: "blocks" }]);
    const ui = await create("Build the UI", [{ depends_on_task_id: api.id, dependency_type: "input", contract_key: "openapi" }]);
    const docs = await create("Write the docs", [{ depends_on_task_id: schema.id, dependency_type: "related" }]);
    await registerAgent(admin, project.id, "mapper");

    const page = await newPage();
    await signIn(page, hub().admin.email, hub().admin.password);
    await page.goto(`${hub().url}/projects/${project.id}/graph`);
    await page.locator(".graph[data-loaded=true] .node").first().waitFor();
    await page.locator(`.node[data-task-id="${ui.id}"]`).waitFor();
    const top = (id: string) => page.locator(`.node[data-task-id="${id}"] rect`).evaluate((r) => Number(r.getAttribute("y")));
    expect(await top(schema.id)).toBeLessThan(await top(api.id));
    expect(await top(api.id)).toBeLessThan(await top(ui.id));
    expect(await page.locator(".node").count()).toBe(4);
    expect(await page.locator(`.edge-blocks[data-from="${schema.id}"][data-to="${api.id}"]`).count()).toBe(1);
    expect(await page.locator(`.edge-input[data-from="${api.id}"][data-to="${ui.id}"] .edge-label`).textContent()).toBe("openapi");
    expect(await page.locator(`.edge-related[data-from="${schema.id}"][data-to="${docs.id}"]`).count()).toBe(1);
    // Blocked tasks are drawn pending; the node links to its task.
    expect(await page.locator(`.node[data-task-id="${ui.id}"]`).getAttribute("class")).toContain("status-pending");
    await screenshot(page, "graph");
    await page.locator(`.node[data-task-id="${api.id}"]`).click();
    await page.getByRole("heading", { name: /Build the API/ }).waitFor();
    // The servers that could take it, with the seed's reasons (this agent declared no capabilities, and the task requires nothing).
    await page.locator(".matches li", { hasText: "mapper" }).waitFor();
    expect(await page.locator(".matches li", { hasText: "mapper" }).textContent()).toMatch(/score \d+.*has capacity/i);
    await screenshot(page, "task");
  });
});

describe("the task page", () => {
  it("answers an agent's question and approves its plan", async () => {
    const page = await newPage();
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Steering" } }), 201);
    const agent = await registerAgent(admin, project.id, "planner");
    const asAgent = hubAs({ apiKey: agent.apiKey });
    const task = await ok(
      asAgent.POST("/api/v1/server/tasks", { body: { project_id: project.id, title: "Migrate the database", spec: "Move to D1", require_plan: true } }),
      201,
    );
    const path = { id: task.id };
    await ok(asAgent.POST("/api/v1/server/tasks/{id}/assign", { params: { path }, body: { server_name: agent.name } }));
    await ok(asAgent.POST("/api/v1/server/tasks/{id}/plan", { params: { path }, body: { plan: "1. Export\n2. Import\n3. Verify" } }));

    await signIn(page, hub().admin.email, hub().admin.password);
    await page.goto(`${hub().url}/projects/${project.id}/tasks/${task.id}`);
    await page.getByText("1. Export").waitFor();
    await screenshot(page, "task-plan");
    await page.getByRole("button", { name: "Approve plan" }).click();
    await page.locator(".status-running").waitFor();

    await ok(asAgent.POST("/api/v1/server/tasks/{id}/help", { params: { path }, body: { question: "Which region?", intervention_type: "question" } }));
    await page.locator(".intervention").getByText("Which region?").waitFor();
    await page.getByLabel("Answer").fill("Europe");
    await page.getByRole("button", { name: "Send answer" }).click();
    await page.locator(".status-running").waitFor();
    const answered = await ok(asAgent.GET("/api/v1/server/interventions", { params: { query: { task_id: task.id } } }));
    expect(answered.map((i) => [i.status, i.response])).toEqual([["responded", "Europe"]]);
    // The timeline keeps the question and the answer, word for word.
    await page.locator('.timeline [data-event="intervention_responded"] .answered').waitFor();
    expect(await page.locator('.timeline [data-event="intervention_requested"] .asked').textContent()).toBe("question: Which region?");
    expect(await page.locator('.timeline [data-event="intervention_responded"] .answered').textContent()).toBe("answer: Europe");
  });

  it("shows what the agent's last commit changed, as its CLI measured it on completion", async () => {
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Reviewed" } }), 201);
    const agent = await registerAgent(admin, project.id, "committer");
    const asAgent = hubAs({ apiKey: agent.apiKey });
    const task = await ok(asAgent.POST("/api/v1/server/tasks", { body: { project_id: project.id, title: "Add the login form" } }), 201);
    const path = { id: task.id };
    await ok(asAgent.POST("/api/v1/server/tasks/{id}/assign", { params: { path }, body: { server_name: agent.name } }));
    await ok(asAgent.POST("/api/v1/server/tasks/{id}/start", { params: { path } }));
    // What `orchestratia task complete` sends for a commit of two text files and an image (one more file left unlisted).
    const git_diff_stats = {
      files_changed: 4,
      insertions: 42,
      deletions: 7,
      files: [
        { path: "web/login.tsx", insertions: 40, deletions: 5 },
        { path: "README.md", insertions: 2, deletions: 2 },
      ],
      head_commit: "a1b2c3d",
      base_commit: null,
      binary_files: ["docs/login.png"],
    };
    await ok(asAgent.POST("/api/v1/server/tasks/{id}/complete", { params: { path }, body: { result: "Login form added", git_diff_stats } }));

    const page = await newPage();
    await signIn(page, hub().admin.email, hub().admin.password);
    await page.goto(`${hub().url}/projects/${project.id}/tasks/${task.id}`);
    const changes = page.locator(".task-section", { has: page.getByRole("heading", { name: "Code changes" }) });
    await changes.waitFor();
    expect(await changes.locator(".diff-summary").textContent()).toBe("4 files changed, +42 −7 · commit a1b2c3d against its parent");
    const rows = await changes.locator(".diff-files tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    expect(rows).toEqual([
      ["web/login.tsx", "+40", "−5"],
      ["README.md", "+2", "−2"],
    ]);
    expect(await changes.locator(".diff-binary li").allTextContents()).toEqual(["docs/login.png"]);
    expect(await changes.getByText("1 more file is not listed.").count()).toBe(1);
    await changes.scrollIntoViewIfNeeded();
    await screenshot(page, "task-changes");
  });

  it("shows what agents logged about the task, newest first, wide and narrow", async () => {
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Logged" } }), 201);
    const agent = await registerAgent(admin, project.id, "logger");
    const task = await ok(hubAs({ apiKey: agent.apiKey }).POST("/api/v1/server/tasks", { body: { project_id: project.id, title: "Migrate the ledger" } }), 201);
    // The agent speaks seeds/agent-orchestrator-messages.md on its socket, as an agent would.
    const ws = new WebSocket(`${hub().url.replace(/^http/, "ws")}/api/v1/projects/${project.id}/agent-ws`);
    const frames: { type: string; correlationId?: string }[] = [];
    ws.addEventListener("message", (e) => frames.push(JSON.parse(String(e.data))));
    await new Promise((resolve) => ws.addEventListener("open", resolve));
    ws.send(JSON.stringify({ type: "auth", api_key: agent.apiKey, protocol_versions: ["orchestratia/v1"] }));
    await expect.poll(() => frames.some((f) => f.type === "auth_ok")).toBe(true);
    const lines = [
      { level: "info", message: "Exported 1,204 ledger rows" },
      { level: "warn", message: "3 rows have no currency; assuming EUR", context: { rows: [17, 230, 981] } },
      { level: "info", message: "Import verified against the export's checksums" },
    ];
    for (const [n, line] of lines.entries()) {
      ws.send(JSON.stringify({ type: "event:log", id: `line-${n}`, timestamp: new Date().toISOString(), payload: { ...line, taskId: task.id } }));
      await new Promise((r) => setTimeout(r, 20));
    }
    ws.send(JSON.stringify({ type: "event:error", id: "err", payload: { taskId: task.id, error: "Checksum service timed out once", recoverable: true } }));
    await expect
      .poll(async () => (await ok(hubAs({ token: admin }).GET("/api/v1/tasks/{id}/logs", { params: { path: { id: task.id } } }))).logs.length)
      .toBe(4);
    ws.close();

    const page = await newPage();
    await signIn(page, hub().admin.email, hub().admin.password);
    await page.goto(`${hub().url}/projects/${project.id}/tasks/${task.id}`);
    const panel = page.locator(".task-section", { has: page.getByRole("heading", { name: "Agent logs" }) });
    await panel.locator(".agent-logs li").first().waitFor();
    expect(await panel.locator(".log-message").allTextContents()).toEqual([
      "Checksum service timed out once",
      "Import verified against the export's checksums",
      "3 rows have no currency; assuming EUR",
      "Exported 1,204 ledger rows",
    ]);
    expect(await panel.locator(".badge.level").allTextContents()).toEqual(["error", "info", "warn", "info"]);
    expect(await panel.getByText("logger").count()).toBe(4);
    await panel.scrollIntoViewIfNeeded();
    await screenshot(page, "task-logs");
    await page.setViewportSize({ width: 390, height: 844 });
    await panel.scrollIntoViewIfNeeded();
    // Nothing in the panel is wider than the phone's screen.
    expect(await panel.evaluate((el) => el.scrollWidth <= el.clientWidth + 1)).toBe(true);
    await screenshot(page, "task-logs-narrow");
  });

  it("shows the hub's refusal next to the control that asked", async () => {
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Refusals" } }), 201);
    const agent = await registerAgent(admin, project.id, "short-lived");
    const task = await ok(hubAs({ token: admin }).POST("/api/v1/tasks", { body: { project_id: project.id, title: "Needs a server" } }), 201);

    const page = await newPage();
    await signIn(page, hub().admin.email, hub().admin.password);
    await page.goto(`${hub().url}/projects/${project.id}/tasks/${task.id}`);
    const server = page.getByLabel("Assign to");
    await server.focus();
    await page.locator(`option[value="${agent.name}"]`).waitFor({ state: "attached" });
    await server.selectOption(agent.name);
    // The server is revoked while the page still offers it.
    await ok(hubAs({ token: admin }).POST("/api/v1/servers/{id}/revoke", { params: { path: { id: agent.id } } }));
    await page.getByRole("button", { name: "Assign", exact: true }).click();
    const refusal = page.locator("form", { has: server }).getByRole("alert");
    await refusal.waitFor();
    const refused = await fetch(`${hub().url}/api/v1/tasks/${task.id}/assign`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${admin}` },
      body: JSON.stringify({ server_name: agent.name }),
    });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(await refusal.textContent()).toBe(((await refused.json()) as { detail: string }).detail);
  });

  it("shows a viewer everything and no action", async () => {
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Watched" } }), 201);
    const viewer = { email: `viewer-${Date.now()}@example.com`, password: "viewer-password-1" };
    const user = await ok(hubAs({ token: admin }).POST("/api/v1/users", { body: { ...viewer, role: "viewer" } }), 201);
    await addMember(admin, project.id, user.id);
    await ok(hubAs({ token: admin }).POST("/api/v1/tasks", { body: { project_id: project.id, title: "Read only for some" } }), 201);

    const page = await newPage();
    await signIn(page, viewer.email, viewer.password);
    await page.getByRole("main").getByRole("link", { name: "Watched", exact: true }).click();
    await cardTitled(page, "Read only for some").waitFor();
    expect(await page.getByText("New task").count()).toBe(0);
    await cardTitled(page, "Read only for some").getByRole("link").click();
    await page.getByRole("heading", { name: /Read only for some/ }).waitFor();
    expect(await page.locator(".actions").count()).toBe(0);
    expect(await page.getByRole("button", { name: /Cancel task|Add note|Assign/ }).count()).toBe(0);
    expect(await page.getByLabel("New project").count()).toBe(0);
  });
});

/** The liveness rules, off as every project starts. */
const OTHER_SETTINGS_AT_DEFAULT = {
  require_result: false,
  stall_minutes: null,
  stall_action: "alert",
  unassignable_minutes: null,
  archive_after_days: 30,
} as const;

describe("approving agents' tasks", () => {
  it("turns the project's switch on, then approves an agent's task from its card and another from its page", async () => {
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Gatekeeping" } }), 201);
    const agent = await registerAgent(admin, project.id, "eager");
    const settings = async () => (await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}", { params: { path: { id: project.id } } }))).settings;
    const awaiting = async (id: string) =>
      (await ok(hubAs({ token: admin }).GET("/api/v1/tasks/{id}", { params: { path: { id } } }))) as { awaiting_approval: boolean };

    const page = await newPage();
    await signIn(page, hub().admin.email, hub().admin.password);
    await page.goto(`${hub().url}/projects/${project.id}/board`);
    await page.locator("[data-feed=live]").waitFor();
    await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "Settings" }).click();
    const gate = page.getByLabel("Tasks that agents create wait for a person's approval");
    await gate.waitFor();
    expect(await gate.isChecked()).toBe(false);
    await gate.click();
    await expect.poll(() => gate.isChecked()).toBe(true);
    // The switch shows its new position at once; the hub has it once the switch is no longer busy.
    await expect.poll(() => gate.getAttribute("aria-busy")).toBe("false");
    expect(await settings()).toEqual({ ...OTHER_SETTINGS_AT_DEFAULT, approve_agent_tasks: true, remote_exec: false });
    await screenshot(page, "project-settings");

    const asAgent = hubAs({ apiKey: agent.apiKey });
    const create = (title: string) => ok(asAgent.POST("/api/v1/server/tasks", { body: { project_id: project.id, title } }), 201);
    const first = await create("Rewrite the billing module");
    const second = await create("Delete the staging database");
    await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "Board" }).click();
    const card = page.locator(`.card[data-task-id="${first.id}"]`);
    await card.getByText("awaiting approval").waitFor();
    await page.locator(`.card[data-task-id="${second.id}"]`).getByText("awaiting approval").waitFor();
    await screenshot(page, "board-approval");
    await card.getByRole("button", { name: "Approve" }).click();
    await card.getByText("awaiting approval").waitFor({ state: "detached" });
    expect(await card.getByRole("button", { name: "Approve" }).count()).toBe(0);
    expect((await awaiting(first.id)).awaiting_approval).toBe(false);
    expect((await awaiting(second.id)).awaiting_approval).toBe(true);

    await page.locator(`.card[data-task-id="${second.id}"] a`).click();
    await page.getByRole("heading", { name: /Delete the staging database/ }).waitFor();
    await page.locator(".awaiting-note").waitFor();
    // Waiting for approval, it is not offered to auto-assignment.
    expect(await page.getByRole("button", { name: "Auto-assign" }).count()).toBe(0);
    await screenshot(page, "task-approval");
    await page.locator(".actions").getByRole("button", { name: "Approve" }).click();
    await page.locator(".awaiting-note").waitFor({ state: "detached" });
    expect((await awaiting(second.id)).awaiting_approval).toBe(false);
    const events = await ok(hubAs({ token: admin }).GET("/api/v1/tasks/{id}/events", { params: { path: { id: second.id } } }));
    expect(events.events.filter((e) => e.type === "task_approved").map((e) => e.actor)).toEqual([hub().admin.email]);
  });
});

describe("remote commands and files", () => {
  it("an admin turns the project's switch on, after which agents may reach its sessions", async () => {
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Remote hands" } }), 201);
    const agent = await registerAgent(admin, project.id, "reacher");
    const reach = () =>
      hubAs({ apiKey: agent.apiKey }).POST("/api/v1/server/remote/exec", {
        params: { query: { project_id: project.id } },
        body: { session_name: "nobody-here", command: "uptime" },
      });
    expect((await reach()).response.status).toBe(403);

    const page = await newPage();
    await signIn(page, hub().admin.email, hub().admin.password);
    await page.goto(`${hub().url}/projects/${project.id}/settings`);
    const remote = page.getByLabel("Agents may run commands in each other's sessions");
    await remote.waitFor();
    await page.getByText("any agent in the project may run shell commands in another session of the project").waitFor();
    expect(await remote.isChecked()).toBe(false);
    await remote.click();
    await expect.poll(() => remote.isChecked()).toBe(true);
    // The box shows the click at once; the hub has it once the page's save has answered.
    const settings = async () => (await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}", { params: { path: { id: project.id } } }))).settings;
    await expect.poll(settings).toEqual({ ...OTHER_SETTINGS_AT_DEFAULT, approve_agent_tasks: false, remote_exec: true });
    // Allowed now: the session it names is what is missing.
    expect((await reach()).response.status).toBe(404);
  });
});

describe("dark mode", () => {
  it("follows the system's colour scheme", async () => {
    const page = await newPage("dark");
    await signIn(page, hub().admin.email, hub().admin.password);
    await page.getByRole("main").getByRole("link", { name: "Apollo", exact: true }).click();
    await page.locator("[data-feed=live]").waitFor();
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const [r, g, b] = background.match(/\d+/g)!.map(Number);
    expect(0.2126 * r! + 0.7152 * g! + 0.0722 * b!, background).toBeLessThan(60);
    await screenshot(page, "board-dark");
  });
});
