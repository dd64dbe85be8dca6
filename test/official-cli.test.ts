/**
 * Every task-related command of the official Orchestratia CLI, sending exactly
 * the request that command sends (orchestratia_agent/cli.py) and asserting the
 * response fields it reads.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, expectProblem } from "./helpers";
import { cli, createWorld, expectOk, T, type World } from "./task-world";

let w: World;
/** The environment the daemon gives an agent's terminal: ORCHESTRATIA_SESSION_ID and ORCHESTRATIA_PROJECT_ID. */
let env: { SESSION_ID: string; PROJECT_ID: string };
const orc = (method: string, path: string, data?: unknown) => cli(w.orchestrator.apiKey, method, path, data);
const wrk = (method: string, path: string, data?: unknown) => cli(w.worker.apiKey, method, path, data);

/** `_print_task` crashes on a missing id, title, status or priority (and spec in verbose mode). */
function expectPrintableTask(task: Record<string, unknown>, verbose = false) {
  for (const key of ["id", "title", "status", "priority", ...(verbose ? ["spec"] : [])]) expect(task, key).toHaveProperty(key);
  expect(Array.isArray(task.acceptance_criteria)).toBe(true);
  expect(typeof task.resolved_inputs).toBe("object");
  expect(Array.isArray(task.resolved_inputs)).toBe(false);
  for (const dep of task.dependencies as Record<string, unknown>[]) {
    expect(typeof dep.resolved).toBe("boolean");
    expect(typeof dep.depends_on_task_id).toBe("string");
  }
}

/** `_resolve_task_id`: an unfiltered list, matched by prefix on the client. */
async function resolvePrefix(prefix: string): Promise<string> {
  const list = await expectOk(orc("GET", T));
  const matches = list.json.tasks.filter((t: { id: string }) => t.id.startsWith(prefix));
  expect(matches).toHaveLength(1);
  return matches[0].id;
}

beforeAll(async () => {
  w = await createWorld("CLI");
  env = { SESSION_ID: w.orchestratorSession, PROJECT_ID: w.project.id };
});

describe("orchestratia task ...", () => {
  let upstream: string;
  let taskId: string;

  it("task create --repo --branch --acceptance-criteria --depends-on --assign --require-plan", async () => {
    const up = await expectOk(
      orc("POST", T, { title: "Schema", spec: "Define it", priority: "normal", type: "feature", session_id: env.SESSION_ID, project_id: env.PROJECT_ID }),
      201,
    );
    upstream = up.json.id;
    const dependency = await resolvePrefix(upstream.slice(0, 8));
    const created = await expectOk(
      orc("POST", T, {
        title: "Build the API",
        spec: "Endpoints per the schema",
        priority: "high",
        type: "bugfix",
        session_id: env.SESSION_ID,
        project_id: env.PROJECT_ID,
        target_repo: "api-gateway",
        target_branch: "feature/api",
        acceptance_criteria: ["tests pass", "docs updated"],
        dependency_ids: [dependency],
      }),
      201,
    );
    expectPrintableTask(created.json);
    expect(created.json).toMatchObject({
      title: "Build the API",
      status: "pending",
      priority: "high",
      type: "bugfix",
      target_repo: "api-gateway",
      target_branch: "feature/api",
      acceptance_criteria: ["tests pass", "docs updated"],
      assigned_server_name: null,
      source_session_name: "orchestrator",
      created_by: `agent:${w.orchestrator.name}`,
      blocked: true,
      dependencies: [{ depends_on_task_id: upstream, dependency_type: "blocks", contract_key: null, resolved: false, resolved_at: null }],
    });
    taskId = created.json.id;
    const assigned = await expectOk(orc("POST", `${T}/${taskId}/assign`, { session_name: "worker", require_plan: true }));
    expectPrintableTask(assigned.json);
    expect(assigned.json).toMatchObject({ id: taskId, status: "planning", assigned_server_name: w.worker.name, target_session_name: "worker", require_plan: true });
  });

  it("task check (with and without ORCHESTRATIA_SESSION_ID)", async () => {
    const check = await expectOk(wrk("GET", `${T}/check?session_id=${w.workerSession}`));
    expect(check.json.count).toBe(1);
    expectPrintableTask(check.json.tasks[0], true);
    expect(check.json.tasks[0].id).toBe(taskId);
    const bare = await expectOk(wrk("GET", `${T}/check`));
    expect(bare.json).toMatchObject({ count: 1, tasks: [{ id: taskId }] });
    expect((await expectOk(orc("GET", `${T}/check?session_id=${env.SESSION_ID}`))).json).toEqual({ count: 0, tasks: [] });
  });

  it("task view and task status, with a prefix", async () => {
    const id = await resolvePrefix(taskId.slice(0, 4));
    for (const reply of [await wrk("GET", `${T}/${id}`), await orc("GET", `${T}/${id}`)]) {
      expect(reply.status).toBe(200);
      expectPrintableTask(reply.json, true);
      expect(reply.json.spec).toBe("Endpoints per the schema");
    }
  });

  it("task plan (JSON, and text wrapped as {summary})", async () => {
    const planned = await expectOk(wrk("POST", `${T}/${taskId}/plan`, { plan: { summary: "Three phases", steps: ["a", "b"] } }));
    expectPrintableTask(planned.json);
    expect(planned.json).toMatchObject({ status: "plan_review", plan: { summary: "Three phases", steps: ["a", "b"] } });
    await expectOk(call(`/api/v1/tasks/${taskId}/revise-plan`, { token: w.member.token, body: { feedback: "fewer phases" } }));
    const again = await expectOk(wrk("POST", `${T}/${taskId}/plan`, { plan: { summary: "Two phases" } }));
    expect(again.json.plan).toEqual({ summary: "Two phases" });
  });

  it("refuses to put a blocked task to work (approve-plan, start) with UNRESOLVED_DEPENDENCIES", async () => {
    const approve = await call(`/api/v1/tasks/${taskId}/approve-plan`, { token: w.member.token, method: "POST" });
    expectProblem(approve, 409, "UNRESOLVED_DEPENDENCIES");
    expect(approve.json.detail).toContain(upstream);
    expect(approve.json.unresolved).toEqual([{ depends_on_task_id: upstream, dependency_type: "blocks" }]);

    const blocked = await expectOk(orc("POST", T, { title: "Blocked", spec: "s", priority: "normal", type: "feature", project_id: env.PROJECT_ID, dependency_ids: [upstream] }), 201);
    await expectOk(orc("POST", `${T}/${blocked.json.id}/assign`, { session_name: "worker" }));
    expectProblem(await wrk("POST", `${T}/${blocked.json.id}/start`), 409, "UNRESOLVED_DEPENDENCIES");
    expect((await expectOk(orc("GET", `${T}/${blocked.json.id}`))).json.status).toBe("assigned");
  });

  it("task start without a body", async () => {
    await expectOk(orc("POST", `${T}/${upstream}/assign`, { session_name: "worker" }));
    const started = await expectOk(wrk("POST", `${T}/${upstream}/start`));
    expectPrintableTask(started.json);
    expect(started.json).toMatchObject({ status: "running", started_at: expect.any(String) });
  });

  it("task note (--urgent) and task notes", async () => {
    const note = await expectOk(wrk("POST", `${T}/${taskId}/notes`, { content: "halfway", urgent: false }), 201);
    expect(note.json).toMatchObject({ content: "halfway", urgent: false, author: `agent:${w.worker.name}` });
    await expectOk(wrk("POST", `${T}/${taskId}/notes`, { content: "BLOCKER: need credentials", urgent: true }), 201);
    const notes = await expectOk(wrk("GET", `${T}/${taskId}/notes`));
    expect(Array.isArray(notes.json)).toBe(true);
    expect(notes.json.map((n: { content: string; urgent: boolean }) => [n.content, n.urgent])).toEqual([["halfway", false], ["BLOCKER: need credentials", true]]);
    for (const n of notes.json) {
      expect(typeof n.created_at).toBe("string");
      expect(typeof n.author).toBe("string");
    }
    expect((await expectOk(wrk("GET", `${T}/${taskId}`))).json.recent_notes).toHaveLength(2);
  });

  it("task update", async () => {
    // The task is dispatched (planning): what the work is (spec, type) no longer changes (compute protocol), the rest does.
    const refused = await orc("PUT", `${T}/${taskId}`, { title: "Build the API v2", spec: "new spec", priority: "critical", type: "refactor" });
    expectProblem(refused, 409, "TASK_IMMUTABLE");
    expect(refused.json.errors.map((e: { path: string }) => e.path)).toEqual(["spec", "type"]);
    const updated = await expectOk(
      orc("PUT", `${T}/${taskId}`, { title: "Build the API v2", priority: "critical", target_repo: "gw", target_branch: "main", acceptance_criteria: ["green"] }),
    );
    expectPrintableTask(updated.json, true);
    expect(updated.json).toMatchObject({ title: "Build the API v2", spec: "Endpoints per the schema", priority: "critical", type: "bugfix", target_repo: "gw", target_branch: "main", acceptance_criteria: ["green"] });
  });

  it("task list and task list --status", async () => {
    const all = await expectOk(orc("GET", `${T}?project_id=${env.PROJECT_ID}`));
    expect(all.json.tasks.map((t: { id: string }) => t.id).slice(-2)).toEqual([taskId, upstream]);
    const filtered = await expectOk(orc("GET", `${T}?status=running&project_id=${env.PROJECT_ID}`));
    expect(filtered.json.tasks.map((t: { id: string }) => t.id)).toEqual([upstream]);
    for (const t of all.json.tasks) expectPrintableTask(t);
  });

  it("task complete with a string and with JSON", async () => {
    const done = await expectOk(wrk("POST", `${T}/${upstream}/complete`, { result: "Schema defined" }));
    expect(done.json).toMatchObject({ status: "done", result: { summary: "Schema defined", completed_by: `agent:${w.worker.name}` }, completed_at: expect.any(String) });

    const other = await expectOk(orc("POST", T, { title: "JSON", spec: "s", priority: "normal", type: "feature", project_id: env.PROJECT_ID }), 201);
    await expectOk(orc("POST", `${T}/${other.json.id}/assign`, { session_name: "worker" }));
    await expectOk(wrk("POST", `${T}/${other.json.id}/start`));
    const result = { $schema: "orchestratia/task-result/v1", summary: "Implemented", changes: { files_modified: ["a.ts"] }, tests: { passed: 12, failed: 0, skipped: 0 } };
    const structured = await expectOk(wrk("POST", `${T}/${other.json.id}/complete`, { result }));
    expect(structured.json.result).toEqual(result);
  });

  it("task help --type help|question|approval", async () => {
    const t = await expectOk(orc("POST", T, { title: "Help", spec: "s", priority: "normal", type: "feature", project_id: env.PROJECT_ID }), 201);
    await expectOk(orc("POST", `${T}/${t.json.id}/assign`, { session_name: "worker" }));
    await expectOk(wrk("POST", `${T}/${t.json.id}/start`));
    for (const type of ["help", "question", "approval"]) {
      const asked = await expectOk(wrk("POST", `${T}/${t.json.id}/help`, { question: `${type}?`, context: "some context", intervention_type: type }));
      expect(asked.json).toEqual({ intervention_id: expect.any(String), status: "pending", task_id: t.json.id });
    }
    // The older CLI sends no intervention_type: it means help.
    const legacy = await expectOk(wrk("POST", `${T}/${t.json.id}/help`, { question: "plain?" }));
    const list = await expectOk(orc("GET", `/api/v1/server/interventions?task_id=${t.json.id}&status=pending`));
    expect(list.json).toHaveLength(4);
    for (const i of list.json) for (const key of ["id", "status", "intervention_type", "question"]) expect(i).toHaveProperty(key);
    expect(list.json.find((i: { id: string }) => i.id === legacy.json.intervention_id).intervention_type).toBe("help");
  });

  it("intervention list and intervention respond", async () => {
    const pending = await expectOk(orc("GET", "/api/v1/server/interventions?status=pending"));
    const question = pending.json.find((i: { intervention_type: string }) => i.intervention_type === "question");
    const answered = await expectOk(orc("POST", `/api/v1/server/interventions/${question.id}/respond`, { response: "Use JWT with RS256" }));
    expect(answered.json).toMatchObject({ id: question.id, status: "responded", response: "Use JWT with RS256" });
    const all = await expectOk(orc("GET", "/api/v1/server/interventions"));
    expect(all.json.find((i: { id: string }) => i.id === question.id).status).toBe("responded");
  });

  it("task fail", async () => {
    const t = await expectOk(orc("POST", T, { title: "Fail", spec: "s", priority: "low", type: "chore", project_id: env.PROJECT_ID }), 201);
    await expectOk(orc("POST", `${T}/${t.json.id}/assign`, { session_name: "worker" }));
    await expectOk(wrk("POST", `${T}/${t.json.id}/start`));
    const failed = await expectOk(wrk("POST", `${T}/${t.json.id}/fail`, { error: "database migration conflicts" }));
    expectPrintableTask(failed.json);
    expect(failed.json).toMatchObject({ status: "failed", result: { error: "database migration conflicts" } });
  });

  it("task cancel (DELETE without a body answers JSON)", async () => {
    const t = await expectOk(orc("POST", T, { title: "Cancel", spec: "s", priority: "normal", type: "docs", project_id: env.PROJECT_ID }), 201);
    const cancelled = await expectOk(orc("DELETE", `${T}/${t.json.id}`));
    expect(cancelled.headers.get("Content-Type")).toContain("application/json");
    expect(cancelled.json.status).toBe("cancelled");
  });

  it("task assign --session with a 404 for an unknown session", async () => {
    const t = await expectOk(orc("POST", T, { title: "Assign", spec: "s", priority: "normal", type: "feature", project_id: env.PROJECT_ID }), 201);
    const missing = await orc("POST", `${T}/${t.json.id}/assign`, { session_name: "nobody" });
    expect(missing.status).toBe(404);
    expect(missing.json.detail).toContain("nobody");
    const assigned = await expectOk(orc("POST", `${T}/${t.json.id}/assign`, { session_name: "worker" }));
    expect(assigned.json).toMatchObject({ status: "assigned", target_session_name: "worker" });
  });
});

describe("orchestratia pipeline create", () => {
  it("creates tasks in order with temp-id and index dependencies, and assigns them", async () => {
    const ids: string[] = [];
    const defs = [
      { title: "Setup DB", spec: "...", assign: "worker" },
      { title: "Build API", spec: "...", depends_on: [0], assign: "worker" },
      { title: "Build UI", spec: "...", depends_on: [1] },
    ];
    for (const def of defs) {
      const data: Record<string, unknown> = { title: def.title, spec: def.spec, priority: "normal", type: "feature", session_id: env.SESSION_ID, project_id: env.PROJECT_ID };
      if (def.depends_on) data.dependency_ids = def.depends_on.map((i) => ids[i]);
      const task = await expectOk(orc("POST", T, data), 201);
      expect(task.json).toMatchObject({ id: expect.any(String), title: def.title });
      ids.push(task.json.id);
      if (def.assign) await expectOk(orc("POST", `${T}/${task.json.id}/assign`, { session_name: def.assign }));
    }
    const ui = await expectOk(orc("GET", `${T}/${ids[2]}`));
    expect(ui.json.dependencies.map((d: { depends_on_task_id: string }) => d.depends_on_task_id)).toEqual([ids[1]]);
  });
});

describe("orchestratia server list, session list, status", () => {
  it("server list", async () => {
    const servers = await expectOk(wrk("GET", "/api/v1/server/servers"));
    const me = servers.json.servers.find((s: { name: string }) => s.name === w.worker.name);
    expect(me).toMatchObject({ status: "online", hostname: `${w.worker.name}.internal`, os: "linux", last_heartbeat: expect.any(String), repos: { "api-gateway": "/home/dev/api-gateway" } });
  });

  it("session list", async () => {
    const sessions = await expectOk(wrk("GET", `/api/v1/server/sessions?project_id=${env.PROJECT_ID}`));
    const names = sessions.json.sessions.map((s: { name: string; server_name: string; status: string; id: string }) => [s.name, s.server_name, s.status]);
    expect(names).toEqual(expect.arrayContaining([["worker", w.worker.name, "running"], ["orchestrator", w.orchestrator.name, "running"]]));
  });

  it("status (--json merges the answer into its defaults)", async () => {
    const status = await expectOk(wrk("GET", `/api/v1/server/status?session_id=${w.workerSession}`));
    expect(status.json).toMatchObject({
      connected: true,
      server_id: w.worker.id,
      server_name: w.worker.name,
      session_id: w.workerSession,
      session_name: "worker",
      project_id: env.PROJECT_ID,
      project_name: "CLI",
      task_summary: { pending: expect.any(Number), running: expect.any(Number), total: expect.any(Number) },
    });
    for (const t of status.json.tasks) for (const key of ["id", "title", "status"]) expect(t).toHaveProperty(key);
    expect(status.json.task_summary.total).toBe(status.json.tasks.length);
    const serverWide = await expectOk(wrk("GET", "/api/v1/server/status"));
    expect(serverWide.json).toMatchObject({ connected: true, session_id: null, session_name: null });
  });
});

describe("the agent daemon", () => {
  it("polls assigned tasks as a bare list and reports through /api/v1/servers/tasks", async () => {
    const t = await expectOk(orc("POST", T, { title: "Daemon", spec: "run it", priority: "normal", type: "feature", project_id: env.PROJECT_ID }), 201);
    await expectOk(orc("POST", `${T}/${t.json.id}/assign`, { server_name: w.worker.name }));
    const poll = await expectOk(wrk("GET", "/api/v1/servers/tasks/poll"));
    expect(Array.isArray(poll.json)).toBe(true);
    const polled = poll.json.find((x: { id: string }) => x.id === t.json.id);
    expect(polled).toMatchObject({ title: "Daemon", spec: "run it", resolved_inputs: {} });
    expect((await expectOk(wrk("POST", `/api/v1/servers/tasks/${t.json.id}/start`, {}))).json).toMatchObject({ status: "ok", task: { status: "running" } });
    const done = await expectOk(wrk("POST", `/api/v1/servers/tasks/${t.json.id}/complete`, { result: { $schema: "orchestratia/task-result/v1", summary: "ran" } }));
    expect(done.json).toMatchObject({ status: "ok", task: { status: "done" } });
  });
});
