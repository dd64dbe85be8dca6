/** What an outside probe of the hub found, each pinned by a test that fails without its fix. */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { conformingFetch } from "./api-conformance";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../src/index";
import { IDEMPOTENCY_LEASE_MS, requestFingerprint } from "../src/middleware/idempotency";
import { AUTH_GRACE_MS } from "../src/room/agent-socket";
import { accessTokenUntil, BASE, call, createUser, daemonRegistration, expectProblem, registerAgent, registrationToken } from "./helpers";
import { dashboard, isEvent, openSocket } from "./sockets";
import { cli, createWorld, expectOk, newTask, T, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Hardening");
});

const register = (body: Record<string, unknown>, headers: Record<string, string> = {}) => call("/api/v1/servers/register", { body, headers });

describe("re-keying a server by registering under its name", () => {
  it("is refused without proof that the caller is that server, and the victim keeps working", async () => {
    const victim = await registerAgent(w.admin, `victim-${crypto.randomUUID().slice(0, 6)}`);
    const { machine_id: _, ...noMachine } = daemonRegistration(victim.name, await registrationToken(w.admin));
    const takeover = await register(noMachine);
    expectProblem(takeover, 409, "SERVER_NAME_TAKEN");
    expect(takeover.json.detail).toMatch(/same machine_id|API key|admin/);
    const blank = await register({ ...daemonRegistration(victim.name, await registrationToken(w.admin)), machine_id: "" });
    expectProblem(blank, 409, "SERVER_NAME_TAKEN");
    expect((await call("/api/v1/server/servers", { apiKey: victim.apiKey })).status).toBe(200);
  });

  it("re-keys for the daemon reinstalled on the same machine, for the server's own key, and for an admin", async () => {
    const server = await registerAgent(w.admin, `rekeyed-${crypto.randomUUID().slice(0, 6)}`);
    // The official daemon after a reinstall: a new token, the same /etc/machine-id.
    const reinstalled = await expectOk(register(daemonRegistration(server.name, await registrationToken(w.admin))), 201);
    expect(reinstalled.json.id).toBe(server.id);
    expect((await call("/api/v1/server/servers", { apiKey: server.apiKey })).status).toBe(401);

    const { machine_id: _, ...noMachine } = daemonRegistration(server.name, await registrationToken(w.admin));
    const withKey = await expectOk(register(noMachine, { "X-API-Key": reinstalled.json.api_key }), 201);
    expect(withKey.json.id).toBe(server.id);
    expectProblem(await register({ ...noMachine, registration_token: await registrationToken(w.admin) }, { "X-API-Key": reinstalled.json.api_key }), 409, "SERVER_NAME_TAKEN");

    const byAdmin = await expectOk(register({ ...noMachine, registration_token: await registrationToken(w.admin) }, { Authorization: `Bearer ${w.admin}` }), 201);
    expect(byAdmin.json.id).toBe(server.id);
    expect((await call("/api/v1/server/servers", { apiKey: byAdmin.json.api_key })).status).toBe(200);
  });

  it("does not count a member's token as an admin's", async () => {
    const server = await registerAgent(w.admin, `guarded-${crypto.randomUUID().slice(0, 6)}`);
    const { machine_id: _, ...noMachine } = daemonRegistration(server.name, await registrationToken(w.admin));
    expectProblem(await register(noMachine, { Authorization: `Bearer ${w.member.token}` }), 409, "SERVER_NAME_TAKEN");
    expectProblem(await register(noMachine, { Authorization: "Bearer not-a-jwt" }), 401, "INVALID_TOKEN");
  });
});

describe("an Idempotency-Key whose request was cut off after claiming it", () => {
  it("is in flight during its lease, then taken over by a retry that runs once", async () => {
    const me = (await call("/api/v1/auth/me", { token: w.admin })).json;
    const raw = JSON.stringify({ name: "Cut off" });
    const key = "cut-off-after-claim";
    // What a request leaves behind when it dies between its claim and its commit.
    const claimedAt = (ago: number) => new Date(Date.now() - ago).toISOString();
    await env.DB.prepare("INSERT INTO idempotency_keys (caller, key, request_hash, created_at) VALUES (?1, ?2, ?3, ?4)")
      .bind(`user:${me.id}`, key, await requestFingerprint("POST", "/api/v1/projects", raw), claimedAt(1000))
      .run();
    const retry = () => call("/api/v1/projects", { token: w.admin, raw, headers: { "Idempotency-Key": key, "Content-Type": "application/json" } });
    expectProblem(await retry(), 409, "IDEMPOTENCY_KEY_IN_FLIGHT");

    await env.DB.prepare("UPDATE idempotency_keys SET created_at = ?1 WHERE key = ?2").bind(claimedAt(IDEMPOTENCY_LEASE_MS + 1000), key).run();
    const results = await Promise.all(Array.from({ length: 12 }, retry));
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 201)) expectProblem(r, 409, "IDEMPOTENCY_KEY_IN_FLIGHT");
    const replay = await retry();
    expect(replay.status).toBe(201);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replay.json.id).toBe(created[0]!.json.id);
    const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM projects WHERE name = 'Cut off'").first<{ n: number }>())!;
    expect(n).toBe(1);
  });

  it("keeps the lease well under a minute", () => {
    expect(IDEMPOTENCY_LEASE_MS).toBeGreaterThanOrEqual(10_000);
    expect(IDEMPOTENCY_LEASE_MS).toBeLessThanOrEqual(30_000);
  });
});

describe("a dashboard whose token expires", () => {
  it("receives no event committed after the expiry, under load, and is closed with 4001", async () => {
    // Past the first second, in which a socket opened without `since` waits for a resume before it goes live.
    const expiresAt = Math.ceil(Date.now() / 1000) + 3;
    const token = await accessTokenUntil(w.member.id, expiresAt);
    const socket = await dashboard(w.project.id, token);
    const id = await newTask(w);
    // Notes from four agents at once until well past the expiry: the room is never idle.
    const stopAt = expiresAt * 1000 + 1500;
    await Promise.all(
      Array.from({ length: 4 }, async (_, n) => {
        for (let i = 0; Date.now() < stopAt; i++) await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/notes`, { content: `note ${n}.${i}` }), 201);
      }),
    );
    const closed = await socket.closed;
    expect(closed.code).toBe(4001);
    const received = socket.frames.filter(isEvent);
    expect(received.length).toBeGreaterThan(0);
    for (const e of received) expect(Date.parse(e.created_at)).toBeLessThan(expiresAt * 1000);
    const after = await env.DB.prepare("SELECT count(*) AS n FROM events WHERE project_id = ?1 AND created_at >= ?2")
      .bind(w.project.id, new Date(expiresAt * 1000).toISOString())
      .first<{ n: number }>();
    expect(after!.n).toBeGreaterThan(10);
  });
});

describe("agent sockets", () => {
  it("closes one that never authenticates after the 10 s grace, even while the room is busy", async () => {
    const socket = await openSocket(`/api/v1/projects/${w.project.id}/agent-ws`);
    const opened = Date.now();
    const id = await newTask(w);
    let busy = true;
    const load = (async () => {
      while (busy && Date.now() - opened < 3 * AUTH_GRACE_MS) await cli(w.worker.apiKey, "POST", `${T}/${id}/notes`, { content: "busy" });
    })();
    const closed = await socket.closed;
    const after = Date.now() - opened;
    busy = false;
    await load;
    expect(closed.code).toBe(4003);
    expect(after).toBeGreaterThanOrEqual(AUTH_GRACE_MS - 50);
    expect(after).toBeLessThan(AUTH_GRACE_MS + 1500);
  }, 40_000);

  it("refuses an upgrade for a project that does not exist", async () => {
    const res = await conformingFetch(new Request(`${BASE}/api/v1/projects/${crypto.randomUUID()}/agent-ws`, { headers: { Upgrade: "websocket" } }));
    expect(res.status).toBe(404);
    expect(res.webSocket).toBeNull();
  });
});

describe("resume positions", () => {
  it("refuses anything but a non-negative safe integer in a resume frame", async () => {
    await newTask(w);
    const socket = await dashboard(w.project.id, w.member.token);
    for (const since of [null, [], "1e3", "5", 1.5, -1, 2 ** 53, true, {}]) {
      socket.send({ type: "resume", since });
      const answer = await socket.next((f) => f.type === "error" || f.type === "resumed");
      expect(answer, JSON.stringify(since)).toMatchObject({ type: "error", code: "INVALID_REQUEST" });
    }
    expect(socket.frames.filter(isEvent)).toEqual([]);
    socket.send({ type: "resume", since: 0 });
    expect((await socket.next((f) => f.type === "resumed")).last_seq).toBeGreaterThan(0);
  });

  it("refuses anything but a non-negative safe integer in ?since=", async () => {
    for (const since of ["1e3", "9".repeat(400), "-1", "0x10", " 1", "9007199254740992"]) {
      const path = `/api/v1/projects/${w.project.id}/ws?since=${encodeURIComponent(since)}`;
      const res = await conformingFetch(new Request(BASE + path, { headers: { Upgrade: "websocket", "Sec-WebSocket-Protocol": `bearer, ${w.member.token}` } }));
      expect(res.status, since).toBe(422);
      expect((await res.json<{ errors: { path: string }[] }>()).errors[0]!.path).toBe("query.since");
      const events = await call(`/api/v1/projects/${w.project.id}/events?since=${encodeURIComponent(since)}`, { token: w.member.token });
      expectProblem(events, 422, "VALIDATION_FAILED");
    }
  });
});

describe("a request body that cannot be read", () => {
  const broken = () =>
    new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"title": "cut'));
        controller.error(new Error("Network connection lost."));
      },
    });

  it("is the client's fault: 400, not 500", async () => {
    const user = await createUser(w.admin, "member");
    for (const [path, headers] of [
      ["/api/v1/projects", { Authorization: `Bearer ${user.token}` }],
      ["/api/v1/projects", { Authorization: `Bearer ${user.token}`, "Idempotency-Key": "broken-body" }],
      [T, { "X-API-Key": w.worker.apiKey }],
      ["/api/v1/auth/login", {}],
    ] as const) {
      // Straight into the Worker's handler, so the stream's failure reaches it as a connection cut mid-body would.
      const ctx = createExecutionContext();
      const request = new Request(BASE + path, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: broken(), duplex: "half" } as RequestInit);
      const res = await worker.fetch(request, env, ctx);
      await waitOnExecutionContext(ctx);
      const problem = await res.json<{ code: string; detail: string }>();
      expect({ path, status: res.status, code: problem.code }).toEqual({ path, status: 400, code: "BODY_UNREADABLE" });
      expect(res.headers.get("Content-Type")).toBe("application/problem+json");
    }
  });
});
