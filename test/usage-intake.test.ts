/** The room's usage intake: points kept before the answer, cumulative series counted once, roll-ups per task, session and day. */
import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import type { UsagePoint } from "../src/domain/usage";
import { until } from "./helpers";
import { cli, createWorld, expectOk, newTask, T, type World } from "./task-world";

const room = (projectId: string) => env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(projectId));

async function runningTask(w: World) {
  const id = await newTask(w);
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
  return id;
}

const taskUsage = (taskId: string) => env.DB.prepare("SELECT * FROM task_usage WHERE task_id = ?").bind(taskId).first<Record<string, number>>();

describe("usage intake", () => {
  let w: World;
  beforeAll(async () => {
    w = await createWorld("Usage intake");
  });

  it("attributes a session's points to the task it is running and counts a cumulative series once", async () => {
    const taskId = await runningTask(w);
    const at = new Date().toISOString();
    const who = { sessionId: w.workerSession, serverId: w.worker.id, agentType: "claude_code", model: "claude-sonnet-4-5" };
    const series = (measure: UsagePoint["measure"], value: number): UsagePoint => ({
      ...who,
      measure,
      value,
      at,
      cumulative: { series: `s1/${measure}`, startedAt: "2026-12-02T00:00:00.000Z" },
    });
    const export1 = [series("cost_usd", 0.25), series("input_tokens", 1000), { ...who, measure: "output_tokens" as const, value: 40, at }];
    await room(w.project.id).recordUsage(export1);
    // The same cumulative values again (a retried export) add nothing; a later value adds its growth.
    await room(w.project.id).recordUsage([series("cost_usd", 0.25), series("input_tokens", 1000)]);
    await room(w.project.id).recordUsage([series("cost_usd", 0.4)]);
    const row = await until(
      () => taskUsage(taskId),
      (r) => (r?.cost_usd ?? 0) > 0.39,
      "task usage",
    );
    expect(row).toMatchObject({ input_tokens: 1000, output_tokens: 40, project_id: w.project.id });
    expect(row!.cost_usd).toBeCloseTo(0.4, 9);
    const daily = await env.DB.prepare("SELECT * FROM usage_daily WHERE project_id = ?").bind(w.project.id).all<Record<string, unknown>>();
    expect(daily.results).toEqual([
      expect.objectContaining({ model: "claude-sonnet-4-5", server_id: w.worker.id, agent_type: "claude_code", input_tokens: 1000 }),
    ]);
    // Attributed to a task, nothing stays on the session alone.
    expect(await env.DB.prepare("SELECT count(*) AS n FROM session_usage WHERE session_id = ?").bind(w.workerSession).first("n")).toBe(0);
  });

  it("keeps a point from a session with no task on the session and the project, and a restarted series counts from zero", async () => {
    const at = new Date().toISOString();
    const point = (value: number, startedAt: string): UsagePoint => ({
      sessionId: w.orchestratorSession,
      serverId: w.orchestrator.id,
      agentType: "codex",
      model: "gpt-5",
      measure: "output_tokens",
      value,
      at,
      cumulative: { series: "restart", startedAt },
    });
    await room(w.project.id).recordUsage([point(500, "2026-12-02T00:00:00.000Z")]);
    await room(w.project.id).recordUsage([point(30, "2026-12-02T01:00:00.000Z")]);
    const row = await until(
      () => env.DB.prepare("SELECT * FROM session_usage WHERE session_id = ?").bind(w.orchestratorSession).first<Record<string, number>>(),
      (r) => (r?.output_tokens ?? 0) >= 530,
      "session usage",
    );
    expect(row!.output_tokens).toBe(530);
    const events = await env.DB.prepare("SELECT data FROM events WHERE project_id = ? AND type = 'usage_recorded'").bind(w.project.id).all<{ data: string }>();
    expect(events.results.map((e) => JSON.parse(e.data).unattributed).reduce((a, b) => a + b, 0)).toBe(2);
  });

  it("sends a batch that may have committed again without counting it twice, and one that did not, once", async () => {
    const taskId = await runningTask(w);
    const at = new Date().toISOString();
    const point = (value: number): UsagePoint => ({
      sessionId: w.workerSession,
      serverId: w.worker.id,
      agentType: null,
      model: "m",
      measure: "input_tokens",
      value,
      at,
    });
    // As a crash leaves them: two batches named and sent, the first committed (its id is in D1), the second not.
    const stub = room(w.project.id);
    await env.DB.prepare("INSERT INTO usage_batches (project_id, batch_id, recorded_at) VALUES (?, 'committed', ?)").bind(w.project.id, at).run();
    await runInDurableObject(stub, async (_, state) => {
      state.storage.sql.exec("INSERT INTO usage_pending (batch, points) VALUES ('committed', ?)", JSON.stringify([point(1000)]));
      state.storage.sql.exec("INSERT INTO usage_pending (batch, points) VALUES ('lost', ?)", JSON.stringify([point(7)]));
    });
    // A restarted room finds them on its alarm.
    await evictDurableObject(stub);
    await runDurableObjectAlarm(stub);
    const row = await until(
      () => taskUsage(taskId),
      (r) => (r?.input_tokens ?? 0) > 0,
      "task usage after the restart",
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect((await taskUsage(taskId))!.input_tokens).toBe(7);
    expect(row!.input_tokens).toBe(7);
    const left = await runInDurableObject(stub, async (_, state) => state.storage.sql.exec("SELECT count(*) AS n FROM usage_pending").one().n);
    expect(left).toBe(0);
  });
});
