/**
 * Budgets (API.md "Usage, budgets and telemetry"): usage spends on them in the project's room, which crosses each
 * threshold once however many posts race it; a hold refuses assigning and starting in its scope, a stop moves its
 * running tasks to needs_human; a raise, a new period or deleting the budget releases the scope.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { UsagePoint } from "../src/domain/usage";
import { notification } from "../src/integrations/telegram/messages";
import type { ProjectRoom } from "../src/room/project-room";
import { call, createProject, createUser, expectProblem, until, type Reply } from "./helpers";
import { cli, createWorld, expectOk, newTask, T, taskIn, taskStatus, worldUnder, type World } from "./task-world";

let first: World;
beforeAll(async () => {
  first = await createWorld("Graph budget");
});

/** A world of its own (project, member, agents and their sessions), under the hub's one admin. */
const worldOf = (name: string) => worldUnder(first.admin, name);

const room = (projectId: string) => env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(projectId));
const budgetsOf = (projectId: string) => `/api/v1/projects/${projectId}/budgets`;

/** What an agent reports spending, on a task (or on none: the project's alone). */
const spend = (taskId: string | null, measure: UsagePoint["measure"], value: number): UsagePoint => ({
  sessionId: null,
  serverId: null,
  agentType: "claude_code",
  model: "claude-sonnet-4-5",
  measure,
  value,
  at: new Date().toISOString(),
  ...(taskId ? { taskId } : {}),
});

/** `count` usage posts at once, each of `usd`, on the tasks in turn. */
const racing = (projectId: string, taskIds: (string | null)[], count: number, usd: number) =>
  Promise.all(Array.from({ length: count }, (_, i) => room(projectId).recordUsage([spend(taskIds[i % taskIds.length]!, "cost_usd", usd)])));

async function createBudget(w: World, body: Record<string, unknown>, token = w.admin) {
  return (await expectOk(call(budgetsOf(w.project.id), { token, body }), 201)).json;
}

const budget = async (w: World, id: string) => (await expectOk(call(`${budgetsOf(w.project.id)}/${id}`, { token: w.admin }))).json;

/** The budget once the room has counted spend up to `usd`. */
const spentUpTo = (w: World, id: string, usd: number) =>
  until(
    () => budget(w, id),
    (b) => b.spent.cost_usd >= usd - 1e-9,
    `a spend of $${usd}`,
  );

const budgetEvents = async (w: World, budgetId: string) =>
  ((await expectOk(call(`/api/v1/projects/${w.project.id}/events?limit=1000`, { token: w.admin }))).json.events as any[]).filter(
    (e) => e.type.startsWith("budget_") && e.data.budget_id === budgetId,
  );
const counts = (events: any[]) =>
  Object.fromEntries(["budget_warned", "budget_held", "budget_stopped", "budget_released"].map((t) => [t, events.filter((e) => e.type === t).length]));

const agentView = async (w: World, taskId: string) => (await expectOk(cli(w.worker.apiKey, "GET", `${T}/${taskId}`))).json;

const assign = (w: World, taskId: string) => cli(w.orchestrator.apiKey, "POST", `${T}/${taskId}/assign`, { session_name: "worker" });
const start = (w: World, taskId: string) => cli(w.worker.apiKey, "POST", `${T}/${taskId}/start`);

function expectHeldBy(reply: Reply, budgetId: string) {
  expectProblem(reply, 409, "BUDGET_HELD");
  expect(reply.json.budget_id).toBe(budgetId);
  expect(reply.json.detail).toContain(budgetId);
}

describe("a budget of $1 on a graph of three tasks", () => {
  let w: World;
  let a: string;
  let b: string;
  let c: string;
  let outside: string;
  let id: string;

  beforeAll(async () => {
    w = first;
    // A runs; B waits on A; C is related to B (so free to start): one graph, reached from B both ways.
    a = (await taskIn(w, "running")).id;
    b = await newTask(w, { dependencies: [{ depends_on_task_id: a, dependency_type: "blocks" }] });
    c = await newTask(w, { dependencies: [{ depends_on_task_id: b, dependency_type: "related" }] });
    outside = await newTask(w);
    await expectOk(assign(w, c));
    const created = await createBudget(w, {
      scope: "graph",
      task_id: b,
      limit_usd: 1,
      actions: [
        { at_percent: 80, action: "hold" },
        { at_percent: 50, action: "warn" },
        { at_percent: 100, action: "stop" },
      ],
    });
    id = created.id;
    expect(created).toMatchObject({
      scope: "graph",
      task_id: b,
      period: null,
      period_key: "",
      limit_usd: 1,
      limit_tokens: null,
      spent: { cost_usd: 0, tokens: 0 },
      remaining_usd: 1,
      state: "ok",
      crossed: [],
      actions: [
        { at_percent: 50, action: "warn" },
        { at_percent: 80, action: "hold" },
        { at_percent: 100, action: "stop" },
      ],
    });
  });

  it("warns at 50% once under 40 racing usage posts, and counts nothing spent outside the graph", async () => {
    await Promise.all([racing(w.project.id, [a, b, c], 40, 0.0125), racing(w.project.id, [outside, null], 10, 0.1)]);
    const after = await spentUpTo(w, id, 0.5);
    expect(after.spent.cost_usd).toBeCloseTo(0.5, 9);
    expect(after).toMatchObject({ state: "warned", crossed: [{ at_percent: 50, action: "warn" }] });
    const events = await budgetEvents(w, id);
    expect(counts(events)).toMatchObject({ budget_warned: 1, budget_held: 0 });
    expect(events[0]).toMatchObject({ task_id: b, data: { scope: "graph", at_percent: 50, action: "warn", limit_usd: 1, task_id: b } });
    expect(events[0].data.percent).toBeGreaterThanOrEqual(50);
    expect((await agentView(w, c)).budget).toMatchObject({ budget_id: id, state: "warned" });
  });

  it("holds at 80% once: the running task hears of it, nothing in the graph is assigned or started, the rest of the project goes on", async () => {
    await racing(w.project.id, [a, b, c], 40, 0.0075);
    const after = await spentUpTo(w, id, 0.8);
    expect(after).toMatchObject({ state: "held" });
    expect(after.crossed.map((x: any) => x.action)).toEqual(["warn", "hold"]);
    expect(counts(await budgetEvents(w, id))).toMatchObject({ budget_warned: 1, budget_held: 1, budget_stopped: 0 });
    const notes = (await agentView(w, a)).recent_notes;
    expect(notes).toContainEqual(expect.objectContaining({ author: "hub", urgent: true, content: expect.stringContaining(`Budget hold`) }));
    expectHeldBy(await start(w, c), id);
    expectHeldBy(await assign(w, b), id);
    expect(await taskStatus(w, c)).toBe("assigned");
    // A task outside the graph is assigned and started as ever.
    await expectOk(assign(w, outside));
    await expectOk(start(w, outside));
    expect((await agentView(w, c)).budget).toMatchObject({ budget_id: id, state: "held" });
    expect((await agentView(w, outside)).budget).toBeNull();
  });

  it("stops at 100% once: the running task in the graph goes to needs_human with the reason; others run on", async () => {
    await racing(w.project.id, [a, b, c], 40, 0.005);
    const after = await spentUpTo(w, id, 1);
    expect(after).toMatchObject({ state: "stopped", remaining_usd: 0 });
    expect(await taskStatus(w, a)).toBe("needs_human");
    expect(await taskStatus(w, outside)).toBe("running");
    const asked = await env.DB.prepare("SELECT * FROM interventions WHERE task_id = ?1 AND status = 'pending'").bind(a).all<Record<string, string>>();
    expect(asked.results).toHaveLength(1);
    expect(asked.results[0]).toMatchObject({ intervention_type: "help", asked_by: "hub" });
    expect(asked.results[0]!.question).toContain(id);
    // More spend past every threshold crosses nothing again.
    await racing(w.project.id, [a, b, c], 40, 0.005);
    await spentUpTo(w, id, 1.2);
    expect(counts(await budgetEvents(w, id))).toEqual({ budget_warned: 1, budget_held: 1, budget_stopped: 1, budget_released: 0 });
    const crossings = await env.DB.prepare("SELECT at_percent, action FROM budget_crossings WHERE budget_id = ?1 ORDER BY at_percent").bind(id).all();
    expect(crossings.results).toEqual([
      { at_percent: 50, action: "warn" },
      { at_percent: 80, action: "hold" },
      { at_percent: 100, action: "stop" },
    ]);
    expectHeldBy(await start(w, c), id);
  });

  it("raising the limit releases the graph (an event), and its tasks start again", async () => {
    const raised = (await expectOk(call(`${budgetsOf(w.project.id)}/${id}`, { method: "PATCH", token: w.member.token, body: { limit_usd: 5 } }))).json;
    expect(raised).toMatchObject({ state: "ok", limit_usd: 5, crossed: [] });
    expect(raised.remaining_usd).toBeCloseTo(3.8, 9);
    const released = (await budgetEvents(w, id)).filter((e) => e.type === "budget_released");
    expect(released).toHaveLength(1);
    expect(released[0].data).toMatchObject({ reason: "changed", state: "ok", limit_usd: 5 });
    await expectOk(start(w, c));
    const view = await agentView(w, c);
    expect(view.budget).toMatchObject({ budget_id: id, state: "ok" });
    expect(view.budget.remaining_usd).toBeCloseTo(3.8, 9);
  });

  it("a budget in tokens counts every kind of token, and the task view shows what is left of it", async () => {
    const tokens = await createBudget(w, { scope: "graph", task_id: outside, limit_tokens: 10_000, actions: [{ at_percent: 90, action: "warn" }] });
    expect(tokens).toMatchObject({ limit_usd: null, limit_tokens: 10_000, remaining_tokens: 10_000 });
    await room(w.project.id).recordUsage([spend(outside, "input_tokens", 2000), spend(outside, "cache_read_tokens", 500), spend(outside, "cost_usd", 0.01)]);
    const after = await until(
      () => budget(w, tokens.id),
      (x) => x.spent.tokens >= 2500,
      "token spend",
    );
    expect(after).toMatchObject({ spent: { tokens: 2500 }, remaining_tokens: 7500, state: "ok" });
    expect((await agentView(w, outside)).budget).toEqual({ budget_id: tokens.id, remaining_tokens: 7500, state: "ok" });
  });

  it("a budget set when the spend is past its thresholds crosses them as it is set; deleting a held one releases its scope", async () => {
    const over = await createBudget(w, { scope: "project", period: "day", limit_usd: 0.5, actions: [{ at_percent: 100, action: "hold" }] });
    expect(over).toMatchObject({ scope: "project", period: "day", state: "held", crossed: [{ at_percent: 100, action: "hold" }] });
    expect(over.period_key).toBe(new Date().toISOString().slice(0, 10));
    expect(over.spent.cost_usd).toBeGreaterThan(1);
    expect(counts(await budgetEvents(w, over.id))).toMatchObject({ budget_held: 1 });
    // The project's running task hears of the hold.
    expect((await agentView(w, outside)).recent_notes.at(-1)).toMatchObject({ author: "hub", content: expect.stringContaining(over.id) });
    const another = await newTask(w);
    expectHeldBy(await assign(w, another), over.id);
    expect((await agentView(w, another)).budget).toMatchObject({ budget_id: over.id, state: "held", remaining_usd: 0 });
    expect((await call(`${budgetsOf(w.project.id)}/${over.id}`, { method: "DELETE", token: w.admin })).status).toBe(204);
    expect(counts(await budgetEvents(w, over.id))).toMatchObject({ budget_held: 1, budget_released: 1 });
    expect((await budgetEvents(w, over.id)).at(-1).data.reason).toBe("deleted");
    await expectOk(assign(w, another));
    expectProblem(await call(`${budgetsOf(w.project.id)}/${over.id}`, { token: w.admin }), 404, "NOT_FOUND");
  });

  it("lists the project's budgets for anyone who sees it", async () => {
    const viewer = await createUser(w.admin, "viewer");
    await expectOk(call(`/api/v1/projects/${w.project.id}/members`, { token: w.admin, body: { user_id: viewer.id } }), 201);
    const listed = (await expectOk(call(budgetsOf(w.project.id), { token: viewer.token }))).json.budgets;
    expect(listed.map((x: any) => x.id)).toContain(id);
  });
});

describe("a project budget that holds", () => {
  let w: World;
  let id: string;
  let waiting: string;

  beforeAll(async () => {
    w = await worldOf("Project budget");
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: w.worker.apiKey, body: { capabilities: { languages: ["cobol"], max_concurrent_tasks: 50 } } }));
  });

  it("refuses start with 409 BUDGET_HELD naming the budget, and auto-assigns nothing meanwhile", async () => {
    const assigned = (await taskIn(w, "assigned")).id;
    id = (await createBudget(w, { scope: "project", period: "day", limit_usd: 1, actions: [{ at_percent: 80, action: "hold" }] }, w.member.token)).id;
    await racing(w.project.id, [null], 40, 0.0225);
    expect(await spentUpTo(w, id, 0.9)).toMatchObject({ state: "held" });
    expectHeldBy(await start(w, assigned), id);
    waiting = await newTask(w, { requirements: { languages: ["cobol"] } });
    // A heartbeat offers waiting tasks: not this one, its project is held.
    await expectOk(call("/api/v1/servers/heartbeat", { apiKey: w.worker.apiKey, body: { capabilities: { languages: ["cobol"], max_concurrent_tasks: 50 } } }));
    expect(await taskStatus(w, waiting)).toBe("pending");
    expectProblem(await cli(w.orchestrator.apiKey, "POST", `${T}/${waiting}/auto-assign`), 409, "BUDGET_HELD");
    // Raising the budget releases the project: the waiting task is offered, and the assigned one starts.
    const raised = (await expectOk(call(`${budgetsOf(w.project.id)}/${id}`, { method: "PATCH", token: w.admin, body: { limit_usd: 2 } }))).json;
    expect(raised).toMatchObject({ state: "ok", percent: 45 });
    expect(counts(await budgetEvents(w, id))).toMatchObject({ budget_held: 1, budget_released: 1 });
    expect(await taskStatus(w, waiting)).toBe("assigned");
    await expectOk(start(w, assigned));
  });

  it("crosses a threshold again once a lower limit reaches it again", async () => {
    const lowered = (await expectOk(call(`${budgetsOf(w.project.id)}/${id}`, { method: "PATCH", token: w.admin, body: { limit_usd: 1 } }))).json;
    expect(lowered).toMatchObject({ state: "held", crossed: [{ at_percent: 80, action: "hold" }] });
    expect(counts(await budgetEvents(w, id))).toMatchObject({ budget_held: 2, budget_released: 1 });
  });

  it("a new period starts from nothing: the hold ends at once, and the next spend says it was released", async () => {
    // Yesterday's hold, as the room would have left it, and the room made to read its budgets again.
    await env.DB.batch([
      env.DB.prepare("UPDATE budgets SET period_key = '2000-01-01' WHERE id = ?1").bind(id),
      env.DB.prepare("UPDATE budget_crossings SET period_key = '2000-01-01' WHERE budget_id = ?1").bind(id),
    ]);
    await runInDurableObject(room(w.project.id), async (instance: ProjectRoom) => {
      (instance as unknown as { writer: { budgetRows: unknown } }).writer.budgetRows = null;
    });
    const today = new Date().toISOString().slice(0, 10);
    expect(await budget(w, id)).toMatchObject({ period_key: today, spent: { cost_usd: 0, tokens: 0 }, state: "ok", crossed: [], remaining_usd: 1 });
    const next = (await taskIn(w, "assigned")).id;
    await expectOk(start(w, next));
    await room(w.project.id).recordUsage([spend(null, "cost_usd", 0.1)]);
    const released = await until(
      async () => (await budgetEvents(w, id)).filter((e) => e.type === "budget_released"),
      (events) => events.length === 2,
      "the release of the new period",
    );
    expect(released.at(-1).data).toMatchObject({ reason: "new_period", period_key: today, state: "ok" });
    expect(released.at(-1).data.spent.cost_usd).toBeCloseTo(0.1, 9);
    const row = await env.DB.prepare("SELECT period_key, state, spent_usd FROM budgets WHERE id = ?1").bind(id).first();
    expect(row).toMatchObject({ period_key: today, state: "ok" });
  });
});

describe("budget requests", () => {
  let w: World;
  let other: { id: string };
  let otherTask: string;

  beforeAll(async () => {
    w = await worldOf("Budget requests");
    other = await createProject(w.admin, "Another project");
    otherTask = await newTask(w, { project_id: other.id });
  });

  const refused = async (body: unknown, path: string, token = w.admin) => {
    const reply = await call(budgetsOf(w.project.id), { token, body });
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors.map((e: any) => e.path)).toContain(path);
    return reply;
  };
  const good = { scope: "project", period: "month", limit_usd: 10, actions: [{ at_percent: 90, action: "warn" }] };

  it("names the field and the rule of each mistake", async () => {
    await refused({ ...good, limit_tokens: 100 }, "limit_tokens");
    await refused({ ...good, limit_usd: undefined }, "limit_usd");
    await refused({ ...good, limit_usd: 0 }, "limit_usd");
    await refused({ ...good, limit_usd: undefined, limit_tokens: 1.5 }, "limit_tokens");
    await refused({ ...good, period: undefined }, "period");
    await refused({ ...good, period: "week" }, "period");
    await refused({ ...good, task_id: crypto.randomUUID() }, "task_id");
    await refused({ ...good, scope: "graph", period: undefined }, "task_id");
    await refused({ ...good, scope: "graph", task_id: crypto.randomUUID() }, "period");
    await refused({ ...good, scope: "everything" }, "scope");
    await refused({ ...good, actions: [] }, "actions");
    await refused({ ...good, actions: [{ at_percent: 0, action: "warn" }] }, "actions.0.at_percent");
    await refused({ ...good, actions: [{ at_percent: 1001, action: "warn" }] }, "actions.0.at_percent");
    await refused({ ...good, actions: [{ at_percent: 50, action: "pause" }] }, "actions.0.action");
    const twice = await refused(
      {
        ...good,
        actions: [
          { at_percent: 50, action: "warn" },
          { at_percent: 50, action: "hold" },
        ],
      },
      "actions",
    );
    expect(twice.json.errors[0].message).toContain("twice");
  });

  it("refuses a graph budget on a task of another project or none (422 naming task_id)", async () => {
    const graph = { scope: "graph", limit_usd: 1, actions: [{ at_percent: 100, action: "stop" }] };
    const reply = await refused({ ...graph, task_id: otherTask }, "task_id");
    expect(reply.json.detail).toContain("task of this project");
    await refused({ ...graph, task_id: crypto.randomUUID() }, "task_id");
  });

  it("answers malformed JSON with 400, and a budget it does not know (or another project's) with 404", async () => {
    expectProblem(
      await call(budgetsOf(w.project.id), { token: w.admin, raw: "{not json", headers: { "Content-Type": "application/json" } }),
      400,
      "MALFORMED_JSON",
    );
    expectProblem(await call(`${budgetsOf(w.project.id)}/${crypto.randomUUID()}`, { token: w.admin }), 404, "NOT_FOUND");
    expectProblem(await call(`${budgetsOf(w.project.id)}/not-an-id`, { token: w.admin }), 404, "NOT_FOUND");
    const theirs = (await expectOk(call(budgetsOf(other.id), { token: w.admin, body: good }), 201)).json.id;
    for (const [method, body] of [
      ["GET", undefined],
      ["PATCH", { limit_usd: 3 }],
      ["DELETE", undefined],
    ] as const) {
      expectProblem(await call(`${budgetsOf(w.project.id)}/${theirs}`, { method, token: w.admin, body }), 404, "NOT_FOUND");
    }
    expect((await call(`${budgetsOf(other.id)}/${theirs}`, { token: w.admin })).json.limit_usd).toBe(10);
  });

  it("lets members and admins set budgets, viewers only read them, and people outside the project see none", async () => {
    const mine = await createBudget(w, good, w.member.token);
    expect(mine.created_by).toBe(w.member.email);
    const viewer = await createUser(w.admin, "viewer");
    const memberViewing = await createUser(w.admin, "member");
    const outsider = await createUser(w.admin, "member");
    await expectOk(call(`/api/v1/projects/${w.project.id}/members`, { token: w.admin, body: { user_id: viewer.id } }), 201);
    await expectOk(call(`/api/v1/projects/${w.project.id}/members`, { token: w.admin, body: { user_id: memberViewing.id, role: "viewer" } }), 201);
    for (const reader of [viewer, memberViewing]) {
      expect((await expectOk(call(`${budgetsOf(w.project.id)}/${mine.id}`, { token: reader.token }))).json.id).toBe(mine.id);
      expectProblem(await call(budgetsOf(w.project.id), { token: reader.token, body: good }), 403, "FORBIDDEN");
      expectProblem(await call(`${budgetsOf(w.project.id)}/${mine.id}`, { method: "PATCH", token: reader.token, body: { limit_usd: 1 } }), 403, "FORBIDDEN");
      expectProblem(await call(`${budgetsOf(w.project.id)}/${mine.id}`, { method: "DELETE", token: reader.token }), 403, "FORBIDDEN");
    }
    expectProblem(await call(budgetsOf(w.project.id), { token: outsider.token }), 404, "NOT_FOUND");
  });

  it("changes only a budget's limit, period and actions, keeping exactly one limit", async () => {
    const mine = await createBudget(w, { scope: "project", period: "day", limit_tokens: 1000, actions: [{ at_percent: 50, action: "warn" }] });
    const patch = (body: unknown) => call(`${budgetsOf(w.project.id)}/${mine.id}`, { method: "PATCH", token: w.admin, body });
    const both = await patch({ limit_usd: 2 });
    expectProblem(both, 422, "VALIDATION_FAILED");
    expect(both.json.errors).toEqual([{ path: "limit_usd", message: expect.stringContaining("exactly one") }]);
    const scope = await patch({ scope: "graph" });
    expectProblem(scope, 422, "VALIDATION_FAILED");
    expect(scope.json.errors).toEqual([{ path: "scope", message: expect.stringContaining("cannot be changed") }]);
    expect((await expectOk(patch({ limit_usd: 2, limit_tokens: null, period: "month" }))).json).toMatchObject({
      limit_usd: 2,
      limit_tokens: null,
      period: "month",
      period_key: new Date().toISOString().slice(0, 7),
    });
  });
});

describe("what Telegram says of a budget", () => {
  it("names the budget, its spend and what follows", () => {
    const held = notification(
      {
        type: "budget_held",
        task_id: null,
        data: { scope: "project", period: "day", spent: { cost_usd: 0.84, tokens: 0 }, limit_usd: 1, limit_tokens: null, at_percent: 80 },
      },
      { projectName: "Payments <core>", taskTitle: null },
    );
    expect(held?.text).toBe(
      "<b>Budget hold</b> · Payments &lt;core&gt;\n\nThe project's daily budget has spent $0.84 of $1.00 (84%). " +
        "No new task in its scope is assigned or started until it is raised; running tasks were told.",
    );
    const stopped = notification(
      { type: "budget_stopped", task_id: "t", data: { scope: "graph", task_id: "1a2b3c4d-x", spent: { cost_usd: 0, tokens: 1200 }, limit_tokens: 1000 } },
      { projectName: "P", taskTitle: "Build it" },
    );
    expect(stopped?.text).toContain("<b>Budget stop</b> · P · Build it");
    expect(stopped?.text).toContain("1,200 of 1,000 tokens (120%)");
  });
});
