/**
 * Templates (API.md "Templates, schedules and triggers"): a graph saved with typed parameters, checked as saved, and
 * instantiated in one batch by the project's room: all of it, or nothing with a 422 naming what broke.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, createUser, expectProblem } from "./helpers";
import { cli, createWorld, expectOk, T, worldUnder, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Templates");
});

const templatesOf = (projectId: string) => `/api/v1/projects/${projectId}/templates`;

/** Four tasks: plan → (build, docs) → release, release reading build's `artifact` contract. */
const release = (name = `release-${crypto.randomUUID().slice(0, 6)}`) => ({
  name,
  description: "Cut a release",
  parameters: [
    { name: "version", type: "string", required: true },
    { name: "shards", type: "number", default: 2 },
    { name: "dry_run", type: "boolean", default: false },
  ],
  tasks: [
    { key: "plan", title: "Plan {{version}}", spec: "Plan release {{version}} (dry run: {{dry_run}})" },
    { key: "build", title: "Build {{version}}", requirements: { min_memory_gb: "{{shards}}" }, dependencies: [{ on: "plan", dependency_type: "blocks" }] },
    {
      key: "docs",
      title: "Docs for {{version}}",
      acceptance_criteria: ["Changelog names {{version}}"],
      dependencies: [{ on: "plan", dependency_type: "blocks" }],
    },
    {
      key: "ship",
      title: "Ship {{version}}",
      priority: "high",
      dependencies: [
        { on: "build", dependency_type: "input", contract_key: "artifact" },
        { on: "docs", dependency_type: "blocks" },
      ],
    },
  ],
});

async function saved(body = release()) {
  return (await expectOk(call(templatesOf(w.project.id), { token: w.member.token, body }), 201)).json;
}

const tasksIn = async (projectId: string) => (await expectOk(call(`/api/v1/tasks?project_id=${projectId}&limit=200`, { token: w.admin }))).json.tasks.length;

describe("a template", () => {
  it("is saved, listed, read and replaced by a member, and read by a viewer", async () => {
    const t = await saved();
    expect(t.tasks.map((x: { key: string }) => x.key)).toEqual(["plan", "build", "docs", "ship"]);
    expect(t.parameters[1]).toEqual({ name: "shards", type: "number", default: 2 });
    const viewer = await createUser(w.admin, "viewer");
    await expectOk(call(`/api/v1/projects/${w.project.id}/members`, { token: w.admin, body: { user_id: viewer.id, role: "viewer" } }), 201);
    const listed = (await expectOk(call(templatesOf(w.project.id), { token: viewer.token }))).json.templates;
    expect(listed.map((x: { id: string }) => x.id)).toContain(t.id);
    expectProblem(await call(templatesOf(w.project.id), { token: viewer.token, body: release() }), 403, "FORBIDDEN");
    const replaced = await expectOk(
      call(`${templatesOf(w.project.id)}/${t.id}`, { method: "PUT", token: w.member.token, body: { ...release(t.name), description: "v2" } }),
    );
    expect(replaced.json.description).toBe("v2");
    expect((await expectOk(call(`${templatesOf(w.project.id)}/${t.id}`, { token: viewer.token }))).json.description).toBe("v2");
  });

  it("is refused as saved when a placeholder names no parameter, a key repeats, a dependency names no task or closes a cycle", async () => {
    const bad = async (body: unknown, path: string) => {
      const reply = await call(templatesOf(w.project.id), { token: w.member.token, body });
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors.map((e: { path: string }) => e.path)).toContain(path);
    };
    const base = release();
    await bad({ ...base, tasks: [{ key: "a", title: "Fix {{ticket}}" }] }, "tasks.0.title");
    await bad(
      {
        ...base,
        tasks: [
          { key: "a", title: "A" },
          { key: "a", title: "B" },
        ],
      },
      "tasks.1.key",
    );
    await bad({ ...base, tasks: [{ key: "a", title: "A", dependencies: [{ on: "zz" }] }] }, "tasks.0.dependencies.0.on");
    await bad(
      {
        ...base,
        tasks: [
          { key: "a", title: "A", dependencies: [{ on: "b" }] },
          { key: "b", title: "B", dependencies: [{ on: "a" }] },
        ],
      },
      "tasks",
    );
    await bad({ ...base, parameters: [{ name: "n", type: "number", default: "two" }] }, "parameters.0.default");
    await bad({ ...base, tasks: [] }, "tasks");
  });

  it("keeps names unique in a project (409), and another project's template is not found", async () => {
    const t = await saved();
    expectProblem(await call(templatesOf(w.project.id), { token: w.member.token, body: release(t.name) }), 409, "TEMPLATE_NAME_TAKEN");
    const other = await worldUnder(w.admin, "Other templates");
    expectProblem(await call(`${templatesOf(other.project.id)}/${t.id}`, { token: w.admin }), 404, "NOT_FOUND");
    expectProblem(
      await call(`${templatesOf(other.project.id)}/${t.id}/instantiate`, { token: w.admin, body: { parameters: { version: "1" } } }),
      404,
      "NOT_FOUND",
    );
  });
});

describe("instantiating a template", () => {
  it("makes its four tasks in one batch, with their dependencies, parameters filled in and typed, and a run", async () => {
    const t = await saved();
    const reply = await expectOk(
      call(`${templatesOf(w.project.id)}/${t.id}/instantiate`, { token: w.member.token, body: { parameters: { version: "2.1", shards: 4 } } }),
      201,
    );
    const made = reply.json.tasks as { id: string; title: string; status: string; blocked: boolean; requirements: unknown; priority: string }[];
    expect(made.map((x) => x.title)).toEqual(["Plan 2.1", "Build 2.1", "Docs for 2.1", "Ship 2.1"]);
    expect(made.map((x) => [x.status, x.blocked])).toEqual([
      ["pending", false],
      ["pending", true],
      ["pending", true],
      ["pending", true],
    ]);
    expect(made[1]!.requirements).toEqual({ min_memory_gb: 4 });
    expect(made[3]!.priority).toBe("high");
    const ship = (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${made[3]!.id}`))).json;
    expect(
      ship.dependencies
        .map((d: { depends_on_task_id: string; dependency_type: string; contract_key: string | null }) => [
          d.depends_on_task_id,
          d.dependency_type,
          d.contract_key,
        ])
        .sort(),
    ).toEqual(
      [
        [made[1]!.id, "input", "artifact"],
        [made[2]!.id, "blocks", null],
      ].sort(),
    );
    const plan = (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${made[0]!.id}`))).json;
    expect(plan.spec).toBe("Plan release 2.1 (dry run: false)");
    const runs = (await expectOk(call(`/api/v1/projects/${w.project.id}/runs?template_id=${t.id}`, { token: w.member.token }))).json.runs;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      id: reply.json.run_id,
      source: "manual",
      template_name: t.name,
      parameters: { version: "2.1", shards: 4, dry_run: false },
      task_ids: made.map((x) => x.id),
      status: "open",
      tasks: { total: 4, done: 0, failed: 0, open: 4 },
    });
  });

  it("creates nothing when one parameter is wrong, and says which (422)", async () => {
    const t = await saved();
    const before = await tasksIn(w.project.id);
    const cases: [Record<string, unknown>, string][] = [
      [{ version: "3", shards: "four" }, "parameters.shards"],
      [{ shards: 3 }, "parameters.version"],
      [{ version: "3", colour: "red" }, "parameters.colour"],
      // Filled in, the title is more than 500 characters: the task's own rule names it.
      [{ version: "x".repeat(600) }, "tasks.0.title"],
    ];
    for (const [parameters, path] of cases) {
      const reply = await call(`${templatesOf(w.project.id)}/${t.id}/instantiate`, { token: w.member.token, body: { parameters } });
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect(await tasksIn(w.project.id)).toBe(before);
    expect((await expectOk(call(`/api/v1/projects/${w.project.id}/runs?template_id=${t.id}`, { token: w.admin }))).json.runs).toEqual([]);
  });

  it("makes whole graphs when twenty calls race, each with its own run", async () => {
    const world = await worldUnder(w.admin, "Racing templates");
    const t = (await expectOk(call(templatesOf(world.project.id), { token: world.member.token, body: release() }), 201)).json;
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(`${templatesOf(world.project.id)}/${t.id}/instantiate`, { token: world.member.token, body: { parameters: { version: `1.${i}` } } }),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(await tasksIn(world.project.id)).toBe(80);
    const runs = (await expectOk(call(`/api/v1/projects/${world.project.id}/runs?limit=50`, { token: world.admin }))).json.runs;
    expect(runs).toHaveLength(20);
    expect(new Set(runs.flatMap((r: { task_ids: string[] }) => r.task_ids)).size).toBe(80);
  });

  it("drafts a template from a task's graph, which saves and makes the same shape again", async () => {
    const t = await saved();
    const made = (
      await expectOk(call(`${templatesOf(w.project.id)}/${t.id}/instantiate`, { token: w.member.token, body: { parameters: { version: "9" } } }), 201)
    ).json.tasks;
    const draft = (await expectOk(call(`${templatesOf(w.project.id)}/draft?task_id=${made[2].id}`, { token: w.member.token }))).json.tasks;
    expect(draft.map((x: { key: string }) => x.key)).toEqual(["plan-9", "build-9", "docs-for-9", "ship-9"]);
    expect(draft[3].dependencies).toEqual([
      { on: "build-9", dependency_type: "input", contract_key: "artifact" },
      { on: "docs-for-9", dependency_type: "blocks" },
    ]);
    const copy = await saved({ name: `copy-${crypto.randomUUID().slice(0, 6)}`, description: null, parameters: [], tasks: draft } as never);
    const again = (await expectOk(call(`${templatesOf(w.project.id)}/${copy.id}/instantiate`, { token: w.member.token, body: {} }), 201)).json.tasks;
    expect(again.map((x: { title: string; blocked: boolean }) => [x.title, x.blocked])).toEqual([
      ["Plan 9", false],
      ["Build 9", true],
      ["Docs for 9", true],
      ["Ship 9", true],
    ]);
  });

  it("refuses deleting a template in use elsewhere only when something uses it, and keeps its runs", async () => {
    const t = await saved();
    const run = (
      await expectOk(call(`${templatesOf(w.project.id)}/${t.id}/instantiate`, { token: w.member.token, body: { parameters: { version: "5" } } }), 201)
    ).json;
    await expectOk(call(`${templatesOf(w.project.id)}/${t.id}`, { method: "DELETE", token: w.member.token }), 204);
    expectProblem(await call(`${templatesOf(w.project.id)}/${t.id}`, { token: w.member.token }), 404, "NOT_FOUND");
    const runs = (await expectOk(call(`/api/v1/projects/${w.project.id}/runs?limit=200`, { token: w.admin }))).json.runs;
    expect(runs.find((r: { id: string }) => r.id === run.run_id)).toMatchObject({ template_name: t.name, status: "open" });
  });
});
