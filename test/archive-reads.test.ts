/**
 * Reading the archive (src/archive/reads.ts): the log by `since` across many archived batches opens a bounded number
 * of objects a page and still answers every event once, in order; an object missing from R2 is a 503 saying which.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { Archiver } from "../src/archive/archiver";
import { OBJECTS_PER_PAGE } from "../src/archive/reads";
import { call, expectProblem } from "./helpers";
import { cli, createWorld, expectOk, newTask, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Archive reads");
});

const archiveAll = async () => {
  const a = new Archiver({ d1: env.DB, bucket: env.BLOBS, projectId: w.project.id, serialise: (f) => f(), permissionLogDays: 30 });
  while (await a.runBatch());
};

/** A finished task, completed on `day` as far as the archiver can tell. */
async function finishedOn(day: string): Promise<string> {
  const id = await newTask(w, { title: `Finished ${day}` });
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "r" }));
  await env.DB.prepare("UPDATE tasks SET completed_at = ?2 WHERE id = ?1").bind(id, `${day}T10:00:00.000Z`).run();
  return id;
}

describe("the log by since across many archived batches", () => {
  it("opens a bounded number of objects a page, and paging on answers every event once, in seq order", async () => {
    const days = Array.from({ length: OBJECTS_PER_PAGE + 4 }, (_, i) => `2026-02-${String(i + 1).padStart(2, "0")}`);
    // A long-lived task first: its batch's range spans the others'.
    const first = await newTask(w, { title: "Long-lived" });
    for (const day of days) await finishedOn(day);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${first}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${first}/start`));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${first}/complete`, { result: "late" }));
    await env.DB.prepare("UPDATE tasks SET completed_at = '2026-01-20T10:00:00.000Z' WHERE id = ?1").bind(first).run();
    await newTask(w, { title: "Later" });
    const whole = (await env.DB.prepare("SELECT seq FROM events WHERE project_id = ?1 ORDER BY seq").bind(w.project.id).all<{ seq: number }>()).results.map(
      (r) => r.seq,
    );
    await archiveAll();
    const batches = await env.DB.prepare("SELECT count(*) AS n FROM archive_batches WHERE project_id = ?1 AND step = 'done'")
      .bind(w.project.id)
      .first<number>("n");
    expect(batches).toBeGreaterThan(OBJECTS_PER_PAGE);
    const page = (since: number) => call(`/api/v1/projects/${w.project.id}/events?since=${since}&limit=1000`, { token: w.member.token });
    const firstPage = (await expectOk(page(0))).json;
    expect(firstPage.events.length).toBeGreaterThan(0);
    expect(firstPage.events.length).toBeLessThan(whole.length);
    const seen: number[] = [];
    for (let since = 0, i = 0; i < 50; i++) {
      const { events, next_since } = (await expectOk(page(since))).json;
      if (events.length === 0) break;
      seen.push(...events.map((e: any) => e.seq));
      since = next_since;
    }
    expect(seen).toEqual(whole);
  });
});

describe("an archived object missing from R2", () => {
  it("answers 503 ARCHIVE_UNAVAILABLE naming it, not a bare 500", async () => {
    const id = await finishedOn("2026-03-01");
    await newTask(w, { title: "Later again" });
    await archiveAll();
    const entry = await env.DB.prepare("SELECT key FROM archived_tasks WHERE task_id = ?1").bind(id).first<{ key: string }>();
    await env.BLOBS.delete(entry!.key);
    const reply = await call(`/api/v1/tasks/${id}`, { token: w.member.token });
    expectProblem(reply, 503, "ARCHIVE_UNAVAILABLE");
    expect(reply.json.detail).toContain(entry!.key);
  });
});
