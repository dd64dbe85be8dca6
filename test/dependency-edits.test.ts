/**
 * Adding and removing a dependency as people do from the graph (/api/v1/tasks/{id}/dependencies): a member may, through
 * the project's room (its events say so); a viewer is refused, someone outside the project is told it does not exist,
 * another project's task cannot be an upstream, and a task that has left pending keeps its dependencies.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, createProject, createUser, expectProblem, type Reply } from "./helpers";
import { cli, createWorld, expectOk, newTask, T, type World } from "./task-world";

let w: World;
let viewer: Awaited<ReturnType<typeof createUser>>;
let outsider: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  w = await createWorld("Drawn");
  viewer = await createUser(w.admin, "viewer");
  await call(`/api/v1/projects/${w.project.id}/members`, { token: w.admin, body: { user_id: viewer.id } });
  outsider = await createUser(w.admin, "member");
});

const add = (token: string, taskId: string, body: unknown) => call(`/api/v1/tasks/${taskId}/dependencies`, { token, body });
const remove = (token: string, taskId: string, upstreamId: string) => call(`/api/v1/tasks/${taskId}/dependencies/${upstreamId}`, { token, method: "DELETE" });
const dependencies = async (id: string) => (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}`))).json.dependencies as unknown[];
const eventsOf = async (taskId: string) =>
  (
    (await call(`/api/v1/projects/${w.project.id}/events?limit=1000`, { token: w.admin })).json.events as { task_id: string; type: string; data: unknown }[]
  ).filter((e) => e.task_id === taskId);

describe("a member", () => {
  it("adds a typed dependency with its contract key and removes it, each recorded as the project's event", async () => {
    const up = await newTask(w);
    const down = await newTask(w);
    const added = await expectOk(add(w.member.token, down, { depends_on_task_id: up, dependency_type: "input", contract_key: "api_schema" }), 201);
    expect(added.json).toMatchObject({ depends_on_task_id: up, dependency_type: "input", contract_key: "api_schema", resolved: false });
    const task = (await expectOk(call(`/api/v1/tasks/${down}`, { token: w.member.token }))).json;
    expect(task).toMatchObject({ blocked: true, dependencies: [{ depends_on_task_id: up, dependency_type: "input", contract_key: "api_schema" }] });

    const removed = await expectOk(remove(w.member.token, down, up));
    expect(removed.json).toEqual({ removed: true, task_id: down, depends_on_task_id: up });
    expect(await dependencies(down)).toEqual([]);
    const events = await eventsOf(down);
    expect(events.map((e) => e.type)).toEqual(["task_created", "dependency_added", "dependency_removed", "task_unblocked"]);
    expect(events[1]!.data).toEqual({ depends_on_task_id: up, dependency_type: "input", contract_key: "api_schema", resolved: false });
  });

  it("is told what is wrong with a dependency: a missing contract key, an unknown type, a malformed or foreign upstream, a cycle", async () => {
    const up = await newTask(w);
    const down = await newTask(w);
    const field = (r: Reply) => r.json.errors.map((e: { path: string }) => e.path);
    const noKey = await add(w.member.token, down, { depends_on_task_id: up, dependency_type: "input" });
    expectProblem(noKey, 422, "VALIDATION_FAILED");
    expect(noKey.json.detail).toBe("contract_key: is required for an input dependency");
    expect(field(await add(w.member.token, down, { depends_on_task_id: up, dependency_type: "needs" }))).toEqual(["dependency_type"]);
    expect(field(await add(w.member.token, down, { depends_on_task_id: up, contract_key: "has space" }))).toEqual(["contract_key"]);
    expect(field(await add(w.member.token, down, { depends_on_task_id: "not-a-task" }))).toEqual(["depends_on_task_id"]);

    const other = await createProject(w.admin, "Elsewhere");
    const foreign = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "foreign", project_id: other.id }), 201);
    const crossing = await add(w.member.token, down, { depends_on_task_id: foreign.json.id });
    expectProblem(crossing, 422, "VALIDATION_FAILED");
    expect(field(crossing)).toEqual(["depends_on_task_id"]);

    await expectOk(add(w.member.token, down, { depends_on_task_id: up }), 201);
    const cycle = await add(w.member.token, up, { depends_on_task_id: down, dependency_type: "related" });
    expectProblem(cycle, 409, "DEPENDENCY_CYCLE");
    expect(cycle.json.cycle).toEqual([up, down, up]);
    expect(await dependencies(up)).toEqual([]);
    // A dependency that is not there, or an upstream that is no task id at all, is not found.
    expectProblem(await remove(w.member.token, up, down), 404, "NOT_FOUND");
    expectProblem(await remove(w.member.token, down, "not-a-task"), 404, "NOT_FOUND");
  });

  it("cannot change the dependencies of a task that has left pending", async () => {
    const up = await newTask(w);
    const down = await newTask(w, { dependency_ids: [up] });
    await expectOk(call(`/api/v1/tasks/${down}`, { token: w.member.token, method: "DELETE" }));
    const adding = await add(w.member.token, down, { depends_on_task_id: await newTask(w) });
    expectProblem(adding, 409, "TASK_IMMUTABLE");
    expect(adding.json.detail).toBe("A task is immutable once it has left pending; this one is cancelled, so dependencies cannot change");
    expectProblem(await remove(w.member.token, down, up), 409, "TASK_IMMUTABLE");
    expect(await dependencies(down)).toEqual([expect.objectContaining({ depends_on_task_id: up })]);
  });
});

describe("who else", () => {
  it("refuses a viewer both ways and answers someone outside the project that the task does not exist, changing nothing", async () => {
    const up = await newTask(w);
    const down = await newTask(w, { dependency_ids: [up] });
    const other = await newTask(w);
    expectProblem(await add(viewer.token, down, { depends_on_task_id: other }), 403, "FORBIDDEN");
    expectProblem(await remove(viewer.token, down, up), 403, "FORBIDDEN");
    expectProblem(await add(outsider.token, down, { depends_on_task_id: other }), 404, "NOT_FOUND");
    expectProblem(await remove(outsider.token, down, up), 404, "NOT_FOUND");
    expect(await dependencies(down)).toEqual([expect.objectContaining({ depends_on_task_id: up, dependency_type: "blocks" })]);
    expect((await eventsOf(down)).map((e) => e.type)).toEqual(["task_created"]);
  });
});
