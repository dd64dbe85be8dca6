/** Defects found in review of the live sockets, each pinned by a test. */
import { evictDurableObject, runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createProject, daemonRegistration, registerAgent, registrationToken } from "./helpers";
import { dashboard, isEvent, openSocket } from "./sockets";
import { cli, createWorld, expectOk, newTask, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Live regressions");
});

const agentSocket = (apiKey: string, projectId = w.project.id) => openSocket(`/api/v1/projects/${projectId}/agent-ws`, { "X-API-Key": apiKey });
const room = (projectId = w.project.id) => env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(projectId));

/** A project whose log holds 5,001 events: more than a socket replays, so a resume from 0 gets resync_required. */
async function projectBehind(name: string) {
  const project = await createProject(w.admin, name);
  await env.DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5001)
     INSERT INTO events (project_id, seq, type, task_id, actor, data, created_at) SELECT ?1, i, 'filler', NULL, 'test', '{}', ?2 FROM n`,
  )
    .bind(project.id, new Date().toISOString())
    .run();
  return project;
}

describe("dashboards", () => {
  it("answers null and other non-object frames with an error", async () => {
    const s = await dashboard(w.project.id, w.member.token);
    for (const frame of ["null", "[1]", "7"]) {
      s.send(frame);
      expect(await s.next((f) => f.type === "error")).toMatchObject({ code: "INVALID_REQUEST" });
    }
  });

  it("refuses a second resume while one runs, and limits frames per second", async () => {
    const s = await dashboard(w.project.id, w.member.token);
    s.send({ type: "resume", since: 0 });
    s.send({ type: "resume", since: 0 });
    expect(await s.next((f) => f.type === "error")).toMatchObject({ message: "a resume is already running on this socket" });
    await s.next((f) => f.type === "resumed");
    for (let i = 0; i < 30; i++) s.send({ type: "nothing" });
    expect(await s.next((f) => f.type === "error" && /per second/.test(f.message))).toBeTruthy();
  });

  it("sends resync_required instead of replaying a backlog too long for the room's queue", async () => {
    const project = await projectBehind("Backlog");
    const s = await dashboard(project.id, w.admin);
    s.send({ type: "resume", since: 0 });
    expect(await s.next((f) => f.type === "resync_required")).toMatchObject({ since: 0, head: 5001 });
    s.send({ type: "resume", since: 4000 });
    const resumed = await s.next((f) => f.type === "resumed");
    expect(resumed.last_seq).toBe(5001);
    expect(s.frames.filter(isEvent)).toHaveLength(1001);
  });
});

describe("a dashboard told to page the log", () => {
  it("gets nothing live until it resumes, then the backlog in order, then live events, none twice, none skipped, under concurrent writes", async () => {
    const project = await projectBehind("Backlog under load");
    const create = (n: number, label: string) =>
      Promise.all(Array.from({ length: n }, (_, i) => call("/api/v1/tasks", { token: w.admin, body: { project_id: project.id, title: `${label} ${i}` } })));
    const s = await openSocket(`/api/v1/projects/${project.id}/ws?since=0`, { "Sec-WebSocket-Protocol": `bearer, ${w.admin}` });
    expect(await s.next((f) => f.type === "resync_required")).toMatchObject({ since: 0, head: 5001 });
    // While it pages the log, dozens of tasks are created; the room sleeps and wakes meanwhile too.
    await create(30, "While paging");
    await evictDurableObject(room(project.id));
    await create(10, "After the room woke");
    await new Promise((r) => setTimeout(r, 100));
    expect(s.frames.filter(isEvent)).toEqual([]);
    // It resumes from where its reading of the log ended, as dozens more are created.
    const during = create(30, "While resuming");
    s.send({ type: "resume", since: 4990 });
    await during;
    const resumed = await s.next((f) => f.type === "resumed");
    await create(5, "Live");
    const head = (await call(`/api/v1/projects/${project.id}`, { token: w.admin })).json.last_seq;
    expect(head).toBe(5001 + 75);
    await s.collect(head - 4990, isEvent);
    await new Promise((r) => setTimeout(r, 100));
    const seqs = s.frames.filter(isEvent).map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: head - 4990 }, (_, i) => 4991 + i));
    // The replay's events all come before `resumed`, the live ones after it.
    const at = s.frames.indexOf(resumed);
    expect(s.frames.slice(0, at).filter(isEvent).at(-1).seq).toBe(resumed.last_seq);
    expect(resumed.last_seq).toBeGreaterThanOrEqual(5001 + 40);
  });
});

describe("agents", () => {
  it("tells an agent waiting on ask-user when the question's task ends", async () => {
    const id = await newTask(w);
    const s = await agentSocket(w.worker.apiKey);
    s.send({ type: "request:ask-user", id: "ask-ended", payload: { question: "About this task?", taskId: id, timeout: 600000 } });
    await expect.poll(async () => (await call("/api/v1/interventions?status=pending", { token: w.admin })).json.some((i: any) => i.question === "About this task?")).toBe(true);
    await expectOk(cli(w.orchestrator.apiKey, "DELETE", `${T}/${id}`));
    expect(await s.next((f) => f.correlationId === "ask-ended")).toMatchObject({ type: "response:error", error: { code: "TIMEOUT", message: "Closed unanswered: its task ended" } });
  });

  it("closes a completed task's open questions, telling the agent waiting on one", async () => {
    const id = await newTask(w);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    const s = await agentSocket(w.worker.apiKey);
    s.send({ type: "request:ask-user", id: "ask-completed", payload: { question: "Before it is done?", taskId: id, timeout: 600000 } });
    await expect.poll(async () => (await call("/api/v1/interventions?status=pending", { token: w.admin })).json.some((i: any) => i.question === "Before it is done?")).toBe(true);
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result: { summary: "done anyway" } }));
    expect(await s.next((f) => f.correlationId === "ask-completed")).toMatchObject({ type: "response:error", error: { code: "TIMEOUT", message: "Closed unanswered: its task ended" } });
    const { results } = await env.DB.prepare("SELECT status FROM interventions WHERE task_id = ?1").bind(id).all<{ status: string }>();
    expect(results).toEqual([{ status: "cancelled" }]);
  });

  it("tells an agent waiting on ask-user when the question's task times out", async () => {
    const id = await newTask(w, { timeout_seconds: 60 });
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    const s = await agentSocket(w.worker.apiKey);
    s.send({ type: "request:ask-user", id: "ask-timed-out", payload: { question: "Before the deadline?", taskId: id, timeout: 600000 } });
    await expect.poll(async () => (await call("/api/v1/interventions?status=pending", { token: w.admin })).json.some((i: any) => i.question === "Before the deadline?")).toBe(true);
    await env.DB.prepare("UPDATE tasks SET deadline_at = ?1 WHERE id = ?2").bind(new Date(Date.now() - 1000).toISOString(), id).run();
    await runDurableObjectAlarm(room());
    expect((await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}`))).json).toMatchObject({ status: "failed" });
    expect(await s.next((f) => f.correlationId === "ask-timed-out")).toMatchObject({ type: "response:error", error: { code: "TIMEOUT", message: "Closed unanswered: its task ended" } });
  });

  it("refuses an event naming a task of another project", async () => {
    const other = await createProject(w.admin, "Other agents");
    const foreign = (await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "theirs", project_id: other.id }), 201)).json.id;
    const s = await agentSocket(w.worker.apiKey);
    s.send({ type: "event:error", id: "e-foreign", payload: { taskId: foreign, error: "boom" } });
    expect(await s.next((f) => f.correlationId === "e-foreign")).toMatchObject({ error: { code: "NOT_FOUND" } });
  });

  it("closes only the old key's sockets when a server registers again", async () => {
    const agent = await registerAgent(w.admin, "rekeying-agent");
    const old = await agentSocket(agent.apiKey);
    const again = await call("/api/v1/servers/register", { body: daemonRegistration("rekeying-agent", await registrationToken(w.admin)) });
    expect(again.status).toBe(201);
    const fresh = await agentSocket(again.json.api_key);
    expect(await old.next((f) => f.type === "notify:shutdown")).toBeTruthy();
    expect((await old.closed).code).toBe(4004);
    fresh.send({ type: "request:query-agents", id: "still-here" });
    expect(await fresh.next((f) => f.correlationId === "still-here")).toMatchObject({ type: "response:success" });
  });

  it("closes every socket of a deleted project", async () => {
    const project = await createProject(w.admin, "Doomed live");
    const board = await dashboard(project.id, w.admin);
    const agent = await agentSocket(w.worker.apiKey, project.id);
    await expectOk(call(`/api/v1/projects/${project.id}`, { method: "DELETE", token: w.admin }));
    expect((await board.closed).code).toBe(4004);
    expect(await agent.next((f) => f.type === "notify:shutdown")).toBeTruthy();
  });
});

describe("presence", () => {
  it("goes offline once, when two sockets close together without heartbeats", async () => {
    const agent = await registerAgent(w.admin, "twin-agent");
    const board = await dashboard(w.project.id, w.member.token);
    const a = await agentSocket(agent.apiKey);
    const b = await agentSocket(agent.apiKey);
    await env.DB.prepare("UPDATE servers SET last_heartbeat = ?1 WHERE id = ?2").bind(new Date(Date.now() - 120_000).toISOString(), agent.id).run();
    a.ws.close(1000, "bye");
    b.ws.close(1000, "bye");
    const gone = (f: any) => isEvent(f) && f.event_type === "server_offline" && f.data.server_id === agent.id;
    await board.next(gone);
    await new Promise((r) => setTimeout(r, 200));
    expect(board.frames.filter(gone)).toHaveLength(1);
  });

  it("watches a server whose last socket left while its heartbeat was fresh", async () => {
    const project = await createProject(w.admin, "Watched");
    const agent = await registerAgent(w.admin, "watched-agent", { project_ids: [project.id] });
    const board = await dashboard(project.id, w.admin);
    const s = await agentSocket(agent.apiKey, project.id);
    s.ws.close(1000, "bye");
    await new Promise((r) => setTimeout(r, 100));
    await env.DB.prepare("UPDATE servers SET last_heartbeat = ?1 WHERE id = ?2").bind(new Date(Date.now() - 120_000).toISOString(), agent.id).run();
    expect(await runDurableObjectAlarm(room(project.id))).toBe(true);
    expect(await board.next((f) => isEvent(f) && f.event_type === "server_offline")).toMatchObject({ data: { server_id: agent.id } });
  });
});
