/**
 * Code health: snapshots the daemon's scanner really produced (test/fixtures, `CodebaseScanner(...).scan()` of this
 * repository's src/ and web/src/) posted as `orchestratia code scan` posts them, read back as `code health|debt|priorities`
 * read them (cli.py, field for field), and a scan pushed to a fake daemon answering as hub.py's `_run_architecture_scan`.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { blobKey } from "../src/datarefs/blobs";
import { fakeDaemon, pythonDumps, type FakeDaemon } from "./fake-daemon";
import srcSnapshot from "./fixtures/code-health-src.json";
import webSnapshot from "./fixtures/code-health-web.json";
import { addMember, answered, call, createProject, createUser, expectProblem, hubAs, registerAgent, until } from "./helpers";
import { cli, createWorld, newTask, type World } from "./task-world";

const A = "/api/v1/server/architecture";

type Scan = typeof srcSnapshot;

let w: World;

beforeAll(async () => {
  w = await createWorld("Code health");
});

/** `orchestratia code scan`: `_api_request("POST", "/snapshot", {project_id, snapshot})`. */
const scan = (apiKey: string, projectId: string, snapshot: unknown) => cli(apiKey, "POST", `${A}/snapshot`, { project_id: projectId, snapshot });
/** `orchestratia code health|debt|priorities`: `_api_request("GET", f"/health/{PROJECT_ID}")`. */
const health = (apiKey: string, projectId: string) => cli(apiKey, "GET", `${A}/health/${projectId}`);

/** What `cmd_code_health` prints (without its colours), reading the answer exactly as cli.py does: `f['path']` fails on a missing key. */
function printHealth(result: any): string[] {
  if (result.status === "no_data") return ["No architecture scan found. Run a scan first."];
  const need = (o: any, k: string) => {
    if (!(k in o)) throw new Error(`KeyError: '${k}'`);
    return o[k];
  };
  const out = [
    `Score: ${result.health_score ?? 0}/100 (${result.health_grade ?? "?"})`,
    `Files: ${result.total_files ?? 0}  Lines: ${result.total_lines ?? 0}`,
  ];
  for (const [name, data] of Object.entries<any>(result.factors ?? {})) out.push(`${name}: ${data.score ?? 0}/100  ${data.details ?? ""}`);
  if (result.tech_debt_total_hours) {
    out.push(`Tech Debt: ${result.tech_debt_total_hours}h`);
    for (const f of result.tech_debt_top_files ?? []) out.push(`${need(f, "path")} ${need(f, "hours")}h  ${(f.reasons ?? []).join(", ")}`);
  }
  for (const h of (result.hotspots ?? []).slice(0, 5)) out.push(`● ${h}`);
  out.push(`Scanned: ${result.scanned_at ?? "unknown"}`);
  return out;
}

/** Rows and R2 objects a project's code health has: a refused snapshot adds none. */
async function stored(projectId: string) {
  const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM code_health_snapshots WHERE project_id = ?1").bind(projectId).first<{ n: number }>();
  const refs = await env.DB.prepare("SELECT COUNT(*) AS n FROM datarefs WHERE project_id = ?1").bind(projectId).first<{ n: number }>();
  const objects = await env.BLOBS.list({ prefix: `projects/${projectId}/` });
  return { snapshots: rows!.n, datarefs: refs!.n, objects: objects.objects.length };
}

const events = async (projectId: string) =>
  (await call(`/api/v1/projects/${projectId}/events?limit=500`, { token: w.admin })).json.events.filter((e: any) => e.type === "code_health_scanned");

describe("orchestratia code scan and health", () => {
  it("answers no_data before the first scan, and code health says so", async () => {
    const project = await createProject(w.admin, "Never scanned");
    const reply = await health(w.worker.apiKey, project.id);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json).toEqual({ status: "no_data" });
    expect(printHealth(reply.json)).toEqual(["No architecture scan found. Run a scan first."]);
  });

  it("stores a scan: the score answered, the summary as cli.py reads it, the whole snapshot in R2, an event in the log", async () => {
    const project = await createProject(w.admin, "Scanned");
    const posted = await scan(w.worker.apiKey, project.id, srcSnapshot);
    expect(posted.status, posted.text).toBe(201);
    expect(posted.json).toEqual({ health_score: srcSnapshot.health.score, health_grade: srcSnapshot.health.grade });

    const reply = await health(w.worker.apiKey, project.id);
    expect(reply.status, reply.text).toBe(200);
    const h = reply.json;
    expect(h).toMatchObject({
      health_score: srcSnapshot.health.score,
      health_grade: srcSnapshot.health.grade,
      total_files: srcSnapshot.stats.total_files,
      total_lines: srcSnapshot.stats.total_lines,
      factors: srcSnapshot.health.factors,
      tech_debt_total_hours: srcSnapshot.health.tech_debt.total_hours,
      tech_debt_top_files: srcSnapshot.health.tech_debt.files.slice(0, 10),
      hotspots: srcSnapshot.health.hotspots,
      git_branch: srcSnapshot.git_branch,
      git_commit: srcSnapshot.git_commit,
      mermaid_graph: srcSnapshot.mermaid_graph,
      scanned_at: new Date(srcSnapshot.scanned_at).toISOString(),
    });
    // What `code health` prints: every factor, the debt and its files, the first five hotspots.
    const printed = printHealth(h);
    expect(printed[0]).toBe(`Score: ${srcSnapshot.health.score}/100 (${srcSnapshot.health.grade})`);
    for (const name of Object.keys(srcSnapshot.health.factors)) expect(printed.some((l) => l.startsWith(`${name}: `))).toBe(true);
    expect(printed).toContain(`Tech Debt: ${srcSnapshot.health.tech_debt.total_hours}h`);
    const first = srcSnapshot.health.tech_debt.files[0]!;
    expect(printed).toContain(`${first.path} ${first.hours}h  ${first.reasons.join(", ")}`);
    expect(printed.filter((l) => l.startsWith("● "))).toHaveLength(Math.min(5, srcSnapshot.health.hotspots.length));

    // The whole snapshot is a DataRef of the project, byte for byte what the scanner made.
    const object = await env.BLOBS.get(blobKey(project.id, h.snapshot_dataref_id));
    expect(object).not.toBeNull();
    expect(await object!.json()).toEqual(srcSnapshot);
    const ref = await call(`/api/v1/projects/${project.id}/datarefs/${h.snapshot_dataref_id}`, { token: w.admin });
    expect(ref.status, ref.text).toBe(200);
    expect(ref.json).toMatchObject({ status: "complete", content_type: "application/json" });

    const [event] = await events(project.id);
    expect(event).toMatchObject({
      actor: `agent:${w.worker.name}`,
      data: { snapshot_id: h.id, health_score: srcSnapshot.health.score, health_grade: srcSnapshot.health.grade, session_id: null },
    });
  });

  it("keeps the history: people see the latest with each score before it, oldest first", async () => {
    const project = await createProject(w.admin, "History");
    await addMember(w.admin, project.id, w.member.id);
    for (const s of [srcSnapshot, webSnapshot, srcSnapshot] as Scan[]) expect((await scan(w.worker.apiKey, project.id, s)).status).toBe(201);
    const reply = await call(`/api/v1/projects/${project.id}/code-health`, { token: w.member.token });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json.history.map((p: any) => [p.health_score, p.health_grade])).toEqual([
      [srcSnapshot.health.score, srcSnapshot.health.grade],
      [webSnapshot.health.score, webSnapshot.health.grade],
      [srcSnapshot.health.score, srcSnapshot.health.grade],
    ]);
    expect(reply.json.latest.id).toBe(reply.json.history.at(-1).id);
    expect(reply.json.latest.mermaid_graph).toBe(srcSnapshot.mermaid_graph);
    // The agent's view is the same latest.
    expect((await health(w.worker.apiKey, project.id)).json.id).toBe(reply.json.latest.id);
    expect(await events(project.id)).toHaveLength(3);
    // Before the first scan, people get no latest and an empty history.
    const empty = await createProject(w.admin, "History, none");
    expect((await call(`/api/v1/projects/${empty.id}/code-health`, { token: w.admin })).json).toEqual({ latest: null, history: [] });
  });

  it("refuses a snapshot over 16 MiB with 413, keeping nothing", async () => {
    const project = await createProject(w.admin, "Too large");
    const before = await stored(project.id);
    // 20 MB of files, as a scan of a huge tree might list them.
    const files = Array.from({ length: 20_000 }, (_, i) => ({ path: `src/module-${i}.py`, language: "python", lines: 100, imports: ["x".repeat(900)] }));
    const reply = await scan(w.worker.apiKey, project.id, { ...webSnapshot, files });
    expectProblem(reply, 413, "PAYLOAD_TOO_LARGE");
    expect(await stored(project.id)).toEqual(before);
    expect((await health(w.worker.apiKey, project.id)).json).toEqual({ status: "no_data" });
  });

  it("refuses a project the server does not serve with 404, keeping nothing", async () => {
    const other = await createProject(w.admin, "Not served");
    const scoped = await registerAgent(w.admin, `scoped-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [w.project.id] });
    const before = await stored(other.id);
    expectProblem(await scan(scoped.apiKey, other.id, webSnapshot), 404, "NOT_FOUND");
    expectProblem(await health(scoped.apiKey, other.id), 404, "NOT_FOUND");
    expect(await stored(other.id)).toEqual(before);
    // Its own project it scans.
    expect((await scan(scoped.apiKey, w.project.id, webSnapshot)).status).toBe(201);
  });

  it("names the field of a snapshot that is not the scanner's, keeping nothing", async () => {
    const project = await createProject(w.admin, "Malformed");
    const { health: _health, ...noHealth } = webSnapshot;
    const reply = await scan(w.worker.apiKey, project.id, noHealth);
    expectProblem(reply, 422, "VALIDATION_FAILED");
    expect(reply.json.errors).toContainEqual(expect.objectContaining({ path: "snapshot.health" }));
    const badScore = await scan(w.worker.apiKey, project.id, { ...webSnapshot, health: { ...webSnapshot.health, score: 140 } });
    expect(badScore.json.errors).toContainEqual({ path: "snapshot.health.score", message: "must be from 0 to 100" });
    expect(await stored(project.id)).toEqual({ snapshots: 0, datarefs: 0, objects: 0 });
  });

  it("answers no_review for a task's code review, and 404 for a task it cannot see", async () => {
    const task = await newTask(w);
    const reply = await cli(w.worker.apiKey, "GET", `${A}/reviews/${task}`);
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json).toEqual({ status: "no_review" });
    expectProblem(await cli(w.worker.apiKey, "GET", `${A}/reviews/${crypto.randomUUID()}`), 404, "NOT_FOUND");
  });
});

describe("Scan now", () => {
  let daemon: FakeDaemon;
  let session: string;

  /** hub.py `_run_architecture_scan`: the scanner's snapshot with its context, sent back as `architecture_snapshot`. */
  function answerScans(d: FakeDaemon, snapshot: Scan) {
    d.socket.ws.addEventListener("message", (e) => {
      const msg = JSON.parse(e.data as string);
      if (msg.type !== "scan_architecture" || !msg.working_directory) return;
      const withContext = { ...snapshot, triggered_by: "on_demand", session_id: msg.session_id ?? "", project_id: msg.project_id ?? "" };
      d.socket.send(pythonDumps({ type: "architecture_snapshot", session_id: msg.session_id ?? "", project_id: msg.project_id ?? "", snapshot: withContext }));
    });
  }

  beforeAll(async () => {
    daemon = await fakeDaemon(w.worker.apiKey);
    answerScans(daemon, srcSnapshot);
    const created = await answered(
      hubAs({ apiKey: w.worker.apiKey }).POST("/api/v1/server/sessions", {
        body: { name: "scanned", project_id: w.project.id, working_directory: "/srv/hub" },
      }),
      201,
    );
    session = created.id;
  });

  const scanNow = (token: string, sessionId = session) => call(`/api/v1/projects/${w.project.id}/sessions/${sessionId}/scan`, { method: "POST", token });

  it("pushes scan_architecture to the session's daemon, and stores the snapshot it sends back", async () => {
    const asked = await scanNow(w.member.token);
    expect(asked.status, asked.text).toBe(202);
    expect(asked.json).toEqual({ session_id: session, status: "scan_requested" });
    const push = await daemon.socket.next((f) => f.type === "scan_architecture");
    expect(push).toEqual({ type: "scan_architecture", session_id: session, project_id: w.project.id, working_directory: "/srv/hub" });
    const latest = await until(
      async () => (await call(`/api/v1/projects/${w.project.id}/code-health`, { token: w.member.token })).json.latest,
      (l) => l?.session_id === session,
      "the scanned snapshot",
    );
    expect(latest).toMatchObject({ session_id: session, triggered_by: "on_demand", health_score: srcSnapshot.health.score });
    expect((await events(w.project.id)).some((e: any) => e.data.session_id === session)).toBe(true);
  });

  it("takes a snapshot frame larger than the link's 1 MiB, and one whose project_id hub.py left empty (a session that closed)", async () => {
    const files = Array.from({ length: 3_000 }, (_, i) => ({ path: `src/m${i}.ts`, language: "typescript", lines: 10, imports: ["y".repeat(500)] }));
    const big = { ...webSnapshot, files, triggered_by: "session_closed" };
    daemon.socket.send(pythonDumps({ type: "architecture_snapshot", session_id: session, project_id: "", snapshot: big }));
    const latest = await until(
      async () => (await call(`/api/v1/projects/${w.project.id}/code-health`, { token: w.admin })).json.latest,
      (l) => l?.triggered_by === "session_closed",
      "the large snapshot",
    );
    expect(latest).toMatchObject({ session_id: session, health_score: webSnapshot.health.score });
    const object = await env.BLOBS.get(blobKey(w.project.id, latest.snapshot_dataref_id));
    expect(object!.size).toBeGreaterThan(1 << 20);
  });

  it("refuses a snapshot frame for a session not the server's, or a project not the session's, keeping nothing", async () => {
    const other = await createProject(w.admin, "Not the session's");
    const before = await stored(other.id);
    daemon.socket.send(pythonDumps({ type: "architecture_snapshot", session_id: session, project_id: other.id, snapshot: webSnapshot }));
    expect(await daemon.socket.next((f) => f.type === "error")).toMatchObject({ code: "NOT_SERVED" });
    daemon.socket.send(pythonDumps({ type: "architecture_snapshot", session_id: crypto.randomUUID(), project_id: w.project.id, snapshot: webSnapshot }));
    expect(await daemon.socket.next((f) => f.type === "error")).toMatchObject({ code: "UNKNOWN_SESSION" });
    daemon.socket.send(pythonDumps({ type: "architecture_snapshot", session_id: session, project_id: w.project.id, snapshot: { stats: {} } }));
    expect(await daemon.socket.next((f) => f.type === "error")).toMatchObject({ code: "INVALID_MESSAGE", detail: expect.stringContaining("snapshot.") });
    expect(await stored(other.id)).toEqual(before);
  });

  it("is for writers, for open sessions with a working directory, with the daemon connected", async () => {
    const viewer = await createUser(w.admin, "viewer");
    await addMember(w.admin, w.project.id, viewer.id);
    expectProblem(await scanNow(viewer.token), 403, "FORBIDDEN");
    const bare = await answered(hubAs({ apiKey: w.worker.apiKey }).POST("/api/v1/server/sessions", { body: { name: "bare", project_id: w.project.id } }), 201);
    expectProblem(await scanNow(w.admin, bare.id), 409, "CONFLICT");
    const offline = await registerAgent(w.admin, `offline-${crypto.randomUUID().slice(0, 6)}`);
    const away = await answered(
      hubAs({ apiKey: offline.apiKey }).POST("/api/v1/server/sessions", { body: { name: "away", project_id: w.project.id, working_directory: "/srv" } }),
      201,
    );
    expectProblem(await scanNow(w.admin, away.id), 409, "DAEMON_OFFLINE");
    expectProblem(await scanNow(w.admin, crypto.randomUUID()), 404, "NOT_FOUND");
  });
});
