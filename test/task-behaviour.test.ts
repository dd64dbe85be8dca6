import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createProject, expectProblem, registerAgent } from "./helpers";
import { cli, createWorld, expectOk, newTask, openSession, T, taskIn, taskStatus, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Behaviour");
});

const events = async (projectId: string, token = w.admin) => (await call(`/api/v1/projects/${projectId}/events?limit=1000`, { token })).json.events as any[];

describe("results", () => {
  it("stores the three result forms", async () => {
    const forms = [
      ["a string", "Implemented it", { summary: "Implemented it", completed_by: `agent:${w.worker.name}` }],
      ["a legacy object", { pr: 42, note: "merged" }, { pr: 42, note: "merged" }],
      [
        "a task-result/v1",
        { $schema: "orchestratia/task-result/v1", summary: "ok", contracts: { api_schema: { data: { paths: 3 } } } },
        { $schema: "orchestratia/task-result/v1", summary: "ok", contracts: { api_schema: { status: "fulfilled", data: { paths: 3 } } } },
      ],
    ] as const;
    for (const [, result, stored] of forms) {
      const { id } = await taskIn(w, "running");
      const done = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result }));
      expect(done.json.result).toEqual(stored);
    }
  });

  it("treats a second identical completion as a no-op and a different one as a conflict", async () => {
    const { id } = await taskIn(w, "running");
    const result = { $schema: "orchestratia/task-result/v1", summary: "s", tests: { passed: 1 } };
    const first = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result }));
    // Same result with keys in another order is the same result.
    const again = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: { tests: { passed: 1 }, summary: "s", $schema: "orchestratia/task-result/v1" } }));
    expect(again.json.completed_at).toBe(first.json.completed_at);
    expectProblem(await cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: "other" }), 409, "RESULT_CONFLICT");
    expect((await events(w.project.id)).filter((e) => e.task_id === id && e.type === "task_completed")).toHaveLength(1);
  });

  it("refuses an invalid task-result/v1 with field paths, leaving the task running", async () => {
    const { id } = await taskIn(w, "running");
    const bad = await cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: { $schema: "orchestratia/task-result/v1", tests: { passed: "all" } } });
    expectProblem(bad, 422, "VALIDATION_FAILED");
    expect(bad.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(["result.summary", "result.tests.passed"]);
    expect(await taskStatus(w, id)).toBe("running");
    expectProblem(await cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, {}), 422, "VALIDATION_FAILED");
  });
});

describe("schema versions", () => {
  it("accepts an unknown version of a known schema, reporting it in warnings and the event log", async () => {
    const created = await expectOk(
      cli(w.orchestrator.apiKey, "POST", T, {
        title: "Future spec",
        spec: "s",
        project_id: w.project.id,
        structured_spec: { $schema: "orchestratia/task-spec/v2", requirements: [{ description: "x", priority: "must" }] },
        requirements: { $schema: "orchestratia/requirements/v7", languages: ["go"] },
      }),
      201,
    );
    expect(created.json.warnings).toEqual([expect.stringContaining("task-spec/v2"), expect.stringContaining("requirements/v7")]);
    expect(created.json.structured_spec.$schema).toBe("orchestratia/task-spec/v2");
    const logged = (await events(w.project.id)).filter((e) => e.task_id === created.json.id && e.type === "schema_warning");
    expect(logged.map((e) => e.data.warning)).toEqual(created.json.warnings);

    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${created.json.id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${created.json.id}/start`));
    const done = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${created.json.id}/complete`, { result: { $schema: "orchestratia/task-result/v3", summary: "s" } }));
    expect(done.json.warnings).toHaveLength(3);
    expect(done.json.warnings[2]).toContain("task-result/v3");
  });

  it("refuses a structured_spec that is not a task-spec, and invalid fields, with paths", async () => {
    const bad = await cli(w.orchestrator.apiKey, "POST", T, {
      title: "",
      priority: "soon",
      project_id: w.project.id,
      structured_spec: { requirements: [] },
      dependencies: [{ depends_on_task_id: crypto.randomUUID(), dependency_type: "input" }],
      timeout_seconds: -5,
    });
    expectProblem(bad, 422, "VALIDATION_FAILED");
    expect(bad.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(["dependencies.0.contract_key", "priority", "timeout_seconds", "title"]);
    const spec = await cli(w.orchestrator.apiKey, "POST", T, { title: "t", project_id: w.project.id, structured_spec: { requirements: [] } });
    expect(spec.json.errors.map((e: { path: string }) => e.path)).toEqual(["structured_spec.$schema"]);
    const missingDep = await cli(w.orchestrator.apiKey, "POST", T, { title: "t", project_id: w.project.id, dependency_ids: [crypto.randomUUID()] });
    expectProblem(missingDep, 422, "VALIDATION_FAILED");
    const noProject = await cli(w.orchestrator.apiKey, "POST", T, { title: "t" });
    expect(noProject.json.errors).toEqual([{ path: "project_id", message: expect.stringContaining("required") }]);
    expect(((await events(w.project.id)) as any[]).filter((e) => e.type === "task_created" && e.data.title === "t")).toHaveLength(0);
  });

  it("takes urgent as critical and a session's project when project_id is left out", async () => {
    const created = await expectOk(cli(w.worker.apiKey, "POST", T, { title: "Via session", spec: "s", priority: "urgent", session_id: w.workerSession }), 201);
    expect(created.json).toMatchObject({ project_id: w.project.id, priority: "critical", source_session_name: "worker" });
  });
});

describe("visibility across two projects and two agents", () => {
  it("shows each agent and person only what their scope allows", async () => {
    const other = await createProject(w.admin, "Elsewhere");
    const scoped = await registerAgent(w.admin, "scoped-elsewhere", { project_ids: [other.id] });
    await openSession(scoped.apiKey, other.id, "scoped-worker");
    const mine = await newTask(w);
    const theirs = await expectOk(cli(scoped.apiKey, "POST", T, { title: "Theirs", spec: "s", project_id: other.id }), 201);

    expectProblem(await cli(scoped.apiKey, "GET", `${T}/${mine}`), 404, "NOT_FOUND");
    expectProblem(await cli(scoped.apiKey, "POST", `${T}/${mine}/notes`, { content: "x" }), 404, "NOT_FOUND");
    expectProblem(await cli(scoped.apiKey, "DELETE", `${T}/${mine}`), 404, "NOT_FOUND");
    expectProblem(await cli(scoped.apiKey, "POST", T, { title: "In", project_id: w.project.id }), 422, "VALIDATION_FAILED");
    expect((await cli(scoped.apiKey, "GET", T)).json.tasks.map((t: { id: string }) => t.id)).toEqual([theirs.json.id]);
    expect((await cli(scoped.apiKey, "GET", "/api/v1/server/interventions")).json).toEqual([]);

    // The member belongs to the first project only.
    expectProblem(await call(`/api/v1/tasks/${theirs.json.id}`, { token: w.member.token }), 404, "NOT_FOUND");
    expect((await call("/api/v1/tasks", { token: w.member.token })).json.tasks.map((t: { id: string }) => t.id)).not.toContain(theirs.json.id);
    expectProblem(await call(`/api/v1/tasks?project_id=${other.id}`, { token: w.member.token }), 404, "NOT_FOUND");
    // Assigning across projects: the scoped server cannot take a task of a project it cannot see.
    expectProblem(await cli(w.orchestrator.apiKey, "POST", `${T}/${mine}/assign`, { server_name: "scoped-elsewhere" }), 404, "NOT_FOUND");
    expectProblem(await cli(w.orchestrator.apiKey, "POST", `${T}/${mine}/assign`, { session_name: "scoped-worker" }), 404, "NOT_FOUND");
  });

  it("answers 404 for ids that are not tasks", async () => {
    expectProblem(await cli(w.worker.apiKey, "GET", `${T}/not-a-uuid`), 404, "NOT_FOUND");
    expectProblem(await cli(w.worker.apiKey, "POST", `${T}/${crypto.randomUUID()}/start`), 404, "NOT_FOUND");
  });
});

describe("lists", () => {
  it("pages newest first with a cursor, and refuses a forged cursor", async () => {
    const project = await createProject(w.admin, "Paging");
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await expectOk(call("/api/v1/tasks", { token: w.admin, body: { title: `t${i}`, project_id: project.id } }), 201)).json.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await expectOk(call(`/api/v1/tasks?project_id=${project.id}&limit=3${cursor ? `&cursor=${cursor}` : ""}`, { token: w.admin }));
      expect(page.json.count).toBe(page.json.tasks.length);
      seen.push(...page.json.tasks.map((t: { id: string }) => t.id));
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    expectProblem(await call(`/api/v1/tasks?cursor=garbage`, { token: w.admin }), 400, "INVALID_CURSOR");
    expectProblem(await call(`/api/v1/tasks?limit=0`, { token: w.admin }), 422, "VALIDATION_FAILED");
    expectProblem(await call(`/api/v1/tasks?status=sleeping`, { token: w.admin }), 422, "VALIDATION_FAILED");
  });

  it("reads the named tasks only, and only those the caller may see", async () => {
    const project = await createProject(w.admin, "Named");
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await expectOk(call("/api/v1/tasks", { token: w.admin, body: { title: `n${i}`, project_id: project.id } }), 201)).json.id);
    const named = await expectOk(call(`/api/v1/tasks?ids=${ids[0]},${ids[2]}`, { token: w.admin }));
    expect(named.json.tasks.map((t: { id: string }) => t.id).sort()).toEqual([ids[0], ids[2]].sort());
    // A member of another project names these tasks and gets none of them.
    expect((await expectOk(call(`/api/v1/tasks?ids=${ids.join(",")}`, { token: w.member.token }))).json.tasks).toEqual([]);
    const invalid = await call(`/api/v1/tasks?ids=${ids[0]},not-a-task`, { token: w.admin });
    expectProblem(invalid, 422, "VALIDATION_FAILED");
    expect(invalid.json.errors[0].path).toMatch(/^query\.ids/);
  });
});

describe("concurrency", () => {
  it("lets exactly one of 30 concurrent starts through", async () => {
    const { id } = await taskIn(w, "assigned");
    const replies = await Promise.all(Array.from({ length: 30 }, () => cli(w.worker.apiKey, "POST", `${T}/${id}/start`)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 200)) expectProblem(r, 409, "INVALID_TRANSITION");
    expect((await events(w.project.id)).filter((e) => e.task_id === id && e.type === "task_started")).toHaveLength(1);
  });

  it("makes 30 concurrent identical completions one transition and one task_completed event", async () => {
    const { id } = await taskIn(w, "running");
    const result = { $schema: "orchestratia/task-result/v1", summary: "raced" };
    const replies = await Promise.all(Array.from({ length: 30 }, () => cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result })));
    expect(replies.map((r) => r.status)).toEqual(Array(30).fill(200));
    expect(new Set(replies.map((r) => r.json.completed_at)).size).toBe(1);
    expect((await events(w.project.id)).filter((e) => e.task_id === id && e.type === "task_completed")).toHaveLength(1);
  });

  it("keeps seq strictly increasing under concurrent writes to many tasks", async () => {
    const ids = await Promise.all(Array.from({ length: 20 }, () => newTask(w)));
    await Promise.all(ids.map((id) => cli(w.orchestrator.apiKey, "POST", `${T}/${id}/notes`, { content: "n", urgent: false })));
    const seqs = (await events(w.project.id)).map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });
});

describe("timeouts", () => {
  it("fails a running task past its timeout from the room's alarm, with code TIMEOUT, and does not retry it", async () => {
    const id = await newTask(w, { timeout_seconds: 60 });
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    const started = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    const room = env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(w.project.id));
    // Not yet due: the alarm finds nothing to fail.
    expect(await runDurableObjectAlarm(room)).toBe(true);
    expect(await taskStatus(w, id)).toBe("running");
    // Move the deadline into the past, as if a minute had gone by.
    await env.DB.prepare("UPDATE tasks SET deadline_at = ?1 WHERE id = ?2").bind(new Date(Date.now() - 1000).toISOString(), id).run();
    expect(await runDurableObjectAlarm(room)).toBe(true);
    const failed = await expectOk(cli(w.worker.apiKey, "GET", `${T}/${id}`));
    expect(failed.json).toMatchObject({ status: "failed", error_code: "TIMEOUT", result: { code: "TIMEOUT", error: "Timed out after 60 s" } });
    expect(Date.parse(failed.json.completed_at)).toBeGreaterThan(Date.parse(started.json.started_at) - 1);
    const logged = (await events(w.project.id)).filter((e) => e.task_id === id && e.type === "task_failed");
    expect(logged).toEqual([expect.objectContaining({ actor: "hub", data: expect.objectContaining({ code: "TIMEOUT" }) })]);
    // Later alarms (presence keeps one scheduled) leave it failed: nothing is retried implicitly.
    await runDurableObjectAlarm(room);
    expect(await taskStatus(w, id)).toBe("failed");
  });
});
