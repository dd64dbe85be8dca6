/**
 * Agent sessions in real Chromium: a person signed in starts one on a server
 * from the Sessions tab, sees it go live, opens its terminal and types into
 * it; a fake of the official daemon gets exactly what was typed and echoes it.
 * A viewer watches the same kind of terminal read-only; sessions are closed
 * and killed from the list; a refusal shows next to the form that asked.
 */
import type { Browser, BrowserContext, Page, WebSocketRoute } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "../client";
import { addMember, adminAndViewer, hub, hubAs, launchChromium, ok, screenshot } from "./driver";
import { FakeDaemon } from "./fake-daemon";

let browser: Browser;
/** Signed in once each, through the form: sign-ins are limited to 10 a minute, which the other suites use up. */
let asAdmin: BrowserContext;
let asViewer: BrowserContext;
let admin: string;
let viewerId: string;
const daemons: FakeDaemon[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  ({ asAdmin, admin, viewerId, asViewer } = await adminAndViewer(browser, "session"));
});
afterEach(async () => {
  for (const page of [...asAdmin.pages(), ...asViewer.pages()]) await page.close();
});
afterAll(async () => {
  daemons.forEach((d) => d.close());
  await browser?.close();
});

/** A session's status, as the admin reads it over the API. */
const sessionStatus = async (projectId: string, sid: string) =>
  (await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}/sessions/{sid}", { params: { path: { id: projectId, sid } } }))).status;

/** A project served by a connected fake daemon. */
async function projectWithDaemon(name: string, server: string) {
  const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name } }), 201);
  const daemon = await FakeDaemon.register(admin, project.id, server);
  daemons.push(daemon);
  await daemon.connect();
  return { project, daemon };
}

/** Starts a session over the API and waits until the daemon has started it. */
async function runningSession(projectId: string, daemon: FakeDaemon, name: string): Promise<Schemas["Session"]> {
  const session = await ok(
    hubAs({ token: admin }).POST("/api/v1/projects/{id}/sessions", { params: { path: { id: projectId } }, body: { server_id: daemon.id, name } }),
    201,
  );
  await expect.poll(() => sessionStatus(projectId, session.id)).toBe("running");
  return session;
}

/** The text on the terminal's screen, a line each row. */
const screenText = (page: Page) => page.locator(".xterm-rows").evaluate((rows) => [...rows.children].map((r) => (r.textContent ?? "").trimEnd()).join("\n"));

async function openSessions(page: Page, projectId: string) {
  await page.goto(`${hub().url}/projects/${projectId}/sessions`);
  await page.locator("[data-feed=live]").waitFor();
}

describe("agent sessions", () => {
  it("starts a session from the Sessions tab, follows it live, and types into its terminal", async () => {
    const { daemon } = await projectWithDaemon("Terminals", "fake-box");
    const page = await asAdmin.newPage();
    await page.goto(hub().url + "/");
    await page.getByRole("main").getByRole("link", { name: "Terminals", exact: true }).click();
    await page.getByRole("navigation", { name: "Project" }).getByRole("link", { name: "Sessions" }).click();
    await page.locator("[data-feed=live]").waitFor();

    const server = page.getByLabel("Server");
    await page.locator(`option[value="${daemon.id}"]`).waitFor({ state: "attached" });
    await server.selectOption(daemon.id);
    await page.getByLabel("Name", { exact: true }).fill("builder-1");
    await page.getByLabel("Working directory").fill("/srv/app");
    await page.locator("select[name=agent-type]").selectOption({ label: "Codex CLI" });
    await page.getByRole("button", { name: "Start session" }).click();

    // Live: the row appears and turns running once the daemon reports the session started, with no reload.
    const row = page.locator("tr", { hasText: "builder-1" });
    await row.locator('[data-status="running"]').waitFor();
    expect(daemon.starts).toHaveLength(1);
    expect(daemon.starts[0]).toMatchObject({ agent_type: "codex_cli", working_directory: "/srv/app", role: "worker" });
    // The daemon's report on the agent's MCP configuration shows beside the session, live.
    await row.locator('[data-mcp-status="merged"]').waitFor();
    expect(await row.textContent()).toMatch(/running.*MCP: configured.*fake-box.*Codex CLI.*worker.*\/srv\/app/);
    await screenshot(page, "sessions");

    await row.getByRole("link", { name: "builder-1" }).click();
    await page.locator("[data-terminal=live]").waitFor();
    await expect.poll(() => screenText(page)).toContain("fake-agent ready");
    await page.locator(".terminal-screen[data-writer=true]").waitFor();
    expect(await page.locator("[data-read-only]").count()).toBe(0);

    await page.locator(".terminal-screen").click();
    await page.keyboard.type("echo hi");
    await page.keyboard.press("Enter");
    const sessionId = /\/sessions\/([0-9a-f-]{36})/.exec(page.url())![1]!;
    // The writer's terminal joining had the daemon leave tmux's copy mode, so what is typed reaches the agent.
    expect(daemon.copyModeExits).toEqual([sessionId]);
    await expect.poll(() => daemon.received(sessionId).toString("utf8")).toBe("echo hi\r");
    await expect.poll(() => screenText(page)).toMatch(/^\$ echo hi$/m);
    await screenshot(page, "terminal");
    expect(daemon.received(sessionId).toString("utf8")).toBe("echo hi\r");
    // Followed live: the page never reloaded.
    expect(await page.evaluate(() => performance.getEntriesByType("navigation").length)).toBe(1);
  });

  it("shows a viewer the terminal read-only: nothing they type reaches the session", async () => {
    const { project, daemon } = await projectWithDaemon("Watched terminals", "fake-watched");
    const session = await runningSession(project.id, daemon, "watched-1");
    await addMember(admin, project.id, viewerId);

    const page = await asViewer.newPage();
    await openSessions(page, project.id);
    await page.locator("tr", { hasText: "watched-1" }).locator('[data-status="running"]').waitFor();
    expect(await page.getByRole("button", { name: /Start session|Close|Kill/ }).count()).toBe(0);

    await page.getByRole("link", { name: "watched-1" }).click();
    await page.locator("[data-terminal=live]").waitFor();
    await expect.poll(() => screenText(page)).toContain("fake-agent ready");
    await page.locator("[data-read-only]").waitFor();
    expect(await page.locator(".terminal-screen").getAttribute("data-writer")).toBe("false");
    expect(await page.getByRole("button", { name: /Close|Kill/ }).count()).toBe(0);

    await page.locator(".terminal-screen").click();
    await page.keyboard.type("rm -rf /");
    await page.keyboard.press("Enter");
    // Capturing the daemon's scrollback is for writers too.
    expect(await page.getByRole("button", { name: "Capture scrollback" }).count()).toBe(0);
    await page.waitForTimeout(500);
    expect(daemon.received(session.id).length).toBe(0);
    expect(await screenText(page)).not.toContain("rm -rf");
    // A viewer's terminal leaves the session as it is: it is not taken out of copy mode for them.
    expect(daemon.copyModeExits).toEqual([]);
  });

  it("says what the orchestrator role writes into the working directory before the session is started with it", async () => {
    const { project, daemon } = await projectWithDaemon("Orchestrated", "fake-orchestrated");
    const page = await asAdmin.newPage();
    await openSessions(page, project.id);
    await page.locator(`option[value="${daemon.id}"]`).waitFor({ state: "attached" });
    await page.getByLabel("Server").selectOption(daemon.id);
    const note = page.locator("#orchestrator-note");
    const role = page.locator('select[name="role"]');
    const agent = page.locator('select[name="agent-type"]');
    // The choice itself names the file the agent reads; nothing more is said while the role is worker.
    expect(await role.locator('option[value="orchestrator"]').textContent()).toBe("orchestrator (writes to CLAUDE.md)");
    expect(await note.count()).toBe(0);

    await agent.selectOption({ label: "Gemini CLI" });
    expect(await role.locator('option[value="orchestrator"]').textContent()).toBe("orchestrator (writes to GEMINI.md)");
    await role.selectOption("orchestrator");
    await note.waitFor();
    expect(await note.isVisible()).toBe(true);
    expect(await note.textContent()).toBe(
      "As orchestrator, the daemon appends a block of instructions to GEMINI.md in the working directory (or replaces the block it wrote there " +
        "before). That file is often tracked by git: the change shows up in the repository.",
    );
    expect(await role.getAttribute("aria-describedby")).toBe("orchestrator-note");
    await screenshot(page, "start-orchestrator");
    // Each agent's own file; left to the daemon's detection, CLAUDE.md (where the daemon writes without an agent type).
    await agent.selectOption({ label: "Codex CLI" });
    expect(await note.textContent()).toContain("to AGENTS.md in the working directory");
    await agent.selectOption({ label: "Let the daemon detect it" });
    expect(await note.textContent()).toContain("to CLAUDE.md in the working directory");
    await agent.selectOption({ label: "Aider" });
    expect(await note.textContent()).toBe("As orchestrator, the agent gets the governance tools; the daemon writes no instructions file for Aider.");

    await agent.selectOption({ label: "Gemini CLI" });
    await page.getByRole("button", { name: "Start session" }).click();
    await page.locator('[data-status="running"]').waitFor();
    expect(daemon.starts).toHaveLength(1);
    expect(daemon.starts[0]).toMatchObject({ agent_type: "gemini_cli", role: "orchestrator" });
    await role.selectOption("worker");
    expect(await note.count()).toBe(0);
  });

  it("redraws from the scrollback after a dropped connection, and keeps up with more output than the hub lets a page leave unacknowledged", async () => {
    const { project, daemon } = await projectWithDaemon("Busy terminals", "fake-busy");
    const session = await runningSession(project.id, daemon, "busy-1");
    const page = await asAdmin.newPage();
    const sockets: WebSocketRoute[] = [];
    await page.routeWebSocket(/\/terminal$/, (ws) => {
      ws.connectToServer();
      sockets.push(ws);
    });
    await page.goto(`${hub().url}/projects/${project.id}/sessions/${session.id}`);
    await page.locator("[data-terminal=live]").waitFor();
    await expect.poll(() => screenText(page)).toContain("fake-agent ready");

    // The connection drops: the page reconnects and the scrollback replaces the screen rather than adding to it.
    await sockets[0]!.close({ code: 1006, reason: "network down" });
    await expect.poll(() => sockets.length).toBe(2);
    await page.locator("[data-terminal=live]").waitFor();
    await expect.poll(() => screenText(page)).toContain("fake-agent ready");
    expect((await screenText(page)).match(/fake-agent ready/g)).toHaveLength(1);

    // 3 MiB, three times what the hub sends a page before it must acknowledge: it all shows only if the page does.
    const line = `${"x".repeat(1022)}\r\n`;
    for (let frame = 0; frame < 48; frame++) daemon.output(session.id, line.repeat(64));
    daemon.output(session.id, "burst done\r\n$ ");
    await expect.poll(() => screenText(page), { timeout: 30_000 }).toContain("burst done");
    expect(await page.locator("[data-terminal]").getAttribute("data-terminal")).toBe("live");
  });

  it("closes one session and kills another from the list, after a confirmation", async () => {
    const { project, daemon } = await projectWithDaemon("Endings", "fake-endings");
    const closing = await runningSession(project.id, daemon, "to-close");
    const killing = await runningSession(project.id, daemon, "to-kill");

    const page = await asAdmin.newPage();
    await openSessions(page, project.id);
    const row = (name: string) => page.locator("tr", { hasText: name });
    await row("to-kill").locator('[data-status="running"]').waitFor();

    await row("to-close").getByRole("button", { name: "Close to-close" }).click();
    await row("to-close").locator('[data-status="closed"]').waitFor();

    const dialogs: string[] = [];
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void (dialogs.length === 1 ? d.dismiss() : d.accept());
    });
    await row("to-kill").getByRole("button", { name: "Kill to-kill" }).click();
    expect(dialogs).toHaveLength(1);
    expect(await row("to-kill").locator("[data-status]").getAttribute("data-status")).toBe("running");
    await row("to-kill").getByRole("button", { name: "Kill to-kill" }).click();
    await row("to-kill").locator('[data-status="closed"]').waitFor();
    expect(dialogs[1]).toContain("to-kill");
    expect(await page.getByRole("button", { name: /Close|Kill/ }).count()).toBe(0);
    expect(await sessionStatus(project.id, closing.id)).toBe("closed");
    expect(await sessionStatus(project.id, killing.id)).toBe("closed");
  });

  it("shows the hub's refusal next to the form when the server's daemon is not connected", async () => {
    const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "No daemon" } }), 201);
    const daemon = await FakeDaemon.register(admin, project.id, "fake-asleep");

    const page = await asAdmin.newPage();
    await openSessions(page, project.id);
    await page.locator(`option[value="${daemon.id}"]`).waitFor({ state: "attached" });
    await page.getByLabel("Server").selectOption(daemon.id);
    await page.getByRole("button", { name: "Start session" }).click();
    const refusal = page.locator("form", { has: page.getByLabel("Server") }).getByRole("alert");
    await refusal.waitFor();
    const refused = await fetch(`${hub().url}/api/v1/projects/${project.id}/sessions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${admin}` },
      body: JSON.stringify({ server_id: daemon.id }),
    });
    expect(refused.status).toBe(409);
    const problem = (await refused.json()) as { code: string; detail: string };
    expect(problem.code).toBe("DAEMON_OFFLINE");
    expect(await refusal.textContent()).toBe(problem.detail);
  });
});
