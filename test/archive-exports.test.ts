/**
 * A project's history export (src/archive/exports.ts, src/routes/exports.ts) beyond the tasks: the permission log and
 * webhook deliveries, archived and live, are in it; its file is no DataRef, so only the export route hands out its
 * URL; a project builds a bounded number at once; one whose builder stopped reads as failed.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { Archiver } from "../src/archive/archiver";
import { decodeNdjson } from "../src/archive/codec";
import { EXPORT_TIMEOUT_MS, EXPORTS_AT_ONCE } from "../src/archive/exports";
import { hookLines, hookTime, postPermissionLog } from "./fake-daemon";
import { addMember, call, createUser, expectProblem, until } from "./helpers";
import { workerFetch } from "./mcp-client";
import { createWorld, expectOk, newTask, openSession, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("History exports");
});

const DAY = 24 * 3600 * 1000;
const exportsOf = (projectId = w.project.id) => `/api/v1/projects/${projectId}/exports`;

async function exported(): Promise<{ xid: string; url: string; lines: any[] }> {
  const xid = (await expectOk(call(exportsOf(), { method: "POST", token: w.member.token }), 202)).json.id;
  const ready = await until(
    async () => (await expectOk(call(`${exportsOf()}/${xid}`, { token: w.member.token }))).json,
    (r) => r.status !== "pending",
    "the export",
  );
  expect(ready.status).toBe("ready");
  const res = await workerFetch(ready.download.url);
  expect(res.status).toBe(200);
  return { xid, url: ready.download.url, lines: await decodeNdjson<any>(await res.arrayBuffer()) };
}

describe("an export", () => {
  it("holds the permission log and webhook deliveries, archived and live", async () => {
    const session = await openSession(w.worker.apiKey, w.project.id, "logger");
    const line = hookLines();
    const now = Date.now();
    const entries = [45, 2].map((age) => line({ session_id: session, project_id: w.project.id, tool_input: { age }, created_at: hookTime(now - age * DAY) }));
    expect((await postPermissionLog(w.worker.apiKey, entries)).status).toBe(201);
    const receiver = inject("receiver");
    const name = crypto.randomUUID().slice(0, 8);
    const hook = await expectOk(call(`/api/v1/projects/${w.project.id}/webhooks`, { token: w.member.token, body: { url: `${receiver}/hooks/${name}` } }), 201);
    await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify({ secrets: [hook.json.secret], status: 200, delayMs: 0 }) });
    await newTask(w, { title: "Announced" });
    await until(
      () => env.DB.prepare("SELECT count(*) AS n FROM outbox WHERE target_id = ?1 AND status = 'delivered'").bind(hook.json.id).first<number>("n"),
      (n) => (n ?? 0) >= 1,
      "a delivery",
    );
    // The old log entry and the delivery leave for the archive (a week and more on); the recent entry stays.
    const archiver = new Archiver({
      d1: env.DB,
      bucket: env.BLOBS,
      projectId: w.project.id,
      serialise: (f) => f(),
      permissionLogDays: 30,
      now: () => now + 8 * DAY,
    });
    while (await archiver.runBatch());
    expect(await env.DB.prepare("SELECT count(*) AS n FROM outbox WHERE target_id = ?1").bind(hook.json.id).first<number>("n")).toBe(0);
    await newTask(w, { title: "Announced later" });

    const { lines } = await exported();
    const ages = lines.filter((l) => l.type === "permission_log").map((l) => JSON.parse(l.row.tool_input).age);
    expect(ages.sort()).toEqual([2, 45]);
    const deliveries = lines.filter((l) => l.type === "delivery" && l.row.target_id === hook.json.id);
    expect(deliveries.length).toBeGreaterThanOrEqual(2);
    expect(deliveries.some((d) => d.row.status === "delivered" && d.attempts.length >= 1)).toBe(true);
  });

  it("is no DataRef: viewers and agents get no URL for it, and its URL opens nothing else", async () => {
    const { xid, url } = await exported();
    const viewer = await createUser(w.admin, "viewer");
    await addMember(w.admin, w.project.id, viewer.id);
    expectProblem(await call(`/api/v1/projects/${w.project.id}/datarefs/${xid}`, { token: viewer.token }), 404, "NOT_FOUND");
    expectProblem(await call(`/api/v1/server/datarefs/${xid}`, { apiKey: w.worker.apiKey }), 404, "NOT_FOUND");
    expect(await env.DB.prepare("SELECT count(*) AS n FROM datarefs WHERE project_id = ?1").bind(w.project.id).first<number>("n")).toBe(0);
    expect((await call(`${exportsOf()}/${xid}`, { token: viewer.token })).status).toBe(403);
    // The export's token is not a DataRef's, nor one for another export.
    const token = new URL(url).searchParams.get("token")!;
    expect((await workerFetch(`${new URL(url).origin}/api/v1/blobs/${xid}?token=${token}`)).status).toBe(401);
    expect((await workerFetch(`${new URL(url).origin}/api/v1/exports/${crypto.randomUUID()}?token=${token}`)).status).toBe(403);
  });

  it("is built a few at a time per project, and one whose builder stopped reads as failed", async () => {
    const started: string[] = [];
    // Rows as an interrupted build leaves them: pending, the room gone.
    for (let i = 0; i < EXPORTS_AT_ONCE; i++) {
      const id = crypto.randomUUID();
      await env.DB.prepare("INSERT INTO project_exports (id, project_id, status, requested_by, created_at) VALUES (?1, ?2, 'pending', 'system', ?3)")
        .bind(id, w.project.id, new Date(Date.now() - 60_000).toISOString())
        .run();
      started.push(id);
    }
    const refused = await call(exportsOf(), { method: "POST", token: w.member.token });
    expectProblem(refused, 429, "RATE_LIMITED");
    expect(refused.headers.get("Retry-After")).toBe("60");
    await env.DB.prepare("UPDATE project_exports SET created_at = ?2 WHERE id = ?1")
      .bind(started[0], new Date(Date.now() - EXPORT_TIMEOUT_MS - 1000).toISOString())
      .run();
    const stalled = (await expectOk(call(`${exportsOf()}/${started[0]}`, { token: w.member.token }))).json;
    expect(stalled).toMatchObject({ status: "failed", error: expect.stringContaining("stopped") });
    expect(stalled.download).toBeUndefined();
    // One place is free again.
    await expectOk(call(exportsOf(), { method: "POST", token: w.member.token }), 202);
  });
});
