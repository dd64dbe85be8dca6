/**
 * What happens to a batch's rows between the batch being chosen (step 1) and its commit (src/archive/archiver.ts):
 * a retry, a new dependent, a late note or a redelivery keeps the row in D1, checked again in the commit's own
 * transaction; the rest of the batch is archived. Also: the log's last event never leaves D1, so a room that lost its
 * cached head numbers on from it; and a batch that keeps failing gives way to the next.
 */
import { env, evictDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { Archiver, memoryAttempts, type BatchRow } from "../src/archive/archiver";
import { decodeNdjson } from "../src/archive/codec";
import { projectsDueForArchive } from "../src/archive/due-projects";
import { call, until } from "./helpers";
import { cli, createWorld, expectOk, newTask, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Archive recheck");
});

const DAY = 24 * 3600 * 1000;
/** A finished task a live one depends on (it stays in D1 while that one is there). */
let held = { upstream: "", dependent: "" };
const attempts = memoryAttempts();
const archiverAt = (days: number) =>
  new Archiver({
    d1: env.DB,
    bucket: env.BLOBS,
    projectId: w.project.id,
    serialise: (work) => work(),
    permissionLogDays: 30,
    attempts,
    now: () => Date.now() + days * DAY,
  });

const count = async (sql: string, ...binds: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...binds)
    .first<{ n: number }>())!.n;

async function finished(n: number, ending: "complete" | "fail" = "complete"): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = await newTask(w, { title: `Finished ${i}` });
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/${ending}`, ending === "fail" ? { error: "broke" } : { result: `r${i}` }));
    ids.push(id);
  }
  await newTask(w, { title: "Later" });
  return ids;
}

/** Every batch open is finished, as a fresh archiver after a restart would. */
async function runAll(days = 40) {
  for (let i = 0; i < 20 && (await archiverAt(days).runBatch()); i++);
}

const inD1 = (id: string) => count("SELECT count(*) AS n FROM tasks WHERE id = ?1", id);
const archived = (id: string) => count("SELECT count(*) AS n FROM archived_tasks WHERE task_id = ?1", id);

/** Step 1 only: the batch is chosen, holding these tasks. */
async function chosen(ids: string[]): Promise<BatchRow> {
  const batch = (await archiverAt(40).record())!;
  expect(JSON.parse(batch.ids)).toEqual(expect.arrayContaining(ids));
  return batch;
}

describe("a task that changes after its batch was chosen", () => {
  it("retried: stays in D1, pending and not archived; the rest of the batch goes", async () => {
    const [x, y] = await finished(2, "fail");
    await chosen([x!, y!]);
    await expectOk(call(`/api/v1/tasks/${x}/retry`, { token: w.member.token, method: "POST" }));
    await runAll();
    expect(await inD1(x!)).toBe(1);
    expect(await archived(x!)).toBe(0);
    const view = (await expectOk(call(`/api/v1/tasks/${x}`, { token: w.member.token }))).json;
    expect(view.status).toBe("pending");
    expect(view.archived ?? false).toBe(false);
    expect(await inD1(y!)).toBe(0);
    expect(await archived(y!)).toBe(1);
  });

  it("depended on by a new task: stays in D1 with the new task's dependency", async () => {
    const [x] = await finished(1);
    await chosen([x!]);
    const d = await newTask(w, { title: "Depends on it", dependencies: [{ depends_on_task_id: x, dependency_type: "blocks" }] });
    held = { upstream: x!, dependent: d };
    await runAll();
    expect(await inD1(x!)).toBe(1);
    expect(await archived(x!)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM task_dependencies WHERE task_id = ?1 AND depends_on_task_id = ?2", d, x)).toBe(1);
  });

  it("given a late note (the log's last event): stays with its events, and a restarted room numbers on from the log's head", async () => {
    const [x] = await finished(1);
    await chosen([x!]);
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${x}/notes`, { content: "Late" }), 201);
    const head = await count("SELECT max(seq) AS n FROM events WHERE project_id = ?1", w.project.id);
    expect(await count("SELECT count(*) AS n FROM events WHERE task_id = ?1 AND seq = ?2", x, head)).toBe(1);
    await runAll();
    expect(await inD1(x!)).toBe(1);
    expect(await count("SELECT max(seq) AS n FROM events WHERE project_id = ?1", w.project.id)).toBe(head);
    // The room forgets its head, and numbers the next events from the log in D1.
    await evictDurableObject(env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(w.project.id)));
    const next = await newTask(w, { title: "After the restart" });
    const seqs = (await env.DB.prepare("SELECT seq FROM events WHERE task_id = ?1").bind(next).all<{ seq: number }>()).results.map((r) => r.seq);
    expect(seqs.length).toBeGreaterThan(0);
    expect(Math.min(...seqs)).toBeGreaterThan(head);
    // No seq is both in D1 and in the archive.
    const { results: batches } = await env.DB.prepare("SELECT key FROM archive_batches WHERE project_id = ?1 AND kind = 'tasks' AND step = 'done'")
      .bind(w.project.id)
      .all<{ key: string }>();
    const archivedSeqs = new Set<number>();
    for (const { key } of batches)
      for (const r of await decodeNdjson<any>(await (await env.BLOBS.get(key))!.arrayBuffer())) if (r.type === "event") archivedSeqs.add(r.event.seq);
    const { results: live } = await env.DB.prepare("SELECT seq FROM events WHERE project_id = ?1").bind(w.project.id).all<{ seq: number }>();
    expect(live.filter((r) => archivedSeqs.has(r.seq))).toEqual([]);
  });
});

describe("a batch being dropped", () => {
  it("loses its object before its row, and a run stopped between the two finishes the drop, the rows staying in D1", async () => {
    const [x] = await finished(1);
    const a = archiverAt(40);
    const verified = await a.verify(await a.put((await a.record())!));
    // Stopped after the batch was marked dropped: its object and row are still there.
    await env.DB.prepare("UPDATE archive_batches SET step = 'dropped' WHERE id = ?1").bind(verified.id).run();
    expect(await env.BLOBS.head(verified.key)).not.toBeNull();
    expect(await archiverAt(40).runBatch()).toBe(true);
    expect(await env.BLOBS.head(verified.key)).toBeNull();
    expect(await count("SELECT count(*) AS n FROM archive_batches WHERE id = ?1", verified.id)).toBe(0);
    expect(await inD1(x!)).toBe(1);
    expect(await archived(x!)).toBe(0);
  });
});

describe("a delivery sent again after its batch was chosen", () => {
  it("stays in D1, pending, with its attempts", async () => {
    const receiver = inject("receiver");
    const name = crypto.randomUUID().slice(0, 8);
    const hook = await expectOk(call(`/api/v1/projects/${w.project.id}/webhooks`, { token: w.member.token, body: { url: `${receiver}/hooks/${name}` } }), 201);
    const control = (status: number) =>
      fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify({ secrets: [hook.json.secret], status, delayMs: 0 }) });
    await control(200);
    await newTask(w, { title: "Announced" });
    const delivered = () => env.DB.prepare("SELECT id FROM outbox WHERE target_id = ?1 AND status = 'delivered'").bind(hook.json.id).all<{ id: string }>();
    const first = (await until(delivered, (r) => r.results.length >= 1, "a delivery")).results[0]!.id;
    // A week on, deliveries are due and tasks not yet.
    const batch = (await archiverAt(8).record())!;
    expect(batch.kind).toBe("deliveries");
    expect(JSON.parse(batch.ids)).toContain(first);
    await control(500);
    await expectOk(
      call(`/api/v1/projects/${w.project.id}/webhooks/${hook.json.id}/deliveries/${first}/redeliver`, { token: w.member.token, method: "POST" }),
      202,
    );
    await runAll(8);
    const row = await env.DB.prepare("SELECT status FROM outbox WHERE id = ?1").bind(first).first<{ status: string }>();
    expect(row?.status).toBe("pending");
    expect(await count("SELECT count(*) AS n FROM delivery_attempts WHERE outbox_id = ?1", first)).toBeGreaterThanOrEqual(1);
  });
});

describe("a batch that keeps failing", () => {
  it("gives way after its attempts: set aside with its rows in D1, and the next batch goes", async () => {
    const [stuck] = await finished(1);
    const a = archiverAt(40);
    const batch = (await a.record())!;
    expect(JSON.parse(batch.ids)).toContain(stuck);
    // Each run dies in the batch (as one out of memory would): its attempts are counted all the same.
    for (let i = 0; i < 3; i++) await attempts.bump(batch.id);
    const [next] = await finished(1);
    await runAll();
    expect(await env.DB.prepare("SELECT step FROM archive_batches WHERE id = ?1").bind(batch.id).first<string>("step")).toBe("failed");
    expect(await env.BLOBS.head(batch.key)).toBeNull();
    expect(await inD1(stuck!)).toBe(1);
    expect(await archived(next!)).toBe(1);
    // A week later it is dropped, and its rows are taken again.
    await runAll(48);
    expect(await archived(stuck!)).toBe(1);
    expect(await count("SELECT count(*) AS n FROM archive_batches WHERE id = ?1", batch.id)).toBe(0);
  });
});

describe("the hourly housekeeping", () => {
  it("does not wake a room for old tasks that cannot go (here one a live task depends on), and does once it can", async () => {
    await runAll(48);
    const later = Date.now() + 48 * DAY;
    expect(await inD1(held.upstream)).toBe(1);
    expect(await projectsDueForArchive(env.DB, later, 30)).not.toContain(w.project.id);
    await expectOk(call(`/api/v1/tasks/${held.dependent}`, { token: w.member.token, method: "DELETE" }));
    await newTask(w, { title: "The log moves on" });
    expect(await projectsDueForArchive(env.DB, later, 30)).toContain(w.project.id);
  });
});
