/**
 * A person's inbox: what waits on people in the projects they see, each item with its task, project, who asks and
 * when; what of it is unread for that person; and reads that stay on the inbox's indexes.
 */
import { env } from "cloudflare:workers";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { beforeAll, describe, expect, it } from "vitest";
import { inboxCountQuery, openQuestionsQuery, tasksAwaitingPeopleQuery } from "../src/db/inbox";
import { addMember, call, createProject, createUser, expectProblem, registerAgent, type Reply } from "./helpers";
import { openSocket } from "./sockets";
import { cli, createWorld, expectOk, newTask, openSession, T, taskIn, type World } from "./task-world";

let w: World;
let viewer: Awaited<ReturnType<typeof createUser>>;
/** A project the world's member and viewer are not in, with an agent of its own. */
let other: { project: { id: string; name: string }; apiKey: string };

beforeAll(async () => {
  w = await createWorld("Inbox world");
  viewer = await createUser(w.admin, "viewer");
  await addMember(w.admin, w.project.id, viewer.id);
  const project = await createProject(w.admin, "Elsewhere");
  const agent = await registerAgent(w.admin, `elsewhere-${crypto.randomUUID().slice(0, 6)}`);
  await openSession(agent.apiKey, project.id, "elsewhere-worker");
  other = { project, apiKey: agent.apiKey };
});

const inbox = async (token: string) => (await expectOk(call("/api/v1/inbox", { token }))).json;
const count = async (token: string) => (await expectOk(call("/api/v1/inbox/count", { token }))).json;
const seen = (token: string, body?: unknown) => call("/api/v1/inbox/seen", { method: "POST", token, body: body ?? {} });
const itemOf = async (token: string, id: string) => (await inbox(token)).items.find((i: any) => i.id === id);

/** A running task of the world's worker that asks a person; returns the task and the intervention. */
async function asked(body: Record<string, unknown>) {
  const { id } = await taskIn(w, "running");
  const help = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/help`, body));
  return { taskId: id, interventionId: help.json.intervention_id as string };
}

const interventionRow = (id: string) => env.DB.prepare("SELECT created_at FROM interventions WHERE id = ?1").bind(id).first<{ created_at: string }>();

describe("each item", () => {
  it("a question names its task, project, the agent and session that ask, the question with its context, and when it was asked", async () => {
    const { taskId, interventionId } = await asked({ question: "Which region?", intervention_type: "question", context: { file: "deploy.tf", line: 12 } });
    const item = await itemOf(w.member.token, interventionId);
    expect(item).toEqual({
      kind: "question",
      id: interventionId,
      project: { id: w.project.id, name: "Inbox world" },
      task: { id: taskId, title: "A task", status: "needs_human", priority: "normal" },
      asked_at: (await interventionRow(interventionId))!.created_at,
      asked_by: { label: `agent:${w.worker.name}`, server: { id: w.worker.id, name: w.worker.name }, session: { id: w.workerSession, name: "worker" } },
      question: "Which region?",
      options: [],
      context: { file: "deploy.tf", line: 12 },
      plan: null,
      spec: null,
      expires_at: null,
      can_answer: true,
      unread: true,
    });
  });

  it("a help request and a tool approval are items of their kinds; a question one agent asks another's session is not", async () => {
    const help = await asked({ question: "Stuck on the migration" });
    const approval = await asked({ question: "Run `rm -rf build/`?", intervention_type: "approval" });
    const { id } = await taskIn(w, "running");
    const toAgent = await expectOk(
      cli(w.worker.apiKey, "POST", `${T}/${id}/help`, { question: "What schema do you expose?", target_session_id: w.orchestratorSession }),
    );
    const items = (await inbox(w.member.token)).items;
    expect(items.find((i: any) => i.id === help.interventionId).kind).toBe("help");
    expect(items.find((i: any) => i.id === approval.interventionId)).toMatchObject({ kind: "approval", question: "Run `rm -rf build/`?" });
    expect(items.map((i: any) => i.id)).not.toContain(toAgent.json.intervention_id);
  });

  it("a question asked over the agent socket offers its options by label, and names the server that waits for the answer", async () => {
    const socket = await openSocket(`/api/v1/projects/${w.project.id}/agent-ws`, { "X-API-Key": w.worker.apiKey });
    const question = `Ship it? ${crypto.randomUUID()}`;
    socket.send({
      type: "request:ask-user",
      id: `ask-${crypto.randomUUID()}`,
      payload: {
        question,
        options: [
          { label: "Ship", value: 1 },
          { label: "Hold", value: 2 },
        ],
        timeout: 60_000,
      },
    });
    let item: any;
    await expect.poll(async () => (item = (await inbox(w.member.token)).items.find((i: any) => i.question === question))).toBeTruthy();
    expect(item).toMatchObject({
      kind: "question",
      task: null,
      options: ["Ship", "Hold"],
      asked_by: { server: { id: w.worker.id, name: w.worker.name }, session: null },
    });
    expect(Date.parse(item.expires_at)).toBeGreaterThan(Date.now());
  });

  it("a plan to review carries the plan, and who made it", async () => {
    const { id } = await taskIn(w, "plan_review");
    expect(await itemOf(w.member.token, id)).toMatchObject({
      kind: "plan_review",
      task: { id, title: "A task", status: "plan_review" },
      plan: { summary: "the plan" },
      asked_by: { label: `agent:${w.worker.name}`, server: { id: w.worker.id }, session: { id: w.workerSession, name: "worker" } },
      question: null,
      can_answer: true,
    });
    // Once approved it waits on nobody.
    await expectOk(call(`/api/v1/tasks/${id}/approve-plan`, { method: "POST", token: w.member.token }));
    expect(await itemOf(w.member.token, id)).toBeUndefined();
  });

  it("a task an agent created in a project that approves them is an item, approved or rejected from there", async () => {
    await expectOk(call(`/api/v1/projects/${w.project.id}`, { method: "PATCH", token: w.admin, body: { settings: { approve_agent_tasks: true } } }));
    try {
      const kept = await newTask(w, { title: "Drop the old tables", spec: "x".repeat(3000) });
      const dropped = await newTask(w, { title: "Rewrite everything" });
      const item = await itemOf(w.member.token, kept);
      expect(item).toMatchObject({
        kind: "task_approval",
        task: { id: kept, title: "Drop the old tables", status: "pending" },
        asked_by: { label: `agent:${w.orchestrator.name}` },
        plan: null,
        can_answer: true,
        unread: true,
      });
      expect(item.spec).toHaveLength(2000);
      expect(item.spec.endsWith("…")).toBe(true);
      const createdAt = (await env.DB.prepare("SELECT created_at FROM tasks WHERE id = ?1").bind(kept).first<{ created_at: string }>())!.created_at;
      expect(item.asked_at).toBe(createdAt);

      await expectOk(call(`/api/v1/tasks/${kept}/approve`, { method: "POST", token: w.member.token }));
      await expectOk(call(`/api/v1/tasks/${dropped}`, { method: "DELETE", token: w.member.token, body: { reason: "Not now" } }));
      const ids = (await inbox(w.member.token)).items.map((i: any) => i.id);
      expect(ids).not.toContain(kept);
      expect(ids).not.toContain(dropped);
    } finally {
      await expectOk(call(`/api/v1/projects/${w.project.id}`, { method: "PATCH", token: w.admin, body: { settings: { approve_agent_tasks: false } } }));
    }
  });

  it("an answered question leaves the inbox", async () => {
    const { interventionId } = await asked({ question: "Answer me", intervention_type: "question" });
    await expectOk(call(`/api/v1/interventions/${interventionId}/respond`, { token: w.member.token, body: { response: "Done" } }));
    expect(await itemOf(w.member.token, interventionId)).toBeUndefined();
  });

  it("comes newest first", async () => {
    const times = (await inbox(w.admin)).items.map((i: any) => i.asked_at);
    expect(times.length).toBeGreaterThan(3);
    expect(times).toEqual([...times].sort().reverse());
  });
});

describe("who sees what", () => {
  it("another project's items never reach a person outside it; an admin sees both", async () => {
    const task = await expectOk(cli(other.apiKey, "POST", T, { title: "Elsewhere task", project_id: other.project.id }), 201);
    await expectOk(cli(other.apiKey, "POST", `${T}/${task.json.id}/assign`, { session_name: "elsewhere-worker" }));
    await expectOk(cli(other.apiKey, "POST", `${T}/${task.json.id}/start`));
    const help = await expectOk(cli(other.apiKey, "POST", `${T}/${task.json.id}/help`, { question: "Secret question", intervention_type: "question" }));
    const id = help.json.intervention_id;
    for (const token of [w.member.token, viewer.token]) {
      const mine = await inbox(token);
      expect(mine.items.map((i: any) => i.id)).not.toContain(id);
      expect(mine.items.every((i: any) => i.project.id === w.project.id)).toBe(true);
    }
    expect((await itemOf(w.admin, id)).project).toEqual({ id: other.project.id, name: "Elsewhere" });
    // Nor is it counted for them.
    const before = await count(w.member.token);
    await expectOk(cli(other.apiKey, "POST", `${T}/${task.json.id}/help`, { question: "Another secret", intervention_type: "question" }));
    expect((await count(w.member.token)).unread).toBe(before.unread);
  });

  it("a viewer sees the project's items but cannot answer them, and none is unread for them", async () => {
    const { interventionId } = await asked({ question: "Viewers look", intervention_type: "question" });
    const seenByViewer = await inbox(viewer.token);
    expect(seenByViewer.items.find((i: any) => i.id === interventionId)).toMatchObject({ can_answer: false, unread: false });
    expect(seenByViewer.items.every((i: any) => !i.can_answer && !i.unread)).toBe(true);
    expect(seenByViewer.unread).toBe(0);
    expect((await count(viewer.token)).unread).toBe(0);
    expectProblem(await call(`/api/v1/interventions/${interventionId}/respond`, { token: viewer.token, body: { response: "no" } }), 403, "FORBIDDEN");
    expect((await itemOf(w.member.token, interventionId)).can_answer).toBe(true);
  });

  it("is for people: no token is 401, and an agent's API key is refused", async () => {
    expectProblem(await call("/api/v1/inbox"), 401, "UNAUTHORIZED");
    expect((await call("/api/v1/inbox/count", { apiKey: w.worker.apiKey })).status).toBe(401);
    expect((await call("/api/v1/inbox/seen", { method: "POST", apiKey: w.worker.apiKey, body: {} })).status).toBe(401);
  });
});

describe("unread", () => {
  it("counts what arrived since the person last saw the inbox; seeing it is theirs alone, and never goes back", async () => {
    const person = await createUser(w.admin, "member");
    await addMember(w.admin, w.project.id, person.id);
    const first = await count(person.token);
    expect(first.seen_at).toBeNull();
    expect(first.unread).toBe((await inbox(person.token)).items.length);

    const all = await expectOk(seen(person.token));
    expect(all.json.unread).toBe(0);
    expect(Date.parse(all.json.seen_at)).toBeLessThanOrEqual(Date.now());
    const a = await asked({ question: "First new", intervention_type: "question" });
    const b = await asked({ question: "Second new", intervention_type: "question" });
    const after = await count(person.token);
    expect(after.unread).toBe(2);
    expect(after.newest_at).toBe((await interventionRow(b.interventionId))!.created_at);
    expect((await inbox(person.token)).items.filter((i: any) => i.unread).map((i: any) => i.id)).toEqual([b.interventionId, a.interventionId]);

    // Seen up to the first: the second stays unread.
    const upToFirst = await expectOk(seen(person.token, { until: (await interventionRow(a.interventionId))!.created_at }));
    expect(upToFirst.json.unread).toBe(1);
    // An earlier time changes nothing.
    expect((await expectOk(seen(person.token, { until: "2001-01-01T00:00:00.000Z" }))).json).toEqual(upToFirst.json);
    // Another person's count is their own.
    expect((await count(w.member.token)).unread).toBeGreaterThanOrEqual(2);
    // A time to come counts as now: what arrives later is unread again.
    const future = await expectOk(seen(person.token, { until: "2999-01-01T00:00:00.000Z" }));
    expect(future.json.unread).toBe(0);
    expect(future.json.seen_at < "2999").toBe(true);
    await asked({ question: "Third new", intervention_type: "question" });
    expect((await count(person.token)).unread).toBe(1);
  });

  it("a malformed time is 422 naming `until`", async () => {
    for (const until of ["yesterday", 5, "2026-01-02T03:04:05+02:00"]) {
      const refused: Reply = await seen(w.member.token, { until });
      expectProblem(refused, 422, "VALIDATION_FAILED");
      expect(refused.json.errors.map((e: any) => e.path)).toEqual(["until"]);
    }
    expectProblem(
      await call("/api/v1/inbox/seen", { method: "POST", token: w.member.token, raw: "{", headers: { "Content-Type": "application/json" } }),
      400,
      "MALFORMED_JSON",
    );
  });
});

describe("the reads", () => {
  const plan = async (query: ReturnType<typeof openQuestionsQuery>) => {
    const { sql, params } = new SQLiteSyncDialect().sqlToQuery(query);
    const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .bind(...params)
      .all<{ detail: string }>();
    return results.map((r) => r.detail);
  };
  const ids = [crypto.randomUUID(), crypto.randomUUID()];

  it("find questions by the interventions' project index", async () => {
    expect(await plan(openQuestionsQuery(ids))).toContainEqual(
      expect.stringMatching(/^SEARCH i USING INDEX interventions_project \(project_id=\? AND status=\?\)/),
    );
  });

  it("find tasks waiting on people by their own index, never by scanning the project's tasks", async () => {
    const details = await plan(tasksAwaitingPeopleQuery(ids));
    expect(details).toContainEqual(expect.stringMatching(/^SEARCH t USING INDEX tasks_awaiting_person \(project_id=\?\)/));
    expect(details.filter((d) => /^SCAN t\b/.test(d))).toEqual([]);
    const counted = await plan(inboxCountQuery(ids, "2026-01-01T00:00:00.000Z"));
    expect(counted).toContainEqual(expect.stringMatching(/USING INDEX tasks_awaiting_person/));
    expect(counted).toContainEqual(expect.stringMatching(/USING INDEX interventions_project/));
  });
});
