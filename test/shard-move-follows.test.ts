/**
 * What follows a project to its new shard: its webhook's lane (which waits while it moves), the settings its room
 * wrote, and a move whose target is gone.
 */
import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { call, until } from "./helpers";
import { expectOk, newTask } from "./task-world";
import { askMove, copyUpTo, count, d1, driveToEnd, moveRecord, moves, moveSetup, placement, room, tableIndex, world } from "./move-world";

beforeAll(moveSetup);

describe("what follows the project to its new shard", () => {
  it("its webhook's lane delivers from the new shard after the move", async () => {
    const { w, to } = await world("Hooked move");
    const receiver = inject("receiver");
    const name = crypto.randomUUID().slice(0, 8);
    const hook = await expectOk(call(`/api/v1/projects/${w.project.id}/webhooks`, { token: w.member.token, body: { url: `${receiver}/hooks/${name}` } }), 201);
    const control = async () =>
      (await (await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify({ secrets: [hook.json.secret], status: 200 }) })).json()) as {
        received: { body: unknown }[];
      };
    const deliveredFor = async (taskId: string) => (await control()).received.filter((r) => JSON.stringify(r.body).includes(taskId)).length;
    const first = await newTask(w, { title: "Before the move" });
    await until(
      () => deliveredFor(first),
      (n) => n > 0,
      "the first delivery",
    );

    await expectOk(askMove(w.project.id, to), 202);
    await driveToEnd(w.project.id);
    const after = await newTask(w, { title: "After the move" });
    await until(
      () => deliveredFor(after),
      (n) => n > 0,
      "a delivery after the move",
    );
    expect(await deliveredFor(after)).toBe(1);
    expect(await count(to, "SELECT count(*) AS n FROM outbox WHERE target_id = ?1 AND status = 'pending' AND seq IS NOT NULL", hook.json.id)).toBe(0);
  });

  it("its webhook's lane delivers nothing while the project moves", async () => {
    const { w, from, to } = await world("Hook waits");
    const receiver = inject("receiver");
    const name = crypto.randomUUID().slice(0, 8);
    const hook = await expectOk(call(`/api/v1/projects/${w.project.id}/webhooks`, { token: w.member.token, body: { url: `${receiver}/hooks/${name}` } }), 201);
    const answer = (status: number) => fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify({ secrets: [hook.json.secret], status }) });
    const lane = env.WEBHOOK_ENDPOINT.get(env.WEBHOOK_ENDPOINT.idFromName(hook.json.id));
    const attempts = (shard: string) =>
      count(shard, "SELECT count(*) AS n FROM delivery_attempts WHERE outbox_id IN (SELECT id FROM outbox WHERE target_id = ?1)", hook.json.id);
    const dueNow = (shard: string) =>
      d1(shard)
        .prepare("UPDATE outbox SET next_attempt_at = ?2 WHERE target_id = ?1 AND status = 'pending'")
        .bind(hook.json.id, new Date(Date.now() - 1000).toISOString())
        .run();
    await answer(500);
    const taskId = await newTask(w, { title: "Refused at first" });
    await until(
      () => attempts(from),
      (n) => n > 0,
      "a refused attempt",
    );

    await expectOk(askMove(w.project.id, to), 202);
    await copyUpTo(w.project.id, tableIndex("outbox") + 1);
    await answer(200);
    const before = await attempts(from);
    await dueNow(from);
    await runDurableObjectAlarm(lane);
    await new Promise((r) => setTimeout(r, 300));
    expect(await attempts(from)).toBe(before);

    await driveToEnd(w.project.id);
    await dueNow(to);
    await runDurableObjectAlarm(lane);
    const delivered = `SELECT count(*) AS n FROM outbox WHERE target_id = ?1 AND status = 'delivered' AND seq IS NOT NULL`;
    await until(
      () => count(to, delivered, hook.json.id),
      (n) => n > 0,
      "delivered from the new shard",
    );
    const received = ((await (await answer(200)).json()) as { received: { body: unknown }[] }).received;
    // The refused attempts before the move, and one delivery after it.
    expect(received.filter((r) => JSON.stringify(r.body).includes(taskId)).length).toBe(before + 1);
  });

  it("keeps the settings the room wrote on the source's copy when the directory's write of them failed", async () => {
    const project = (
      await expectOk(call("/api/v1/projects", { token: moves.admin, body: { name: `Settled ${crypto.randomUUID().slice(0, 6)}`, shard: "DB_1" } }), 201)
    ).json;
    await expectOk(call(`/api/v1/projects/${project.id}`, { method: "PATCH", token: moves.admin, body: { settings: { archive_after_days: 12 } } }));
    // The room's next change reached its shard's copy; the directory's copy of it failed.
    const copy = JSON.parse(String(await env.DB_1!.prepare("SELECT settings FROM projects WHERE id = ?1").bind(project.id).first("settings")));
    await env
      .DB_1!.prepare("UPDATE projects SET settings = ?2 WHERE id = ?1")
      .bind(project.id, JSON.stringify({ ...copy, archive_after_days: 7 }))
      .run();
    await expectOk(askMove(project.id, "DB"), 202);
    await driveToEnd(project.id);
    const settings = JSON.parse(String(await env.DB.prepare("SELECT settings FROM projects WHERE id = ?1").bind(project.id).first("settings")));
    expect(settings.archive_after_days).toBe(7);
  });

  it("ends a move whose target is no longer bound, logged, the project writable where it was", async () => {
    const { w, from } = await world("Nowhere to go");
    await env.DB.prepare("UPDATE projects SET moving_to = 'DB_9' WHERE id = ?1").bind(w.project.id).run();
    await runInDurableObject(room(w.project.id), (_r, state) =>
      state.storage.put("move", { source: from, target: "DB_9", switched: false, at: { phase: "copy", table: 0, after: null } }),
    );
    // A room restarted with the move recorded resumes it on its alarm.
    await evictDurableObject(room(w.project.id));
    await runInDurableObject(room(w.project.id), () => undefined);
    await runDurableObjectAlarm(room(w.project.id));
    expect(await moveRecord(w.project.id)).toBeUndefined();
    expect(await placement(w.project.id)).toEqual({ shard: from, moving_to: null });
    const id = await newTask(w, { title: "Still here" });
    expect(await count(from, "SELECT count(*) AS n FROM tasks WHERE id = ?1", id)).toBe(1);
  });
});
