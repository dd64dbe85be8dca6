/**
 * Liveness rules (API.md "Liveness", project settings): a completion without a result waits on a person when the
 * project requires one; a running task silent for stall_minutes raises task_stalled once per silence (and may move to
 * needs_human); a waiting task no server can take raises task_unassignable once, with each server's reason. The room's
 * clock is advanced by calling its check with a later `now`.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { b64, fakeDaemon } from "./fake-daemon";
import { call, expectProblem, until } from "./helpers";
import { cli, createWorld, expectOk, newTask, T, taskIn, worldUnder, type World } from "./task-world";

const MINUTE = 60_000;
const receiver = inject("receiver");
let first: World;
beforeAll(async () => {
  first = await createWorld("Liveness");
});

const room = (projectId: string) => env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(projectId));
const settle = (w: World, settings: Record<string, unknown>) =>
  call(`/api/v1/projects/${w.project.id}`, { method: "PATCH", token: w.admin, body: { settings } });
const worldWith = async (name: string, settings: Record<string, unknown>) => {
  const w = await worldUnder(first.admin, name);
  await expectOk(settle(w, settings));
  return w;
};
const events = async (w: World, type: string, taskId?: string) =>
  ((await expectOk(call(`/api/v1/projects/${w.project.id}/events?limit=1000`, { token: w.admin }))).json.events as any[]).filter(
    (e) => e.type === type && (taskId === undefined || e.task_id === taskId),
  );
const get = async (w: World, id: string) => (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}`))).json;
const complete = (w: World, id: string, result: unknown) => cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result });
const openQuestions = async (w: World, id: string) =>
  (await env.DB.prepare("SELECT id, question FROM interventions WHERE task_id = ?1 AND status = 'pending'").bind(id).all<{ id: string; question: string }>())
    .results;

describe("settings", () => {
  it("are off by default, change one at a time, and a bad value is 422 naming the field", async () => {
    const project = (await expectOk(call(`/api/v1/projects/${first.project.id}`, { token: first.admin }))).json;
    expect(project.settings).toMatchObject({ require_result: false, stall_minutes: null, stall_action: "alert", unassignable_minutes: null });
    for (const [field, value] of [
      ["stall_minutes", 0],
      ["stall_minutes", 1441],
      ["stall_minutes", 2.5],
      ["stall_minutes", "10"],
      ["unassignable_minutes", -1],
      ["stall_action", "page"],
      ["require_result", "yes"],
    ] as const) {
      const reply = await settle(first, { [field]: value });
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors.map((e: { path: string }) => e.path)).toEqual([`settings.${field}`]);
    }
    const changed = await expectOk(settle(first, { stall_minutes: 30, stall_action: "needs_human" }));
    expect(changed.json.settings).toMatchObject({ stall_minutes: 30, stall_action: "needs_human", unassignable_minutes: null, require_result: false });
    const off = await expectOk(settle(first, { stall_minutes: null, stall_action: "alert" }));
    expect(off.json.settings).toMatchObject({ stall_minutes: null, stall_action: "alert" });
  });
});

describe("require_result", () => {
  let w: World;
  beforeAll(async () => {
    w = await worldWith("Results required", { require_result: true });
  });

  it("a completion with no summary and no contract waits on a person with the reason, keeps the result, and leaves dependents blocked", async () => {
    const { id } = await taskIn(w, "running");
    const down = await newTask(w, { title: "Downstream", dependencies: [{ depends_on_task_id: id, dependency_type: "blocks" }] });
    const sent = { files_changed: ["a.ts"] };
    const answer = await expectOk(complete(w, id, sent));
    expect(answer.json).toMatchObject({ status: "needs_human", result: sent });
    const [silent] = await events(w, "completion_without_result", id);
    expect(silent.data.reason).toMatch(/no summary and no contract/);
    expect(await events(w, "task_completed", id)).toHaveLength(0);
    const [question] = await openQuestions(w, id);
    expect(question!.question).toContain("no summary and no contract");
    // It shows in the inbox like any question a person must answer.
    const inbox = (await expectOk(call("/api/v1/inbox", { token: w.member.token }))).json;
    expect(JSON.stringify(inbox)).toContain(question!.id);
    expect(await get(w, down)).toMatchObject({ status: "pending", blocked: true });

    // The daemon sending the same completion again changes nothing.
    expect((await expectOk(complete(w, id, sent))).json.status).toBe("needs_human");
    expect(await events(w, "completion_without_result", id)).toHaveLength(1);

    // A person's answer sends it back to its agent, whose completion with a summary ends it and unblocks the dependent.
    await expectOk(call(`/api/v1/interventions/${question!.id}/respond`, { token: w.member.token, body: { response: "Say what you did" } }));
    expect((await get(w, id)).status).toBe("running");
    expect((await expectOk(complete(w, id, "Added a.ts"))).json).toMatchObject({ status: "done", result: { summary: "Added a.ts" } });
    expect(await get(w, down)).toMatchObject({ blocked: false });
  });

  it("an empty string is no summary; a summary or a contract completes as before", async () => {
    const blank = (await taskIn(w, "running")).id;
    expect((await expectOk(complete(w, blank, "  "))).json.status).toBe("needs_human");
    const summed = (await taskIn(w, "running")).id;
    expect((await expectOk(complete(w, summed, { $schema: "orchestratia/task-result/v1", summary: "ran" }))).json.status).toBe("done");
    const contracted = (await taskIn(w, "running")).id;
    // task-result/v1 requires a summary: a result with contracts and none is a legacy object.
    const result = { contracts: { api: { type: "openapi", data: { paths: {} } } } };
    expect((await expectOk(complete(w, contracted, result))).json.status).toBe("done");
  });

  it("is off by default: an empty result completes", async () => {
    const { id } = await taskIn(first, "running");
    expect((await expectOk(complete(first, id, {}))).json.status).toBe("done");
    expect(await events(first, "completion_without_result", id)).toHaveLength(0);
  });
});

describe("stall_minutes", () => {
  it("raises task_stalled once per silence, even from two checks at once, again only after a sign of life; the webhook hears of it", async () => {
    const w = await worldWith("Stalls", { stall_minutes: 5 });
    const name = crypto.randomUUID().slice(0, 8);
    const hook = await expectOk(
      call(`/api/v1/projects/${w.project.id}/webhooks`, { token: w.member.token, body: { url: `${receiver}/hooks/${name}`, events: ["task_stalled"] } }),
      201,
    );
    await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify({ secrets: [hook.json.secret], status: 200, delayMs: 0 }) });
    const { id } = await taskIn(w, "running");
    const t0 = Date.now();

    await room(w.project.id).checkLiveness(t0 + 4 * MINUTE);
    expect(await events(w, "task_stalled", id)).toHaveLength(0);
    await Promise.all([room(w.project.id).checkLiveness(t0 + 6 * MINUTE), room(w.project.id).checkLiveness(t0 + 6 * MINUTE)]);
    const [stalled] = await events(w, "task_stalled", id);
    expect(stalled.data).toMatchObject({ action: "alert", stall_minutes: 5, server_id: w.worker.id, server_name: w.worker.name });
    expect(stalled.data.reason).toMatch(/no output from its session, no note and no progress for \d+ minutes/);
    expect(await events(w, "task_stalled", id)).toHaveLength(1);
    expect((await get(w, id)).status).toBe("running");
    await room(w.project.id).checkLiveness(t0 + 30 * MINUTE);
    expect(await events(w, "task_stalled", id)).toHaveLength(1);

    const got = await until(
      async () => ((await (await fetch(`${receiver}/control/${name}`, { method: "POST", body: "{}" })).json()) as { received: any[] }).received,
      (r) => r.length >= 1,
      "the stall's delivery",
    );
    expect(got[0].verified).toBe(true);
    expect(got[0].body).toMatchObject({ type: "task_stalled", data: { task_id: id, data: { reason: stalled.data.reason } } });

    // A note is a sign of life: silent again for five minutes after it, the task is raised again.
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/notes`, { content: "still here" }), 201);
    const noted = Date.now();
    await room(w.project.id).checkLiveness(noted + 4 * MINUTE);
    expect(await events(w, "task_stalled", id)).toHaveLength(1);
    await room(w.project.id).checkLiveness(noted + 6 * MINUTE);
    expect(await events(w, "task_stalled", id)).toHaveLength(2);
  });

  it("counts its session's terminal output as a sign of life, and its server's heartbeat not (the daemon beats whatever the agent does)", async () => {
    const w = await worldWith("Stalls by output", { stall_minutes: 5 });
    const { id } = await taskIn(w, "running");
    const daemon = await fakeDaemon(w.worker.apiKey);
    // Beating all along: a heartbeat says the machine is up, not that the agent on the session works.
    await expectOk(cli(w.worker.apiKey, "POST", "/api/v1/servers/heartbeat", {}));
    daemon.send({ type: "session_output", session_id: w.workerSession, data: b64("thinking…") });
    const noted = await until(
      () => env.DB.prepare("SELECT last_output_at FROM sessions WHERE id = ?1").bind(w.workerSession).first<{ last_output_at: string | null }>(),
      (row) => row?.last_output_at != null,
      "the session's output noted",
    );
    const outputAt = Date.parse(noted!.last_output_at!);
    await room(w.project.id).checkLiveness(outputAt + 4 * MINUTE);
    expect(await events(w, "task_stalled", id)).toHaveLength(0);
    // The server went on beating, as a live daemon does, a minute before the check.
    await env.DB.prepare("UPDATE servers SET last_heartbeat = ?2 WHERE id = ?1")
      .bind(w.worker.id, new Date(outputAt + 5 * MINUTE).toISOString())
      .run();
    await room(w.project.id).checkLiveness(outputAt + 6 * MINUTE);
    const [stalled] = await events(w, "task_stalled", id);
    expect(stalled.data).toMatchObject({ session_id: w.workerSession, last_output: noted!.last_output_at });
    expect(stalled.data.reason).toMatch(/^no output from its session/);
    daemon.socket.ws.close(1000, "done");
  });

  it("with stall_action needs_human, the stalled task waits on a person with the reason as its question", async () => {
    const w = await worldWith("Stalls to people", { stall_minutes: 10, stall_action: "needs_human" });
    const { id } = await taskIn(w, "running");
    await room(w.project.id).checkLiveness(Date.now() + 11 * MINUTE);
    const [stalled] = await events(w, "task_stalled", id);
    expect(stalled.data.action).toBe("needs_human");
    expect((await get(w, id)).status).toBe("needs_human");
    const [question] = await openQuestions(w, id);
    expect(question!.question).toBe(`Stalled: ${stalled.data.reason}. Answer to send it back to work, or cancel it.`);
  });

  it("the room's alarm is set to look only once a rule is on", async () => {
    const w = await worldUnder(first.admin, "Stall alarm");
    await taskIn(w, "running");
    await runInDurableObject(room(w.project.id), (_, state) => state.storage.deleteAlarm());
    await expectOk(settle(w, { require_result: true }));
    expect(await runInDurableObject(room(w.project.id), (_, state) => state.storage.getAlarm())).toBeNull();
    const before = Date.now();
    await expectOk(settle(w, { stall_minutes: 20 }));
    const alarm = await runInDurableObject(room(w.project.id), (_, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThanOrEqual(before + 20 * MINUTE);
    expect(alarm).toBeLessThanOrEqual(Date.now() + 20 * MINUTE);
  });
});

describe("rules off", () => {
  it("raise nothing however long a task stays silent or waits", async () => {
    const w = await worldUnder(first.admin, "No rules");
    const { id } = await taskIn(w, "running");
    const waiting = await newTask(w, { title: "Needs COBOL", requirements: { languages: ["cobol"] } });
    await room(w.project.id).checkLiveness(Date.now() + 3 * 1440 * MINUTE);
    expect(await events(w, "task_stalled", id)).toHaveLength(0);
    expect(await events(w, "task_unassignable", waiting)).toHaveLength(0);
    expect((await get(w, id)).status).toBe("running");
  });
});

describe("unassignable_minutes", () => {
  it("flags a waiting task no server can take once, with each server's reason", async () => {
    const w = await worldWith("Unassignable", { unassignable_minutes: 10 });
    const id = await newTask(w, { title: "Needs COBOL", requirements: { languages: ["cobol"] } });
    const plain = await newTask(w, { title: "Needs nothing" });
    expect((await get(w, id)).status).toBe("pending");
    await room(w.project.id).checkLiveness(Date.now() + 9 * MINUTE);
    expect(await events(w, "task_unassignable", id)).toHaveLength(0);
    const later = Date.now() + 11 * MINUTE;
    await Promise.all([room(w.project.id).checkLiveness(later), room(w.project.id).checkLiveness(later)]);
    await room(w.project.id).checkLiveness(later + 60 * MINUTE);
    const flagged = await events(w, "task_unassignable", id);
    expect(flagged).toHaveLength(1);
    expect(flagged[0].data.requirements).toEqual({ languages: ["cobol"] });
    expect(flagged[0].data.servers).toEqual(
      expect.arrayContaining([{ server_id: w.worker.id, server_name: w.worker.name, reason: expect.stringMatching(/cobol.*\(disqualified\)/) }]),
    );
    expect(await events(w, "task_unassignable", plain)).toHaveLength(0);
  });
});
