/**
 * What a session's terminal in real Chromium sends the agent: only what the person types or pastes. The queries a
 * session prints (tmux asks for the terminal's attributes on attaching; they stay in the scrollback that every visit
 * replays) are answered by nobody; a long paste and fast typing reach the fake daemon whole and in order, under the
 * hub's frame limit; and input the hub refuses is named in a banner that goes once typing flows again.
 */
import type { Browser, BrowserContext, Page, WebSocketRoute } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { hub, hubAs, launchChromium, ok, screenshot, signedIn } from "./driver";
import { FakeDaemon } from "./fake-daemon";

let browser: Browser;
let asAdmin: BrowserContext;
let admin: string;
const daemons: FakeDaemon[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  const signed = await signedIn(browser, hub().admin.email, hub().admin.password);
  asAdmin = signed.context;
  admin = await signed.page.evaluate(async () => {
    const res = await fetch("/api/v1/auth/refresh", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" });
    return ((await res.json()) as { access_token: string }).access_token;
  });
  await signed.page.close();
});
afterEach(async () => {
  for (const page of asAdmin.pages()) await page.close();
});
afterAll(async () => {
  daemons.forEach((d) => d.close());
  await browser?.close();
});

/** What tmux and agents' TUIs ask a terminal: device attributes, version, cursor position, a mode, a setting, a colour; and focus reports on. */
const QUERIES = "\x1b[c\x1b[>c\x1b[>q\x1b[6n\x1b[?2004$p\x1bP$qm\x1b\\\x1b]11;?\x07\x1b[?1004h";

/** A running session on a fake daemon that printed the queries before its prompt. */
async function sessionWithQueries(name: string) {
  const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name } }), 201);
  const daemon = await FakeDaemon.register(admin, project.id, `${name.toLowerCase().replaceAll(" ", "-")}-box`);
  daemons.push(daemon);
  await daemon.connect();
  const session = await ok(
    hubAs({ token: admin }).POST("/api/v1/projects/{id}/sessions", { params: { path: { id: project.id } }, body: { server_id: daemon.id, name: "typist" } }),
    201,
  );
  await expect.poll(async () => daemon.starts.length).toBe(1);
  daemon.output(session.id, `${QUERIES}typist ready\r\n$ `);
  return { projectId: project.id, sessionId: session.id, daemon };
}

const screenText = (page: Page) => page.locator(".xterm-rows").evaluate((rows) => [...rows.children].map((r) => (r.textContent ?? "").trimEnd()).join("\n"));
const banner = (page: Page) => page.locator(".terminal-panel [role=alert]");

async function openTerminal(page: Page, projectId: string, sessionId: string) {
  await page.goto(`${hub().url}/projects/${projectId}/sessions/${sessionId}`);
  await page.locator("[data-terminal=live]").waitFor();
  await page.locator(".terminal-screen[data-writer=true]").waitFor();
  await expect.poll(() => screenText(page), { timeout: 10_000 }).toContain("typist ready");
}

/** Pastes as the browser does: a paste event with the text on the clipboard, at xterm.js's input. */
const paste = (page: Page, text: string) =>
  page.locator(".xterm-helper-textarea").evaluate((area, text) => {
    const clipboard = new DataTransfer();
    clipboard.setData("text/plain", text);
    area.dispatchEvent(new ClipboardEvent("paste", { clipboardData: clipboard, bubbles: true, cancelable: true }));
  }, text);

/** Types `text` at `perSecond` characters a second from within the page, each character an `input` event at xterm.js's textarea as a keyboard makes it; returns how long it took, in seconds. */
const typeFast = (page: Page, text: string, perSecond: number) =>
  page.locator(".xterm-helper-textarea").evaluate(
    async (area, [text, perSecond]) => {
      const chars = [...text];
      const start = performance.now();
      for (let i = 0; i < chars.length;) {
        await new Promise((r) => setTimeout(r, 1));
        // Every character whose time has come (timers fire no more often than every few ms).
        for (const now = performance.now(); i < chars.length && start + (i * 1000) / perSecond <= now; i++) {
          area.dispatchEvent(new InputEvent("input", { data: chars[i], inputType: "insertText", bubbles: true }));
        }
      }
      return (performance.now() - start) / 1000;
    },
    [text, perSecond] as const,
  );

/** `length` characters of letters, digits, punctuation, quotes, spaces and a little beyond ASCII. */
const mixed = (length: number, seed: number) => {
  const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:!?'\"-_()[]{}<>/\\|@#$%^&*+=~`éàü→✓ ";
  return Array.from({ length }, (_, i) => alphabet[(i * 7919 + seed * 104729) % alphabet.length]!).join("");
};

describe("the terminal's input", () => {
  it("sends none of the terminal's answers to the queries a session printed, on any visit", async () => {
    const { projectId, sessionId, daemon } = await sessionWithQueries("Asked terminals");
    const page = await asAdmin.newPage();
    for (let visit = 0; visit < 3; visit++) {
      await openTerminal(page, projectId, sessionId);
      // Focus in and out with focus reports on; and queries printed live, while the page is open.
      await page.locator(".terminal-screen").click();
      daemon.output(sessionId, `\x1b[>c\x1b[6nvisit ${visit}\r\n`);
      await expect.poll(() => screenText(page), { timeout: 10_000 }).toContain(`visit ${visit}`);
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    }
    await page.waitForTimeout(500);
    expect(daemon.received(sessionId).toString("utf8")).toBe("");
    // The page still types: only the answers were held back.
    await page.locator(".terminal-screen").click();
    await page.keyboard.type("ok");
    await expect.poll(() => daemon.received(sessionId).toString("utf8"), { timeout: 10_000 }).toBe("ok");
  });

  it("delivers a 2,000-character paste in one frame, 300 characters typed at 300 a second and 100 keys, whole and in order, with no banner", async () => {
    const { projectId, sessionId, daemon } = await sessionWithQueries("Fast typists");
    const page = await asAdmin.newPage();
    await openTerminal(page, projectId, sessionId);
    await page.locator(".terminal-screen").click();

    const pasted = mixed(2000, 1);
    await paste(page, pasted);
    await expect.poll(() => daemon.received(sessionId).length, { timeout: 10_000 }).toBe(Buffer.byteLength(pasted));
    expect(daemon.inputFrames(sessionId).map((f) => f.toString("utf8"))).toEqual([pasted]);

    // 300 characters at 300 a second, from within the page (driving keys from here goes no faster than about 30 a second on a
    // busy machine); then keys pressed as a keyboard does, as fast as they can be driven.
    const fast = mixed(300, 2);
    const seconds = await typeFast(page, fast, 300);
    expect(seconds).toBeLessThan(1.5);
    await expect.poll(() => daemon.received(sessionId).toString("utf8"), { timeout: 10_000 }).toBe(pasted + fast);
    const fastFrames = daemon.inputFrames(sessionId).length - 1;
    // Gathered: a frame at most every 10 ms, so far fewer frames than keystrokes.
    expect(fastFrames).toBeLessThanOrEqual(Math.ceil(seconds * 100) + 1);
    const keyed = mixed(100, 3);
    await page.keyboard.type(keyed, { delay: 3 });
    await page.keyboard.press("Enter");
    await expect.poll(() => daemon.received(sessionId).toString("utf8"), { timeout: 10_000 }).toBe(`${pasted}${fast}${keyed}\r`);
    expect(await banner(page).count()).toBe(0);
    await expect.poll(() => screenText(page), { timeout: 10_000 }).toContain(keyed.slice(-20).trimEnd());
  });

  it("names the input the hub refused in a banner, which goes once typing flows again", async () => {
    const { projectId, sessionId, daemon } = await sessionWithQueries("Refused terminals");
    const page = await asAdmin.newPage();
    const sockets: WebSocketRoute[] = [];
    await page.routeWebSocket(/\/terminal$/, (ws) => {
      ws.connectToServer();
      sockets.push(ws);
    });
    await openTerminal(page, projectId, sessionId);
    // The hub's refusal of an input frame, as it sends one: the reason and the input it did not pass on.
    const refused = "Two endpoints, REST\rcontracts";
    sockets[0]!.send(
      JSON.stringify({
        type: "error",
        code: "RATE_LIMITED",
        message: "at most 100 input, resize and capture frames a second",
        data: Buffer.from(refused).toString("base64"),
      }),
    );
    await banner(page).waitFor();
    expect(await banner(page).textContent()).toBe(
      "Not sent to the session: 29 characters (“Two endpoints, REST⏎contracts”) — the hub refused it: at most 100 input, resize and capture frames a second.",
    );
    await screenshot(page, "terminal-not-sent");
    await page.setViewportSize({ width: 390, height: 844 });
    await banner(page).scrollIntoViewIfNeeded();
    await page.waitForTimeout(300);
    await screenshot(page, "terminal-not-sent-narrow");
    const box = (await banner(page).boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1440, height: 900 });

    // It stays while nothing is typed, and goes once input flows again without a refusal.
    await page.waitForTimeout(1500);
    expect(await banner(page).count()).toBe(1);
    await page.locator(".terminal-screen").click();
    await page.keyboard.type("again");
    await expect.poll(() => daemon.received(sessionId).toString("utf8"), { timeout: 10_000 }).toBe("again");
    await banner(page).waitFor({ state: "detached", timeout: 5000 });
  });
});
