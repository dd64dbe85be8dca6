/**
 * The archiver's steps, one at a time (src/archive/archiver.ts): stopped after each step as a crash would stop it,
 * then a fresh archiver on the same D1 and R2 finishes the work; nothing is lost and nothing is in two places. Also:
 * an object that fails its check is put again, rows that changed after they were put stay, and the permission log
 * and webhook deliveries take the same path. Time moves by the archiver's clock (`now`), so the rows are old to it.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { Archiver, type BatchRow } from "../src/archive/archiver";
import { decodeNdjson } from "../src/archive/codec";
import { roomStub } from "../src/room/client";
import { hookLines, hookTime, postPermissionLog } from "./fake-daemon";
import { call, until } from "./helpers";
import { cli, createWorld, expectOk, newTask, openSession, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Archiver steps");
});

const DAY = 24 * 3600 * 1000;

/** An archiver of the world's project whose clock is `days` ahead: the room's queue is not needed for one run at a time. */
const archiverAt = (days: number, projectId = w.project.id) =>
  new Archiver({ d1: env.DB, bucket: env.BLOBS, projectId, serialise: (work) => work(), permissionLogDays: 30, now: () => Date.now() + days * DAY });

async function doneTasks(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = await newTask(w, { title: `Done ${i}` });
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: `result ${i}` }));
    ids.push(id);
  }
  // A later event, so that none of them holds the log's last one.
  await newTask(w, { title: "Later" });
  return ids;
}

const count = async (sql: string, ...binds: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...binds)
    .first<{ n: number }>())!.n;

/** Every record of the project's archive objects (those of done batches), and the keys of objects no done batch names. */
async function archiveContents(projectId = w.project.id) {
  const { results: batches } = await env.DB.prepare("SELECT key FROM archive_batches WHERE project_id = ?1 AND step = 'done'")
    .bind(projectId)
    .all<{ key: string }>();
  const records: any[] = [];
  for (const { key } of batches) records.push(...(await decodeNdjson<any>(await (await env.BLOBS.get(key))!.arrayBuffer())));
  const listed = (await env.BLOBS.list({ prefix: `archives/${projectId}/` })).objects.map((o) => o.key);
  return { records, orphans: listed.filter((k) => !batches.some((b) => b.key === k)) };
}

/** The tasks are out of D1, each in the archive exactly once with all its events, and no batch is left open. */
async function expectArchivedOnce(ids: string[], eventsBefore: Map<string, number[]>) {
  const { records, orphans } = await archiveContents();
  expect(orphans).toEqual([]);
  for (const id of ids) {
    expect(await count("SELECT count(*) AS n FROM tasks WHERE id = ?1", id)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM archived_tasks WHERE task_id = ?1", id)).toBe(1);
    expect(records.filter((r) => r.type === "task" && r.task_id === id)).toHaveLength(1);
    expect(records.filter((r) => r.type === "event" && r.task_id === id).map((r) => r.event.seq)).toEqual(eventsBefore.get(id));
  }
  expect(await count("SELECT count(*) AS n FROM archive_batches WHERE project_id = ?1 AND step != 'done'", w.project.id)).toBe(0);
}

async function eventSeqs(ids: string[]) {
  const out = new Map<string, number[]>();
  for (const id of ids) {
    const { results } = await env.DB.prepare("SELECT seq FROM events WHERE task_id = ?1 ORDER BY seq").bind(id).all<{ seq: number }>();
    out.set(
      id,
      results.map((r) => r.seq),
    );
  }
  return out;
}

describe("the archiver killed after each step", () => {
  const STEPS = ["record", "put", "verify", "commit"] as const;
  for (const [k, last] of STEPS.entries()) {
    it(`resumes after ${last}: nothing lost, nothing twice`, async () => {
      const ids = await doneTasks(3);
      const before = await eventSeqs(ids);
      expect([...before.values()].every((s) => s.length >= 4)).toBe(true);
      const first = archiverAt(40);
      let batch: BatchRow | string = (await first.record())!;
      expect(batch).toMatchObject({ step: "recorded", kind: "tasks" });
      expect(JSON.parse((batch as BatchRow).ids).sort()).toEqual([...ids].sort());
      for (let i = 1; i <= k; i++) batch = (await first.advance(batch as BatchRow)) as BatchRow | string;
      // Where the crash left it: the step recorded, and the rows still in D1 until the commit.
      const left = await env.DB.prepare("SELECT step FROM archive_batches WHERE project_id = ?1 AND kind = 'tasks' ORDER BY created_at DESC")
        .bind(w.project.id)
        .first<string>("step");
      expect(left).toBe(["recorded", "put", "verified", "done"][k]);
      expect(await count("SELECT count(*) AS n FROM tasks WHERE id IN (SELECT value FROM json_each(?1))", JSON.stringify(ids))).toBe(k === 3 ? 0 : 3);
      const fresh = archiverAt(40);
      while (await fresh.runBatch());
      await expectArchivedOnce(ids, before);
      // Read back whole after all.
      expect((await expectOk(call(`/api/v1/tasks/${ids[0]}`, { token: w.member.token }))).json).toMatchObject({
        id: ids[0],
        archived: true,
        status: "done",
        title: "Done 0",
      });
    });
  }

  it("puts again an object that fails its check, and archives it whole", async () => {
    const ids = await doneTasks(2);
    const before = await eventSeqs(ids);
    const a = archiverAt(40);
    const put = await a.put((await a.record())!);
    await env.BLOBS.put(put.key, new TextEncoder().encode("not what was put"));
    const checked = await a.verify(put);
    expect(checked.step).toBe("recorded");
    expect(await count("SELECT count(*) AS n FROM tasks WHERE id IN (SELECT value FROM json_each(?1))", JSON.stringify(ids))).toBe(2);
    while (await archiverAt(40).runBatch());
    await expectArchivedOnce(ids, before);
  });

  it("leaves rows that changed after they were put, and takes them as they are next time", async () => {
    const ids = await doneTasks(1);
    const a = archiverAt(40);
    const verified = await a.verify(await a.put((await a.record())!));
    expect(verified.step).toBe("verified");
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${ids[0]}/notes`, { content: "Written after the copy" }), 201);
    expect(await a.commit(verified)).toBe("dropped");
    expect(await count("SELECT count(*) AS n FROM tasks WHERE id = ?1", ids[0])).toBe(1);
    expect(await count("SELECT count(*) AS n FROM archive_batches WHERE id = ?1", verified.id)).toBe(0);
    expect(await env.BLOBS.head(verified.key)).toBeNull();
    await newTask(w, { title: "Later again" });
    const before = await eventSeqs(ids);
    while (await archiverAt(40).runBatch());
    await expectArchivedOnce(ids, before);
    const { records } = await archiveContents();
    expect(records.filter((r) => r.type === "note" && r.task_id === ids[0]).map((r) => r.row.content)).toEqual(["Written after the copy"]);
  });
});

describe("the room's archiver beside the room's own work", () => {
  it("archives while tasks are created and finished, each in its own turn of the room's queue", async () => {
    const ids = await doneTasks(6);
    const before = await eventSeqs(ids);
    await env.DB.prepare("UPDATE tasks SET completed_at = '2026-01-10T08:00:00.000Z' WHERE id IN (SELECT value FROM json_each(?1))")
      .bind(JSON.stringify(ids))
      .run();
    const [more, ...created] = await Promise.all([
      roomStub(env, w.project.id).archive(),
      ...Array.from({ length: 8 }, (_, i) => newTask(w, { title: `Meanwhile ${i}` })),
    ]);
    expect(more).toBe(false);
    await expectArchivedOnce(ids, before);
    for (const id of created) expect((await expectOk(call(`/api/v1/tasks/${id}`, { token: w.member.token }))).json).toMatchObject({ id, status: "pending" });
    expect(await count("SELECT count(*) AS n FROM tasks WHERE id IN (SELECT value FROM json_each(?1))", JSON.stringify(created))).toBe(8);
  });
});

describe("the permission log", () => {
  it("leaves D1 for the archive once older than the cutoff, a day an object", async () => {
    const session = await openSession(w.worker.apiKey, w.project.id, "logger");
    const line = hookLines();
    const now = Date.now();
    const ages = [45, 45, 40, 2];
    const entries = ages.map((age, i) =>
      line({ session_id: session, project_id: w.project.id, tool_input: { age, i }, created_at: hookTime(now - age * DAY + i * 1000) }),
    );
    expect((await postPermissionLog(w.worker.apiKey, entries)).status).toBe(201);
    for (let i = 0; i < 10 && (await roomStub(env, w.project.id).archive()); i++);
    const left = (await expectOk(call(`/api/v1/projects/${w.project.id}/permission-log?limit=100`, { token: w.admin }))).json.entries;
    expect(left.map((e: any) => e.tool_input.age)).toEqual([2]);
    const { results } = await env.DB.prepare(
      "SELECT key, day, count FROM archive_batches WHERE project_id = ?1 AND kind = 'permission_log' AND step = 'done' ORDER BY day",
    )
      .bind(w.project.id)
      .all<{ key: string; day: string; count: number }>();
    expect(results.map((b) => [b.day, b.count])).toEqual([
      [new Date(now - 45 * DAY).toISOString().slice(0, 10), 2],
      [new Date(now - 40 * DAY).toISOString().slice(0, 10), 1],
    ]);
    expect(results[0]!.key).toMatch(new RegExp(`^archives/${w.project.id}/permission_log/\\d{4}-\\d{2}-\\d{2}/`));
    const archived = (await decodeNdjson<any>(await (await env.BLOBS.get(results[0]!.key))!.arrayBuffer())).map((r) => JSON.parse(r.row.tool_input));
    expect(archived).toEqual([
      { age: 45, i: 0 },
      { age: 45, i: 1 },
    ]);
  });
});

describe("webhook deliveries", () => {
  it("that are over leave D1 for the archive with their attempts", async () => {
    const receiver = inject("receiver");
    const name = crypto.randomUUID().slice(0, 8);
    const hook = await expectOk(call(`/api/v1/projects/${w.project.id}/webhooks`, { token: w.member.token, body: { url: `${receiver}/hooks/${name}` } }), 201);
    await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify({ secrets: [hook.json.secret], status: 200, delayMs: 0 }) });
    await newTask(w, { title: "Announced" });
    const delivered = () => count("SELECT count(*) AS n FROM outbox WHERE target_id = ?1 AND status = 'delivered'", hook.json.id);
    await until(delivered, (n) => n >= 1, "a delivery");
    const ids = (
      await env.DB.prepare("SELECT id FROM outbox WHERE target_id = ?1 AND status = 'delivered'").bind(hook.json.id).all<{ id: string }>()
    ).results.map((r) => r.id);
    // A week on (deliveries that are over are kept a week), tasks are not yet due, deliveries are.
    while (await archiverAt(8).runBatch());
    expect(await delivered()).toBe(0);
    const { records } = await archiveContents();
    const archived = records.filter((r) => r.type === "delivery" && ids.includes(r.row.id));
    expect(archived.map((r) => r.row.id).sort()).toEqual([...ids].sort());
    expect(archived.every((r) => r.attempts.length >= 1 && r.attempts[0].outbox_id === r.row.id)).toBe(true);
    expect(await count("SELECT count(*) AS n FROM delivery_attempts WHERE outbox_id IN (SELECT value FROM json_each(?1))", JSON.stringify(ids))).toBe(0);
  });
});
