/**
 * What the official daemon reads in `session_start` and reports back about a
 * session, field for field as hub.py does: the agent type by the daemon's own
 * names, its MCP status (`PATCH /api/v1/server/sessions/{id}/mcp-status`), and
 * `session_exit_copy_mode` when a writer's terminal joins.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, call, createUser, expectProblem, registerAgent, until, type Reply } from "./helpers";
import { fakeDaemon, type FakeDaemon } from "./fake-daemon";
import { dashboard, isEvent, openSocket } from "./sockets";
import { cli, createWorld, expectOk, type World } from "./task-world";

let w: World;
let viewer: Awaited<ReturnType<typeof createUser>>;
let box: { id: string; apiKey: string; name: string };
let daemon: FakeDaemon;

beforeAll(async () => {
  w = await createWorld("Daemon fields");
  viewer = await createUser(w.admin, "viewer");
  await addMember(w.admin, w.project.id, viewer.id);
  box = await registerAgent(w.admin, `box-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [w.project.id] });
  daemon = await fakeDaemon(box.apiKey, { mcpStatus: "merged" });
});

const S = () => `/api/v1/projects/${w.project.id}/sessions`;
const start = (body: Record<string, unknown>) => call(S(), { token: w.member.token, body: { server_id: box.id, ...body } });
const sessionStart = (id: string) => daemon.socket.next((f) => f.type === "session_start" && f.session_id === id);
const read = async (id: string) => (await expectOk(call(`${S()}/${id}`, { token: w.member.token }))).json;
const terminal = (sessionId: string, token: string) => openSocket(`${S()}/${sessionId}/terminal`, { "Sec-WebSocket-Protocol": `bearer, ${token}` });

async function runningSession(): Promise<string> {
  const { json } = await expectOk(start({ agent_type: "claude_code" }), 201);
  await until(
    () => read(json.id),
    (s) => s.status === "running",
    "the session running",
  );
  // hub.py reports the MCP status beside its session_started: it is in before the test goes on.
  await daemon.mcpReports.get(json.id);
  return json.id;
}

describe("agent_type in session_start", () => {
  it("gives a Codex session the daemon's name for Codex, in exactly the session_start hub.py reads", async () => {
    const { json } = await expectOk(start({ agent_type: "codex", working_directory: "/srv/app" }), 201);
    expect(json.agent_type).toBe("codex_cli");
    expect(await sessionStart(json.id)).toEqual({
      type: "session_start",
      session_id: json.id,
      working_directory: "/srv/app",
      cols: 120,
      rows: 40,
      project_id: w.project.id,
      agent_type: "codex_cli",
      role: "worker",
    });
    expect((await read(json.id)).agent_type).toBe("codex_cli");
  });

  it("takes the daemon's own names as they are, and maps the dashboard's short ones", async () => {
    for (const [sent, daemonName] of [
      ["claude", "claude_code"],
      ["gemini", "gemini_cli"],
      ["gemini_cli", "gemini_cli"],
      ["aider", "aider"],
      ["cursor", "cursor"],
    ]) {
      const { json } = await expectOk(start({ agent_type: sent }), 201);
      expect((await sessionStart(json.id)).agent_type, sent).toBe(daemonName);
      expect(json.agent_type, sent).toBe(daemonName);
    }
  });

  it("leaves agent_type out of session_start when the person does, so the daemon detects it", async () => {
    for (const body of [{}, { agent_type: null }]) {
      const { json } = await expectOk(start(body), 201);
      const frame = await sessionStart(json.id);
      expect(frame).not.toHaveProperty("agent_type");
      expect(frame).toEqual({
        type: "session_start",
        session_id: json.id,
        working_directory: null,
        cols: 120,
        rows: 40,
        project_id: w.project.id,
        role: "worker",
      });
      expect(json.agent_type).toBeNull();
    }
  });

  it("refuses an agent the daemon does not know with 422 naming agent_type, on both surfaces", async () => {
    const before = (await call(`${S()}?status=all`, { token: w.member.token })).json.sessions.length;
    for (const agent of ["gpt", "Claude", "unknown", 7]) {
      const refused = await start({ agent_type: agent });
      expectProblem(refused, 422, "VALIDATION_FAILED");
      expect(refused.json.errors).toEqual([{ path: "agent_type", message: expect.stringContaining("claude_code, codex_cli, gemini_cli, aider, cursor") }]);
    }
    expect((await call(`${S()}?status=all`, { token: w.member.token })).json.sessions).toHaveLength(before);

    const own = await expectOk(cli(box.apiKey, "POST", "/api/v1/server/sessions", { name: "own-gemini", project_id: w.project.id, agent_type: "gemini" }), 201);
    expect(own.json.agent_type).toBe("gemini_cli");
    const refused = await cli(box.apiKey, "POST", "/api/v1/server/sessions", { name: "own-x", project_id: w.project.id, agent_type: "copilot" });
    expectProblem(refused, 422, "VALIDATION_FAILED");
    expect(refused.json.errors.map((e: { path: string }) => e.path)).toEqual(["agent_type"]);
  });
});

describe("the daemon's MCP status", () => {
  it("is stored from the report the daemon makes on each start, shown in the session's views, and is an event", async () => {
    const live = await dashboard(w.project.id, w.member.token);
    const { json } = await expectOk(start({ agent_type: "claude_code" }), 201);
    expect(json.mcp_status).toBeNull();
    await sessionStart(json.id);
    const reported: Reply = await daemon.mcpReports.get(json.id)!;
    expect(reported.status, reported.text).toBe(200);
    expect(reported.json).toMatchObject({ id: json.id, mcp_status: "merged" });
    expect((await read(json.id)).mcp_status).toBe("merged");
    const listed = (await call(`${S()}?status=all`, { token: viewer.token })).json.sessions.find((s: { id: string }) => s.id === json.id);
    expect(listed.mcp_status).toBe("merged");
    const agents = (await cli(box.apiKey, "GET", `/api/v1/server/sessions?project_id=${w.project.id}`)).json.sessions.find(
      (s: { id: string }) => s.id === json.id,
    );
    expect(agents.mcp_status).toBe("merged");
    const event = await live.next((f) => isEvent(f) && f.event_type === "session_mcp_status" && f.data.session_id === json.id);
    expect(event.data).toMatchObject({ session_id: json.id, server_id: box.id, server_name: box.name, mcp_status: "merged" });
  });

  it("takes a later report as it is, and the same report again as a no-op", async () => {
    const id = await runningSession();
    const report = (mcp_status: string) => cli(box.apiKey, "PATCH", `/api/v1/server/sessions/${id}/mcp-status`, { mcp_status });
    expect((await expectOk(report("workspace_readonly"))).json.mcp_status).toBe("workspace_readonly");
    const again = await expectOk(report("workspace_readonly"));
    expect(again.json.updated_at).toBe((await read(id)).updated_at);
    const events = (await call(`/api/v1/projects/${w.project.id}/events?limit=1000`, { token: w.member.token })).json.events;
    expect(events.filter((e: any) => e.type === "session_mcp_status" && e.data.session_id === id).map((e: any) => e.data.mcp_status)).toEqual([
      "merged",
      "workspace_readonly",
    ]);
  });

  it("is the session's own server's to report: another server, a person or a bad value is refused", async () => {
    const id = await runningSession();
    const path = `/api/v1/server/sessions/${id}/mcp-status`;
    expectProblem(await cli(w.worker.apiKey, "PATCH", path, { mcp_status: "written" }), 404, "NOT_FOUND");
    expectProblem(await cli(box.apiKey, "PATCH", `/api/v1/server/sessions/${crypto.randomUUID()}/mcp-status`, { mcp_status: "written" }), 404, "NOT_FOUND");
    expect((await call(path, { method: "PATCH", token: w.admin, body: { mcp_status: "written" } })).status).toBe(401);
    for (const bad of [{ mcp_status: "connected" }, { mcp_status: 1 }, {}]) {
      const refused = await cli(box.apiKey, "PATCH", path, bad);
      expectProblem(refused, 422, "VALIDATION_FAILED");
      expect(refused.json.errors.map((e: { path: string }) => e.path)).toEqual(["mcp_status"]);
    }
    expect((await read(id)).mcp_status).toBe("merged");
  });
});

describe("session_exit_copy_mode", () => {
  const exits = (id: string) => daemon.socket.frames.filter((f) => f.type === "session_exit_copy_mode" && f.session_id === id);

  it("is sent to the daemon when a writer's terminal joins an open session, so tmux takes keystrokes again", async () => {
    const id = await runningSession();
    const t = await terminal(id, w.member.token);
    expect(await t.next()).toMatchObject({ type: "ready", writer: true });
    expect(await daemon.socket.next((f) => f.type === "session_exit_copy_mode" && f.session_id === id)).toEqual({
      type: "session_exit_copy_mode",
      session_id: id,
    });
    // A page refreshed: the terminal joins again, and so does the frame.
    t.ws.close(1000, "refresh");
    const again = await terminal(id, w.member.token);
    await again.next((f) => f.type === "ready");
    await until(
      async () => exits(id).length,
      (n) => n === 2,
      "a second exit from copy mode",
    );
  });

  it("is not sent for a viewer, who cannot type, nor for a session that has ended", async () => {
    const id = await runningSession();
    const watching = await terminal(id, viewer.token);
    expect(await watching.next()).toMatchObject({ type: "ready", writer: false });
    await expectOk(call(`${S()}/${id}`, { method: "DELETE", token: w.member.token }));
    const late = await terminal(id, w.member.token);
    expect(await late.next()).toMatchObject({ type: "ready", writer: true, status: "closed" });
    daemon.send({ type: "ping" });
    await daemon.socket.next((f) => f.type === "pong");
    expect(exits(id)).toEqual([]);
  });
});
