/**
 * seeds/compute-protocol.md, section by section: acknowledgement and rejection,
 * agent disappearance (leases), immutability once dispatched, late results,
 * idempotent registration, and the races between them.
 */
import { sha256Hex } from "../src/auth/secrets";
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import {
  AGENT_LOST,
  DEFAULT_LEASE_SECONDS,
  immutableFieldsChanged,
  leaseDecision,
  leaseSeconds,
  type LeaseFacts,
} from "../src/protocol/compute-protocol";
import { REJECTED_REASON } from "../src/domain/matching";
import { wakeRoomsWithLapsedLeases } from "../src/cron/maintenance";
import { call, daemonRegistration, expectProblem, registrationToken, type Reply } from "./helpers";
import { openSocket } from "./sockets";
import { cli, createWorld, expectOk, newTask, T, taskIn, taskStatus, type World } from "./task-world";

const room = (projectId: string) => env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(projectId));
const ago = (seconds: number) => new Date(Date.now() - seconds * 1000).toISOString();

/** The server has been silent for `seconds` and the task was given to it as long ago. */
async function silence(serverId: string, taskId: string, seconds = DEFAULT_LEASE_SECONDS + 60) {
  await env.DB.batch([
    env.DB.prepare("UPDATE servers SET last_heartbeat = ?1 WHERE id = ?2").bind(ago(seconds), serverId),
    env.DB.prepare("UPDATE tasks SET assigned_at = ?1 WHERE id = ?2").bind(ago(seconds), taskId),
  ]);
}

const taskOf = async (w: World, id: string) => (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}`))).json;
const eventsOf = async (w: World, id: string) => (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}/events`))).json.events as any[];

/** A server declaring `language`, registered with its own token (serving every project). */
async function capableServer(admin: string, language: string, extra: Record<string, unknown> = {}) {
  const name = `capable-${crypto.randomUUID().slice(0, 6)}`;
  const reply = await call("/api/v1/servers/register", {
    body: { ...daemonRegistration(name, await registrationToken(admin)), capabilities: { languages: [language], max_concurrent_tasks: 5, ...extra } },
  });
  expect(reply.status, reply.text).toBe(201);
  return { id: reply.json.id as string, apiKey: reply.json.api_key as string, name };
}

let w: World;
beforeAll(async () => {
  w = await createWorld("Compute protocol");
});

describe("the pure rules", () => {
  const base: LeaseFacts = { status: "assigned", assignedAt: ago(0), lastHeartbeat: null, connected: false, now: Date.now(), leaseMs: 300_000 };
  const at = (iso: string) => Date.parse(iso);

  it("decides each watched status on lease expiry, and leaves people's statuses alone", () => {
    const expired = { ...base, assignedAt: ago(400), lastHeartbeat: ago(400) };
    const table: [LeaseFacts["status"], string][] = [
      ["assigned", "requeue"],
      ["planning", "requeue"],
      ["running", "fail"],
      ["needs_human", "keep"],
      ["plan_review", "keep"],
      ["pending", "keep"],
      ["done", "keep"],
      ["failed", "keep"],
      ["cancelled", "keep"],
    ];
    for (const [status, action] of table) expect([status, leaseDecision({ ...expired, status }).action]).toEqual([status, action]);
  });

  it("counts the lease from the later of assignment and heartbeat, and a connected socket keeps it", () => {
    const now = Date.now();
    const heartbeat = ago(100);
    const table: [Partial<LeaseFacts>, { action: string; recheckAt?: number | null }][] = [
      [{ assignedAt: ago(400), lastHeartbeat: heartbeat }, { action: "keep", recheckAt: at(heartbeat) + 300_000 }],
      [{ assignedAt: heartbeat, lastHeartbeat: ago(4000) }, { action: "keep", recheckAt: at(heartbeat) + 300_000 }],
      [{ assignedAt: ago(301), lastHeartbeat: ago(900) }, { action: "requeue" }],
      [{ assignedAt: ago(301), lastHeartbeat: null }, { action: "requeue" }],
      [{ assignedAt: null, lastHeartbeat: null }, { action: "requeue" }],
      [{ assignedAt: ago(900), lastHeartbeat: ago(900), connected: true }, { action: "keep", recheckAt: now + 300_000 }],
      [{ status: "running", assignedAt: ago(900), lastHeartbeat: ago(900), connected: true }, { action: "keep", recheckAt: now + 300_000 }],
      [{ status: "needs_human", assignedAt: ago(900), lastHeartbeat: ago(900) }, { action: "keep", recheckAt: null }],
    ];
    for (const [facts, decision] of table) expect(leaseDecision({ ...base, now, ...facts })).toEqual(decision);
  });

  it("reads the lease from its var", () => {
    const table: [string | undefined, number][] = [
      [undefined, 300],
      ["", 300],
      ["60", 60],
      ["0", 300],
      ["-5", 300],
      ["1.5", 300],
      ["soon", 300],
    ];
    for (const [value, seconds] of table) expect([value, leaseSeconds(value)]).toEqual([value, seconds]);
  });

  it("names the immutable fields a change would alter once dispatched", () => {
    const current = { spec: "s", structured_spec: { a: 1, b: 2 }, requirements: null, type: "feature", payload: { x: 1 } };
    const table: [string, Record<string, unknown>, string[]][] = [
      ["pending", { spec: "other", type: "bug" }, []],
      ["assigned", { spec: "other" }, ["spec"]],
      ["running", { structured_spec: { b: 2, a: 1 } }, []],
      ["running", { structured_spec: { a: 2 } }, ["structured_spec"]],
      ["planning", { requirements: { languages: ["go"] } }, ["requirements"]],
      ["done", { type: "bug", payload: { x: 2 } }, ["type", "payload"]],
      ["failed", { payload: { x: 1 }, spec: "s" }, []],
      ["cancelled", { dependencies: [{ depends_on_task_id: "t" }] }, ["dependencies"]],
    ];
    for (const [status, changes, fields] of table) {
      expect([status, changes, immutableFieldsChanged(status as LeaseFacts["status"], current, changes)]).toEqual([status, changes, fields]);
    }
  });
});

describe("task acknowledgement: rejection", () => {
  it("puts an assigned task back to pending with an event naming the server and the reason", async () => {
    const { id } = await taskIn(w, "assigned");
    const reply = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/reject`, { reason: "no GPU here" }));
    expect(reply.json).toMatchObject({ status: "pending", assigned_server_id: null, rejected_by: [w.worker.id] });
    const event = (await eventsOf(w, id)).find((e) => e.type === "task_rejected");
    expect(event.data).toMatchObject({ reason: "no GPU here", server_id: w.worker.id, server_name: w.worker.name, status: "pending", previous_status: "assigned" });
  });

  it("rejects a planning task too, and the people's surface takes the same route", async () => {
    const { id } = await taskIn(w, "planning");
    expectProblem(await call(`/api/v1/tasks/${id}/reject`, { token: w.member.token, body: { reason: "not mine" } }), 403, "NOT_ALLOWED");
    expect((await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/reject`, { reason: "busy" }))).json.status).toBe("pending");
  });

  it("refuses anyone but the assignee (403), other statuses (409), and an empty reason (422)", async () => {
    const assigned = await taskIn(w, "assigned");
    expectProblem(await cli(w.orchestrator.apiKey, "POST", `${T}/${assigned.id}/reject`, { reason: "not mine either" }), 403, "NOT_ALLOWED");
    const empty = await cli(w.worker.apiKey, "POST", `${T}/${assigned.id}/reject`, { reason: "  " });
    expectProblem(empty, 422, "VALIDATION_FAILED");
    expect(empty.json.errors[0].path).toBe("reason");
    expectProblem(await cli(w.worker.apiKey, "POST", `${T}/${assigned.id}/reject`, {}), 422, "VALIDATION_FAILED");
    expect(await taskStatus(w, assigned.id)).toBe("assigned");
    const running = await taskIn(w, "running");
    const refused = await cli(w.worker.apiKey, "POST", `${T}/${running.id}/reject`, { reason: "too late" });
    expectProblem(refused, 409, "INVALID_TRANSITION");
    expect(refused.json.current_status).toBe("running");
    expect(await taskStatus(w, running.id)).toBe("running");
  });

  it("never offers the task to a server that rejected it, while another server takes it; a retry keeps the exclusion", async () => {
    const language = `lang-${crypto.randomUUID().slice(0, 8)}`;
    const first = await capableServer(w.admin, language, { tags: ["fast"] });
    const second = await capableServer(w.admin, language);
    const id = await newTask(w, { requirements: { languages: [language], tags: ["fast"] } });
    expect((await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/auto-assign`))).json).toMatchObject({ server_id: first.id });

    // The rejection offers the task again in the same step: to the other server only.
    const rejected = await expectOk(cli(first.apiKey, "POST", `${T}/${id}/reject`, { reason: "disk full" }));
    expect(rejected.json).toMatchObject({ status: "assigned", assigned_server_id: second.id, rejected_by: [first.id] });
    const events = await eventsOf(w, id);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["task_rejected", "task_assigned"]));
    expect(events.filter((e) => e.type === "task_assigned").at(-1).data).toMatchObject({ server_id: second.id, auto: true });

    // Rejected by both: nobody is offered it, and matching says why.
    await expectOk(cli(second.apiKey, "POST", `${T}/${id}/reject`, { reason: "also full" }));
    expect((await taskOf(w, id)).status).toBe("pending");
    expect((await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/auto-assign`))).json).toEqual({ status: "no_match" });
    const matching = (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}/matching-agents`))).json.servers;
    for (const server of [first, second]) expect(matching.find((m: any) => m.server_id === server.id)).toMatchObject({ score: -1, reasons: [REJECTED_REASON] });

    // A person's retry does not forget who rejected the task.
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { server_name: first.name }));
    await expectOk(cli(first.apiKey, "POST", `${T}/${id}/start`));
    await expectOk(cli(first.apiKey, "POST", `${T}/${id}/fail`, { error: "crashed" }));
    const retried = await expectOk(call(`/api/v1/tasks/${id}/retry`, { token: w.member.token, method: "POST" }));
    expect(retried.json).toMatchObject({ status: "pending", rejected_by: [first.id, second.id] });
  });
});

describe("agent disappearance: leases", () => {
  it("returns an assigned task of a silent server to pending (task_requeued, retry_count + 1)", async () => {
    const { id } = await taskIn(w, "assigned");
    await silence(w.worker.id, id);
    expect(await runDurableObjectAlarm(room(w.project.id))).toBe(true);
    const task = await taskOf(w, id);
    expect(task).toMatchObject({ status: "pending", assigned_server_id: null, retry_count: 1 });
    const event = (await eventsOf(w, id)).find((e) => e.type === "task_requeued");
    expect(event.data).toMatchObject({ status: "pending", previous_status: "assigned", server_id: w.worker.id, reason: "lease_expired", retry_count: 1 });
  });

  it("requeues a planning task (no work done yet) and leaves a task waiting on a person alone", async () => {
    const planning = await taskIn(w, "planning");
    const review = await taskIn(w, "plan_review");
    const asking = await taskIn(w, "needs_human");
    for (const t of [planning, review, asking]) await silence(w.worker.id, t.id);
    expect(await runDurableObjectAlarm(room(w.project.id))).toBe(true);
    expect(await taskStatus(w, planning.id)).toBe("pending");
    expect(await taskStatus(w, review.id)).toBe("plan_review");
    expect(await taskStatus(w, asking.id)).toBe("needs_human");
  });

  it("fails a running task of a silent server with AGENT_LOST, recoverable", async () => {
    const { id } = await taskIn(w, "running");
    await silence(w.worker.id, id);
    expect(await runDurableObjectAlarm(room(w.project.id))).toBe(true);
    const task = await taskOf(w, id);
    expect(task).toMatchObject({ status: "failed", error_code: AGENT_LOST, error: { code: AGENT_LOST, recoverable: true, details: { server_id: w.worker.id } } });
    expect((await eventsOf(w, id)).find((e) => e.type === "task_failed").data).toMatchObject({ code: AGENT_LOST, recoverable: true });
  });

  it("keeps the tasks of a server that beats, or whose agent socket is open", async () => {
    const beating = await taskIn(w, "running");
    await env.DB.prepare("UPDATE tasks SET assigned_at = ?1 WHERE id = ?2").bind(ago(3600), beating.id).run();
    await env.DB.prepare("UPDATE servers SET last_heartbeat = ?1 WHERE id = ?2").bind(ago(30), w.worker.id).run();
    expect(await runDurableObjectAlarm(room(w.project.id))).toBe(true);
    expect(await taskStatus(w, beating.id)).toBe("running");

    const socket = await openSocket(`/api/v1/projects/${w.project.id}/agent-ws`, { "X-API-Key": w.worker.apiKey });
    const connected = await taskIn(w, "assigned");
    await silence(w.worker.id, connected.id);
    await silence(w.worker.id, beating.id);
    expect(await runDurableObjectAlarm(room(w.project.id))).toBe(true);
    expect(await taskStatus(w, connected.id)).toBe("assigned");
    expect(await taskStatus(w, beating.id)).toBe("running");
    socket.ws.close(1000, "done");
  });

  it("is looked at by the hourly sweep when a room's lease lapsed", async () => {
    const { id } = await taskIn(w, "assigned");
    await silence(w.worker.id, id);
    expect(await wakeRoomsWithLapsedLeases(env)).toBeGreaterThanOrEqual(1);
    expect(await runDurableObjectAlarm(room(w.project.id))).toBe(true);
    expect(await taskStatus(w, id)).toBe("pending");
    expect(await wakeRoomsWithLapsedLeases(env)).toBe(0);
  });

  it("offers a requeued task with requirements to another server, not the one that lost it", async () => {
    const language = `lang-${crypto.randomUUID().slice(0, 8)}`;
    const lost = await capableServer(w.admin, language, { tags: ["fast"] });
    const alive = await capableServer(w.admin, language);
    const id = await newTask(w, { requirements: { languages: [language], tags: ["fast"] } });
    expect((await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/auto-assign`))).json).toMatchObject({ server_id: lost.id });
    await silence(lost.id, id);
    expect(await runDurableObjectAlarm(room(w.project.id))).toBe(true);
    expect(await taskOf(w, id)).toMatchObject({ status: "assigned", assigned_server_id: alive.id, retry_count: 1, rejected_by: [] });
  });
});

describe("tasks are immutable once dispatched", () => {
  const changes: [string, unknown][] = [
    ["spec", "a different job"],
    ["structured_spec", { $schema: "orchestratia/task-spec/v1", requirements: [{ description: "another", priority: "must" }] }],
    ["requirements", { languages: ["cobol"] }],
    ["type", "bug"],
    ["payload", { input: 2 }],
  ];

  for (const [field, value] of changes) {
    it(`refuses a change of ${field} after assignment (409 TASK_IMMUTABLE naming it), and allows it while pending`, async () => {
      const pending = await newTask(w, { payload: { input: 1 } });
      expect((await expectOk(cli(w.orchestrator.apiKey, "PUT", `${T}/${pending}`, { [field]: value }))).json.updated_at).toBeTruthy();
      const { id } = await taskIn(w, "assigned");
      const refused = await cli(w.orchestrator.apiKey, "PUT", `${T}/${id}`, { [field]: value, title: "renamed too" });
      expectProblem(refused, 409, "TASK_IMMUTABLE");
      expect(refused.json.errors).toEqual([{ path: field, message: expect.any(String) }]);
      expect(refused.json.current_status).toBe("assigned");
      expect((await taskOf(w, id)).title).toBe("A task");
    });
  }

  it("keeps the title, priority and timeout editable, and the same spec again is no change", async () => {
    const { id } = await taskIn(w, "running");
    const edited = await expectOk(cli(w.orchestrator.apiKey, "PUT", `${T}/${id}`, { title: "Renamed", priority: "high", timeout_seconds: 600, spec: "Do it" }));
    expect(edited.json).toMatchObject({ title: "Renamed", priority: "high", timeout_seconds: 600, spec: "Do it", status: "running" });
  });

  it("refuses adding or removing a dependency once dispatched, and allows both while pending", async () => {
    const upstream = await newTask(w);
    const other = await newTask(w);
    const downstream = await newTask(w, { dependencies: [{ depends_on_task_id: upstream, dependency_type: "blocks" }] });
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${downstream}/dependencies`, { depends_on_task_id: other, dependency_type: "related" }), 201);
    await expectOk(cli(w.orchestrator.apiKey, "DELETE", `${T}/${downstream}/dependencies/${other}`));
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${downstream}/assign`, { session_name: "worker" }));
    const added = await cli(w.orchestrator.apiKey, "POST", `${T}/${downstream}/dependencies`, { depends_on_task_id: other, dependency_type: "blocks" });
    expectProblem(added, 409, "TASK_IMMUTABLE");
    expect(added.json.errors[0].path).toBe("dependencies");
    const removed = await cli(w.orchestrator.apiKey, "DELETE", `${T}/${downstream}/dependencies/${upstream}`);
    expectProblem(removed, 409, "TASK_IMMUTABLE");
    expect((await taskOf(w, downstream)).dependencies.map((d: any) => d.depends_on_task_id)).toEqual([upstream]);
  });
});

describe("late results", () => {
  for (const ending of ["failed", "cancelled"] as const) {
    it(`keeps a result for a ${ending} task as late_result, answers 409, and records late_result_received`, async () => {
      const { id } = await taskIn(w, "running");
      if (ending === "failed") await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/fail`, { error: "gave up" }));
      else await expectOk(cli(w.orchestrator.apiKey, "DELETE", `${T}/${id}`));
      const late = await cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: { summary: "finished after all" } });
      expectProblem(late, 409, "INVALID_TRANSITION");
      expect(late.json).toMatchObject({ current_status: ending, late_result_kept: true });
      const task = await taskOf(w, id);
      expect(task.status).toBe(ending);
      expect(task.late_result).toMatchObject({ server_id: w.worker.id, server_name: w.worker.name, received_at: expect.any(String), result: { summary: "finished after all" } });
      expect((await eventsOf(w, id)).find((e) => e.type === "late_result_received").data).toMatchObject({ status: ending, server_id: w.worker.id, summary: "finished after all" });
    });
  }

  it("keeps nothing from an agent that never held the task", async () => {
    const { id } = await taskIn(w, "failed");
    const refused = await cli(w.orchestrator.apiKey, "POST", `${T}/${id}/complete`, { result: "not mine" });
    expectProblem(refused, 409, "INVALID_TRANSITION");
    expect(refused.json.late_result_kept).toBeUndefined();
    expect((await taskOf(w, id)).late_result).toBeNull();
  });
});

describe("idempotent registration", () => {
  const admin = () => w.admin;
  const register = (body: unknown, key: string) => call("/api/v1/servers/register", { body, headers: { "Idempotency-Key": key } });

  it("answers a retried register with the same server and key, even once the token is used up; another body is 422", async () => {
    const body = daemonRegistration(`idem-${crypto.randomUUID().slice(0, 6)}`, await registrationToken(admin()));
    const key = crypto.randomUUID();
    const first = await register(body, key);
    expect(first.status, first.text).toBe(201);
    const again = await register(body, key);
    expect(again.status, again.text).toBe(201);
    expect(again.json).toEqual(first.json);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect((await call("/api/v1/server/tasks/check", { apiKey: first.json.api_key })).status).toBe(200);
    expectProblem(await register({ ...body, hostname: "elsewhere" }, key), 422, "IDEMPOTENCY_KEY_REUSED");
    // Without the key, the spent token is refused as before.
    expectProblem(await call("/api/v1/servers/register", { body }), 401, "INVALID_REGISTRATION_TOKEN");
  });

  it("refuses to replay a registration whose token was revoked or whose key was replaced since", async () => {
    const token = await registrationToken(admin());
    const body = daemonRegistration(`stale-${crypto.randomUUID().slice(0, 6)}`, token);
    const key = crypto.randomUUID();
    expect((await register(body, key)).status).toBe(201);
    await env.DB.prepare("UPDATE registration_tokens SET revoked_at = ?1 WHERE token_hash = ?2").bind(new Date().toISOString(), await sha256Hex(token)).run();
    const replay = await register(body, key);
    expectProblem(replay, 409, "IDEMPOTENT_REGISTRATION_STALE");
    expect(replay.text).not.toContain("orc_");

    const other = daemonRegistration(`rekeyed-${crypto.randomUUID().slice(0, 6)}`, await registrationToken(admin()));
    const otherKey = crypto.randomUUID();
    const first = await register(other, otherKey);
    await env.DB.prepare("UPDATE servers SET api_key_hash = ?1 WHERE id = ?2").bind(await sha256Hex("orc_replaced"), first.json.id).run();
    expectProblem(await register(other, otherKey), 409, "IDEMPOTENT_REGISTRATION_STALE");
  });

  it("stores the answer sealed: the API key is never kept in clear", async () => {
    const body = daemonRegistration(`sealed-${crypto.randomUUID().slice(0, 6)}`, await registrationToken(admin()));
    const key = crypto.randomUUID();
    const reply = await register(body, key);
    const { results } = await env.DB.prepare("SELECT caller, response_body FROM idempotency_keys WHERE key = ?1").bind(key).all<{ caller: string; response_body: string }>();
    expect(results).toHaveLength(1);
    expect(results[0]!.caller).toMatch(/^registration:[0-9a-f]{64}$/);
    expect(results[0]!.response_body).toMatch(/^v1\./);
    expect(results[0]!.response_body).not.toContain(reply.json.api_key);
  });

  it("gives 20 concurrent retries under one key exactly one server and one working key", async () => {
    const name = `race-${crypto.randomUUID().slice(0, 6)}`;
    const body = daemonRegistration(name, await registrationToken(admin()));
    const key = crypto.randomUUID();
    const attempt = async (): Promise<Reply> => {
      for (;;) {
        const reply = await register(body, key);
        if (reply.status !== 409) return reply;
        expect(reply.json.code).toBe("IDEMPOTENCY_KEY_IN_FLIGHT");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const replies = await Promise.all(Array.from({ length: 20 }, attempt));
    for (const reply of replies) expect(reply.status, reply.text).toBe(201);
    expect(new Set(replies.map((r) => r.json.api_key)).size).toBe(1);
    expect(new Set(replies.map((r) => r.json.id)).size).toBe(1);
    const servers = await env.DB.prepare("SELECT id FROM servers WHERE name = ?1").bind(name).all();
    expect(servers.results).toHaveLength(1);
    expect((await call("/api/v1/server/tasks/check", { apiKey: replies[0]!.json.api_key })).status).toBe(200);
  });
});

describe("a lease expiring while the agent completes", () => {
  it("ends each time in exactly one of the two outcomes", async () => {
    const outcomes = { completed: 0, lost: 0 };
    for (let round = 0; round < 20; round++) {
      const { id } = await taskIn(w, "running");
      await silence(w.worker.id, id);
      // Every other round the alarm waits for the next turn of the event loop, so that the two reach the room in either order.
      const alarm = () => runDurableObjectAlarm(room(w.project.id));
      const [completion, alarmRan] = await Promise.all([
        cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: { summary: `round ${round}` } }),
        round % 2 === 0 ? alarm() : new Promise((resolve) => setTimeout(resolve, 0)).then(alarm),
      ]);
      expect(alarmRan).toBe(true);
      const task = await taskOf(w, id);
      if (completion.status === 200) {
        outcomes.completed++;
        expect(task).toMatchObject({ status: "done", result: { summary: `round ${round}` }, error_code: null });
      } else {
        outcomes.lost++;
        expectProblem(completion, 409, "INVALID_TRANSITION");
        expect(task).toMatchObject({ status: "failed", error_code: AGENT_LOST, late_result: { result: { summary: `round ${round}` } } });
      }
      const types = (await eventsOf(w, id)).map((e) => e.type);
      expect(types.filter((t) => t === "task_completed" || t === "task_failed")).toHaveLength(1);
    }
    expect(outcomes.completed + outcomes.lost).toBe(20);
  });
});
