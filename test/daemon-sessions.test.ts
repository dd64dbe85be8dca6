/**
 * Agent sessions people start on a server, and their terminals, driven end
 * to end: the API, the server's link, and a fake daemon that speaks what
 * hub.py and session.py send and read, field for field.
 */
import { env, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { ACCESS_CHECK_TTL_MS } from "../src/server-link/terminal-access";
import { MAX_VIEWER_FRAME_BYTES } from "../src/server-link/terminal-frames";
import { TERMINAL_INPUTS_PER_SECOND } from "../src/server-link/terminals";
import {
  aTraceparent,
  accessTokenUntil,
  addMember,
  call,
  createProject,
  createUser,
  expectProblem,
  registerAgent,
  until as waitUntil,
  type Reply,
} from "./helpers";
import { b64, fakeDaemon, unb64, type FakeDaemon } from "./fake-daemon";
import { dashboard, isEvent, openSocket, type TestSocket } from "./sockets";
import { cli, createWorld, expectOk, T, type World } from "./task-world";

let w: World;
let viewer: Awaited<ReturnType<typeof createUser>>;
let box: { id: string; apiKey: string; name: string };
let daemon: FakeDaemon;

beforeAll(async () => {
  w = await createWorld("Sessions");
  viewer = await createUser(w.admin, "viewer");
  await addMember(w.admin, w.project.id, viewer.id);
  box = await machine(`box-${crypto.randomUUID().slice(0, 6)}`);
  daemon = await fakeDaemon(box.apiKey);
});

const S = () => `/api/v1/projects/${w.project.id}/sessions`;
/** A server registered for the world's project only, so its members may run sessions on it. */
const machine = (name: string) => registerAgent(w.admin, name, { project_ids: [w.project.id] });
const link = (serverId: string) => env.SERVER_LINK.get(env.SERVER_LINK.idFromName(serverId));

async function startSession(body: Record<string, unknown> = {}): Promise<Reply> {
  return expectOk(call(S(), { token: w.member.token, body: { server_id: box.id, agent_type: "claude", ...body } }), 201);
}

async function runningSession(body: Record<string, unknown> = {}): Promise<string> {
  const { json } = await startSession(body);
  await until(async () => (await call(`${S()}/${json.id}`, { token: w.member.token })).json.status === "running");
  return json.id;
}

const until = (check: () => Promise<boolean>, what = "the condition", timeoutMs = 5000) => waitUntil(check, (yes) => yes, what, timeoutMs);

const terminal = (sessionId: string, token = w.member.token) => openSocket(`${S()}/${sessionId}/terminal`, { "Sec-WebSocket-Protocol": `bearer, ${token}` });

/** Everything a viewer has been sent as output, decoded, in order. */
const screen = (t: TestSocket) =>
  t.frames
    .filter((f) => f.type === "output")
    .map((f) => unb64(f.data))
    .join("");

describe("starting a session from the API", () => {
  it("asks the daemon to start it with the fields hub.py reads, and shows it running once the daemon says so", async () => {
    const live = await dashboard(w.project.id, w.member.token);
    const started = await startSession({ name: "claude-main", working_directory: "/srv/app", role: "orchestrator", cols: 100, rows: 30 });
    expect(started.json).toMatchObject({
      name: "claude-main",
      server_id: box.id,
      server_name: box.name,
      project_id: w.project.id,
      status: "starting",
      working_directory: "/srv/app",
      role: "orchestrator",
      agent_type: "claude_code",
    });
    const id = started.json.id;
    expect(await daemon.socket.next((f) => f.type === "session_start" && f.session_id === id)).toEqual({
      type: "session_start",
      session_id: id,
      working_directory: "/srv/app",
      cols: 100,
      rows: 30,
      project_id: w.project.id,
      agent_type: "claude_code",
      role: "orchestrator",
    });
    await until(async () => (await call(`${S()}/${id}`, { token: viewer.token })).json.status === "running", "running");
    expect((await call(`${S()}/${id}`, { token: viewer.token })).json).toMatchObject({ status: "running", pid: 4242 });
    const events = await live.collect(2, (f) => isEvent(f) && f.data.session_id === id);
    expect(events.map((f) => [f.event_type, f.data.status])).toEqual([
      ["session_created", "starting"],
      ["session_started", "running"],
    ]);
    // The same session is what the agent surface lists and assigns to.
    const listed = await cli(box.apiKey, "GET", `/api/v1/server/sessions?project_id=${w.project.id}`);
    expect(listed.json.sessions.map((s: any) => s.name)).toContain("claude-main");
    const people = await call(`${S()}?status=open`, { token: viewer.token });
    expect(people.json.sessions.map((s: any) => s.id)).toContain(id);
  });

  it("names a session itself when the person does not", async () => {
    const { json } = await startSession({ agent_type: "codex" });
    expect(json.name).toMatch(/^codex_cli-[0-9a-f]{6}$/);
  });

  it("refuses what cannot start: a server whose daemon is away, another server, bad fields, a viewer, a name in use", async () => {
    const away = await machine(`away-${crypto.randomUUID().slice(0, 6)}`);
    const before = (await call(`${S()}?status=all`, { token: w.member.token })).json.sessions.length;
    expectProblem(await call(S(), { token: w.member.token, body: { server_id: away.id } }), 409, "DAEMON_OFFLINE");
    const listed = (await call("/api/v1/servers", { token: w.member.token })).json.servers;
    expect(listed.find((s: any) => s.id === away.id).daemon_connected).toBe(false);
    expect(listed.find((s: any) => s.id === box.id).daemon_connected).toBe(true);
    expect((await call(`${S()}?status=all`, { token: w.member.token })).json.sessions).toHaveLength(before);
    expectProblem(await call(S(), { token: w.member.token, body: { server_id: crypto.randomUUID() } }), 404, "NOT_FOUND");
    const bad = await call(S(), { token: w.member.token, body: { server_id: box.id, cols: 5, role: "boss", name: "has space" } });
    expectProblem(bad, 422, "VALIDATION_FAILED");
    expect(bad.json.errors.map((e: any) => e.path).sort()).toEqual(["cols", "name", "role"]);
    expectProblem(await call(S(), { raw: "{not json", token: w.member.token, headers: { "Content-Type": "application/json" } }), 400, "MALFORMED_JSON");
    expectProblem(await call(S(), { token: viewer.token, body: { server_id: box.id } }), 403, "FORBIDDEN");
    await startSession({ name: "taken-name" });
    expectProblem(await call(S(), { token: w.member.token, body: { server_id: box.id, name: "taken-name" } }), 409, "SESSION_NAME_TAKEN");
  });

  it("records what the daemon reports: a failed start, and an agent that exits", async () => {
    const failing = await fakeDaemon((await machine(`failing-${crypto.randomUUID().slice(0, 6)}`)).apiKey, { start: false });
    const serverId = (await failing.socket.frames.find((f) => f.type === "auth_ok")).server_id;
    const { json } = await expectOk(call(S(), { token: w.member.token, body: { server_id: serverId } }), 201);
    await failing.socket.next((f) => f.type === "session_start");
    failing.send({ type: "session_error", session_id: json.id, error: "Failed to spawn session" });
    await until(async () => (await call(`${S()}/${json.id}`, { token: w.member.token })).json.status === "error");
    expect((await call(`${S()}/${json.id}`, { token: w.member.token })).json).toMatchObject({ status: "error", error: "Failed to spawn session" });

    const id = await runningSession();
    daemon.send({ type: "session_closed", session_id: id, exit_code: 0 });
    await until(async () => (await call(`${S()}/${id}`, { token: w.member.token })).json.status === "closed");
    const closed = (await call(`${S()}/${id}`, { token: w.member.token })).json;
    expect(closed).toMatchObject({ status: "closed", exit_code: 0 });
    expect(closed.closed_at).toEqual(expect.any(String));
    // An ended session stays ended, whatever a confused daemon says later, and an agent still running in it is stopped.
    daemon.send({ type: "session_started", session_id: id, pid: 1, tmux_name: "", working_dir: "/" });
    expect(await daemon.socket.next((f) => f.type === "session_kill" && f.session_id === id)).toEqual({ type: "session_kill", session_id: id });
    expect((await call(`${S()}/${id}`, { token: w.member.token })).json).toMatchObject({ status: "closed", pid: 4242 });
  });

  it("fails a session the daemon never answers once its time is up", async () => {
    const silent = await fakeDaemon((await machine(`silent-${crypto.randomUUID().slice(0, 6)}`)).apiKey, { start: false });
    const serverId = silent.socket.frames.find((f) => f.type === "auth_ok").server_id;
    const { json } = await expectOk(call(S(), { token: w.member.token, body: { server_id: serverId } }), 201);
    // The minute passes: the start's deadline is moved to now and the link's alarm runs.
    await runInDurableObject(link(serverId), async (_, state) => state.storage.put(`start:${json.id}`, Date.now() - 1));
    await runDurableObjectAlarm(link(serverId));
    expect((await call(`${S()}/${json.id}`, { token: w.member.token })).json).toMatchObject({
      status: "error",
      error: "The daemon did not start the session within 60 s",
    });
  });
});

describe("closing and killing", () => {
  it("tells the daemon to close or kill, and marks the session closed", async () => {
    const closing = await runningSession();
    const closed = await expectOk(call(`${S()}/${closing}`, { method: "DELETE", token: w.member.token }));
    expect(closed.json.status).toBe("closed");
    expect(await daemon.socket.next((f) => f.type === "session_close")).toEqual({ type: "session_close", session_id: closing });
    const killing = await runningSession();
    await expectOk(call(`${S()}/${killing}?mode=kill`, { method: "DELETE", token: w.member.token }));
    expect(await daemon.socket.next((f) => f.type === "session_kill")).toEqual({ type: "session_kill", session_id: killing });
    // Closing again changes nothing and tells the daemon nothing more.
    await expectOk(call(`${S()}/${killing}`, { method: "DELETE", token: w.member.token }));
    expectProblem(await call(`${S()}/${killing}?mode=explode`, { method: "DELETE", token: w.member.token }), 422, "VALIDATION_FAILED");
    expectProblem(await call(`${S()}/${killing}`, { method: "DELETE", token: viewer.token }), 403, "FORBIDDEN");
    await new Promise((r) => setTimeout(r, 200));
    expect(
      daemon.socket.frames.filter((f) => (f.type === "session_kill" || f.type === "session_close") && [closing, killing].includes(f.session_id)),
    ).toHaveLength(2);
  });

  it("keeps the exit code the daemon reports after a person closed the session, once, and tells dashboards and viewers", async () => {
    const id = await runningSession();
    const t = await terminal(id);
    await t.next((f) => f.type === "ready");
    const board = await dashboard(w.project.id, w.member.token);
    await expectOk(call(`${S()}/${id}`, { method: "DELETE", token: w.member.token }));
    await daemon.socket.next((f) => f.type === "session_close" && f.session_id === id);
    expect((await call(`${S()}/${id}`, { token: w.member.token })).json).toMatchObject({ status: "closed", exit_code: null });
    // session.py, once the agent has exited: {"type": "session_closed", "session_id", "exit_code"}.
    daemon.send({ type: "session_closed", session_id: id, exit_code: 130 });
    await until(async () => (await call(`${S()}/${id}`, { token: w.member.token })).json.exit_code === 130, "the exit code");
    expect(await t.next((f) => f.type === "status" && f.exit_code !== undefined)).toEqual({ type: "status", status: "closed", exit_code: 130 });
    const closes = async () =>
      (await call(`/api/v1/projects/${w.project.id}/events?limit=1000`, { token: w.member.token })).json.events.filter(
        (e: any) => e.type === "session_closed" && e.data.session_id === id,
      );
    expect((await closes()).map((e: any) => [e.actor, e.data.exit_code])).toEqual([
      [w.member.email, undefined],
      [`agent:${box.name}`, 130],
    ]);
    expect(await board.next((f) => isEvent(f) && f.event_type === "session_closed" && f.data.session_id === id && f.data.exit_code === 130)).toMatchObject({
      data: { status: "closed", exit_code: 130 },
    });
    // A second report changes nothing.
    daemon.send({ type: "session_closed", session_id: id, exit_code: 1 });
    daemon.send({ type: "ping" });
    await daemon.socket.next((f) => f.type === "pong");
    await new Promise((r) => setTimeout(r, 100));
    expect((await call(`${S()}/${id}`, { token: w.member.token })).json.exit_code).toBe(130);
    expect(await closes()).toHaveLength(2);
    t.ws.close(1000, "done");
    board.ws.close(1000, "done");
  });

  it("lets only admins run sessions on a server that serves projects the person is not in", async () => {
    const shared = await registerAgent(w.admin, `shared-${crypto.randomUUID().slice(0, 6)}`);
    const box2 = await fakeDaemon(shared.apiKey);
    const refused = await call(S(), { token: w.member.token, body: { server_id: shared.id } });
    expectProblem(refused, 403, "NOT_ALLOWED");
    expect(refused.json.detail).toContain("API key");
    const { json } = await expectOk(call(S(), { token: w.admin, body: { server_id: shared.id } }), 201);
    await box2.socket.next((f) => f.type === "session_start");
    // A member may watch it, not type into it.
    const t = await terminal(json.id);
    expect(await t.next()).toMatchObject({ type: "ready", writer: false });
    box2.socket.ws.close(1000, "done");
  });

  it("answers 404 for another project's session, or one that does not exist", async () => {
    const id = await runningSession();
    const other = await call("/api/v1/projects", { token: w.admin, body: { name: `other ${crypto.randomUUID().slice(0, 6)}` } });
    expectProblem(await call(`/api/v1/projects/${other.json.id}/sessions/${id}`, { token: w.admin }), 404, "NOT_FOUND");
    expectProblem(await call(`/api/v1/projects/${other.json.id}/sessions/${id}`, { method: "DELETE", token: w.admin }), 404, "NOT_FOUND");
    expectProblem(await call(`${S()}/${crypto.randomUUID()}`, { token: w.member.token }), 404, "NOT_FOUND");
  });
});

describe("terminals", () => {
  it("shows a late viewer what came before, then live output; what a writer types reaches the daemon and its echo comes back", async () => {
    const id = await runningSession();
    daemon.output(id, "fake-agent ready\r\n$ ");
    await new Promise((r) => setTimeout(r, 50));
    const t = await terminal(id);
    expect(await t.next()).toEqual({ type: "ready", writer: true, status: "running" });
    await until(async () => screen(t) === "fake-agent ready\r\n$ ", "the scrollback");
    t.send({ type: "input", data: b64("echo hi\r") });
    await until(async () => daemon.typed(id) === "echo hi\r", "the input at the daemon");
    expect(daemon.socket.frames.find((f) => f.type === "session_input" && f.session_id === id)).toEqual({
      type: "session_input",
      session_id: id,
      data: b64("echo hi\r"),
    });
    await until(async () => screen(t) === "fake-agent ready\r\n$ echo hi\r\n", "the echo");
    t.send({ type: "resize", cols: 132, rows: 43 });
    expect(await daemon.socket.next((f) => f.type === "session_resize")).toEqual({ type: "session_resize", session_id: id, cols: 132, rows: 43 });
  });

  it("lets a viewer watch but not type or resize", async () => {
    const id = await runningSession();
    const watcher = await terminal(id, viewer.token);
    expect(await watcher.next()).toEqual({ type: "ready", writer: false, status: "running" });
    watcher.send({ type: "input", data: b64("rm -rf /\r") });
    expect(await watcher.next((f) => f.type === "error")).toMatchObject({ code: "FORBIDDEN" });
    watcher.send({ type: "resize", cols: 80, rows: 24 });
    expect(await watcher.next((f) => f.type === "error")).toMatchObject({ code: "FORBIDDEN" });
    daemon.output(id, "still watching");
    await until(async () => screen(watcher) === "still watching", "output for the viewer");
    expect(daemon.typed(id)).toBe("");
  });

  it("answers bad frames with an error and keeps the socket; refuses bad tokens and other projects' sessions", async () => {
    const id = await runningSession();
    const t = await terminal(id);
    await t.next((f) => f.type === "ready");
    for (const bad of ["nope", { type: "input", data: "***" }, { type: "resize", cols: 0, rows: 10 }, { type: "ack", bytes: -1 }, { type: "dance" }]) {
      t.send(bad);
      expect(await t.next((f) => f.type === "error")).toMatchObject({ code: expect.stringMatching(/^INVALID_/) });
    }
    t.send({ type: "input", data: b64("ok\r") });
    await until(async () => daemon.typed(id) === "ok\r", "input after bad frames");
    expect((await call(`${S()}/${id}/terminal`, { token: w.member.token })).status).toBe(426);
    const tampered = await call(`${S()}/${id}/terminal`, {
      headers: { Upgrade: "websocket", "Sec-WebSocket-Protocol": `bearer, ${w.member.token.slice(0, -2)}xx` },
    });
    expectProblem(tampered, 401, "INVALID_TOKEN");
    const other = await call("/api/v1/projects", { token: w.admin, body: { name: `elsewhere ${crypto.randomUUID().slice(0, 6)}` } });
    const outsider = await call(`/api/v1/projects/${other.json.id}/sessions/${id}/terminal`, {
      headers: { Upgrade: "websocket", "Sec-WebSocket-Protocol": `bearer, ${w.admin}` },
    });
    expectProblem(outsider, 404, "NOT_FOUND");
  });

  it("passes the largest input frame the dashboard sends to the daemon byte for byte: newlines, tabs, escapes, unicode", async () => {
    const id = await runningSession();
    const t = await terminal(id);
    await t.next((f) => f.type === "ready");
    // 128 KiB (the dashboard's largest input frame) of every byte value, then text a paste may hold.
    const bytes = new Uint8Array(128 * 1024);
    bytes.forEach((_, i) => (bytes[i] = i % 256));
    const text = new TextEncoder().encode("Two endpoints, REST\r\tcontracts → é ✓ \x1b[A\x1b[200~end");
    bytes.set(text, bytes.length - text.length);
    const data = bytes.toBase64();
    // Within the hub's frame size, with room to spare.
    expect(JSON.stringify({ type: "input", data }).length).toBeLessThan(MAX_VIEWER_FRAME_BYTES * 0.7);
    t.send({ type: "input", data });
    const pushed = await daemon.socket.next((f) => f.type === "session_input" && f.session_id === id);
    expect(pushed.data).toBe(data);
    expect(Uint8Array.fromBase64(pushed.data)).toEqual(bytes);
    expect(t.frames.filter((f) => f.type === "error")).toEqual([]);
  });

  it("keeps about 256 KiB of scrollback per session, across the link's eviction", async () => {
    const id = await runningSession();
    const line = (i: number) => `line ${String(i).padStart(6, "0")} ${"x".repeat(100)}\r\n`;
    for (let i = 0; i < 4000; i++) daemon.output(id, line(i));
    daemon.send({ type: "ping" });
    await daemon.socket.next((f) => f.type === "pong");
    await new Promise((r) => setTimeout(r, 300));
    await evictDurableObject(link(box.id));
    const late = await terminal(id);
    await late.next((f) => f.type === "ready");
    await until(async () => screen(late).endsWith(line(3999)), "the replayed scrollback");
    const kept = new TextEncoder().encode(screen(late)).byteLength;
    expect(kept).toBeGreaterThanOrEqual(256 * 1024);
    expect(kept).toBeLessThanOrEqual(256 * 1024 + 16 * 1024);
    // What is kept is the end of the output, whole and in order.
    const text = screen(late);
    const first = Number(text.slice(text.indexOf("line ") + 5, text.indexOf("line ") + 11));
    expect(text.slice(text.indexOf("line "))).toBe(Array.from({ length: 4000 - first }, (_, k) => line(first + k)).join(""));
  });

  it("pauses a viewer that does not keep up without holding back the daemon or the other viewers", async () => {
    const id = await runningSession();
    const keeping = await terminal(id);
    const slow = await terminal(id);
    await keeping.next((f) => f.type === "ready");
    await slow.next((f) => f.type === "ready");
    // The keeping viewer acknowledges what it reads; the slow one never does.
    keeping.ws.addEventListener("message", (e) => {
      const f = JSON.parse(e.data as string);
      if (f.type === "output") keeping.send({ type: "ack", bytes: Uint8Array.fromBase64(f.data).byteLength });
    });
    const chunk = (i: number) => `${String(i).padStart(8, "0")}${"y".repeat(32 * 1024 - 10)}\r\n`;
    const expected = Array.from({ length: 64 }, (_, i) => chunk(i)).join("");
    // The daemon goes at the pace of the viewer that keeps up, and no faster.
    for (let i = 0; i < 64; i++) {
      daemon.output(id, chunk(i));
      await until(async () => screen(keeping).length >= 32 * 1024 * (i + 1), `chunk ${i} at the keeping viewer`);
    }
    expect(screen(keeping)).toBe(expected);
    expect(await slow.next((f) => f.type === "lagging")).toMatchObject({ detail: expect.stringContaining("acknowledge") });
    const seen = screen(slow);
    expect(seen.length).toBeLessThanOrEqual(1024 * 1024);
    expect(expected.startsWith(seen)).toBe(true);
    // Once it has read (and acknowledged) what it was sent, it starts again from the scrollback.
    slow.send({ type: "ack", bytes: new TextEncoder().encode(seen).byteLength });
    const resync = await slow.next((f) => f.type === "resync");
    expect(resync.dropped).toBe(new TextEncoder().encode(expected).byteLength - new TextEncoder().encode(seen).byteLength);
    // The replay after it is the scrollback: the last 256 KiB or so of what was sent, ending with the last byte.
    await until(async () => slow.frames.slice(slow.frames.indexOf(resync) + 1).length >= 6, "the replay after resync");
    const after = slow.frames.slice(slow.frames.indexOf(resync) + 1);
    expect(after.every((f) => f.type === "output")).toBe(true);
    const replayed = after.map((f) => unb64(f.data)).join("");
    expect(replayed.length).toBeGreaterThanOrEqual(256 * 1024);
    expect(expected.endsWith(replayed)).toBe(true);
  });

  it("lets a writer type after the link was evicted", async () => {
    const id = await runningSession();
    const t = await terminal(id);
    await t.next((f) => f.type === "ready");
    await evictDurableObject(link(box.id));
    t.send({ type: "input", data: b64("after eviction\r") });
    await until(async () => daemon.typed(id) === "after eviction\r", "the input at the daemon");
  });

  it("closes a terminal when its token expires (4001), and when the person loses access (4004)", async () => {
    const id = await runningSession();
    const shortLived = await accessTokenUntil(w.member.id, Math.floor(Date.now() / 1000) + 2);
    const expiring = await terminal(id, shortLived);
    await expiring.next((f) => f.type === "ready");
    // Closed at the expiry by the link's alarm, without waiting for a frame.
    expect((await expiring.closed).code).toBe(4001);

    const leaving = await createUser(w.admin, "member");
    await addMember(w.admin, w.project.id, leaving.id);
    const watching = await terminal(id, leaving.token);
    await watching.next((f) => f.type === "ready");
    expect((await call(`/api/v1/projects/${w.project.id}/members/${leaving.id}`, { method: "DELETE", token: w.admin })).status).toBeLessThan(300);
    expect((await watching.closed).code).toBe(4004);
  });

  it("tells viewers when the session ends, and refuses input then", async () => {
    const id = await runningSession();
    const t = await terminal(id);
    await t.next((f) => f.type === "ready");
    await expectOk(call(`${S()}/${id}`, { method: "DELETE", token: w.member.token }));
    expect(await t.next((f) => f.type === "status")).toEqual({ type: "status", status: "closed" });
    t.send({ type: "input", data: b64("too late\r") });
    expect(await t.next((f) => f.type === "error")).toMatchObject({ code: "SESSION_CLOSED", data: b64("too late\r") });
    // A refused resize has no input to hand back.
    t.send({ type: "resize", cols: 80, rows: 24 });
    expect(await t.next((f) => f.type === "error" && f.code === "SESSION_CLOSED" && !("data" in f))).toBeTruthy();
  });

  it("relays a scrollback capture and screens from the daemon", async () => {
    const id = await runningSession();
    const t = await terminal(id);
    await t.next((f) => f.type === "ready");
    t.send({ type: "capture" });
    expect(await daemon.socket.next((f) => f.type === "capture_scrollback")).toEqual({ type: "capture_scrollback", session_id: id });
    daemon.send({ type: "scrollback_captured", session_id: id, lines: ["$ make", "ok"] });
    expect(await t.next((f) => f.type === "scrollback")).toEqual({ type: "scrollback", lines: ["$ make", "ok"] });
    daemon.send({ type: "session_screen", session_id: id, lines: ["top line"] });
    expect(await t.next((f) => f.type === "screen")).toEqual({ type: "screen", lines: ["top line"] });
  });
});

describe("typing after access changes", () => {
  /** A member of the world's project (and of `also`), with a running session of their own on `host` and its terminal open. */
  async function typist(host: { id: string }, hostDaemon: FakeDaemon, also: string[] = []) {
    const person = await createUser(w.admin, "member");
    for (const projectId of [w.project.id, ...also]) await addMember(w.admin, projectId, person.id);
    const { json } = await expectOk(call(S(), { token: person.token, body: { server_id: host.id } }), 201);
    await until(async () => (await call(`${S()}/${json.id}`, { token: person.token })).json.status === "running", "running");
    const t = await terminal(json.id, person.token);
    expect(await t.next((f) => f.type === "ready")).toMatchObject({ writer: true });
    t.send({ type: "input", data: b64("before\r") });
    await until(async () => hostDaemon.typed(json.id) === "before\r", "the first input at the daemon");
    return { person, sessionId: json.id as string, t };
  }

  it("refuses input from a member who left another project the server serves; the terminal stays open to watch", async () => {
    const other = await createProject(w.admin, `Also served ${crypto.randomUUID().slice(0, 4)}`);
    const host = await registerAgent(w.admin, `two-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [w.project.id, other.id] });
    const hostDaemon = await fakeDaemon(host.apiKey);
    const { person, sessionId, t } = await typist(host, hostDaemon, [other.id]);
    await expectOk(call(`/api/v1/projects/${other.id}/members/${person.id}`, { method: "DELETE", token: w.admin }));
    // Typing reaches every project the server serves, and the person is no longer in all of them. The link was told
    // before the answer came back, so the very next keystroke is refused, well within the last check's second.
    t.send({ type: "input", data: b64("after\r") });
    expect(await t.next((f) => f.type === "error")).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining("only watch") });
    await new Promise((r) => setTimeout(r, 200));
    expect(hostDaemon.typed(sessionId)).toBe("before\r");
    hostDaemon.output(sessionId, "still watching");
    await until(async () => screen(t).includes("still watching"), "output after the change");
    hostDaemon.socket.ws.close(1000, "done");
  });

  it("checks a writer's access in D1 again before it types, even when nothing tells the link of a change", async () => {
    // Changes written straight to D1 reach no link: what a notice lost, or one that raced the terminal's opening, leaves.
    const demoted = await typist(box, daemon);
    const removed = await typist(box, daemon);
    await env.DB.prepare("UPDATE users SET role = 'viewer' WHERE id = ?1").bind(demoted.person.id).run();
    await env.DB.prepare("DELETE FROM project_members WHERE user_id = ?1").bind(removed.person.id).run();
    await new Promise((r) => setTimeout(r, ACCESS_CHECK_TTL_MS + 100));
    demoted.t.send({ type: "input", data: b64("as a viewer\r") });
    expect(await demoted.t.next((f) => f.type === "error")).toMatchObject({ code: "FORBIDDEN", message: expect.stringContaining("only watch") });
    removed.t.send({ type: "input", data: b64("as nobody\r") });
    expect((await removed.t.closed).code).toBe(4004);
    await new Promise((r) => setTimeout(r, 200));
    expect([daemon.typed(demoted.sessionId), daemon.typed(removed.sessionId)]).toEqual(["before\r", "before\r"]);
  });

  it("limits a writer's input frames a second, in order, and lets it type again after", async () => {
    const { sessionId, t } = await typist(box, daemon);
    const flood = Array.from({ length: 3 * TERMINAL_INPUTS_PER_SECOND }, (_, i) => `${i},`);
    for (const key of flood) t.send({ type: "input", data: b64(key) });
    await until(async () => t.frames.filter((f) => f.type === "error" && f.code === "RATE_LIMITED").length > 0, "the flood limited");
    await new Promise((r) => setTimeout(r, 300));
    const typed = daemon.typed(sessionId).slice("before\r".length);
    const keys = typed.split(",").filter(Boolean).map(Number);
    // What got through is a prefix of what was sent, in order, and no more than the limit allows.
    expect(keys).toEqual(keys.map((_, i) => i));
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.length).toBeLessThanOrEqual(TERMINAL_INPUTS_PER_SECOND);
    const refused = t.frames.filter((f) => f.type === "error" && f.code === "RATE_LIMITED");
    expect(refused.length).toBe(flood.length - keys.length);
    // Each refusal hands back the input it refused, so nothing typed is lost unnoticed: what got through and what was refused are all that was sent.
    expect(refused.map((f) => unb64(f.data))).toEqual(flood.slice(keys.length));
    await new Promise((r) => setTimeout(r, 1000));
    t.send({ type: "input", data: b64("again\r") });
    await until(async () => daemon.typed(sessionId).endsWith("again\r"), "input after the limit");
  });
});

describe("the daemon coming back", () => {
  it("matches its recovered sessions back: alive ones by id, orphaned tmux sessions by name (session_recovered_ack)", async () => {
    const host = await machine(`machine-${crypto.randomUUID().slice(0, 6)}`);
    const first = await fakeDaemon(host.apiKey);
    const start = (name: string) => expectOk(call(S(), { token: w.member.token, body: { server_id: host.id, name } }), 201);
    const alive = (await start("alive")).json.id;
    const orphan = (await start("orphan")).json.id;
    await until(
      async () =>
        (await call(`${S()}?status=open`, { token: w.member.token })).json.sessions.filter((s: any) => [alive, orphan].includes(s.id) && s.status === "running")
          .length === 2,
    );
    first.socket.ws.close(1000, "daemon restart");
    await first.socket.closed;

    const again = await fakeDaemon(host.apiKey);
    // report_alive_sessions: a session it still tracks, then a tmux session it found without knowing its id.
    again.send({ type: "session_started", session_id: alive, pid: 5151, recovered: true, tmux_name: `orc-${alive.slice(0, 12)}`, working_dir: "/srv" });
    again.send({ type: "session_recovered", tmux_name: `orc-${orphan.slice(0, 12)}`, pid: 6161, working_dir: "/srv" });
    expect(await again.socket.next((f) => f.type === "session_recovered_ack")).toEqual({
      type: "session_recovered_ack",
      tmux_name: `orc-${orphan.slice(0, 12)}`,
      session_id: orphan,
    });
    await until(async () => (await call(`${S()}/${orphan}`, { token: w.member.token })).json.pid === 6161, "the orphan's new pid");
    await until(async () => (await call(`${S()}/${alive}`, { token: w.member.token })).json.pid === 5151, "the alive session's new pid");
    // An unknown tmux session is left alone.
    again.send({ type: "session_recovered", tmux_name: "orc-000000000000", pid: 1, working_dir: "/" });
    await new Promise((r) => setTimeout(r, 300));
    expect(again.socket.frames.filter((f) => f.type === "session_recovered_ack" || f.type === "session_kill")).toHaveLength(1);
  });

  it("recovers a session the daemon lost before it reported it started, and hands it what it missed after the ack", async () => {
    const host = await machine(`lost-${crypto.randomUUID().slice(0, 6)}`);
    const first = await fakeDaemon(host.apiKey, { start: false });
    const { json } = await expectOk(call(S(), { token: w.member.token, body: { server_id: host.id, name: `lost-${crypto.randomUUID().slice(0, 4)}` } }), 201);
    await first.socket.next((f) => f.type === "session_start");
    first.socket.ws.close(1000, "crashed before reporting");
    await first.socket.closed;
    // A task given to the session while the daemon is away is held for it.
    const task = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "For the lost one", project_id: w.project.id }), 201);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${task.json.id}/assign`, { session_id: json.id }));

    const back = await fakeDaemon(host.apiKey, { start: false });
    const tmuxName = `orc-${json.id.slice(0, 12)}`;
    back.send({ type: "session_recovered", tmux_name: tmuxName, pid: 999, working_dir: "/srv" });
    await back.socket.next((f) => f.type === "task_assigned");
    const ack = back.socket.frames.findIndex((f) => f.type === "session_recovered_ack");
    const assigned = back.socket.frames.findIndex((f) => f.type === "task_assigned");
    expect(back.socket.frames[ack]).toEqual({ type: "session_recovered_ack", tmux_name: tmuxName, session_id: json.id });
    expect(ack).toBeLessThan(assigned);
    expect(back.socket.frames[assigned]).toMatchObject({ session_id: json.id, task_id: task.json.id });
    await until(async () => (await call(`${S()}/${json.id}`, { token: w.member.token })).json.status === "running", "running again");
  });

  it("stops an agent whose session was closed while the daemon was away", async () => {
    const host = await machine(`stale-${crypto.randomUUID().slice(0, 6)}`);
    const first = await fakeDaemon(host.apiKey);
    const { json } = await expectOk(call(S(), { token: w.member.token, body: { server_id: host.id } }), 201);
    await until(async () => (await call(`${S()}/${json.id}`, { token: w.member.token })).json.status === "running", "running");
    first.socket.ws.close(1000, "away");
    await first.socket.closed;
    await expectOk(call(`${S()}/${json.id}`, { method: "DELETE", token: w.member.token }));
    // The daemon restarted and finds the tmux session without knowing its id.
    const back = await fakeDaemon(host.apiKey);
    const tmuxName = `orc-${json.id.slice(0, 12)}`;
    back.send({ type: "session_recovered", tmux_name: tmuxName, pid: 1000, working_dir: "/srv" });
    expect(await back.socket.next((f) => f.type === "session_kill")).toEqual({ type: "session_kill", session_id: tmuxName });
    expect(back.socket.frames.some((f) => f.type === "session_recovered_ack")).toBe(false);
  });

  it("gets a close a person made while it was away, once", async () => {
    const host = await machine(`closer-${crypto.randomUUID().slice(0, 6)}`);
    const first = await fakeDaemon(host.apiKey);
    const { json } = await expectOk(call(S(), { token: w.member.token, body: { server_id: host.id } }), 201);
    await first.socket.next((f) => f.type === "session_start");
    first.socket.ws.close(1000, "away");
    await first.socket.closed;
    await expectOk(call(`${S()}/${json.id}`, { method: "DELETE", token: w.member.token }));
    const back = await fakeDaemon(host.apiKey);
    // It reports the session it still runs; the close it missed follows.
    back.send({ type: "session_started", session_id: json.id, pid: 4242, recovered: true, tmux_name: `orc-${json.id.slice(0, 12)}`, working_dir: "/srv" });
    expect(await back.socket.next((f) => f.type === "session_close")).toEqual({ type: "session_close", session_id: json.id });
    back.socket.ws.close(1000, "again");
    const later = await fakeDaemon(host.apiKey);
    later.send({ type: "ping" });
    await later.socket.next((f) => f.type === "pong");
    expect(later.socket.frames.some((f) => f.type === "session_close")).toBe(false);
  });

  it("answers frames about another server's sessions with an error, and carries on", async () => {
    const id = await runningSession();
    const stranger = await fakeDaemon(w.worker.apiKey);
    stranger.send({ type: "session_output", session_id: id, data: b64("not mine") });
    expect(await stranger.socket.next((f) => f.type === "error")).toMatchObject({ code: "UNKNOWN_SESSION" });
    stranger.send({ type: "session_closed", session_id: id, exit_code: 1 });
    expect(await stranger.socket.next((f) => f.type === "error")).toMatchObject({ code: "UNKNOWN_SESSION" });
    stranger.send({ type: "session_output", session_id: id });
    expect(await stranger.socket.next((f) => f.type === "error")).toMatchObject({ code: "INVALID_MESSAGE" });
    stranger.send({ type: "ping" });
    await stranger.socket.next((f) => f.type === "pong");
    expect((await call(`${S()}/${id}`, { token: w.member.token })).json.status).toBe("running");
    stranger.socket.ws.close(1000, "done");
  });
});

describe("what a task's sessions are told", () => {
  /** A task created by the orchestrator's session and given to a session on `box`. */
  async function delegated(title: string) {
    const target = await runningSession({ name: `w-${crypto.randomUUID().slice(0, 6)}` });
    const targetName = (await call(`${S()}/${target}`, { token: w.member.token })).json.name;
    const orchestrator = await fakeDaemon(w.orchestrator.apiKey);
    const created = await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title, project_id: w.project.id, session_id: w.orchestratorSession }), 201);
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${created.json.id}/assign`, { session_name: targetName }));
    const assigned = await daemon.socket.next((f) => f.type === "task_assigned" && f.task_id === created.json.id);
    expect(assigned).toMatchObject({ session_id: target, title, from_session_name: "orchestrator" });
    return { id: created.json.id as string, target, targetName, orchestrator };
  }

  it("tells the session that created a task how it ended", async () => {
    const { id, orchestrator } = await delegated("Build it");
    await expectOk(cli(box.apiKey, "POST", `${T}/${id}/start`, {}));
    await expectOk(cli(box.apiKey, "POST", `${T}/${id}/complete`, { result: { summary: "built" } }));
    expect(await orchestrator.socket.next((f) => f.type === "task_status_update")).toEqual({
      type: "task_status_update",
      session_id: w.orchestratorSession,
      task_id: id,
      title: "Build it",
      status: "completed",
      status_label: "completed",
      summary: "built",
      traceparent: aTraceparent(),
    });
    orchestrator.socket.ws.close(1000, "done");
  });

  it("tells the creator a person cancelled its task as a one-line status update (no banner typed into it), and the worker that it is over", async () => {
    const { id, target, orchestrator } = await delegated("Not needed");
    await expectOk(call(`/api/v1/tasks/${id}`, { method: "DELETE", token: w.member.token, body: { reason: "duplicate of\r\nthe other one" } }));
    expect(await orchestrator.socket.next((f) => f.task_id === id)).toEqual({
      type: "task_status_update",
      session_id: w.orchestratorSession,
      task_id: id,
      title: "Not needed",
      status: "cancelled",
      status_label: "cancelled",
      summary: "duplicate of the other one",
      traceparent: aTraceparent(),
    });
    expect(orchestrator.shown(w.orchestratorSession).filter((s) => s.via !== "inbox" && s.taskId === id)).toEqual([
      {
        via: "typed",
        text: `Task 'Not needed' (#${id.slice(0, 8)}) cancelled. Summary: duplicate of the other one Run \`orchestratia task list\` to see current status.`,
        taskId: id,
      },
    ]);
    expect(orchestrator.socket.frames.some((f) => f.type === "task_rejected")).toBe(false);
    expect(await daemon.socket.next((f) => f.type === "task_status_update" && f.task_id === id)).toMatchObject({
      session_id: target,
      status: "cancelled",
      summary: "duplicate of the other one",
    });
    orchestrator.socket.ws.close(1000, "done");
  });

  it("tells a session mentioned in a note (note_for_session)", async () => {
    const { id, targetName, orchestrator } = await delegated("Mentions");
    const reviewer = await runningSession({ name: `rev-${crypto.randomUUID().slice(0, 6)}` });
    const reviewerName = (await call(`${S()}/${reviewer}`, { token: w.member.token })).json.name;
    await expectOk(
      call(`/api/v1/tasks/${id}/notes`, { token: w.member.token, body: { content: `@${reviewerName} please review what @${targetName} did.` } }),
      201,
    );
    expect(await daemon.socket.next((f) => f.type === "note_for_session")).toEqual({
      type: "note_for_session",
      target_session_id: reviewer,
      task_id: id,
      content: `@${reviewerName} please review what @${targetName} did.`,
      author: w.member.email,
      mentioned_via: "mention",
      traceparent: aTraceparent(),
    });
    // The session working on the task gets the note as its own task_note, not twice.
    expect(daemon.socket.frames.filter((f) => f.type === "task_note" && f.task_id === id)).toHaveLength(1);
    expect(daemon.socket.frames.filter((f) => f.type === "note_for_session" && f.task_id === id)).toHaveLength(1);
    orchestrator.socket.ws.close(1000, "done");
  });
});
