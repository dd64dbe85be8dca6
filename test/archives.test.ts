/**
 * Archives end to end (src/archive/): finished tasks older than the project's `archive_after_days` leave D1 for R2,
 * and every read of them answers as before with `archived: true`: by id over REST, the agent surface the official
 * CLI's `task view` calls, MCP and A2A; their timeline; the project's events by `since` across the boundary; an export
 * of the whole history. The tasks are made old by moving their completed_at back, which is all the archiver reads.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { roomStub } from "../src/room/client";
import { decodeNdjson } from "../src/archive/codec";
import { projectsDueForArchive } from "../src/archive/due-projects";
import { wakeRoomsToArchive } from "../src/cron/maintenance";
import { addMember, call, createProject, createUser, expectProblem, until } from "./helpers";
import { asAgent, asPerson, structured, workerFetch } from "./mcp-client";
import { rpc } from "./a2a-client";
import { dashboard } from "./sockets";
import { cli, createWorld, expectOk, newTask, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Archives");
});

const LONG_AGO = "2026-01-15T10:00:00.000Z";

/** Assign, start and complete a task as the worker. */
async function finish(id: string, result: unknown) {
  await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
  await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
  return expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/complete`, { result }));
}

const schemaResult = (contracts: Record<string, unknown>) => ({ $schema: "orchestratia/task-result/v1", summary: "done", contracts });

/** The tasks finished long ago, as far as the archiver can tell. */
async function age(ids: string[], at = LONG_AGO) {
  await env.DB.prepare("UPDATE tasks SET completed_at = ?1 WHERE id IN (SELECT value FROM json_each(?2))").bind(at, JSON.stringify(ids)).run();
}

/** The project's room archives until nothing more is due. */
async function archiveAll(projectId = w.project.id) {
  for (let i = 0; i < 20 && (await roomStub(env, projectId).archive()); i++);
}

const inD1 = async (id: string) => (await env.DB.prepare("SELECT count(*) AS n FROM tasks WHERE id = ?1").bind(id).first<{ n: number }>())!.n;
const eventsInD1 = async (id: string) => (await env.DB.prepare("SELECT count(*) AS n FROM events WHERE task_id = ?1").bind(id).first<{ n: number }>())!.n;
const getTask = (id: string, token = w.member.token) => call(`/api/v1/tasks/${id}`, { token });
const allEvents = async (limit = 1000, since = 0) =>
  (await expectOk(call(`/api/v1/projects/${w.project.id}/events?since=${since}&limit=${limit}`, { token: w.member.token }))).json;

describe("an archived task", () => {
  let id: string;
  let before: any;
  let timeline: any[];

  beforeAll(async () => {
    id = await newTask(w, { title: "Archived one" });
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/notes`, { content: "A note kept with it" }), 201);
    await finish(id, schemaResult({ api: { status: "fulfilled", data: { version: 2 } } }));
    // A later event, so that this task does not hold the log's last one.
    await newTask(w, { title: "Later" });
    before = (await expectOk(getTask(id))).json;
    timeline = (await expectOk(call(`/api/v1/tasks/${id}/events`, { token: w.member.token }))).json.events;
    await age([id]);
    await archiveAll();
  });

  it("leaves D1 with its events, for an object in R2 under the project and the day it finished", async () => {
    expect(await inD1(id)).toBe(0);
    expect(await eventsInD1(id)).toBe(0);
    const entry = await env.DB.prepare("SELECT * FROM archived_tasks WHERE task_id = ?1").bind(id).first<{ key: string; day: string; project_id: string }>();
    expect(entry).toMatchObject({ project_id: w.project.id, day: "2026-01-15" });
    expect(entry!.key).toMatch(new RegExp(`^archives/${w.project.id}/2026-01-15/[0-9a-f-]{36}\\.ndjson\\.gz$`));
    const object = await env.BLOBS.get(entry!.key);
    const records = await decodeNdjson<any>(await object!.arrayBuffer());
    expect(records.filter((r) => r.task_id === id).map((r) => r.type)).toEqual(expect.arrayContaining(["task", "note", "event"]));
    expect(object!.customMetadata).toMatchObject({ count: String(records.length) });
  });

  it("reads back whole by id, marked archived", async () => {
    const after = (await expectOk(getTask(id))).json;
    // As it was, but for its completion, moved back to make it old enough.
    expect(after).toEqual({ ...before, completed_at: LONG_AGO, archived: true });
    expect(after.result.contracts.api.data).toEqual({ version: 2 });
    expect(after.recent_notes.map((n: any) => n.content)).toEqual(["A note kept with it"]);
  });

  it("reads back by the agent surface the official CLI's `task view` calls", async () => {
    const viewed = (await expectOk(cli(w.orchestrator.apiKey, "GET", `${T}/${id}`))).json;
    expect(viewed).toMatchObject({ id, title: "Archived one", status: "done", priority: "normal", spec: before.spec, archived: true });
    expect(Array.isArray(viewed.acceptance_criteria)).toBe(true);
  });

  it("keeps its notes for the CLI's `task notes`, and its agent logs", async () => {
    const notes = (await expectOk(cli(w.worker.apiKey, "GET", `${T}/${id}/notes`))).json;
    expect(notes.map((n: any) => [n.content, n.task_id])).toEqual([["A note kept with it", id]]);
    expect((await expectOk(call(`/api/v1/tasks/${id}/logs`, { token: w.member.token }))).json).toMatchObject({ logs: [] });
  });

  it("reads back through MCP's get_task", async () => {
    const { client: person } = await asPerson(w.member.token);
    const read = structured(await person.callTool({ name: "get_task", arguments: { id } }));
    expect(read).toMatchObject({ id, status: "done", archived: true, title: "Archived one" });
    const { client: agent } = await asAgent(w.orchestrator.apiKey);
    expect(structured(await agent.callTool({ name: "get_task", arguments: { id } }))).toMatchObject({ id, archived: true });
  });

  it("reads back through A2A tasks/get", async () => {
    const read = await rpc(w.project.id, w.member.token, { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { id } }, {});
    expect(read.body.error).toBeUndefined();
    expect(read.body.result).toMatchObject({ kind: "task", id, status: { state: "completed" } });
  });

  it("keeps its timeline", async () => {
    const after = (await expectOk(call(`/api/v1/tasks/${id}/events`, { token: w.member.token }))).json.events;
    expect(after).toEqual(timeline);
    expect(after.map((e: any) => e.type)).toContain("task_completed");
  });

  it("is hidden from people outside its project, as a missing task is", async () => {
    const stranger = await createUser(w.admin, "member");
    expectProblem(await getTask(id, stranger.token), 404, "NOT_FOUND");
    expectProblem(await call(`/api/v1/tasks/${id}/events`, { token: stranger.token }), 404, "NOT_FOUND");
    const other = await createProject(w.admin, "Elsewhere");
    const a2a = await rpc(other.id, w.admin, { jsonrpc: "2.0", id: 2, method: "tasks/get", params: { id } }, {});
    expect(a2a.body.error?.code).toBe(-32001);
  });

  it("answers the project's events by since across the boundary, in seq order, none lost or twice", async () => {
    const whole = (await allEvents()).events as any[];
    const seqs = whole.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    for (const e of timeline) expect(whole).toContainEqual(e);
    // Paged three at a time from every point, the pages join up to the whole.
    for (const start of [0, timeline[0].seq - 1, timeline[0].seq, timeline.at(-1).seq]) {
      const paged: any[] = [];
      for (let since = start; ;) {
        const page = await allEvents(3, since);
        paged.push(...page.events);
        if (page.events.length < 3) break;
        since = page.next_since;
      }
      expect(paged).toEqual(whole.filter((e) => e.seq > start));
    }
  });
});

describe("a dashboard resuming across the archive", () => {
  it("is told to page the log, then resumes from the last seq it read", async () => {
    const s = await dashboard(w.project.id, w.member.token);
    s.send({ type: "resume", since: 0 });
    expect(await s.next((f) => f.type === "resync_required")).toMatchObject({ since: 0, detail: expect.stringContaining("archived") });
    const read = (await allEvents()).events as any[];
    s.send({ type: "resume", since: read.at(-1).seq });
    expect(await s.next((f) => f.type === "resumed")).toMatchObject({ last_seq: read.at(-1).seq });
    s.ws.close();
  });
});

describe("a live task depending on an archived one", () => {
  it("keeps its upstream in D1 while it is there, starts with the upstream's result, and leaves with it later", async () => {
    const up = await newTask(w, { title: "Upstream" });
    await finish(up, schemaResult({ schema: { status: "fulfilled", data: { tables: 3 } } }));
    const down = await newTask(w, { title: "Downstream", dependencies: [{ depends_on_task_id: up, dependency_type: "input", contract_key: "schema" }] });
    await newTask(w, { title: "Later still" });
    await age([up]);
    await archiveAll();
    // The upstream is due, but a task still in D1 depends on it.
    expect(await inD1(up)).toBe(1);
    const started = await finish(down, "used the schema");
    expect(started.json.status).toBe("done");
    const downView = (await expectOk(getTask(down))).json;
    const envelope = (await expectOk(call(`/api/v1/tasks/${down}/envelope`, { token: w.member.token }))).json;
    expect(downView).toMatchObject({ resolved_inputs: { schema: { tables: 3 } }, dependencies: [{ depends_on_task_id: up, resolved: true }] });
    await newTask(w, { title: "And later" });
    await age([up, down]);
    await archiveAll();
    expect([await inD1(up), await inD1(down)]).toEqual([0, 0]);
    expect((await expectOk(getTask(down))).json).toEqual({ ...downView, completed_at: LONG_AGO, archived: true });
    // Its input envelope, the upstream's contract in it, read from the archive.
    expect((await expectOk(call(`/api/v1/tasks/${down}/envelope`, { token: w.member.token }))).json).toEqual(envelope);
    expect((await expectOk(getTask(up))).json).toMatchObject({ id: up, archived: true, result: { contracts: { schema: { data: { tables: 3 } } } } });
    // A new dependency on an archived task is refused, as one on a task the project does not have.
    const refused = await cli(w.orchestrator.apiKey, "POST", T, {
      title: "Too late",
      spec: "s",
      priority: "normal",
      type: "feature",
      project_id: w.project.id,
      dependencies: [{ depends_on_task_id: up, dependency_type: "blocks" }],
    });
    expectProblem(refused, 422, "VALIDATION_FAILED");
    expect(refused.json.errors.map((e: any) => e.path)).toEqual(["dependencies"]);
  });
});

describe("what stays in D1 although it is old", () => {
  it("the task holding the project's last event, until the log moves on", async () => {
    const project = await createProject(w.admin, "Quiet");
    const id = (await expectOk(call("/api/v1/tasks", { method: "POST", token: w.admin, body: { project_id: project.id, title: "Last", spec: "s" } }), 201)).json
      .id;
    await expectOk(call(`/api/v1/tasks/${id}`, { method: "DELETE", token: w.admin }));
    await age([id]);
    await archiveAll(project.id);
    expect(await inD1(id)).toBe(1);
    await expectOk(call("/api/v1/tasks", { method: "POST", token: w.admin, body: { project_id: project.id, title: "Next", spec: "s" } }), 201);
    await archiveAll(project.id);
    expect(await inD1(id)).toBe(0);
    // The next event's seq still follows the last one ever written.
    const events = (await expectOk(call(`/api/v1/projects/${project.id}/events?limit=100`, { token: w.admin }))).json.events.map((e: any) => e.seq);
    expect(new Set(events).size).toBe(events.length);
    const head = (await expectOk(call(`/api/v1/projects/${project.id}`, { token: w.admin }))).json.last_seq;
    expect(head).toBe(Math.max(...events));
  });

  it("a task a graph budget is set on", async () => {
    const id = await newTask(w, { title: "Budgeted" });
    await expectOk(call(`/api/v1/tasks/${id}`, { method: "DELETE", token: w.admin }));
    await expectOk(
      call(`/api/v1/projects/${w.project.id}/budgets`, {
        method: "POST",
        token: w.admin,
        body: { scope: "graph", task_id: id, limit_usd: 5, actions: [{ at_percent: 100, action: "warn" }] },
      }),
      201,
    );
    await newTask(w, { title: "After the budget" });
    await age([id]);
    await archiveAll();
    expect(await inD1(id)).toBe(1);
  });
});

describe("the hourly housekeeping", () => {
  it("wakes the rooms with tasks due, which archive them", async () => {
    const project = await createProject(w.admin, "Woken");
    const task = (title: string) => call("/api/v1/tasks", { method: "POST", token: w.admin, body: { project_id: project.id, title, spec: "s" } });
    const id = (await expectOk(task("Due by the clock"), 201)).json.id;
    await expectOk(call(`/api/v1/tasks/${id}`, { method: "DELETE", token: w.admin }));
    await expectOk(task("After it"), 201);
    expect(await projectsDueForArchive(env.DB, Date.now(), 30)).not.toContain(project.id);
    await age([id]);
    expect(await projectsDueForArchive(env.DB, Date.now(), 30)).toContain(project.id);
    expect(await wakeRoomsToArchive(env)).toBeGreaterThanOrEqual(1);
    expect(await inD1(id)).toBe(0);
    expect((await expectOk(getTask(id, w.admin))).json).toMatchObject({ id, status: "cancelled", archived: true });
    expect(await projectsDueForArchive(env.DB, Date.now(), 30)).not.toContain(project.id);
  });
});

describe("a project that archives nothing", () => {
  it("keeps its old finished tasks in D1", async () => {
    const project = await createProject(w.admin, "Keeps all");
    await expectOk(call(`/api/v1/projects/${project.id}`, { method: "PATCH", token: w.admin, body: { settings: { archive_after_days: null } } }));
    const id = (await expectOk(call("/api/v1/tasks", { method: "POST", token: w.admin, body: { project_id: project.id, title: "Stay", spec: "s" } }), 201)).json
      .id;
    await expectOk(call(`/api/v1/tasks/${id}`, { method: "DELETE", token: w.admin }));
    await call("/api/v1/tasks", { method: "POST", token: w.admin, body: { project_id: project.id, title: "Later", spec: "s" } });
    await age([id]);
    await archiveAll(project.id);
    expect(await inD1(id)).toBe(1);
  });
});

describe("archive_after_days", () => {
  it("is 30 by default, may be null or 1–3650, and nothing else", async () => {
    const project = await createProject(w.admin, "Setting");
    expect((await expectOk(call(`/api/v1/projects/${project.id}`, { token: w.admin }))).json.settings.archive_after_days).toBe(30);
    const patch = (value: unknown) =>
      call(`/api/v1/projects/${project.id}`, { method: "PATCH", token: w.admin, body: { settings: { archive_after_days: value } } });
    for (const bad of ["30", 0, -1, 1.5, 3651, true, {}]) {
      const reply = await patch(bad);
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors.map((e: any) => e.path)).toEqual(["settings.archive_after_days"]);
    }
    expect((await expectOk(patch(7))).json.settings.archive_after_days).toBe(7);
    expect((await expectOk(patch(null))).json.settings.archive_after_days).toBe(null);
    expect((await expectOk(call(`/api/v1/projects/${project.id}`, { token: w.admin }))).json.settings.archive_after_days).toBe(null);
  });
});

describe("an export of the project's history", () => {
  it("is built in the background and downloaded through a signed URL, archived and live records together", async () => {
    const live = await newTask(w, { title: "Still live" });
    const archived = (await env.DB.prepare("SELECT task_id FROM archived_tasks WHERE project_id = ?1").bind(w.project.id).all<{ task_id: string }>()).results;
    expect(archived.length).toBeGreaterThan(0);
    const started = await expectOk(call(`/api/v1/projects/${w.project.id}/exports`, { method: "POST", token: w.member.token }), 202);
    const xid = started.json.id;
    const ready = await until(
      async () => (await expectOk(call(`/api/v1/projects/${w.project.id}/exports/${xid}`, { token: w.member.token }))).json,
      (r) => r.status !== "pending",
      "the export",
    );
    expect(ready).toMatchObject({ id: xid, status: "ready", download: { url: expect.stringContaining(`/api/v1/exports/${xid}?token=`) } });
    const lines = await decodeNdjson<any>(await fetchBytes(ready.download.url));
    expect(lines[0]).toMatchObject({ type: "export", project_id: w.project.id });
    const tasks = lines.filter((l) => l.type === "task").map((l) => l.task_id);
    expect(new Set(tasks).size).toBe(tasks.length);
    expect(tasks).toEqual(expect.arrayContaining([live, ...archived.map((a) => a.task_id)]));
    const seqs = lines.filter((l) => l.type === "event").map((l) => l.event.seq);
    const whole = ((await allEvents()).events as any[]).map((e) => e.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(whole);
    expect(lines.some((l) => l.type === "dependency")).toBe(true);
    expect(lines.some((l) => l.type === "note" && l.row.content === "A note kept with it")).toBe(true);
  });

  it("is the project's alone: another project's export id, and people outside, are 404; viewers are refused", async () => {
    const other = await createProject(w.admin, "Other history");
    const xid = (await expectOk(call(`/api/v1/projects/${other.id}/exports`, { method: "POST", token: w.admin }), 202)).json.id;
    expectProblem(await call(`/api/v1/projects/${w.project.id}/exports/${xid}`, { token: w.member.token }), 404, "NOT_FOUND");
    expectProblem(await call(`/api/v1/projects/${w.project.id}/exports/not-an-id`, { token: w.member.token }), 404, "NOT_FOUND");
    expectProblem(await call(`/api/v1/projects/${other.id}/exports/${xid}`, { token: w.member.token }), 404, "NOT_FOUND");
    expectProblem(await call(`/api/v1/projects/${other.id}/exports`, { method: "POST", token: w.member.token }), 404, "NOT_FOUND");
    const viewer = await createUser(w.admin, "viewer");
    await addMember(w.admin, w.project.id, viewer.id);
    expect((await call(`/api/v1/projects/${w.project.id}/exports`, { method: "POST", token: viewer.token })).status).toBe(403);
  });
});

/** The bytes at a signed URL, as a download client gets them (no other credential). */
async function fetchBytes(url: string): Promise<Uint8Array> {
  const res = await workerFetch(url);
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}
