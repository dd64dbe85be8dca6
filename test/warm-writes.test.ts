/**
 * An agent's write on the hot path: the Worker answers its API key from a
 * recent lookup and sends the write to the task's room without reading D1;
 * the room refuses a revoked key at once, and reads by a revoked key stop
 * within 30 s.
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { API_KEY_LOOKUP_TTL_MS, apiKeyLookups } from "../src/middleware/guards";
import { KeyLookups } from "../src/auth/key-lookups";
import { shardNames } from "../src/db/shards";
import { call, createProject, daemonRegistration, expectProblem, registerAgent, registrationToken, type Reply } from "./helpers";
import { asAgent, MCP_URL, refusal, structured, workerFetch } from "./mcp-client";
import { cli, createWorld, expectOk, openSession, T, taskIn, type World } from "./task-world";

/** The Worker's own D1 round trips for this request, from Server-Timing. */
const workerQueries = (reply: Reply) => {
  const found = reply.headers.get("Server-Timing")?.match(/worker;desc="d1 queries=(\d+)"/);
  expect(found, `Server-Timing: ${reply.headers.get("Server-Timing")}`).toBeTruthy();
  return Number(found![1]);
};

/** The room's part of Server-Timing, present when the write reached the room. */
const roomTiming = (reply: Reply) => reply.headers.get("Server-Timing")?.match(/room;dur=[\d.]+;desc="d1 queries=(\d+), operations=(\d+)"/);

/**
 * A task written to D1 by another isolate: this one has never seen it, so it does not know its project.
 * (Every task made through this isolate's API is remembered with its project.)
 */
async function taskMadeElsewhere(projectId: string, assignedServerId: string | null = null): Promise<string> {
  const id = crypto.randomUUID();
  const now = new Date().toISOString();
  await env.DB.prepare(
    `INSERT INTO tasks (id, project_id, title, spec, type, priority, status, acceptance_criteria, created_by, warnings, assigned_server_id, created_at, updated_at)
     VALUES (?1, ?2, 'made elsewhere', 'spec', 'feature', 'normal', ?3, '[]', 'test', '[]', ?4, ?5, ?5)`,
  )
    .bind(id, projectId, assignedServerId ? "assigned" : "pending", assignedServerId, now)
    .run();
  return id;
}

/** The suite's shards (wrangler.toml's DB and DB_1, and the tests' DB_2). */
const SHARDS = shardNames(env).length;

let w: World;
beforeAll(async () => {
  w = await createWorld("Warm writes");
});

afterEach(() => {
  apiKeyLookups.now = Date.now;
});

describe("a warm agent write", () => {
  it("makes no D1 round trip from the Worker: start, complete, note, fail", async () => {
    const done = await taskIn(w, "assigned");
    const failing = await taskIn(w, "assigned");
    // The worker's key was looked up by the writes that set these tasks up; their projects are known here.
    const started = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${done.id}/start`));
    const completed = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${done.id}/complete`, { result: "finished" }));
    const noted = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${done.id}/notes`, { content: "a note" }), 201);
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${failing.id}/start`));
    const failed = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${failing.id}/fail`, { error: "broke" }));

    expect([started, completed, noted, failed].map(workerQueries)).toEqual([0, 0, 0, 0]);
    // The room still reports its own round trips beside the Worker's.
    for (const reply of [started, completed, noted, failed]) expect(Number(roomTiming(reply)?.[1])).toBeGreaterThan(0);
    expect(started.json).toMatchObject({ id: done.id, status: "running" });
    expect(completed.json).toMatchObject({ id: done.id, status: "done" });
    expect(failed.json).toMatchObject({ id: failing.id, status: "failed" });
    // The note answered is the one stored.
    const notes = await expectOk(cli(w.worker.apiKey, "GET", `${T}/${done.id}/notes`));
    expect(notes.json).toContainEqual(noted.json);
    expect(noted.json).toMatchObject({ content: "a note", author: `agent:${w.worker.name}`, urgent: false, task_id: done.id });
  });

  it("costs a key lookup and the task's project when cold; one of them for a server serving one project", async () => {
    const admin = w.admin;
    const fresh = await registerAgent(admin, `cold-${crypto.randomUUID().slice(0, 6)}`);
    const scoped = await registerAgent(admin, `cold-scoped-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [w.project.id] });

    // A key never looked up here, on a task this isolate has never seen: the key and the task's project are read.
    const unscopedTask = await taskMadeElsewhere(w.project.id, fresh.id);
    const first = await expectOk(cli(fresh.apiKey, "POST", `${T}/${unscopedTask}/start`));
    expect(workerQueries(first)).toBe(2);
    // The room found the task in its project: the isolate now knows it, and the key.
    const again = await expectOk(cli(fresh.apiKey, "POST", `${T}/${unscopedTask}/notes`, { content: "warm now" }), 201);
    expect(workerQueries(again)).toBe(0);

    // A server serving one project: its room is the only one the task can be in, and the room checks.
    const scopedTask = await taskMadeElsewhere(w.project.id, scoped.id);
    const scopedFirst = await expectOk(cli(scoped.apiKey, "POST", `${T}/${scopedTask}/start`));
    expect(workerQueries(scopedFirst)).toBe(1);
    const otherScopedTask = await taskMadeElsewhere(w.project.id, scoped.id);
    expect(workerQueries(await expectOk(cli(scoped.apiKey, "POST", `${T}/${otherScopedTask}/start`)))).toBe(0);
  });

  it("answers the Worker's round trips on every answer, reads and refusals too", async () => {
    const read = await expectOk(cli(w.worker.apiKey, "GET", `${T}/check`));
    // The key is remembered; listing the tasks is a read of where its projects live (it serves every project), then
    // one read on each shard that holds one.
    const holding = await env.DB.prepare("SELECT count(DISTINCT shard) AS n FROM projects").first<{ n: number }>();
    expect(workerQueries(read)).toBe(1 + holding!.n);
    const missing = await cli(w.worker.apiKey, "POST", `${T}/${crypto.randomUUID()}/start`);
    expectProblem(missing, 404, "NOT_FOUND");
    // An id found nowhere was looked up on each shard.
    expect(workerQueries(missing)).toBe(SHARDS);
  });
});

describe("a server's scope", () => {
  it("keeps a key for project A off a task of project B (404, as if missing), warm or cold", async () => {
    const projectB = await createProject(w.admin, "Project B");
    const scopedA = await registerAgent(w.admin, `scoped-a-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [w.project.id] });
    const unscoped = await registerAgent(w.admin, `unscoped-${crypto.randomUUID().slice(0, 6)}`);
    const projectC = await createProject(w.admin, "Project C");
    const scopedAC = await registerAgent(w.admin, `scoped-ac-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [w.project.id, projectC.id] });
    await openSession(unscoped.apiKey, projectB.id, "b-worker");
    const missing = await cli(scopedA.apiKey, "POST", `${T}/${crypto.randomUUID()}/notes`, { content: "anyone there?" });
    expectProblem(missing, 404, "NOT_FOUND");

    // Warm: made through this isolate, so its project (B) is known here.
    const knownB = (await expectOk(cli(unscoped.apiKey, "POST", T, { title: "in B", project_id: projectB.id }), 201)).json.id;
    // Cold: this isolate has never seen it.
    const unknownB = await taskMadeElsewhere(projectB.id, scopedA.id);
    const unknownB2 = await taskMadeElsewhere(projectB.id, scopedAC.id);
    const attempts = [
      [scopedA, knownB, "start"],
      [scopedA, knownB, "notes"],
      [scopedA, unknownB, "start"],
      [scopedA, unknownB, "notes"],
      [scopedA, unknownB, "complete"],
      [scopedA, unknownB, "fail"],
      [scopedAC, unknownB2, "start"],
      [scopedAC, unknownB2, "notes"],
    ] as const;
    for (const [server, task, op] of attempts) {
      const body = op === "notes" ? { content: "not yours" } : op === "complete" ? { result: "no" } : undefined;
      const reply = await cli(server.apiKey, "POST", `${T}/${task}/${op}`, body);
      expectProblem(reply, 404, "NOT_FOUND");
      // Exactly what a task that does not exist answers.
      expect(reply.json, `${op} ${task}`).toEqual(missing.json);
    }
    const untouched = await env.DB.prepare("SELECT status FROM tasks WHERE id IN (?1, ?2, ?3)").bind(knownB, unknownB, unknownB2).all<{ status: string }>();
    expect(untouched.results.map((r) => r.status).sort()).toEqual(["assigned", "assigned", "pending"]);
    const notes = await env.DB.prepare("SELECT COUNT(*) AS n FROM task_notes WHERE task_id IN (?1, ?2, ?3)").bind(knownB, unknownB, unknownB2).first<{ n: number }>();
    expect(notes!.n).toBe(0);
  });
});

describe("a revoked key", () => {
  /** A server with a session in the world's project, its key looked up (and so remembered) by this isolate. */
  async function warmServer(prefix: string) {
    const server = await registerAgent(w.admin, `${prefix}-${crypto.randomUUID().slice(0, 6)}`);
    const session = await openSession(server.apiKey, w.project.id, `${prefix}-session-${crypto.randomUUID().slice(0, 6)}`);
    await expectOk(cli(server.apiKey, "GET", `${T}/check`));
    return { ...server, session };
  }

  async function taskAssignedTo(session: string) {
    const { id } = await taskIn(w, "pending");
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_id: session }));
    return id;
  }

  it("is refused at once for a write by the room while the Worker still answers it from its lookup", async () => {
    const server = await warmServer("revoked");
    const task = await taskAssignedTo(server.session);
    await expectOk(call(`/api/v1/servers/${server.id}/revoke`, { method: "POST", token: w.admin }));

    const write = await cli(server.apiKey, "POST", `${T}/${task}/start`);
    expectProblem(write, 401, "INVALID_API_KEY");
    // The Worker did not read the key again (nor anything else): the room refused it.
    expect(workerQueries(write)).toBe(0);
    for (const [op, body] of [["notes", { content: "still here?" }], ["fail", { error: "x" }], ["complete", { result: "x" }]] as const) {
      expectProblem(await cli(server.apiKey, "POST", `${T}/${task}/${op}`, body), 401, "INVALID_API_KEY");
    }
    expectProblem(await cli(server.apiKey, "POST", T, { title: "new", project_id: w.project.id }), 401, "INVALID_API_KEY");
    // A project made after the revocation: its room was never told, and asks D1 about a key it has not seen.
    const later = await createProject(w.admin, "Made after the revocation");
    const refused = await cli(server.apiKey, "POST", T, { title: "new", project_id: later.id });
    expectProblem(refused, 401, "INVALID_API_KEY");
    expect(workerQueries(refused)).toBe(1);
    expectProblem(await call(`/api/v1/servers/tasks/${task}/start`, { method: "POST", apiKey: server.apiKey }), 401, "INVALID_API_KEY");
    // A write the Worker makes itself reads the key now.
    expectProblem(await call("/api/v1/servers/heartbeat", { apiKey: server.apiKey, body: {} }), 401, "INVALID_API_KEY");
    const row = await env.DB.prepare("SELECT status FROM tasks WHERE id = ?1").bind(task).first<{ status: string }>();
    expect(row!.status).toBe("assigned");
  });

  it("stops reading within 30 s of its revocation", async () => {
    // The lookups' clock stands still until the test moves it.
    let now = Date.now();
    apiKeyLookups.now = () => now;
    const server = await warmServer("reader");
    const task = await taskAssignedTo(server.session);
    await expectOk(call(`/api/v1/servers/${server.id}/revoke`, { method: "POST", token: w.admin }));
    // Answered from the lookup made before the revocation...
    await expectOk(cli(server.apiKey, "GET", `${T}/${task}`));
    now += API_KEY_LOOKUP_TTL_MS - 1;
    await expectOk(cli(server.apiKey, "GET", `${T}/${task}`));
    // ...and no longer once that lookup is 30 s old.
    now += 1;
    expectProblem(await cli(server.apiKey, "GET", `${T}/${task}`), 401, "INVALID_API_KEY");
    expectProblem(await cli(server.apiKey, "GET", `${T}/check`), 401, "INVALID_API_KEY");
  });

  it("on /mcp alike: a write tool is refused at once, reads answer for up to 30 s, then the endpoint refuses the key", async () => {
    let now = Date.now();
    apiKeyLookups.now = () => now;
    const server = await warmServer("mcp-reader");
    const task = await taskAssignedTo(server.session);
    const { client } = await asAgent(server.apiKey);
    expect(structured(await client.callTool({ name: "get_task", arguments: { id: task } })).id).toBe(task);
    await expectOk(call(`/api/v1/servers/${server.id}/revoke`, { method: "POST", token: w.admin }));

    refusal(await client.callTool({ name: "start_task", arguments: { id: task } }), 401, "INVALID_API_KEY");
    now += API_KEY_LOOKUP_TTL_MS - 1;
    // Still answered from this Worker instance's lookup, made before the revocation...
    expect(structured(await client.callTool({ name: "get_task", arguments: { id: task } })).status).toBe("assigned");
    // ...and no longer once that lookup is 30 s old: /mcp itself refuses the key.
    now += 1;
    const refused = await workerFetch(MCP_URL, {
      method: "POST",
      headers: { "X-API-Key": server.apiKey, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe("INVALID_API_KEY");
  });

  it("is refused at once for a write once its server registered again under the same name; the new key writes", async () => {
    const server = await warmServer("rekeyed");
    const task = await taskAssignedTo(server.session);
    const token = await registrationToken(w.admin);
    const again = await call("/api/v1/servers/register", { body: daemonRegistration(server.name, token) });
    expect(again.status, again.text).toBe(201);
    expect(again.json.id).toBe(server.id);

    const old = await cli(server.apiKey, "POST", `${T}/${task}/start`);
    expectProblem(old, 401, "INVALID_API_KEY");
    expect(workerQueries(old)).toBe(0);
    expectProblem(await cli(server.apiKey, "POST", `${T}/${task}/notes`, { content: "old key" }), 401, "INVALID_API_KEY");
    await expectOk(cli(again.json.api_key, "POST", `${T}/${task}/start`));
  });

  it("writes nothing once its revocation has committed, when 20 writes race it; none is half-written", async () => {
    const server = await warmServer("racing");
    const tasks: string[] = [];
    for (let i = 0; i < 10; i++) tasks.push(await taskAssignedTo(server.session));
    const noted = await taskAssignedTo(server.session);

    let revokedAnswered = false;
    const revocation = call(`/api/v1/servers/${server.id}/revoke`, { method: "POST", token: w.admin }).then((reply) => {
      revokedAnswered = true;
      return reply;
    });
    const writes: Promise<{ reply: Reply; sentAfterRevocation: boolean; kind: "start" | "note"; task: string }>[] = [];
    for (let i = 0; i < 20; i++) {
      const sentAfterRevocation = revokedAnswered;
      const kind = i % 2 === 0 ? "start" : "note";
      const task = kind === "start" ? tasks[i / 2]! : noted;
      const reply = kind === "start" ? cli(server.apiKey, "POST", `${T}/${task}/start`) : cli(server.apiKey, "POST", `${T}/${noted}/notes`, { content: `race ${i}` });
      writes.push(reply.then((r) => ({ reply: r, sentAfterRevocation, kind, task })));
      // The first ones leave together with the revocation, the rest one by one as it goes on (a D1 round trip apart).
      if (i >= 4) await env.DB.prepare("SELECT 1").first();
    }
    expect((await revocation).status).toBe(200);
    // One more, surely after the revocation answered.
    const late = await cli(server.apiKey, "POST", `${T}/${noted}/notes`, { content: "late" });
    expectProblem(late, 401, "INVALID_API_KEY");
    const settled = await Promise.all(writes);

    for (const { reply, sentAfterRevocation } of settled) {
      if (reply.status === 401 || sentAfterRevocation) expectProblem(reply, 401, "INVALID_API_KEY");
      else expect([200, 201], reply.text).toContain(reply.status);
    }
    const { revoked_at } = (await env.DB.prepare("SELECT revoked_at FROM servers WHERE id = ?1").bind(server.id).first<{ revoked_at: string }>())!;
    const actor = `agent:${server.name}`;
    // Each start either committed whole (running, with its event, before the revocation) or not at all.
    for (const { reply, kind, task } of settled.filter((s) => s.kind === "start")) {
      const row = (await env.DB.prepare("SELECT status FROM tasks WHERE id = ?1").bind(task).first<{ status: string }>())!;
      const started = await env.DB.prepare("SELECT created_at FROM events WHERE task_id = ?1 AND type = 'task_started' AND actor = ?2").bind(task, actor).all<{ created_at: string }>();
      if (reply.status === 200) {
        expect(row.status, kind).toBe("running");
        expect(started.results).toHaveLength(1);
        expect(started.results[0]!.created_at <= revoked_at).toBe(true);
      } else {
        expect(row.status).toBe("assigned");
        expect(started.results).toHaveLength(0);
      }
    }
    // Each note committed is stored with its event, before the revocation; a refused one left neither.
    const noteReplies = settled.filter((s) => s.kind === "note");
    const committedNotes = noteReplies.filter((s) => s.reply.status === 201).map((s) => s.reply.json.id as string);
    const stored = await env.DB.prepare("SELECT id, created_at FROM task_notes WHERE task_id = ?1").bind(noted).all<{ id: string; created_at: string }>();
    expect(stored.results.map((r) => r.id).sort()).toEqual([...committedNotes].sort());
    for (const note of stored.results) expect(note.created_at <= revoked_at).toBe(true);
    const events = await env.DB.prepare("SELECT json_extract(data, '$.note_id') AS note_id FROM events WHERE task_id = ?1 AND type = 'note_added'").bind(noted).all<{ note_id: string }>();
    expect(events.results.map((e) => e.note_id).sort()).toEqual([...committedNotes].sort());

    expect(settled.some((s) => s.reply.status === 401)).toBe(true);
  });
});

describe("the isolate's API-key lookups", () => {
  it("answer a lookup for at most their time to live, keep only settled answers, and forget the oldest beyond their bound", async () => {
    let now = 1_000;
    const lookups = new KeyLookups<string>({ ttlMs: 30_000, maxEntries: 3, now: () => now });
    let reads = 0;
    const read = (value: string | undefined) => async () => {
      reads++;
      return value;
    };
    // Lookups made together each read: a read in flight belongs to its own request (Workers refuse I/O shared across requests).
    expect(await Promise.all([lookups.lookup("a", read("server a")), lookups.lookup("a", read("server a"))])).toEqual(["server a", "server a"]);
    expect(reads).toBe(2);
    expect(await lookups.lookup("a", read("other"))).toBe("server a");
    expect(reads).toBe(2);
    now += 29_999;
    expect(await lookups.lookup("a", read("changed"))).toBe("server a");
    now += 1;
    expect(await lookups.lookup("a", read(undefined))).toBeUndefined();
    // "No such key" is an answer too, for as long.
    expect(await lookups.lookup("a", read("back"))).toBeUndefined();
    for (const key of ["b", "c", "d", "e"]) await lookups.lookup(key, read(key));
    expect(lookups.size).toBe(3);
    expect(await lookups.lookup("b", read("b again"))).toBe("b again");
    // A failed read is not remembered.
    await expect(lookups.lookup("f", () => Promise.reject(new Error("D1 down")))).rejects.toThrow("D1 down");
    expect(await lookups.lookup("f", read("f"))).toBe("f");
  });

  it("hold no more than their bound in the Worker, however many keys are sent", async () => {
    const keys = Array.from({ length: apiKeyLookups.maxEntries + 50 }, (_, i) => `orc_unknown-${i}-${crypto.randomUUID()}`);
    for (let i = 0; i < keys.length; i += 50) {
      const replies = await Promise.all(keys.slice(i, i + 50).map((key) => call(`${T}/check`, { apiKey: key })));
      for (const reply of replies) expectProblem(reply, 401, "INVALID_API_KEY");
    }
    expect(apiKeyLookups.size).toBe(apiKeyLookups.maxEntries);
    // The world's agents were forgotten with the rest, and are simply looked up again.
    await expectOk(cli(w.worker.apiKey, "GET", `${T}/check`));
  });
});
