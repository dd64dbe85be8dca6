/**
 * The agent-envelope dialect (seeds/agent-envelope.md) over HTTP: the input
 * envelope an agent is given, and how an output envelope sent as a result
 * ends the task.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, createUser, expectProblem } from "./helpers";
import { cli, createWorld, expectOk, newTask, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Agent envelopes");
});

const PEOPLE = "/api/v1/tasks";
const get = async (id: string) => (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}`))).json;
const taskEvents = async (id: string) =>
  (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}/events`))).json.events as { type: string; task_id: string; data: Record<string, unknown> }[];
const complete = (id: string, result: unknown) => cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result });

async function running(body: Record<string, unknown> = {}) {
  const id = await newTask(w, body);
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
  return id;
}

const artifacts = [{ path: "specs/005-user-auth/spec.md", operation: "update", content: "# Spec\n\nUpdated." }];
const envelope = (success: boolean, recommendation: string, summary = "Validated spec. Found 3 gaps requiring attention.") => ({
  success,
  summary,
  artifacts,
  notes: ["Ready for next phase", "Focus on auth edge cases"],
  recommendation,
});

describe("the input envelope", () => {
  let upstream: string;
  let task: string;
  beforeAll(async () => {
    upstream = await running();
    await expectOk(complete(upstream, { ...envelope(true, "proceed"), notes: ["Spec complete", "3 edge cases identified"] }));
    const contracts = await running();
    await expectOk(
      complete(contracts, {
        $schema: "orchestratia/task-result/v1",
        summary: "schema done",
        contracts: { schema: { status: "fulfilled", data: { tables: 3 } } },
      }),
    );
    task = await newTask(w, {
      type: "validate",
      target_repo: "api-gateway",
      structured_spec: {
        $schema: "orchestratia/task-spec/v1",
        feature_id: "005-user-auth",
        requirements: [{ description: "validate the spec", priority: "must" }],
        input_context: {
          references: [
            { type: "file", id: "specs/005-user-auth/spec.md", name: "spec" },
            { type: "task", id: upstream },
          ],
        },
      },
      dependencies: [
        { depends_on_task_id: upstream, dependency_type: "blocks" },
        { depends_on_task_id: contracts, dependency_type: "input", contract_key: "schema" },
      ],
    });
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${task}/notes`, { content: "Mind the password reset flow" }), 201);
  });

  it("is built from the task: context, paths, task and prior context from upstream notes, resolved inputs and notes", async () => {
    const reply = await expectOk(cli(w.worker.apiKey, "GET", `${T}/${task}/envelope`));
    const spec = (await get(task)).structured_spec;
    expect(reply.json).toEqual({
      context: { feature_id: "005-user-auth", workflow: "validate", iteration: 1 },
      paths: { spec: "specs/005-user-auth/spec.md", repo: "api-gateway" },
      task: { action: "validate", params: spec },
      prior_context: ["Spec complete", "3 edge cases identified", 'Input schema: {"tables":3}', "Mind the password reset flow"],
    });
  });

  it("is the same on the people surface, and like a task hidden from those who cannot see its project", async () => {
    const agentView = (await expectOk(cli(w.worker.apiKey, "GET", `${T}/${task}/envelope`))).json;
    const personView = (await expectOk(call(`${PEOPLE}/${task}/envelope`, { token: w.member.token }))).json;
    expect(personView).toEqual(agentView);
    const stranger = await createUser(w.admin, "member");
    expectProblem(await call(`${PEOPLE}/${task}/envelope`, { token: stranger.token }), 404, "NOT_FOUND");
  });

  it("of a task with nothing but a spec: its id, its type, the spec as params, no paths", async () => {
    const plain = await newTask(w, { type: "feature", spec: "Add a login page" });
    expect((await expectOk(cli(w.worker.apiKey, "GET", `${T}/${plain}/envelope`))).json).toEqual({
      context: { feature_id: plain, workflow: "feature", iteration: 1 },
      paths: {},
      task: { action: "feature", params: { spec: "Add a login page" } },
      prior_context: [],
    });
  });
});

describe("output envelopes decide the outcome", () => {
  it("success + proceed → done, the envelope kept as the result, downstream unblocked; the same again is a no-op", async () => {
    const id = await running();
    const down = await newTask(w, { dependencies: [{ depends_on_task_id: id, dependency_type: "blocks" }] });
    expect((await get(down)).blocked).toBe(true);
    const done = await expectOk(complete(id, envelope(true, "proceed")));
    expect(done.json).toMatchObject({ status: "done", result: envelope(true, "proceed"), error: null, error_code: null });
    expect(await get(down)).toMatchObject({ blocked: false, status: "pending" });
    const completed = (await taskEvents(id)).filter((e) => e.type === "task_completed");
    expect(completed).toEqual([expect.objectContaining({ data: expect.objectContaining({ summary: envelope(true, "proceed").summary, structured: false }) })]);

    const again = await expectOk(complete(id, envelope(true, "proceed")));
    expect(again.json).toMatchObject({ status: "done", result: envelope(true, "proceed") });
    expect((await taskEvents(id)).filter((e) => e.type === "task_completed")).toHaveLength(1);
  });

  it("success: false (even with proceed) → failed, recoverable, envelope kept, downstream told but still blocked", async () => {
    const id = await running();
    const down = await newTask(w, { dependencies: [{ depends_on_task_id: id, dependency_type: "blocks" }] });
    const sent = envelope(false, "proceed", "Could not parse the spec");
    const failed = await expectOk(complete(id, sent));
    expect(failed.json).toMatchObject({
      status: "failed",
      result: sent,
      error: { code: "AGENT_FAILED", message: "Could not parse the spec", recoverable: true },
      error_code: "AGENT_FAILED",
    });
    expect(await get(down)).toMatchObject({ blocked: true, status: "pending" });
    const events = await taskEvents(id);
    expect(events.map((e) => e.type)).not.toContain("task_completed");
    expect(events.filter((e) => e.type === "task_failed")).toEqual([
      expect.objectContaining({
        data: expect.objectContaining({ status: "failed", error: "Could not parse the spec", code: "AGENT_FAILED", recoverable: true }),
      }),
    ]);
    expect((await taskEvents(down)).map((e) => e.type)).toContain("dependency_failed");
  });

  it("retry → failed as recoverable; a person's retry runs it again as iteration 2", async () => {
    const id = await running();
    const sent = envelope(true, "retry", "Validation failed: 2 requirements untestable");
    expect((await expectOk(complete(id, sent))).json).toMatchObject({
      status: "failed",
      result: sent,
      error: { code: "AGENT_RETRY", message: "Validation failed: 2 requirements untestable", recoverable: true },
      retry_count: 0,
    });
    // The same envelope sent again (a lost answer) is the same answer, not a late result.
    const again = await expectOk(complete(id, sent));
    expect(again.json).toMatchObject({ status: "failed", late_result: null });
    // Agents may not retry; people may.
    expectProblem(await cli(w.worker.apiKey, "POST", `${T}/${id}/retry`), 403, "NOT_ALLOWED");
    const retried = await expectOk(call(`${PEOPLE}/${id}/retry`, { method: "POST", token: w.member.token }));
    expect(retried.json).toMatchObject({ status: "pending", retry_count: 1, error: null, result: null });
    expect((await taskEvents(id)).find((e) => e.type === "task_retried")?.data.previous_error).toBe("Validation failed: 2 requirements untestable");
    expect((await expectOk(cli(w.worker.apiKey, "GET", `${T}/${id}/envelope`))).json.context.iteration).toBe(2);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    expect((await expectOk(complete(id, envelope(true, "proceed")))).json).toMatchObject({ status: "done", retry_count: 1 });
  });

  it("escalate (even with success) → needs_human with a help intervention carrying the summary, notes and artifacts; an answer resumes it", async () => {
    const id = await running();
    const down = await newTask(w, { dependencies: [{ depends_on_task_id: id, dependency_type: "blocks" }] });
    const sent = envelope(true, "escalate", "Two specs disagree on the session length: which wins?");
    const asked = await expectOk(complete(id, sent));
    expect(asked.json).toMatchObject({ status: "needs_human", result: null, error: null });
    expect((await get(down)).blocked).toBe(true);

    const open = (await expectOk(call(`/api/v1/interventions?task_id=${id}`, { token: w.member.token }))).json;
    expect(open).toEqual([
      expect.objectContaining({
        intervention_type: "help",
        status: "pending",
        question: "Two specs disagree on the session length: which wins?",
        context: { success: true, recommendation: "escalate", notes: sent.notes, artifacts },
      }),
    ]);
    const requested = (await taskEvents(id)).filter((e) => e.type === "intervention_requested");
    expect(requested).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ intervention_id: open[0].id, question: sent.summary, status: "needs_human" }) }),
    ]);

    await expectOk(call(`/api/v1/interventions/${open[0].id}/respond`, { token: w.member.token, body: { response: "The security spec wins: 15 minutes" } }));
    expect(await get(id)).toMatchObject({ status: "running" });
    expect((await taskEvents(id)).map((e) => e.type)).toContain("intervention_responded");
    await expectOk(complete(id, envelope(true, "proceed", "Session length set to 15 minutes")));
    expect(await get(down)).toMatchObject({ blocked: false });
  });
});

describe("malformed envelopes are refused, naming the field, and nothing is written", () => {
  const good = envelope(true, "proceed");
  const { artifacts: _, ...noArtifacts } = good;
  it.each([
    ["an unknown recommendation", "result.recommendation", { ...good, recommendation: "skip" }],
    ["success as a string", "result.success", { ...good, success: "true" }],
    ["no artifacts", "result.artifacts", noArtifacts],
    ["an artifact deleting a file", "result.artifacts.0.operation", { ...good, artifacts: [{ path: "a.md", operation: "delete", content: "" }] }],
    ["notes that are not strings", "result.notes.0", { ...good, notes: [{ text: "ready" }] }],
  ])("%s → 422 at %s", async (_, path, sent) => {
    const id = await running();
    const refused = await complete(id, sent);
    expectProblem(refused, 422, "VALIDATION_FAILED");
    expect(refused.json.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect(await get(id)).toMatchObject({ status: "running", result: null, error: null });
    expect((await taskEvents(id)).map((e) => e.type)).not.toContain("task_completed");
  });

  it("an artifact path that is absolute or leaves the repository → 422 naming each artifact; relative ones inside are taken", async () => {
    const withPaths = (paths: string[]) => ({ ...good, artifacts: paths.map((path) => ({ path, operation: "create", content: "x" })) });
    const outside = [
      "/etc/passwd",
      "../up.txt",
      "src/../../up.txt",
      "a/..",
      "C:/Windows/win.ini",
      "c:relative",
      "\\\\server\\share\\x",
      "\\root.txt",
      "src\\..\\..\\x",
    ];
    const id = await running();
    const refused = await complete(id, withPaths(["src/ok.ts", ...outside]));
    expectProblem(refused, 422, "VALIDATION_FAILED");
    expect(refused.json.errors.map((e: { path: string }) => e.path)).toEqual(outside.map((_, i) => `result.artifacts.${i + 1}.path`));
    expect(refused.json.errors[0].message).toMatch(/relative.*no leading \/.*drive letter.*\.\./);
    expect(await get(id)).toMatchObject({ status: "running", result: null });
    await expectOk(complete(id, withPaths(["src/ok.ts", "./docs/a..b.md", "deep/er/file.txt", ".hidden"])));
    expect((await get(id)).status).toBe("done");
  });
});
