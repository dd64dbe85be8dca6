/**
 * An HTML DataRef played as an attack, in real Chromium: an agent uploads a page whose script spends the
 * dashboard's refresh cookie (POST /api/v1/auth/refresh) and sends the token it gets to the hub in a request the
 * test watches for; a person opens it from the task page's DataRef link. It is a download, and even rendered
 * anyway (a browser or proxy that drops Content-Disposition) it runs no script: no token is ever obtained.
 */
import type { Browser, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminToken, hub, hubAs, launchChromium, ok, registerAgent, signedIn } from "./driver";

let browser: Browser;
let admin: string;
beforeAll(async () => void ([browser, admin] = await Promise.all([launchChromium(), adminToken()])));
afterAll(() => browser?.close());

/** What the page does when it runs: refresh with the person's cookie, then hand the token over (marked, so the test sees it). */
const ATTACK = `<!doctype html><title>report</title><p>Quarterly report</p><script>
document.title = "ran";
fetch("/api/v1/auth/refresh?by=dataref", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" })
  .then((r) => r.json())
  .then((pair) => fetch("/api/v1/health?stolen=" + encodeURIComponent(pair.access_token || "none")));
</script>`;

/** An agent's task, done, whose result's contract is a DataRef of the page, declared text/html. */
async function taskWithHtmlDataref() {
  const project = await ok(hubAs({ token: admin }).POST("/api/v1/projects", { body: { name: "Downloads" } }), 201);
  const agent = await registerAgent(admin, project.id, "reporter");
  const asAgent = hubAs({ apiKey: agent.apiKey });
  const bytes = new TextEncoder().encode(ATTACK);
  const { dataref, upload } = await ok(
    asAgent.POST("/api/v1/server/datarefs", { body: { project_id: project.id, content_type: "text/html", size: bytes.byteLength, filename: "report.html" } }),
    201,
  );
  expect((await fetch(upload.url, { method: "PUT", body: bytes })).status).toBe(200);
  const task = await ok(asAgent.POST("/api/v1/server/tasks", { body: { project_id: project.id, title: "Write the report" } }), 201);
  const path = { id: task.id };
  await ok(asAgent.POST("/api/v1/server/tasks/{id}/assign", { params: { path }, body: { server_name: agent.name } }));
  await ok(asAgent.POST("/api/v1/server/tasks/{id}/start", { params: { path } }));
  const pointer = { $dataref: dataref.id, size: bytes.byteLength, content_type: "text/html" };
  const result = { $schema: "orchestratia/task-result/v1", summary: "Report written", contracts: { report: { status: "fulfilled", data: pointer } } };
  await ok(asAgent.POST("/api/v1/server/tasks/{id}/complete", { params: { path }, body: { result } }));
  return { project, task, dataref };
}

describe("an HTML DataRef opened from the task page", () => {
  it("is downloaded, runs no script even when rendered, and obtains no token", async () => {
    const { project, task, dataref } = await taskWithHtmlDataref();
    const { context, page } = await signedIn(browser, hub().admin.email, hub().admin.password);
    const attacked: string[] = [];
    context.on("request", (r: Request) => {
      if (/[?&](by=dataref|stolen=)/.test(r.url())) attacked.push(r.url());
    });

    await page.goto(`${hub().url}/projects/${project.id}/tasks/${task.id}`);
    const link = page.getByRole("link", { name: new RegExp(`DataRef ${dataref.id.slice(0, 8)}`) });
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    expect(download.suggestedFilename()).toBe("report.html");
    expect(await download.failure()).toBeNull();
    // The task page stayed where it was: the bytes did not become a page of the hub's origin.
    expect(page.url()).toBe(`${hub().url}/projects/${project.id}/tasks/${task.id}`);

    // Rendered anyway: the same answer without its Content-Disposition is a sandboxed page, with an opaque origin and no script.
    const url = (await link.getAttribute("href"))!;
    const rendered = await context.newPage();
    await rendered.route(url, async (route) => {
      const answer = await route.fetch();
      const { "content-disposition": _, ...headers } = answer.headers();
      await route.fulfill({ response: answer, headers });
    });
    await rendered.goto(url);
    await rendered.getByText("Quarterly report").waitFor();
    expect(await rendered.title()).toBe("report");
    expect(await rendered.evaluate(() => window.origin)).toBe("null");

    // Time for any script to have made its requests.
    await page.waitForTimeout(1_000);
    expect(attacked).toEqual([]);
    await context.close();
  });
});
