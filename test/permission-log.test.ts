/**
 * The permission log: a fake daemon posts what its agents' PreToolUse hooks logged exactly as hub.py does, and
 * people read each project's entries, filtered and paged.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { expirePermissionLog } from "../src/cron/maintenance";
import { hookLines, hookTime, postPermissionLog, type HookLogEntry } from "./fake-daemon";
import { addMember, call, createProject, createUser, expectProblem, registerAgent, type Reply } from "./helpers";
import { dashboard } from "./sockets";
import { createWorld, openSession, taskIn, type World } from "./task-world";

const LOG = "/api/v1/server/permissions/log";

let w: World;
let projectB: { id: string };
/** The worker's three sessions: two in the world's project (one working on `task`), one in project B. */
let sA1: string;
let sA2: string;
let sB: string;
let task: string;

beforeAll(async () => {
  w = await createWorld("Permission log");
  projectB = await createProject(w.admin, "Permission log B");
  sA1 = w.workerSession;
  sA2 = await openSession(w.worker.apiKey, w.project.id, "second");
  sB = await openSession(w.worker.apiKey, projectB.id, "third");
  task = (await taskIn(w, "running")).id;
});

const hookLine = hookLines();
/** A hook line of this session and project; each one a second after the last unless `created_at` is given. */
const entry = (session: string | null, project: string | null, fields: Partial<HookLogEntry> = {}): HookLogEntry =>
  hookLine({ session_id: session, project_id: project, ...fields });

const logOf = (projectId: string, query = "", token = w.admin) => call(`/api/v1/projects/${projectId}/permission-log${query}`, { token });

/** Every entry of a project's log (newest first), paged `limit` at a time. */
async function wholeLog(projectId: string, query = "", limit = 500) {
  const all: any[] = [];
  let before: string | null = null;
  for (;;) {
    const reply = await logOf(projectId, `?limit=${limit}${query}${before ? `&before=${encodeURIComponent(before)}` : ""}`);
    expect(reply.status, reply.text).toBe(200);
    all.push(...reply.json.entries);
    before = reply.json.next_before;
    if (!before) return all;
  }
}

/** D1's rows written for the request (Server-Timing): the Worker's own, and its share of the log writers' batches. */
function rowsWritten(reply: Reply): number {
  const header = reply.headers.get("Server-Timing") ?? "";
  const worker = /worker-d1;desc="rows read=\d+, rows written=(\d+), calls uncounted=(\d+)"/.exec(header);
  const writers = /log-d1;desc="rows written=([\d.]+)"/.exec(header);
  expect(worker, header).toBeTruthy();
  expect(writers, header).toBeTruthy();
  expect(Number(worker![2])).toBe(0);
  return Number(worker![1]) + Number(writers![1]);
}

describe("POST /api/v1/server/permissions/log", () => {
  it("files each entry under its session's project, session and current task, for Claude, Codex and Gemini tool names", async () => {
    const entries = [
      entry(sA1, w.project.id, {
        tool_name: "Bash",
        tool_input: { command: "npm test -- --watch=false" },
        decision: "allowed",
        matched_rule_id: crypto.randomUUID(),
        reason: "Auto-approved by rule: tests",
      }),
      entry(sA1, w.project.id, { tool_name: "Edit", tool_input: { file_path: "/repo/src/app.ts", old_string: "a", new_string: "b" } }),
      entry(sA2, null, { tool_name: "shell", tool_input: { command: ["bash", "-lc", "ls"] }, agent_name: "codex" }),
      entry(sB, projectB.id, {
        tool_name: "web_fetch",
        tool_input: { url: "https://example.com/ünïcode" },
        decision: "denied",
        matched_rule_id: crypto.randomUUID(),
        reason: "Blocked by rule: no fetching",
        agent_name: "gemini",
      }),
      entry(sB, projectB.id, { tool_name: "run_shell_command", tool_input: { command: "rm -rf build" }, agent_name: "gemini" }),
    ];
    const reply = await postPermissionLog(w.worker.apiKey, entries);
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json).toEqual({ accepted: 5, dropped: 0, invalid: 0, errors: [] });
    // One row per entry, one index row for each of the two with a task, and the source of each of the three sessions, the first time.
    expect(rowsWritten(reply)).toBe(5 + 2 + 3);

    const inA = (await logOf(w.project.id)).json.entries;
    const inB = (await logOf(projectB.id)).json.entries;
    const strip = ({ id, ...rest }: any) => (expect(id).toEqual(expect.any(String)), rest);
    expect(inA.map(strip)).toEqual(
      [
        { ...entries[0]!, session_name: "worker", task_id: task },
        { ...entries[1]!, session_name: "worker", task_id: task },
        { ...entries[2]!, project_id: w.project.id, session_name: "second", task_id: null },
      ]
        .map(({ project_id, created_at, ...e }) => ({ ...e, tool_input_truncated: false, created_at: new Date(created_at).toISOString(), source: "hook" }))
        .reverse(),
    );
    expect(inB.map((e: any) => [e.tool_name, e.session_id, e.session_name, e.task_id, e.decision, e.agent_name, e.tool_input])).toEqual([
      ["run_shell_command", sB, "third", null, "asked", "gemini", { command: "rm -rf build" }],
      ["web_fetch", sB, "third", null, "denied", "gemini", { url: "https://example.com/ünïcode" }],
    ]);
    // Those sessions known, another post of theirs costs its entry alone (and its task's index row).
    const again = await postPermissionLog(w.worker.apiKey, [entry(sA1, w.project.id, { tool_name: "Read", tool_input: { file_path: "/repo/README.md" } })]);
    expect(rowsWritten(again)).toBe(1 + 1);
  });

  it("drops entries of another server's session, of a project that is not the session's, and of projects the server does not serve", async () => {
    const scoped = await registerAgent(w.admin, `scoped-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [w.project.id] });
    const before = (await wholeLog(projectB.id)).length;
    const fromWorker = await postPermissionLog(w.worker.apiKey, [
      entry(w.orchestratorSession, w.project.id, { tool_input: { command: "orchestrator's" } }),
      entry(sA1, projectB.id, { tool_input: { command: "wrong project" } }),
      entry(crypto.randomUUID(), null, { tool_input: { command: "unknown session" } }),
      entry(null, crypto.randomUUID(), { tool_input: { command: "no such project" } }),
      entry(null, null, { tool_input: { command: "nowhere" } }),
      entry(sA2, w.project.id, { tool_input: { command: "kept" } }),
    ]);
    expect(fromWorker.status, fromWorker.text).toBe(201);
    expect(fromWorker.json).toMatchObject({ accepted: 1, dropped: 5, invalid: 0 });

    const fromScoped = await postPermissionLog(scoped.apiKey, [
      entry(null, projectB.id, { tool_input: { command: "unserved project" } }),
      entry(sB, projectB.id, { tool_input: { command: "someone else's session" } }),
      entry(null, w.project.id, { tool_input: { command: "served, no session" } }),
    ]);
    expect(fromScoped.json).toMatchObject({ accepted: 1, dropped: 2, invalid: 0 });

    const commands = (await wholeLog(w.project.id)).map((e) => e.tool_input.command);
    expect(commands).toContain("kept");
    expect(commands).toContain("served, no session");
    for (const gone of ["orchestrator's", "wrong project", "unknown session", "no such project", "nowhere", "unserved project", "someone else's session"])
      expect(commands).not.toContain(gone);
    expect(await wholeLog(projectB.id)).toHaveLength(before);
    const sessionless = (await wholeLog(w.project.id)).find((e) => e.tool_input.command === "served, no session");
    expect(sessionless).toMatchObject({ session_id: null, session_name: null, task_id: null });
  });

  it("keeps the good entries among malformed ones, and counts and names the rest", async () => {
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 70; i++) at = at.next = {} as Record<string, unknown>;
    const marker = crypto.randomUUID();
    const reply = await postPermissionLog(w.worker.apiKey, [
      entry(sA2, null, { tool_input: { command: `good ${marker} 1` } }),
      { ...entry(sA2, null), decision: "maybe" },
      { ...entry(sA2, null), tool_name: undefined },
      "not an entry",
      { ...entry(sA2, null), tool_input: "ls -la" },
      entry(sA2, null, { tool_input: { command: `good ${marker} 2` } }),
      { ...entry(sA2, null), created_at: "yesterday" },
      { ...entry(sA2, null), session_id: "not-a-uuid" },
      { ...entry(sA2, null), tool_input: deep },
      entry(sA2, null, { tool_input: { command: `good ${marker} 3` } }),
    ]);
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json).toMatchObject({ accepted: 3, dropped: 0, invalid: 7 });
    expect(reply.json.errors.map((e: any) => e.path)).toEqual([
      "entries.1.decision",
      "entries.2.tool_name",
      "entries.3",
      "entries.4.tool_input",
      "entries.6.created_at",
      "entries.7.session_id",
      "entries.8.tool_input",
    ]);
    const kept = (await wholeLog(w.project.id)).filter((e) => String(e.tool_input.command).includes(marker));
    expect(kept.map((e) => e.tool_input.command)).toEqual([`good ${marker} 3`, `good ${marker} 2`, `good ${marker} 1`]);
  });

  it("keeps at most 8 KiB of a tool's input, with the keys rules match on, and says it was cut", async () => {
    const content = "x".repeat(200_000);
    const reply = await postPermissionLog(w.worker.apiKey, [entry(sA2, null, { tool_name: "Write", tool_input: { file_path: "/repo/big.txt", content } })]);
    expect(reply.json.accepted).toBe(1);
    const [kept] = (await logOf(w.project.id, "?tool=Write&limit=1")).json.entries;
    expect(kept.tool_input_truncated).toBe(true);
    expect(kept.tool_input.file_path).toBe("/repo/big.txt");
    expect(kept.tool_input.content.startsWith("xxxx")).toBe(true);
    expect(new TextEncoder().encode(JSON.stringify(kept.tool_input)).byteLength).toBeLessThanOrEqual(8 * 1024);
  });

  it("never keeps a time later than the post's arrival, and keeps times in UTC", async () => {
    const marker = crypto.randomUUID();
    const sent = Date.now();
    const reply = await postPermissionLog(w.worker.apiKey, [
      entry(sA2, null, { tool_input: { command: marker }, created_at: "2030-01-01T00:00:00+00:00" }),
      entry(sA2, null, { tool_input: { command: `${marker} offset` }, created_at: "2026-01-01T05:30:00+05:30" }),
    ]);
    expect(reply.json.accepted).toBe(2);
    const kept = (await wholeLog(w.project.id)).filter((e) => String(e.tool_input.command).startsWith(marker));
    const future = kept.find((e) => e.tool_input.command === marker);
    expect(Date.parse(future.created_at)).toBeGreaterThanOrEqual(sent - 1000);
    expect(Date.parse(future.created_at)).toBeLessThanOrEqual(Date.now());
    expect(kept.find((e) => e.tool_input.command !== marker).created_at).toBe("2026-01-01T00:00:00.000Z");
  });

  it("takes 10,000 entries in one post at most two rows written each, and refuses more, naming the limit", async () => {
    const project = await createProject(w.admin, "Ten thousand");
    const session = await openSession(w.worker.apiKey, project.id, "busy");
    const entries = Array.from({ length: 10_000 }, (_, i) =>
      entry(session, project.id, { tool_name: ["Bash", "shell", "run_shell_command"][i % 3]!, tool_input: { command: `step ${i}`, cwd: "/home/dev/repo" } }),
    );
    const reply = await postPermissionLog(w.worker.apiKey, entries);
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json).toMatchObject({ accepted: 10_000, dropped: 0, invalid: 0 });
    const perEntry = rowsWritten(reply) / 10_000;
    expect(perEntry).toBeLessThanOrEqual(2);
    const all = await wholeLog(project.id);
    expect(all).toHaveLength(10_000);
    expect(new Set(all.map((e) => e.tool_input.command)).size).toBe(10_000);

    const tooMany = await postPermissionLog(w.worker.apiKey, [...entries, entry(session, project.id)]);
    expectProblem(tooMany, 422, "VALIDATION_FAILED");
    expect(tooMany.json.errors).toEqual([{ path: "entries", message: expect.stringContaining("at most 10000 entries") }]);
  });

  it("lands every entry of dozens of concurrent posts from several daemons", async () => {
    const project = await createProject(w.admin, "Crowd");
    const daemons = await Promise.all(
      [0, 1, 2, 3].map(async (i) => {
        const server = await registerAgent(w.admin, `crowd-${i}-${crypto.randomUUID().slice(0, 6)}`);
        return { apiKey: server.apiKey, session: await openSession(server.apiKey, project.id, `crowd-${i}`) };
      }),
    );
    const posts = daemons.flatMap((d) =>
      Array.from({ length: 10 }, (_, p) => ({
        apiKey: d.apiKey,
        entries: Array.from({ length: 25 }, (_, i) => entry(d.session, project.id, { tool_input: { command: `${p}/${i}` } })),
      })),
    );
    const replies = await Promise.all(posts.map((post) => postPermissionLog(post.apiKey, post.entries)));
    for (const reply of replies) expect(reply.status, reply.text).toBe(201);
    expect(replies.reduce((n, r) => n + r.json.accepted, 0)).toBe(40 * 25);
    // Every one posted under its own daemon's session.
    const bySession = new Map<string, number>();
    for (const e of await wholeLog(project.id)) bySession.set(e.session_id, (bySession.get(e.session_id) ?? 0) + 1);
    expect(Object.fromEntries(bySession)).toEqual(Object.fromEntries(daemons.map((d) => [d.session, 250])));
  });

  it("tells the project's open dashboards that entries arrived, without an event in its log", async () => {
    const socket = await dashboard(w.project.id, w.admin);
    const reply = await postPermissionLog(w.worker.apiKey, [entry(sA2, null), entry(sA2, null)]);
    expect(reply.json.accepted).toBe(2);
    const frame = await socket.next((f) => f.type === "permission_logged");
    expect(frame).toEqual({ type: "permission_logged", count: 2, newest_created_at: expect.any(String) });
    expect(socket.frames.filter((f) => f.type === "event" && f.event_type?.startsWith("permission"))).toEqual([]);
    socket.ws.close();
  });

  it("refuses a post without the server's key", async () => {
    const reply = await call(LOG, { body: { entries: [] } });
    expectProblem(reply, 401, "UNAUTHORIZED");
  });
});

describe("GET /api/v1/projects/{id}/permission-log", () => {
  let project: { id: string };
  let session1: string;
  let session2: string;
  const same = hookTime(Date.now() - 600_000);

  beforeAll(async () => {
    project = await createProject(w.admin, "Paging");
    session1 = await openSession(w.worker.apiKey, project.id, "pager-1");
    session2 = await openSession(w.worker.apiKey, project.id, "pager-2");
    // Dozens sharing one time, between entries before and after it.
    const entries = [
      ...Array.from({ length: 10 }, (_, i) => entry(session1, project.id, { tool_input: { n: i }, created_at: hookTime(Date.now() - 900_000 + i * 1000) })),
      ...Array.from({ length: 48 }, (_, i) =>
        entry(i % 2 ? session1 : session2, project.id, {
          tool_input: { n: 10 + i },
          created_at: same,
          decision: i % 3 === 0 ? "denied" : "allowed",
          tool_name: i % 4 === 0 ? "Read" : "Bash",
        }),
      ),
      ...Array.from({ length: 10 }, (_, i) =>
        entry(session2, project.id, { tool_input: { n: 58 + i }, created_at: hookTime(Date.now() - 300_000 + i * 1000) }),
      ),
    ];
    expect((await postPermissionLog(w.worker.apiKey, entries)).json.accepted).toBe(68);
  });

  it("pages newest first with no entry twice or skipped, whatever entries share a time", async () => {
    for (const limit of [1, 7, 48, 500]) {
      const all = await wholeLog(project.id, "", limit);
      expect(all.map((e) => e.tool_input.n).sort((a, b) => a - b)).toEqual(Array.from({ length: 68 }, (_, i) => i));
      expect(all.slice(0, 10).map((e) => e.tool_input.n)).toEqual([67, 66, 65, 64, 63, 62, 61, 60, 59, 58]);
      for (let i = 1; i < all.length; i++) expect(all[i - 1].created_at >= all[i].created_at).toBe(true);
    }
  });

  it("filters by session, decision, tool and task, combined", async () => {
    const bySession = await wholeLog(project.id, `&session_id=${session2}`, 5);
    expect(bySession).toHaveLength(24 + 10);
    expect(bySession.every((e) => e.session_id === session2 && e.session_name === "pager-2")).toBe(true);
    const denied = await wholeLog(project.id, "&decision=denied", 3);
    expect(denied.map((e) => e.tool_input.n).sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, i) => 10 + i * 3));
    const readsBySession1 = await wholeLog(project.id, `&tool=Read&session_id=${session1}`);
    expect(readsBySession1).toEqual([]);
    const reads = await wholeLog(project.id, "&tool=Read", 4);
    expect(reads.map((e) => e.tool_input.n).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => 10 + i * 4));
    // The running task is its session's, in the world's project: that project's log has its entries, this one none.
    expect(await wholeLog(project.id, `&task_id=${task}`)).toEqual([]);
    const ofTask = await wholeLog(w.project.id, `&task_id=${task}`, 1);
    expect(ofTask.length).toBeGreaterThanOrEqual(2);
    expect(ofTask.every((e) => e.task_id === task && e.session_id === sA1)).toBe(true);
  });

  it("refuses a bad filter with 422 naming it", async () => {
    for (const [query, path] of [
      ["?decision=maybe", "query.decision"],
      ["?limit=0", "query.limit"],
      ["?limit=501", "query.limit"],
      ["?before=bogus", "query.before"],
      ["?session_id=nope", "query.session_id"],
    ]) {
      const reply = await logOf(project.id, query);
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(reply.json.errors.map((e: any) => e.path)).toEqual([path]);
    }
  });

  it("answers members and viewers of the project, and 404 to a person of another project", async () => {
    const viewer = await createUser(w.admin, "viewer");
    await addMember(w.admin, project.id, viewer.id);
    expect((await logOf(project.id, "?limit=1", viewer.token)).json.entries).toHaveLength(1);
    expect((await logOf(project.id, "?limit=1", w.member.token)).status).toBe(404);
    expectProblem(await logOf(project.id, "", w.member.token), 404, "NOT_FOUND");
    expect((await logOf(w.project.id, "?limit=1", w.member.token)).status).toBe(200);
    expectProblem(await logOf(crypto.randomUUID()), 404, "NOT_FOUND");
  });
});

describe("retention", () => {
  it("the hourly housekeeping deletes entries older than PERMISSION_LOG_DAYS, and only those, of a project that does not archive", async () => {
    const project = await createProject(w.admin, "Retention");
    expect((await call(`/api/v1/projects/${project.id}`, { method: "PATCH", token: w.admin, body: { settings: { archive_after_days: null } } })).status).toBe(
      200,
    );
    const session = await openSession(w.worker.apiKey, project.id, "keeper");
    const day = 24 * 3600 * 1000;
    const now = Date.now();
    const ages = [45, 31, 29, 1];
    await postPermissionLog(
      w.worker.apiKey,
      ages.map((age) => entry(session, project.id, { tool_input: { age }, created_at: hookTime(now - age * day) })),
    );
    expect(env.PERMISSION_LOG_DAYS).toBe("30");
    const deleted = await expirePermissionLog(env, now);
    expect(deleted).toBeGreaterThanOrEqual(2);
    expect((await wholeLog(project.id)).map((e) => e.tool_input.age)).toEqual([1, 29]);
  });
});
