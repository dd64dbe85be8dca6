/**
 * Outbound webhooks end to end: events committed by a project's room reach a
 * receiver (test/receiver-setup.ts, outside workerd) that verifies each with
 * the `standardwebhooks` library, once and in order, through failures,
 * retries, an evicted endpoint object and secret rotation.
 */
import { createExecutionContext, env, evictDurableObject, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, inject, it } from "vitest";
import worker from "../src/index";
import { sweepExpired, wakeStrandedDeliveries } from "../src/cron/maintenance";
import { aTraceparent, addMember, BASE, call, createProject, createUser, expectProblem, until } from "./helpers";
import { cli, createWorld, expectOk, T, type World } from "./task-world";

let w: World;
const receiver = inject("receiver");

beforeAll(async () => {
  w = await createWorld("Webhooks");
});

const H = () => `/api/v1/projects/${w.project.id}/webhooks`;
const endpointOf = (webhookId: string) => env.WEBHOOK_ENDPOINT.get(env.WEBHOOK_ENDPOINT.idFromName(webhookId));

interface Received {
  id: string;
  traceparent: string | null;
  verified: boolean;
  body: { type: string; timestamp: string; data: any };
}

/** A receiver of its own, knowing `secrets`, answering `status`. */
async function control(name: string, settings: Record<string, unknown> = {}): Promise<{ received: Received[] }> {
  const res = await fetch(`${receiver}/control/${name}`, { method: "POST", body: JSON.stringify(settings) });
  return res.json();
}
const received = async (name: string) => (await control(name)).received;

/** A webhook of the world's project to a fresh receiver that knows its secret. */
async function subscribe(body: Record<string, unknown> = {}) {
  const name = crypto.randomUUID().slice(0, 8);
  const created = await expectOk(call(H(), { token: w.member.token, body: { url: `${receiver}/hooks/${name}`, ...body } }), 201);
  await control(name, { secrets: [created.json.secret], status: 200, delayMs: 0 });
  return { name, id: created.json.id as string, secret: created.json.secret as string };
}

/** The hub as deployed: private targets refused, names resolved over DNS-over-HTTPS (here the fake resolver). */
const production = { ...env, WEBHOOK_ALLOW_PRIVATE: "false", WEBHOOK_DNS_RESOLVER: `${receiver}/dns-query` };

/** Creates a webhook through the hub as deployed. */
async function createAsDeployed(body: Record<string, unknown>) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(`${BASE}${H()}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${w.member.token}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }),
    production,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, json: (await res.json()) as any };
}

/** Points a name of the fake resolver at these addresses. */
const pointName = (name: string, addresses: string[]) => fetch(`${receiver}/dns-names/${name}`, { method: "POST", body: JSON.stringify(addresses) });

const note = (taskId: string, content: string) => expectOk(call(`/api/v1/tasks/${taskId}/notes`, { token: w.member.token, body: { content } }), 201);
const newTask = async (title: string) => (await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title, project_id: w.project.id }), 201)).json.id as string;

/** Moves a webhook's waiting deliveries' next attempt to now and runs its object's alarm: the retry schedule, without the wait. */
async function retryNow(webhookId: string) {
  await env.DB.prepare("UPDATE outbox SET next_attempt_at = ?2 WHERE target_id = ?1 AND status = 'pending'")
    .bind(webhookId, new Date(Date.now() - 1000).toISOString())
    .run();
  await runDurableObjectAlarm(endpointOf(webhookId));
}

describe("setting webhooks up", () => {
  it("creates a webhook with a whsec_ secret shown once, lists it without the secret", async () => {
    const created = await expectOk(
      call(H(), { token: w.member.token, body: { url: `${receiver}/hooks/setup`, events: ["task_created", "task_failed"], description: "CI" } }),
      201,
    );
    expect(created.json).toMatchObject({
      url: `${receiver}/hooks/setup`,
      events: ["task_created", "task_failed"],
      description: "CI",
      enabled: true,
      disabled_reason: null,
    });
    expect(created.json.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const one = await expectOk(call(`${H()}/${created.json.id}`, { token: w.member.token }));
    expect(one.json.secret).toBeUndefined();
    const listed = await expectOk(call(H(), { token: w.member.token }));
    expect(listed.json.webhooks.map((h: any) => h.id)).toContain(created.json.id);
    expect(JSON.stringify(listed.json)).not.toContain("whsec_");
    // Stored sealed, not as given.
    const stored = await env.DB.prepare("SELECT secret FROM webhooks WHERE id = ?1").bind(created.json.id).first<{ secret: string }>();
    expect(stored!.secret).not.toContain(created.json.secret.slice(6));
  });

  it("refuses bad input naming the field, and people who may not change the project", async () => {
    const bad = await call(H(), { token: w.member.token, body: { url: `${receiver}/hooks/x`, events: ["task_created", "coffee_brewed"] } });
    expectProblem(bad, 422, "VALIDATION_FAILED");
    expect(bad.json.errors.map((e: any) => e.path)).toEqual(["events.1"]);
    const twice = await call(H(), { token: w.member.token, body: { url: `${receiver}/hooks/x`, events: ["task_created", "task_created"] } });
    expect(twice.json.errors).toEqual([{ path: "events", message: "must not repeat an event type" }]);
    expectProblem(await call(H(), { token: w.member.token, body: { url: "not a url" } }), 422, "VALIDATION_FAILED");
    expectProblem(await call(H(), { token: w.member.token, body: { url: "ftp://files.example/x" } }), 422, "VALIDATION_FAILED");
    expectProblem(await call(H(), { token: w.member.token, body: { url: `${receiver}/hooks/x`, events: [] } }), 422, "VALIDATION_FAILED");
    expectProblem(await call(H(), { token: w.member.token, raw: "{", headers: { "Content-Type": "application/json" } }), 400, "MALFORMED_JSON");
    const viewer = await createUser(w.admin, "viewer");
    await addMember(w.admin, w.project.id, viewer.id);
    expectProblem(await call(H(), { token: viewer.token, body: { url: `${receiver}/hooks/x` } }), 403, "FORBIDDEN");
    const stranger = await createUser(w.admin, "member");
    expectProblem(await call(H(), { token: stranger.token }), 404, "NOT_FOUND");
    const { id } = await subscribe();
    const other = await createProject(w.admin);
    expectProblem(await call(`/api/v1/projects/${other.id}/webhooks/${id}`, { token: w.admin }), 404, "NOT_FOUND");
  });

  it("refuses targets that are not https or reach loopback or private addresses, written out or behind a name", async () => {
    const create = (url: string) => createAsDeployed({ url });
    for (const url of [
      "http://public.example/hook",
      "https://127.0.0.1/hook",
      "https://10.1.2.3/hook",
      "https://192.168.1.5/hook",
      "https://169.254.169.254/latest",
      "https://[::1]/hook",
      "https://[fd00::1]/hook",
      "https://localhost/hook",
      "https://printer.local/hook",
      "https://loopback.example/hook",
      "https://sneaky.example/hook",
      "https://nowhere.example/hook",
    ]) {
      const refused = await create(url);
      expect(refused.status, url).toBe(422);
      expect(refused.json.errors[0].path, url).toBe("url");
    }
    expect((await create("https://public.example/hook")).status).toBe(201);
  });
});

describe("deliveries", () => {
  it("delivers every event once, in seq order, signed so the standardwebhooks library verifies it, with the task's trace", async () => {
    const hook = await subscribe();
    const taskId = await newTask("Delivered");
    // Dozens of concurrent writes to the project.
    await Promise.all(Array.from({ length: 24 }, (_, i) => note(taskId, `note ${i}`)));
    const events = (await call(`/api/v1/projects/${w.project.id}/events?since=0&limit=500`, { token: w.member.token })).json.events.filter(
      (e: any) => e.seq >= 1,
    );
    const mine = events.filter((e: any) => e.task_id === taskId);
    const got = await until(
      () => received(hook.name),
      (r) => r.filter((m) => m.body.data.task_id === taskId).length >= mine.length,
      "every event",
    );
    const forTask = got.filter((m) => m.body.data.task_id === taskId);
    expect(forTask.map((m) => m.body.data.seq)).toEqual(mine.map((e: any) => e.seq));
    expect(forTask.every((m) => m.verified)).toBe(true);
    expect(new Set(got.map((m) => m.id)).size).toBe(got.length);
    const seqs = got.map((m) => m.body.data.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(forTask[0]!.body).toEqual({ type: "task_created", timestamp: mine[0].created_at, data: { ...mine[0] } });
    expect(forTask[0]!.id).toMatch(/^msg_[0-9a-f]{32}$/);
    // Each delivery about the task joins its trace: the header and the event say the task's traceparent.
    const { traceparent } = (await call(`${T}/${taskId}`, { apiKey: w.orchestrator.apiKey })).json;
    expect(traceparent).toEqual(aTraceparent());
    expect(forTask.every((m) => m.traceparent === traceparent && m.body.data.traceparent === traceparent)).toBe(true);
  });

  it("sends only the event types a webhook asks for", async () => {
    const hook = await subscribe({ events: ["task_failed"] });
    const id = await newTask("Filtered");
    await note(id, "not wanted");
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`, {}));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/fail`, { error: "boom" }));
    const got = await until(
      () => received(hook.name),
      (r) => r.length >= 1,
      "the failure",
    );
    await new Promise((r) => setTimeout(r, 200));
    expect((await received(hook.name)).map((m) => m.body.type)).toEqual(["task_failed"]);
    expect(got[0]!.body.data).toMatchObject({ task_id: id, data: { error: "boom" } });
  });

  it("holds what follows a failing delivery, retries it with the same webhook-id, and delivers everything in order once the receiver recovers", async () => {
    const hook = await subscribe();
    await control(hook.name, { status: 503 });
    const id = await newTask("Flaky receiver");
    await note(id, "second");
    await note(id, "third");
    await until(
      () => received(hook.name),
      (r) => r.length >= 1,
      "the first attempt",
    );
    const deliveries = await until(
      async () => (await call(`${H()}/${hook.id}/deliveries`, { token: w.member.token })).json.deliveries,
      (d: any[]) => d.length === 3 && d.some((x) => x.attempts === 1),
      "the failed attempt on record",
    );
    const head = deliveries.at(-1);
    expect(head).toMatchObject({ status: "pending", attempts: 1, last_status_code: 503, event_type: "task_created" });
    // The retry waits its turn (5 s after the first failure), and nothing behind it went out meanwhile.
    expect(Date.parse(head.next_attempt_at) - Date.now()).toBeGreaterThan(2000);
    expect((await received(hook.name)).length).toBe(1);
    await retryNow(hook.id);
    expect((await received(hook.name)).length).toBe(2);
    await control(hook.name, { status: 200 });
    await retryNow(hook.id);
    const got = await until(
      () => received(hook.name),
      (r) => r.length >= 5,
      "all three after recovery",
    );
    expect(got.map((m) => m.id)).toEqual([got[0]!.id, got[0]!.id, got[0]!.id, got[3]!.id, got[4]!.id]);
    expect(got.slice(2).map((m) => m.body.data.data.content ?? m.body.type)).toEqual(["task_created", "second", "third"]);
    const log = await expectOk(call(`${H()}/${hook.id}/deliveries/${got[0]!.id}`, { token: w.member.token }));
    expect(log.json).toMatchObject({ status: "delivered", attempts: 3 });
    expect(log.json.attempt_log.map((a: any) => a.status_code)).toEqual([503, 503, 200]);
    expect(log.json.attempt_log.every((a: any) => typeof a.duration_ms === "number" && a.at)).toBe(true);
    // What the receiver answered is for admins: a member chose where the webhook points.
    expect(log.json.attempt_log.map((a: any) => a.response_body)).toEqual([null, null, null]);
    const asAdmin = await expectOk(call(`${H()}/${hook.id}/deliveries/${got[0]!.id}`, { token: w.admin }));
    expect(asAdmin.json.attempt_log.map((a: any) => a.response_body)).toEqual(["not now", "not now", "ok"]);
  });

  it("resolves and checks the target again before delivering: a name moved to a private address gets nothing", async () => {
    const name = `moving-${crypto.randomUUID().slice(0, 6)}.example`;
    await pointName(name, ["93.184.216.34"]);
    const created = await createAsDeployed({ url: `https://${name}/hook`, events: ["task_cancelled"] });
    expect(created.status).toBe(201);
    await pointName(name, ["93.184.216.34", "10.0.0.7"]);
    // The webhook's object as deployed too (tests run the hub with private targets allowed, for the local receivers).
    await runInDurableObject(endpointOf(created.json.id), (endpoint) => {
      (endpoint as unknown as { env: typeof production }).env = production;
    });
    const test = await expectOk(call(`${H()}/${created.json.id}/test`, { method: "POST", token: w.member.token }), 202);
    const log = await until(
      async () => (await call(`${H()}/${created.json.id}/deliveries/${test.json.id}`, { token: w.admin })).json,
      (d: any) => d.attempt_log.length === 1,
      "the refused attempt",
    );
    expect(log).toMatchObject({ status: "pending", attempts: 1, last_status_code: null });
    expect(log.attempt_log[0]).toMatchObject({ status_code: null, duration_ms: 0, response_body: null });
    expect(log.attempt_log[0].error).toBe(`not sent: the target failed its check (${name} resolves to a loopback or private address)`);
    // Its retry right after is refused on the same check: attempts in a burst cost one lookup (A and AAAA), not one each.
    const queries = async () => ((await (await fetch(`${receiver}/dns-queries/${name}`)).json()) as { count: number }).count;
    const looked = await queries();
    await retryNow(created.json.id);
    const retried = await until(
      async () => (await call(`${H()}/${created.json.id}/deliveries/${test.json.id}`, { token: w.admin })).json,
      (d: any) => d.attempt_log.length === 2,
      "the refused retry",
    );
    expect(retried.attempt_log[1].error).toBe(log.attempt_log[0].error);
    expect(await queries()).toBe(looked);
    await expectOk(call(`${H()}/${created.json.id}`, { method: "DELETE", token: w.member.token }), 204);
  });

  it("loses nothing when the endpoint's object is evicted while a delivery is under way", async () => {
    const hook = await subscribe();
    await control(hook.name, { delayMs: 400 });
    const id = await newTask("Evicted");
    await note(id, "after it");
    // The second delivery is under way (the receiver takes its time) when the object goes: its answer is never recorded.
    await until(
      () => received(hook.name),
      (r) => r.length >= 1,
      "the first delivery",
    );
    await evictDurableObject(endpointOf(hook.id));
    await control(hook.name, { delayMs: 0 });
    await retryNow(hook.id);
    const got = await until(
      () => received(hook.name),
      (r) => new Set(r.map((m) => m.id)).size >= 2,
      "both events",
    );
    const firsts = [...new Map(got.map((m) => [m.id, m.body.data.seq])).values()];
    expect(firsts).toEqual([...firsts].sort((a, b) => a - b));
    const deliveries = (await call(`${H()}/${hook.id}/deliveries`, { token: w.member.token })).json.deliveries;
    expect(deliveries.every((d: any) => d.status === "delivered")).toBe(true);
  });

  it("signs with both secrets for a day after a rotation, then with the new one only", async () => {
    const hook = await subscribe();
    const rotated = await expectOk(call(`${H()}/${hook.id}/rotate-secret`, { method: "POST", token: w.member.token }));
    expect(rotated.json.secret).not.toBe(hook.secret);
    expect(Date.parse(rotated.json.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    // A receiver that still holds the old secret, and one that already has the new one, both verify.
    const id = await newTask("Rotated");
    expect(
      (
        await until(
          () => received(hook.name),
          (r) => r.length >= 1,
          "a delivery",
        )
      )[0]!.verified,
    ).toBe(true);
    await control(hook.name, { secrets: [rotated.json.secret] });
    await note(id, "new secret only");
    expect(
      (
        await until(
          () => received(hook.name),
          (r) => r.length >= 2,
          "a second delivery",
        )
      )[1]!.verified,
    ).toBe(true);
    await env.DB.prepare("UPDATE webhooks SET previous_secret_expires_at = ?2 WHERE id = ?1")
      .bind(hook.id, new Date(Date.now() - 1000).toISOString())
      .run();
    await control(hook.name, { secrets: [hook.secret] });
    await note(id, "old secret expired");
    expect(
      (
        await until(
          () => received(hook.name),
          (r) => r.length >= 3,
          "a third delivery",
        )
      )[2]!.verified,
    ).toBe(false);
  });

  it("sends a test delivery, and a delivery again by hand with the same webhook-id", async () => {
    const hook = await subscribe({ events: ["task_cancelled"] });
    const test = await expectOk(call(`${H()}/${hook.id}/test`, { method: "POST", token: w.member.token }), 202);
    const got = await until(
      () => received(hook.name),
      (r) => r.length >= 1,
      "the test",
    );
    expect(got[0]).toMatchObject({ id: test.json.id, verified: true, body: { type: "webhook.test", data: { webhook_id: hook.id } } });
    await expectOk(call(`${H()}/${hook.id}/deliveries/${test.json.id}/redeliver`, { method: "POST", token: w.member.token }), 202);
    const again = await until(
      () => received(hook.name),
      (r) => r.length >= 2,
      "the redelivery",
    );
    expect(again[1]!.id).toBe(test.json.id);
    const log = await until(
      async () => (await call(`${H()}/${hook.id}/deliveries/${test.json.id}`, { token: w.member.token })).json,
      (d: any) => d.attempt_log.length === 2,
      "both attempts logged",
    );
    expect(log.attempt_log.map((a: any) => a.attempt)).toEqual([1, 2]);
    expectProblem(await call(`${H()}/${hook.id}/deliveries/msg_nope/redeliver`, { method: "POST", token: w.member.token }), 404, "NOT_FOUND");
  });

  it("disables an endpoint whose delivery ran out of tries, says so in an event, and resumes when enabled again", async () => {
    const hook = await subscribe();
    await control(hook.name, { status: 500 });
    const id = await newTask("Dead endpoint");
    await until(
      () => received(hook.name),
      (r) => r.length >= 1,
      "the first attempt",
    );
    await env.DB.prepare("UPDATE outbox SET attempts = 7 WHERE target_id = ?1 AND seq IS NOT NULL").bind(hook.id).run();
    await retryNow(hook.id);
    const disabled = await until(
      async () => (await call(`${H()}/${hook.id}`, { token: w.member.token })).json,
      (h: any) => h.enabled === false,
      "the endpoint disabled",
    );
    expect(disabled.disabled_reason).toContain("failed 8 times");
    const events = (await call(`/api/v1/projects/${w.project.id}/events?since=0&limit=1000`, { token: w.member.token })).json.events;
    const disabledEvents = events.filter((e: any) => e.type === "webhook_disabled" && e.data.webhook_id === hook.id);
    expect(disabledEvents).toHaveLength(1);
    // The URL is not in the project's log: it may carry a token.
    expect(JSON.stringify(disabledEvents[0].data)).not.toContain(receiver);
    // Nothing is recorded for a disabled endpoint; enabling it again delivers from where it stopped.
    await note(id, "while disabled");
    await control(hook.name, { status: 200 });
    const enabled = await expectOk(call(`${H()}/${hook.id}`, { method: "PATCH", token: w.member.token, body: { enabled: true } }));
    expect(enabled.json).toMatchObject({ enabled: true, disabled_reason: null });
    await note(id, "after enabling");
    const got = await until(
      () => received(hook.name),
      (r) => r.some((m) => m.body.data.data?.content === "after enabling"),
      "the delivery after enabling",
    );
    expect(got.some((m) => m.body.data.data?.content === "while disabled")).toBe(false);
  });

  it("keeps finished deliveries and their attempts a week, and pending ones until they are sent (a project that does not archive)", async () => {
    expect((await call(`/api/v1/projects/${w.project.id}`, { method: "PATCH", token: w.admin, body: { settings: { archive_after_days: null } } })).status).toBe(
      200,
    );
    const hook = await subscribe();
    await newTask("Swept");
    await until(
      () => received(hook.name),
      (r) => r.length >= 1,
      "a delivery",
    );
    await control(hook.name, { status: 500 });
    await newTask("Still owed");
    await until(
      () => received(hook.name),
      (r) => r.length >= 2,
      "a failing attempt",
    );
    const count = async (status: string) =>
      (await env.DB.prepare("SELECT COUNT(*) AS n FROM outbox WHERE target_id = ?1 AND status = ?2").bind(hook.id, status).first<{ n: number }>())!.n;
    await sweepExpired(env, Date.now() + 6 * 24 * 3600 * 1000);
    expect([await count("delivered"), await count("pending")]).toEqual([1, 1]);
    await sweepExpired(env, Date.now() + 8 * 24 * 3600 * 1000);
    expect([await count("delivered"), await count("pending")]).toEqual([0, 1]);
    expect(
      (await env.DB.prepare("SELECT COUNT(*) AS n FROM delivery_attempts a JOIN outbox o ON o.id = a.outbox_id WHERE o.target_id = ?1")
        .bind(hook.id)
        .first<{ n: number }>())!.n,
    ).toBe(1);
  });

  it("leaves an archiving project's finished deliveries to its archiver, and sweeps those of a deleted project", async () => {
    const archiving = await createProject(w.admin);
    const gone = crypto.randomUUID();
    const old = new Date(Date.now() - 30 * 24 * 3600 * 1000).toISOString();
    const insert = (id: string, projectId: string) =>
      env.DB.prepare(
        "INSERT INTO outbox (id, target_kind, target_id, project_id, seq, event_type, status, attempts, next_attempt_at, created_at) VALUES (?1, 'webhook', ?2, ?3, NULL, 'ping', 'delivered', 1, ?4, ?4)",
      )
        .bind(id, crypto.randomUUID(), projectId, old)
        .run();
    await insert("msg_sweep_archiving", archiving.id);
    await insert("msg_sweep_deleted", gone);
    await sweepExpired(env);
    const left = (await env.DB.prepare("SELECT id FROM outbox WHERE id IN ('msg_sweep_archiving', 'msg_sweep_deleted')").all<{ id: string }>()).results;
    expect(left.map((r) => r.id)).toEqual(["msg_sweep_archiving"]);
  });

  it("delivers what nobody woke its endpoint for, at the next housekeeping", async () => {
    const hook = await subscribe();
    await newTask("Woken late");
    await until(
      () => received(hook.name),
      (r) => r.length >= 1,
      "the first delivery",
    );
    // A row recorded as a batch records it, but whose wake never came (the room restarted between commit and wake).
    const seq = (await env.DB.prepare("SELECT MAX(seq) AS s FROM events WHERE project_id = ?1").bind(w.project.id).first<{ s: number }>())!.s;
    await env.DB.prepare(
      "INSERT INTO outbox (id, target_kind, target_id, project_id, seq, event_type, status, attempts, next_attempt_at, created_at) VALUES ('msg_stranded0000000000000000000000', 'webhook', ?1, ?2, ?3, 'task_created', 'pending', 0, ?4, ?4)",
    )
      .bind(hook.id, w.project.id, seq + 1000, new Date().toISOString())
      .run();
    await evictDurableObject(endpointOf(hook.id));
    expect(await wakeStrandedDeliveries(env)).toBeGreaterThanOrEqual(1);
    await until(
      () => received(hook.name),
      (r) => r.some((m) => m.id === "msg_stranded0000000000000000000000"),
      "the stranded delivery",
    );
  });

  it("forgets a deleted webhook's deliveries", async () => {
    const hook = await subscribe();
    await control(hook.name, { status: 500 });
    await newTask("Deleted hook");
    await until(
      () => received(hook.name),
      (r) => r.length >= 1,
      "an attempt",
    );
    expect((await call(`${H()}/${hook.id}`, { method: "DELETE", token: w.member.token })).status).toBe(204);
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM outbox WHERE target_id = ?1").bind(hook.id).first<{ n: number }>())!.n).toBe(0);
    expectProblem(await call(`${H()}/${hook.id}`, { token: w.member.token }), 404, "NOT_FOUND");
  });
});
