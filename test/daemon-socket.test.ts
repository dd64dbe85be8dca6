/**
 * The official daemon's socket, driven by a fake daemon that sends exactly
 * what orchestratia_agent/hub.py sends: `json.dumps` frames (", " and ": "
 * separators), the auth frame first, and reads `auth_ok` or takes anything
 * else as a refusal.
 */
import { describe, expect, it } from "vitest";
import { aTraceparent, call, daemonRegistration, expectProblem, registrationToken } from "./helpers";
import { connectDaemon, pythonJson } from "./fake-daemon";
import { openSocket } from "./sockets";
import { createWorld, type World } from "./task-world";
import { beforeAll } from "vitest";

let w: World;
beforeAll(async () => {
  w = await createWorld("Daemon channel");
});

describe("the daemon's handshake", () => {
  it("answers the daemon's auth frame with auth_ok, and keeps the socket", async () => {
    const daemon = await connectDaemon(w.worker.apiKey);
    expect(await daemon.next()).toEqual({ type: "auth_ok", server_id: w.worker.id });
    daemon.send(pythonJson({ type: "ping" }));
    expect(await daemon.next()).toEqual({ type: "pong" });
  });

  it("refuses a wrong key, or a first frame that is not auth, with a frame the daemon logs and a close", async () => {
    const wrong = await connectDaemon("orc_not-a-key");
    expect(await wrong.next()).toMatchObject({ type: "auth_error", detail: "The API key is invalid or has been revoked" });
    expect((await wrong.closed).code).toBe(4003);
    const silent = await openSocket("/ws/server");
    silent.send(pythonJson({ type: "session_started", session_id: "x" }));
    expect(await silent.next()).toMatchObject({ type: "auth_error" });
    expect((await silent.closed).code).toBe(4003);
  });

  it("is a WebSocket endpoint: a plain request gets 426", async () => {
    expectProblem(await call("/ws/server"), 426, "UPGRADE_REQUIRED");
  });
});

describe("one live socket per server", () => {
  it("lets a new connection replace the old one", async () => {
    const first = await connectDaemon(w.orchestrator.apiKey);
    await first.next((f) => f.type === "auth_ok");
    const second = await connectDaemon(w.orchestrator.apiKey);
    await second.next((f) => f.type === "auth_ok");
    expect((await first.closed).code).toBe(4009);
    second.send(pythonJson({ type: "ping" }));
    expect(await second.next((f) => f.type === "pong")).toEqual({ type: "pong" });
  });

  it("closes at once when the server's key is revoked, and refuses that key afterwards", async () => {
    const token = await registrationToken(w.admin);
    const reg = await call("/api/v1/servers/register", { body: daemonRegistration("revoked-daemon", token) });
    const daemon = await connectDaemon(reg.json.api_key);
    await daemon.next((f) => f.type === "auth_ok");
    expect((await call(`/api/v1/servers/${reg.json.id}/revoke`, { method: "POST", token: w.admin })).status).toBe(200);
    expect((await daemon.closed).code).toBe(4004);
    const again = await connectDaemon(reg.json.api_key);
    expect(await again.next()).toMatchObject({ type: "auth_error" });
  });

  it("closes the old key's socket when the daemon registers again, and takes the new key", async () => {
    const name = `rekeyed-daemon-${crypto.randomUUID().slice(0, 6)}`;
    const first = await call("/api/v1/servers/register", { body: daemonRegistration(name, await registrationToken(w.admin)) });
    const daemon = await connectDaemon(first.json.api_key);
    await daemon.next((f) => f.type === "auth_ok");
    const second = await call("/api/v1/servers/register", { body: daemonRegistration(name, await registrationToken(w.admin)) });
    expect(second.json.id).toBe(first.json.id);
    expect((await daemon.closed).code).toBe(4004);
    const renewed = await connectDaemon(second.json.api_key);
    expect(await renewed.next()).toEqual({ type: "auth_ok", server_id: first.json.id });
  });
});

describe("frames the link cannot use", () => {
  it("answers malformed frames with an error, ignores unknown kinds, and keeps the socket", async () => {
    const daemon = await connectDaemon(w.worker.apiKey);
    await daemon.next((f) => f.type === "auth_ok");
    daemon.send("not json");
    expect(await daemon.next()).toMatchObject({ type: "error", code: "INVALID_MESSAGE" });
    daemon.send(pythonJson({ no_type: true }));
    expect(await daemon.next()).toMatchObject({ type: "error", code: "INVALID_MESSAGE" });
    daemon.send(pythonJson({ type: "tunnel_open", port: 22 }));
    daemon.send(pythonJson({ type: "ping" }));
    expect(await daemon.next()).toEqual({ type: "pong" });
  });

  it("drops a frame over 1 MiB with an error frame, and keeps the socket", async () => {
    const daemon = await connectDaemon(w.worker.apiKey);
    await daemon.next((f) => f.type === "auth_ok");
    daemon.send(pythonJson({ type: "session_output", session_id: "s", data: "A".repeat((1 << 20) + 10) }));
    expect(await daemon.next()).toEqual({ type: "error", code: "FRAME_TOO_LARGE", detail: `frames are at most ${1 << 20} bytes; session_output was dropped` });
    daemon.send(pythonJson({ type: "ping" }));
    expect(await daemon.next()).toEqual({ type: "pong" });
  });

  it("closes a socket that sends no key within 10 s", async () => {
    const daemon = await openSocket("/ws/server");
    const opened = Date.now();
    expect((await daemon.closed).code).toBe(4003);
    expect(Date.now() - opened).toBeGreaterThanOrEqual(9_900);
  }, 20_000);
});

describe("task triggers", () => {
  const T = "/api/v1/server/tasks";
  const assignToWorkerSession = async (title: string, headers: Record<string, string> = {}) => {
    const created = await call(T, { apiKey: w.orchestrator.apiKey, headers, body: { title, project_id: w.project.id, priority: "high", session_id: w.orchestratorSession } });
    expect(created.status, created.text).toBe(201);
    const assigned = await call(`${T}/${created.json.id}/assign`, { apiKey: w.orchestrator.apiKey, body: { session_name: "worker" } });
    expect(assigned.status, assigned.text).toBe(200);
    return created.json.id as string;
  };

  it("pushes a task assigned to a session to that server's daemon, with the fields hub.py reads and the task's trace", async () => {
    const daemon = await connectDaemon(w.worker.apiKey);
    await daemon.next((f) => f.type === "auth_ok");
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const taskId = await assignToWorkerSession("Triggered", { traceparent });
    expect(await daemon.next((f) => f.type === "task_assigned")).toEqual({
      type: "task_assigned",
      session_id: w.workerSession,
      task_id: taskId,
      title: "Triggered",
      priority: "high",
      require_plan: false,
      pending_approval: false,
      from_session_name: "orchestrator",
      traceparent,
    });
    daemon.ws.close(1000, "done");
  });

  it("keeps what a daemon missed while away and sends it once when it is back", async () => {
    const daemon = await connectDaemon(w.worker.apiKey);
    await daemon.next((f) => f.type === "auth_ok");
    daemon.ws.close(1000, "restarting");
    await daemon.closed;
    const missed = [await assignToWorkerSession("Missed one"), await assignToWorkerSession("Missed two")];

    const back = await connectDaemon(w.worker.apiKey);
    await back.next((f) => f.type === "auth_ok");
    // Held until the daemon reports the session alive again (report_alive_sessions), so it knows the session by then.
    await new Promise((r) => setTimeout(r, 200));
    expect(back.frames.filter((f) => f.type === "task_assigned")).toHaveLength(0);
    back.send(pythonJson({ type: "session_started", session_id: w.workerSession, pid: 77, recovered: true, tmux_name: "", working_dir: "/srv" }));
    const pushed = await back.collect(2, (f) => f.type === "task_assigned");
    expect(pushed.map((f) => f.task_id)).toEqual(missed);
    back.ws.close(1000, "restarting again");
    await back.closed;

    const again = await connectDaemon(w.worker.apiKey);
    expect(await again.next()).toMatchObject({ type: "auth_ok" });
    again.send(pythonJson({ type: "ping" }));
    expect(await again.next()).toEqual({ type: "pong" });
  });

  it("pushes plan approvals and revisions, answers, notes and updates to the session the task is given to", async () => {
    const daemon = await connectDaemon(w.worker.apiKey);
    await daemon.next((f) => f.type === "auth_ok");
    const created = await call(T, { apiKey: w.orchestrator.apiKey, body: { title: "Steered", project_id: w.project.id, require_plan: true } });
    const id = created.json.id as string;
    await call(`${T}/${id}/assign`, { apiKey: w.orchestrator.apiKey, body: { session_name: "worker" } });
    expect(await daemon.next((f) => f.type === "task_assigned")).toMatchObject({ task_id: id, require_plan: true });
    const base = { session_id: w.workerSession, task_id: id, traceparent: aTraceparent() };

    await call(`${T}/${id}/plan`, { apiKey: w.worker.apiKey, body: { plan: "first try" } });
    await call(`/api/v1/tasks/${id}/revise-plan`, { token: w.member.token, body: { feedback: "smaller steps" } });
    expect(await daemon.next((f) => f.type === "plan_revision")).toEqual({ type: "plan_revision", ...base, feedback: "smaller steps" });
    await call(`${T}/${id}/plan`, { apiKey: w.worker.apiKey, body: { plan: "second try" } });
    await call(`/api/v1/tasks/${id}/approve-plan`, { token: w.member.token, body: {} });
    expect(await daemon.next((f) => f.type === "plan_approved")).toEqual({ type: "plan_approved", ...base });

    const help = await call(`${T}/${id}/help`, { apiKey: w.worker.apiKey, body: { question: "Which region?", intervention_type: "question" } });
    await call(`/api/v1/interventions/${help.json.intervention_id}/respond`, { token: w.member.token, body: { response: "Europe" } });
    expect(await daemon.next((f) => f.type === "intervention_response")).toEqual({ type: "intervention_response", ...base, response: "Europe" });

    await call(`${T}/${id}/notes`, { apiKey: w.worker.apiKey, body: { content: "my own progress note" } });
    await call(`/api/v1/tasks/${id}/notes`, { token: w.member.token, body: { content: "Use the staging database", urgent: true } });
    expect(await daemon.next((f) => f.type === "task_note")).toEqual({ type: "task_note", ...base, content: "Use the staging database", urgent: true, author: w.member.email });
    await call(`/api/v1/tasks/${id}`, { method: "PUT", token: w.member.token, body: { priority: "critical" } });
    expect(await daemon.next((f) => f.type === "task_updated")).toEqual({ type: "task_updated", ...base });
    // The agent's own note was not pushed back to it.
    expect(daemon.frames.filter((f) => f.type === "task_note")).toHaveLength(1);
  });
});
