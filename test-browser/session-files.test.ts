/**
 * Files on a session's page in real Chromium: a person drops a file (or picks one) to send it to the session's
 * machine, watches it go, and sees the path the daemon wrote it at; asks for a file by path and gets a link to it,
 * or the daemon's reason it could not send it; the session's recent transfers are listed. A fake of hub.py's file
 * loops answers the pending lists, fetches with its key and acks. A viewer sees the transfers but no controls.
 */
import { createHash } from "node:crypto";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { addMember, adminAndViewer, hub, hubAs, launchChromium, ok, registerAgent, screenshot } from "./driver";
import { serveFiles } from "./fake-daemon";

let browser: Browser;
let asAdmin: BrowserContext;
let asViewer: BrowserContext;
let admin: string;
let viewerId: string;
let projectId: string;
let sessionId: string;
let daemon: ReturnType<typeof serveFiles>;

const BUILD_LOG = "build 1432: 218 tests passed\n";

beforeAll(async () => {
  browser = await launchChromium();
  ({ asAdmin, admin, viewerId, asViewer } = await adminAndViewer(browser, "files"));
  projectId = (await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Files to machines" } }), 201)).id;
  await addMember(admin, projectId, viewerId);
  const agent = await registerAgent(admin, projectId, "files-box");
  const { sessions } = await ok(hubAs({ token: admin }).GET("/api/v1/projects/{id}/sessions", { params: { path: { id: projectId }, query: {} } }));
  sessionId = sessions[0]!.id;
  daemon = serveFiles(agent.apiKey, { "/srv/app/build.log": BUILD_LOG });
});
afterEach(async () => {
  for (const page of [...asAdmin.pages(), ...asViewer.pages()]) await page.close();
});
afterAll(async () => {
  await daemon?.stop();
  await browser?.close();
});

async function openSession(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${hub().url}/projects/${projectId}/sessions/${sessionId}`);
  await page.getByRole("heading", { name: "Files", exact: true }).waitFor();
  return page;
}

/** Drops a file on the drop zone as a person dragging it from their desktop does. */
async function drop(page: Page, name: string, content: string) {
  const transfer = await page.evaluateHandle(
    ([n, c]) => {
      const dt = new DataTransfer();
      dt.items.add(new File([c!], n!, { type: "text/plain" }));
      return dt;
    },
    [name, content],
  );
  await page.getByTestId("drop-zone").dispatchEvent("dragover", { dataTransfer: transfer });
  await page.getByTestId("drop-zone").dispatchEvent("drop", { dataTransfer: transfer });
}

const row = (page: Page, text: string) => page.locator(".transfers tr", { hasText: text });

describe("a session's files", () => {
  it("sends a dropped file and a picked one to the machine, with their progress, then shows where each landed", async () => {
    const page = await openSession(asAdmin);
    await drop(page, "notes.txt", "remember the migration\n");
    // The daemon picks a file up at its next poll: within seconds, not one (src/files/file-polls.ts gives the bound).
    await expect.poll(() => row(page, "notes.txt").locator("code.landed").textContent(), { timeout: 10_000 }).toBe("/tmp/orchestratia-uploads/notes.txt");
    expect(daemon.written.get("/tmp/orchestratia-uploads/notes.txt")?.toString()).toBe("remember the migration\n");

    // A large file shows its progress while it goes.
    const big = Buffer.alloc(40 * 1024 * 1024, 7);
    // Handing Chromium 40 MiB over its debugging pipe alone can take most of Playwright's default 30 s on a busy machine.
    await page.getByLabel("Choose a file to send").setInputFiles({ name: "dataset.bin", mimeType: "application/octet-stream", buffer: big }, { timeout: 90_000 });
    await page.locator(".sending progress").waitFor();
    await expect.poll(() => row(page, "dataset.bin").getAttribute("data-status"), { timeout: 30_000 }).toBe("delivered");
    await expect.poll(() => row(page, "dataset.bin").locator("code.landed").textContent()).toBe("/tmp/orchestratia-uploads/dataset.bin");
    expect(createHash("sha256").update(daemon.written.get("/tmp/orchestratia-uploads/dataset.bin")!).digest("hex")).toBe(
      createHash("sha256").update(big).digest("hex"),
    );
    expect(await page.locator(".sending").count()).toBe(0);
  }, 150_000);

  it("refuses a file name the machine could not take, saying why", async () => {
    const page = await openSession(asAdmin);
    await drop(page, "..", "x");
    await expect.poll(() => page.locator(".drop-zone .problem").textContent()).toContain("filename");
  });

  it("fetches a file by path and offers a link to it, or shows why the machine could not send it", async () => {
    const page = await openSession(asAdmin);
    await page.getByLabel("Fetch a file from the machine").fill("/srv/app/build.log");
    await page.getByRole("button", { name: "Fetch" }).click();
    const link = row(page, "/srv/app/build.log").getByRole("link", { name: /Download build\.log/ });
    await link.waitFor();
    const href = await link.getAttribute("href");
    expect(await (await page.request.get(href!)).text()).toBe(BUILD_LOG);

    await page.getByLabel("Fetch a file from the machine").fill("/srv/app/missing.txt");
    await page.getByRole("button", { name: "Fetch" }).click();
    await expect.poll(() => row(page, "/srv/app/missing.txt").locator(".problem").textContent()).toBe("file not found: /srv/app/missing.txt");
    await screenshot(page, "session-files");
  });

  it("shows a viewer the transfers without the controls or links", async () => {
    const page = await openSession(asViewer);
    await row(page, "notes.txt").waitFor();
    expect(await page.getByTestId("drop-zone").count()).toBe(0);
    expect(await page.getByRole("button", { name: "Fetch" }).count()).toBe(0);
    expect(await row(page, "/srv/app/build.log").getByRole("link").count()).toBe(0);
    await expect.poll(() => row(page, "/srv/app/build.log").getAttribute("data-status")).toBe("ready");
  });
});
