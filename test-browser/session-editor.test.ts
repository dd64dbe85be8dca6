/**
 * A session's working tree and editor in real Chromium: a person opens a file from the tree beside the terminal,
 * edits and saves it (the daemon's copy changes), meets a conflict when the file changed on the machine meanwhile,
 * and resolves it by overwriting, or by reloading the machine's version. A viewer reads the same file read-only.
 * A fake daemon answers the file requests as hub.py and fs_handler.py do.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { FakeMachine } from "../test/fake-fs-handler";
import { absoluteTime } from "../web/src/time-format";
import { addMember, adminAndViewer, hub, hubAs, launchChromium, ok, screenshot } from "./driver";
import { FakeDaemon } from "./fake-daemon";

let browser: Browser;
let asAdmin: BrowserContext;
let asViewer: BrowserContext;
let admin: string;
let viewerId: string;
let projectId: string;
let sessionId: string;
let daemon: FakeDaemon;
const APP = "def main():\n    return 1\n";
const machine = new FakeMachine()
  .file("/srv/app/README.md", "# Billing service\n", 1_780_000_000)
  .file("/srv/app/src/app.py", APP, 1_780_000_100)
  .file("/srv/app/src/util.py", "X = 1\n", 1_780_000_200)
  .dir("/srv/app/tests")
  .symlink("/srv/app/lib", "src");

beforeAll(async () => {
  browser = await launchChromium();
  ({ asAdmin, admin, viewerId, asViewer } = await adminAndViewer(browser, "editor"));
  projectId = (await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Working trees" } }), 201)).id;
  await addMember(admin, projectId, viewerId);
  daemon = await FakeDaemon.register(admin, projectId, "tree-box");
  daemon.machine = machine;
  await daemon.connect();
  sessionId = (
    await ok(
      hubAs({ token: admin }).POST("/api/v1/projects/{id}/sessions", {
        params: { path: { id: projectId } },
        body: { server_id: daemon.id, name: "billing", working_directory: "/srv/app" },
      }),
      201,
    )
  ).id;
  const status = async () =>
    (await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}/sessions/{sid}", { params: { path: { id: projectId, sid: sessionId } } }))).status;
  for (let tries = 0; (await status()) !== "running"; tries++) {
    if (tries > 100) throw new Error("the session did not start");
    await new Promise((r) => setTimeout(r, 100));
  }
});
afterEach(async () => {
  for (const page of [...asAdmin.pages(), ...asViewer.pages()]) await page.close();
});
afterAll(async () => {
  daemon?.close();
  await browser?.close();
});

async function openFile(context: BrowserContext, path: string[]): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${hub().url}/projects/${projectId}/sessions/${sessionId}`);
  const tree = page.getByRole("tree", { name: "Working tree" });
  await tree.waitFor();
  for (const name of path) await tree.getByRole("button", { name, exact: true }).click();
  await page.locator(".cm-content").waitFor();
  return page;
}

/** The editor's text, a line each `.cm-line`. */
const editorText = (page: Page) => page.locator(".cm-content .cm-line").evaluateAll((lines) => lines.map((l) => l.textContent ?? "").join("\n"));

/** Types at the end of the file, as a person does. */
async function typeAtEnd(page: Page, text: string) {
  await page.locator(".cm-content").click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type(text);
}

describe("a session's working tree and editor", () => {
  it("lists the working directory beside the terminal, opens a file in an editor with its language, and saves it", async () => {
    const page = await openFile(asAdmin, ["src", "app.py"]);
    const tree = page.getByRole("tree", { name: "Working tree" });
    // Folders first, then files, as the daemon lists them; the terminal is in the same view.
    expect(await tree.locator(":scope > li > button").evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.path))).toEqual([
      "src",
      "tests",
      "lib",
      "README.md",
    ]);
    expect(await tree.locator("[aria-expanded=true] button").evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.path))).toEqual([
      "src",
      "src/app.py",
      "src/util.py",
    ]);
    await expect.poll(() => page.locator(".code-editor").getAttribute("data-language")).toBe("Python");
    // CodeMirror's own styles apply under the page's Content-Security-Policy (its gutter is laid out beside the text).
    expect(await page.locator(".cm-gutters").evaluate((e) => getComputedStyle(e).display)).toBe("flex");
    // Python's highlighting is loaded: the keyword is a token of its own.
    await expect.poll(() => page.locator(".cm-line").first().locator("span").count()).toBeGreaterThan(0);
    expect(await editorText(page)).toBe(APP);
    await page.locator(".xterm").waitFor();

    await typeAtEnd(page, "# checked\n");
    await page.getByText("edited", { exact: true }).waitFor();
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
    expect(machine.text("/srv/app/src/app.py")).toBe(`${APP}# checked\n`);
    await screenshot(page, "session-editor");
  });

  it("meets a conflict when the file changed on the machine, shows both times, and overwrites with the person's version", async () => {
    const page = await openFile(asAdmin, ["src", "util.py"]);
    // The agent saves the file meanwhile.
    machine.file("/srv/app/src/util.py", "X = 2  # the agent's\n", 1_780_000_900);
    await typeAtEnd(page, "Y = 3\n");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    const conflict = page.getByRole("alert").filter({ hasText: "changed on the machine" });
    await conflict.waitFor();
    // Chromium runs in this process's time zone.
    expect(await conflict.getByTestId("mine-time").innerText()).toBe(absoluteTime(1_780_000_200_000));
    expect(await conflict.getByTestId("theirs-time").innerText()).toBe(absoluteTime(1_780_000_900_000));
    expect(machine.text("/srv/app/src/util.py")).toBe("X = 2  # the agent's\n");
    await screenshot(page, "session-editor-conflict");

    await conflict.getByRole("button", { name: "Overwrite it with yours" }).click();
    await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
    expect(machine.text("/srv/app/src/util.py")).toBe("X = 1\nY = 3\n");
    await expect.poll(() => conflict.count()).toBe(0);
  });

  it("resolves a conflict by reloading the machine's version, dropping the person's edits", async () => {
    const page = await openFile(asAdmin, ["README.md"]);
    await expect.poll(() => page.locator(".code-editor").getAttribute("data-language")).toBe("Markdown");
    machine.file("/srv/app/README.md", "# Billing service\n\nOwned by the agent.\n", 1_780_001_000);
    await typeAtEnd(page, "mine");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    const conflict = page.getByRole("alert").filter({ hasText: "changed on the machine" });
    await conflict.getByRole("button", { name: "Reload the machine's (drop your edits)" }).click();
    await expect.poll(() => editorText(page)).toBe("# Billing service\n\nOwned by the agent.\n");
    await expect.poll(() => conflict.count()).toBe(0);
    expect(machine.text("/srv/app/README.md")).toBe("# Billing service\n\nOwned by the agent.\n");
  });

  it("follows a symlink to a folder inside the working directory", async () => {
    const page = await openFile(asAdmin, ["src", "app.py"]);
    const tree = page.getByRole("tree", { name: "Working tree" });
    await tree.getByRole("button", { name: "lib", exact: true }).click();
    await tree.locator('[data-path="lib/util.py"]').waitFor();
    expect(await tree.locator('[data-path^="lib/"]').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.path))).toEqual([
      "lib/app.py",
      "lib/util.py",
    ]);
  });

  it("shows a viewer the file read-only, without a Save button", async () => {
    const page = await openFile(asViewer, ["src", "app.py"]);
    expect(await editorText(page)).toContain("def main():");
    expect(await page.locator(".cm-content").getAttribute("contenteditable")).toBe("false");
    await page.getByText("read-only (viewers do not edit)").waitFor();
    expect(await page.getByRole("button", { name: "Save", exact: true }).count()).toBe(0);
    await screenshot(page, "session-editor-viewer");
  });
});
