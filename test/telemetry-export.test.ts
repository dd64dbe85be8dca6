/**
 * The telemetry export end to end: tasks that finish in a project reach a fake
 * collector on loopback (test/collector-setup.ts, outside workerd) as OTLP/HTTP
 * protobuf, which it decodes with the OpenTelemetry protobuf definitions: one
 * span per finished task, in the task's trace, linked to the tasks it depends
 * on, sent in order with the configured headers, through a failing collector
 * and the retries after it. Admins set it up; its headers are never answered.
 */
import { createExecutionContext, env, runDurableObjectAlarm, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, inject, it } from "vitest";
import worker from "../src/index";
import { addMember, BASE, call, createProject, createUser, expectProblem, until } from "./helpers";
import { cli, createWorld, expectOk, openSession, T, type World } from "./task-world";

const collector = inject("collector");
const receiver = inject("receiver");

let w: World;
beforeAll(async () => {
  w = await createWorld("Telemetry");
});

interface Span {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, unknown>;
  events: { name: string; timeUnixNano: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  status: { code: number; message: string };
  resource: Record<string, unknown>;
  scope: { name: string; version: string };
}
interface Export {
  path: string;
  headers: Record<string, string>;
  spans: Span[];
  error: string | null;
}

const E = (projectId: string) => `/api/v1/projects/${projectId}/telemetry-export`;
const exporterOf = (projectId: string) => env.TELEMETRY_EXPORT.get(env.TELEMETRY_EXPORT.idFromName(projectId));

/** A collector of its own, answering `status`; answers what it received. */
async function control(name: string, settings: Record<string, unknown> = {}): Promise<{ received: Export[] }> {
  return (await fetch(`${collector}/control/${name}`, { method: "POST", body: JSON.stringify(settings) })).json();
}
const received = async (name: string) => (await control(name)).received;
const exportsAt = (name: string, count: number) =>
  until(
    () => received(name),
    (r) => r.length >= count,
    `${count} exports at ${name}`,
  );

/** A project of the world's agents (the worker with a session of its own in it), exporting to a fresh collector. */
async function exportingProject(body: Record<string, unknown> = {}) {
  const project = await createProject(w.admin);
  await addMember(w.admin, project.id, w.member.id);
  const sessionName = `worker-${crypto.randomUUID().slice(0, 6)}`;
  const world: Project = { project, sessionName, workerSession: await openSession(w.worker.apiKey, project.id, sessionName) };
  const name = crypto.randomUUID().slice(0, 8);
  await control(name, { status: 200, retryAfter: null });
  const saved = await expectOk(call(E(project.id), { method: "PUT", token: w.admin, body: { endpoint: `${collector}/otlp/${name}`, ...body } }), 201);
  return { world, name, saved: saved.json };
}

interface Project {
  project: { id: string; name: string };
  sessionName: string;
  workerSession: string;
}

const newTask = async (world: Project, body: Record<string, unknown> = {}) =>
  (await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "A task", spec: "Do it", project_id: world.project.id, ...body }), 201)).json.id as string;

async function run(world: Project, id: string) {
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: world.sessionName }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
}
const complete = (id: string, result: unknown = { summary: "finished it" }) => expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result }));
const fail = (id: string, error = "broke") => expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/fail`, { error }));
const cancel = (id: string) => expectOk(call(`/api/v1/tasks/${id}`, { method: "DELETE", token: w.member.token, body: { reason: "not needed now" } }));
const taskOf = async (id: string) => (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}`))).json;

/** Moves the export's waiting spans' next attempt to now and runs its object's alarm: the retry schedule, without the wait. */
async function retryNow(projectId: string) {
  await env.DB.prepare("UPDATE outbox SET next_attempt_at = ?2 WHERE target_kind = 'telemetry' AND target_id = ?1 AND status = 'pending'")
    .bind(projectId, new Date(Date.now() - 1000).toISOString())
    .run();
  await runDurableObjectAlarm(exporterOf(projectId));
}

const outboxOf = (projectId: string) =>
  env.DB.prepare("SELECT * FROM outbox WHERE target_kind = 'telemetry' AND target_id = ?1 ORDER BY created_at, seq")
    .bind(projectId)
    .all<{ id: string; seq: number; status: string; attempts: number; last_status_code: number | null; last_error: string | null; next_attempt_at: string }>()
    .then((r) => r.results);

/** The hub as deployed: private targets refused, names resolved over DNS-over-HTTPS (the receiver's fake resolver). */
async function putAsDeployed(projectId: string, body: Record<string, unknown>) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(`${BASE}${E(projectId)}`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${w.admin}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }),
    { ...env, WEBHOOK_ALLOW_PRIVATE: "false", WEBHOOK_DNS_RESOLVER: `${receiver}/dns-query` },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: res.status, json: (await res.json()) as any };
}

const nanosOf = (iso: string) => String(BigInt(Date.parse(iso)) * 1_000_000n);

describe("setting the export up", () => {
  it("saves an export with sealed headers that no answer shows, and replaces it whole", async () => {
    const project = await createProject(w.admin);
    const endpoint = `${collector}/otlp/setup`;
    const put = await expectOk(
      call(E(project.id), {
        method: "PUT",
        token: w.admin,
        body: { endpoint, headers: { Authorization: "Bearer sk-collector-123", "X-Scope-OrgID": "team-a" } },
      }),
      201,
    );
    expect(put.json).toEqual({
      project_id: project.id,
      endpoint,
      traces_url: `${endpoint}/v1/traces`,
      header_names: ["Authorization", "X-Scope-OrgID"],
      include_content: false,
      enabled: true,
      disabled_reason: null,
      pending: 0,
      last_error: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const got = await expectOk(call(E(project.id), { token: w.admin }));
    expect(got.json).toEqual(put.json);
    for (const answer of [put.text, got.text]) {
      expect(answer).not.toContain("sk-collector-123");
      expect(answer).not.toContain("team-a");
    }
    const stored = await env.DB.prepare("SELECT headers FROM telemetry_exports WHERE project_id = ?1").bind(project.id).first<{ headers: string }>();
    expect(stored!.headers).toMatch(/^v1\./);
    expect(stored!.headers).not.toContain("sk-collector-123");
    // A PUT replaces it whole: an endpoint already naming the traces path is used as it is, and headers left out are gone.
    const replaced = await expectOk(call(E(project.id), { method: "PUT", token: w.admin, body: { endpoint: `${endpoint}/v1/traces`, include_content: true } }));
    expect(replaced.json).toMatchObject({ traces_url: `${endpoint}/v1/traces`, header_names: [], include_content: true, created_at: put.json.created_at });
    const slashed = await expectOk(call(E(project.id), { method: "PUT", token: w.admin, body: { endpoint: `${endpoint}/` } }));
    expect(slashed.json.traces_url).toBe(`${endpoint}/v1/traces`);
    await expectOk(call(E(project.id), { method: "DELETE", token: w.admin }), 204);
    expectProblem(await call(E(project.id), { token: w.admin }), 404, "NOT_FOUND");
    expectProblem(await call(E(project.id), { method: "DELETE", token: w.admin }), 404, "NOT_FOUND");
  });

  it("refuses people who are not admins, bad input naming the field, and projects that do not exist", async () => {
    const project = await createProject(w.admin);
    const put = (body: unknown, token = w.admin) => call(E(project.id), { method: "PUT", token, body });
    const endpoint = `${collector}/otlp/refused`;
    expectProblem(await put({ endpoint }, w.member.token), 403, "FORBIDDEN");
    expectProblem(await call(E(project.id), { token: w.member.token }), 403, "FORBIDDEN");
    const viewer = await createUser(w.admin, "viewer");
    expectProblem(await call(E(project.id), { method: "DELETE", token: viewer.token }), 403, "FORBIDDEN");
    const fieldsOf = async (body: unknown) => {
      const refused = await put(body);
      expectProblem(refused, 422, "VALIDATION_FAILED");
      return refused.json.errors.map((e: { path: string }) => e.path);
    };
    expect(await fieldsOf({ endpoint: "not a url" })).toEqual(["endpoint"]);
    expect(await fieldsOf({ endpoint: "ftp://collector.example/otlp" })).toEqual(["endpoint"]);
    expect(await fieldsOf({})).toEqual(["endpoint"]);
    expect(await fieldsOf({ endpoint, headers: { "Bad Name": "x" } })).toEqual(["headers.Bad Name"]);
    expect(await fieldsOf({ endpoint, headers: { "content-type": "text/plain" } })).toEqual(["headers.content-type"]);
    expect(await fieldsOf({ endpoint, headers: { "X-Key": "a\r\nInjected: yes" } })).toEqual(["headers.X-Key"]);
    expect(await fieldsOf({ endpoint, headers: { "X-Key": 42 } })).toEqual(["headers.X-Key"]);
    expect(await fieldsOf({ endpoint, include_content: "yes" })).toEqual(["include_content"]);
    expectProblem(
      await call(E(project.id), { method: "PUT", token: w.admin, raw: "{", headers: { "Content-Type": "application/json" } }),
      400,
      "MALFORMED_JSON",
    );
    // A project that does not exist, and one with no export.
    expectProblem(await call(E(crypto.randomUUID()), { method: "PUT", token: w.admin, body: { endpoint } }), 404, "NOT_FOUND");
    expectProblem(await call(E(crypto.randomUUID()), { token: w.admin }), 404, "NOT_FOUND");
    expectProblem(await call(E(project.id), { token: w.admin }), 404, "NOT_FOUND");
  });

  it("takes only https to public addresses where the hub is deployed", async () => {
    const project = await createProject(w.admin);
    for (const endpoint of [
      "http://public.example/otlp",
      "https://127.0.0.1:4318",
      "https://[::1]/otlp",
      "https://localhost:4318",
      "https://loopback.example/otlp",
      "https://10.0.0.5/otlp",
    ]) {
      const refused = await putAsDeployed(project.id, { endpoint });
      expect(refused.status, endpoint).toBe(422);
      expect(
        refused.json.errors.map((e: { path: string }) => e.path),
        endpoint,
      ).toEqual(["endpoint"]);
    }
    expect((await putAsDeployed(project.id, { endpoint: "https://public.example/otlp" })).status).toBe(201);
  });
});

describe("spans", () => {
  it("sends one span per finished task, in order, in the task's trace, linked along its dependencies, with the configured headers and no content", async () => {
    const { world, name } = await exportingProject({ headers: { Authorization: "Bearer collector-key" } });
    const design = await newTask(world, { title: "Design the API", spec: "SPEC-DESIGN-TEXT", priority: "high", type: "design" });
    const client = await newTask(world, {
      title: "Write the client",
      spec: "SPEC-CLIENT-TEXT",
      dependencies: [{ depends_on_task_id: design, dependency_type: "blocks" }],
    });
    const broken = await newTask(world, { title: "Break" });
    const dropped = await newTask(world, { title: "Dropped" });
    const unfinished = await newTask(world, { title: "Still running" });
    await run(world, design);
    await complete(design, { summary: "RESULT-DESIGN-SUMMARY" });
    await run(world, client);
    await complete(client);
    await run(world, broken);
    await fail(broken, "FAILURE-MESSAGE-TEXT");
    await cancel(dropped);
    await run(world, unfinished);
    const got = await exportsAt(name, 4);
    await new Promise((r) => setTimeout(r, 300));
    expect((await received(name)).length).toBe(4);

    for (const x of got) {
      expect(x.error).toBeNull();
      expect(x.path).toBe(`/otlp/${name}/v1/traces`);
      expect(x.headers["content-type"]).toBe("application/x-protobuf");
      expect(x.headers.authorization).toBe("Bearer collector-key");
      expect(x.spans).toHaveLength(1);
    }
    const spans = got.map((x) => x.spans[0]!);
    // In the order the tasks finished.
    expect(spans.map((s) => s.attributes["orchestratia.task_id"])).toEqual([design, client, broken, dropped]);
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(4);
    const [designSpan, clientSpan, brokenSpan, droppedSpan] = spans as [Span, Span, Span, Span];
    for (const [span, id] of [
      [designSpan, design],
      [clientSpan, client],
      [brokenSpan, broken],
      [droppedSpan, dropped],
    ] as const) {
      const task = await taskOf(id);
      // The hub's trace for the task; the parent is the span its traceparent names, its own span another.
      const [, traceId, parentId] = task.traceparent.split("-");
      expect(span.traceId).toBe(task.trace_id);
      expect(span.traceId).toBe(traceId);
      expect(span.parentSpanId).toBe(parentId);
      expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(span.spanId).not.toBe(parentId);
      expect(span.name).toBe(task.title);
      expect(span.kind).toBe(1);
      expect(span.startTimeUnixNano).toBe(nanosOf(task.created_at));
      expect(span.endTimeUnixNano).toBe(nanosOf(task.completed_at));
      expect(span.attributes).toMatchObject({
        "orchestratia.task_id": id,
        "orchestratia.project_id": world.project.id,
        "orchestratia.type": task.type,
        "orchestratia.priority": task.priority,
        "orchestratia.status": task.status,
      });
      expect(span.resource).toMatchObject({ "service.name": "orchestratia-hub", "orchestratia.project_id": world.project.id });
    }
    // The task graph: the client's span links to the design's.
    expect(designSpan.links).toEqual([]);
    expect(clientSpan.links).toEqual([
      { traceId: designSpan.traceId, spanId: designSpan.spanId, attributes: { "orchestratia.task_id": design, "orchestratia.dependency_type": "blocks" } },
    ]);
    expect(designSpan.attributes).toMatchObject({
      "orchestratia.server": w.worker.name,
      "orchestratia.session": world.workerSession,
      "orchestratia.session_name": world.sessionName,
    });
    // Status: done is OK, failed is ERROR (without its message, which is content), cancelled is unset and says so.
    expect(designSpan.status).toEqual({ code: 1, message: "" });
    expect(brokenSpan.status).toEqual({ code: 2, message: "the task failed" });
    expect(droppedSpan.status).toEqual({ code: 0, message: "" });
    expect(droppedSpan.attributes).toMatchObject({ "orchestratia.status": "cancelled", "orchestratia.cancelled": true });
    // Status changes are the span's events.
    expect(designSpan.events.map((e) => [e.name, e.attributes["orchestratia.status"]])).toEqual([
      ["task_created", "pending"],
      ["task_assigned", "assigned"],
      ["task_started", "running"],
      ["task_completed", "done"],
    ]);
    expect(designSpan.events[3]!.attributes["orchestratia.previous_status"]).toBe("running");
    // No spec, result, failure message or cancellation reason unless the project opts in.
    const sent = JSON.stringify(got);
    for (const content of ["SPEC-DESIGN-TEXT", "SPEC-CLIENT-TEXT", "RESULT-DESIGN-SUMMARY", "FAILURE-MESSAGE-TEXT", "not needed now"])
      expect(sent).not.toContain(content);
    expect(Object.keys(designSpan.attributes).filter((k) => /spec|result|reason/.test(k))).toEqual([]);
    const rows = await outboxOf(world.project.id);
    expect(rows.map((r) => r.status)).toEqual(["delivered", "delivered", "delivered", "delivered"]);
    expect((await expectOk(call(E(world.project.id), { token: w.admin }))).json).toMatchObject({ pending: 0, last_error: null });
  });

  it("sends the spec, the result's summary and a failure's message with include_content, and the task's usage", async () => {
    const { world, name } = await exportingProject({ include_content: true });
    const done = await newTask(world, { title: "With content", spec: "The whole spec" });
    await run(world, done);
    const at = new Date().toISOString();
    const who = { sessionId: world.workerSession, serverId: w.worker.id, agentType: "claude_code", model: "claude-sonnet-4-5" };
    await env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(world.project.id)).recordUsage([
      { ...who, measure: "input_tokens", value: 1200, at },
      { ...who, measure: "output_tokens", value: 300, at },
      { ...who, measure: "cost_usd", value: 0.75, at },
    ]);
    await until(
      () => env.DB.prepare("SELECT cost_usd FROM task_usage WHERE task_id = ?1").bind(done).first<{ cost_usd: number }>(),
      (r) => (r?.cost_usd ?? 0) > 0.7,
      "the task's usage",
    );
    await complete(done, { summary: "What was done" });
    const failed = await newTask(world, { title: "Fails with content" });
    await run(world, failed);
    await fail(failed, "the disk was full");
    const [withContent, withFailure] = (await exportsAt(name, 2)).map((x) => x.spans[0]!);
    expect(withContent!.attributes).toMatchObject({
      "orchestratia.spec": "The whole spec",
      "orchestratia.result.summary": "What was done",
      "orchestratia.usage.input_tokens": 1200,
      "orchestratia.usage.output_tokens": 300,
      "orchestratia.usage.cost_usd": 0.75,
    });
    expect(withFailure!.status).toEqual({ code: 2, message: "the disk was full" });
  });

  it("holds what follows a refused span, tries it again (later where the collector asks), then sends everything in order", async () => {
    const { world, name } = await exportingProject();
    await control(name, { status: 503, retryAfter: "120" });
    const first = await newTask(world, { title: "First" });
    const second = await newTask(world, { title: "Second" });
    await run(world, first);
    await complete(first);
    await run(world, second);
    await complete(second);
    await exportsAt(name, 1);
    const rows = await until(
      () => outboxOf(world.project.id),
      // The attempt is logged, then its next try set: both are on record once the next try is ahead.
      (r) => r.length === 2 && r[0]!.attempts === 1 && Date.parse(r[0]!.next_attempt_at) > Date.now(),
      "the refused attempt on record",
    );
    expect(rows[0]).toMatchObject({ status: "pending", attempts: 1, last_status_code: 503 });
    // The collector's Retry-After (two minutes) outlasts the schedule's first wait (5 s); nothing behind it went out.
    expect(Date.parse(rows[0]!.next_attempt_at) - Date.now()).toBeGreaterThan(100_000);
    expect(rows[1]).toMatchObject({ status: "pending", attempts: 0 });
    expect((await received(name)).length).toBe(1);
    expect((await expectOk(call(E(world.project.id), { token: w.admin }))).json).toMatchObject({ pending: 2, last_error: "answered 503" });
    await control(name, { retryAfter: null });
    await retryNow(world.project.id);
    expect((await received(name)).length).toBe(2);
    await control(name, { status: 200 });
    await retryNow(world.project.id);
    const got = await exportsAt(name, 4);
    expect(got.map((x) => x.spans[0]!.attributes["orchestratia.task_id"])).toEqual([first, first, first, second]);
    // The same span each time.
    expect(new Set(got.slice(0, 3).map((x) => x.spans[0]!.spanId)).size).toBe(1);
    expect((await outboxOf(world.project.id)).map((r) => [r.status, r.attempts])).toEqual([
      ["delivered", 3],
      ["delivered", 1],
    ]);
    const attempts = await env.DB.prepare("SELECT status_code FROM delivery_attempts WHERE outbox_id = ?1 ORDER BY attempt").bind(rows[0]!.id).all();
    expect(attempts.results.map((a) => a.status_code)).toEqual([503, 503, 200]);
  });

  it("sends a retried task's span again when it finishes again, as a span of its own", async () => {
    const { world, name } = await exportingProject();
    const id = await newTask(world, { title: "Second time lucky" });
    await run(world, id);
    await fail(id);
    await exportsAt(name, 1);
    await expectOk(call(`/api/v1/tasks/${id}/retry`, { method: "POST", token: w.member.token }));
    await run(world, id);
    await complete(id);
    const [failed, done] = (await exportsAt(name, 2)).map((x) => x.spans[0]!);
    expect(failed!.status.code).toBe(2);
    expect(done!.status.code).toBe(1);
    expect(done!.attributes["orchestratia.retry_count"]).toBe(1);
    expect(done!.traceId).toBe(failed!.traceId);
    expect(done!.spanId).not.toBe(failed!.spanId);
    expect(done!.events.map((e) => e.name)).toContain("task_retried");
  });

  it("disables the export when a span's tries run out, records nothing while disabled, and starts again when saved", async () => {
    const { world, name } = await exportingProject();
    await control(name, { status: 500 });
    const id = await newTask(world, { title: "Never accepted" });
    await run(world, id);
    await complete(id);
    await exportsAt(name, 1);
    // The last try of the schedule fails.
    await until(
      () => outboxOf(world.project.id),
      (r) => r[0]?.attempts === 1,
      "the first attempt",
    );
    await env.DB.prepare("UPDATE outbox SET attempts = 7 WHERE target_kind = 'telemetry' AND target_id = ?1").bind(world.project.id).run();
    await retryNow(world.project.id);
    const disabled = (await expectOk(call(E(world.project.id), { token: w.admin }))).json;
    expect(disabled).toMatchObject({ enabled: false, pending: 0, last_error: "answered 500" });
    expect(disabled.disabled_reason).toMatch(/failed 8 times over about a day \(last: answered 500\)/);
    const later = await newTask(world, { title: "While disabled" });
    await cancel(later);
    await new Promise((r) => setTimeout(r, 200));
    expect((await outboxOf(world.project.id)).map((r) => r.status)).toEqual(["failed"]);
    await control(name, { status: 200 });
    const saved = await expectOk(call(E(world.project.id), { method: "PUT", token: w.admin, body: { endpoint: `${collector}/otlp/${name}` } }));
    expect(saved.json).toMatchObject({ enabled: true, disabled_reason: null });
    const again = await newTask(world, { title: "After saving again" });
    await cancel(again);
    const got = await exportsAt(name, 3);
    expect(got.at(-1)!.spans[0]!.attributes["orchestratia.task_id"]).toBe(again);
  });

  it("stops when the export is deleted: what waited is dropped and nothing more is recorded", async () => {
    const { world, name } = await exportingProject();
    await control(name, { status: 503 });
    const id = await newTask(world, { title: "Waiting" });
    await cancel(id);
    await exportsAt(name, 1);
    await expectOk(call(E(world.project.id), { method: "DELETE", token: w.admin }), 204);
    expect(await outboxOf(world.project.id)).toEqual([]);
    await cancel(await newTask(world, { title: "After the export" }));
    await retryNow(world.project.id);
    expect(await outboxOf(world.project.id)).toEqual([]);
    expect((await received(name)).length).toBe(1);
  });
});
