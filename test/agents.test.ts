import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import {
  addMember,
  bootstrapAdmin,
  call,
  createProject,
  createUser,
  daemonRegistration,
  expectProblem,
  registerAgent,
  registrationToken,
} from "./helpers";

let admin: string;
let alpha: { id: string };
let beta: { id: string };

beforeAll(async () => {
  admin = await bootstrapAdmin();
  alpha = await createProject(admin, "Alpha");
  beta = await createProject(admin, "Beta");
});

const register = (name: string, token: string, extra: Record<string, unknown> = {}) =>
  call("/api/v1/servers/register", { body: { ...daemonRegistration(name, token), ...extra } });

describe("registration tokens", () => {
  it("embeds the hub URL as the official daemon reads it, and stores only a hash", async () => {
    const reply = await call("/api/v1/servers/tokens", { token: admin, body: { name: "laptop", max_uses: 2 } });
    expect(reply.status).toBe(201);
    const { token, expires_at, max_uses } = reply.json;
    expect(max_uses).toBe(2);
    expect(Date.parse(expires_at) - Date.now()).toBeGreaterThan(86_000_000);
    // The daemon: payload = token[7:]; url_b64 = payload.split(".", 1)[0]; pad; urlsafe_b64decode.
    const urlPart = token.slice(7).split(".")[0];
    const padded = urlPart + "=".repeat((4 - (urlPart.length % 4)) % 4);
    expect(atob(padded.replaceAll("-", "+").replaceAll("_", "/"))).toBe("https://hub.test");
    const stored = await env.DB.prepare("SELECT token_hash FROM registration_tokens WHERE id = ?1").bind(reply.json.id).first<{ token_hash: string }>();
    expect(stored!.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(await call("/api/v1/servers/tokens", { token: admin }))).not.toContain(token);
  });

  it("is for admins only, and checks the projects it names", async () => {
    const member = await createUser(admin, "member");
    expectProblem(await call("/api/v1/servers/tokens", { token: member.token, body: {} }), 403, "FORBIDDEN");
    const unknown = await call("/api/v1/servers/tokens", { token: admin, body: { project_ids: [crypto.randomUUID()] } });
    expectProblem(unknown, 422, "VALIDATION_FAILED");
    expect(unknown.json.errors[0].path).toBe("project_ids");
  });
});

describe("registration", () => {
  it("registers with exactly the daemon's body and answers id and api_key", async () => {
    const token = await registrationToken(admin);
    const reply = await register("dev-backend", token, { worker_ready: { claude_code: "ready" } });
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject({ id: expect.any(String), name: "dev-backend", api_key: expect.stringMatching(/^orc_/) });
    const row = await env.DB.prepare("SELECT api_key_hash, machine_id, mac_address FROM servers WHERE id = ?1").bind(reply.json.id).first<any>();
    expect(row.api_key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.api_key_hash).not.toContain(reply.json.api_key);
    expect(row).toMatchObject({ machine_id: "0123456789abcdef0123456789abcdef", mac_address: "aa:bb:cc:dd:ee:ff" });
  });

  it("refuses a used-up, expired, revoked, tampered or unknown token with a reason", async () => {
    const usedUp = await registrationToken(admin, { max_uses: 1 });
    expect((await register("once-1", usedUp)).status).toBe(201);
    const second = await register("once-2", usedUp);
    expectProblem(second, 401, "INVALID_REGISTRATION_TOKEN");
    expect(second.json.detail).toMatch(/used up/);

    const expiring = await call("/api/v1/servers/tokens", { token: admin, body: { expires_in_seconds: 60 } });
    await env.DB.prepare("UPDATE registration_tokens SET expires_at = ?1 WHERE id = ?2")
      .bind(new Date(Date.now() - 1000).toISOString(), expiring.json.id)
      .run();
    const expired = await register("late", expiring.json.token);
    expectProblem(expired, 401, "INVALID_REGISTRATION_TOKEN");
    expect(expired.json.detail).toMatch(/expired/);

    const revokedReply = await call("/api/v1/servers/tokens", { token: admin, body: {} });
    await call(`/api/v1/servers/tokens/${revokedReply.json.id}`, { method: "DELETE", token: admin });
    expect((await register("revoked", revokedReply.json.token)).json.detail).toMatch(/revoked/);

    const good = await registrationToken(admin);
    const tamperedSecret = good.slice(0, -2) + (good.endsWith("A") ? "BB" : "AA");
    expect((await register("tampered", tamperedSecret)).json.detail).toMatch(/not recognised/);
    const [, secret] = good.split(".");
    const otherHub = `orcreg_${btoa("https://evil.test").replace(/=+$/, "")}.${secret}`;
    expect((await register("tampered-hub", otherHub)).json.detail).toMatch(/not recognised/);
    expectProblem(await register("garbage", "hello"), 401, "INVALID_REGISTRATION_TOKEN");
    // None of the refused attempts spent the good token.
    expect((await register("tampered", good)).status).toBe(201);
  });

  it("never exceeds max_uses under concurrent registrations", async () => {
    const token = await registrationToken(admin, { max_uses: 3 });
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => register(`swarm-${i}`, token)));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(3);
    expect(replies.filter((r) => r.status === 401)).toHaveLength(9);
  });

  it("validates the body before spending the token", async () => {
    const token = await registrationToken(admin);
    const bad = await call("/api/v1/servers/register", { body: { ...daemonRegistration("x", token), hostname: 7, capabilities: { max_concurrent_tasks: 0 } } });
    expectProblem(bad, 422, "VALIDATION_FAILED");
    expect(bad.json.errors.map((e: { path: string }) => e.path).sort()).toEqual(["capabilities.max_concurrent_tasks", "hostname"]);
    expect((await register("x", token)).status).toBe(201);
  });

  it("refuses an agent that speaks no protocol version the hub speaks", async () => {
    const token = await registrationToken(admin);
    const reply = await register("future", token, { protocol_versions: ["orchestratia/v2"] });
    expectProblem(reply, 422, "INCOMPATIBLE_PROTOCOL");
    expect(reply.json.detail).toContain("orchestratia/v1");
    expect((await register("future", token, { protocol_versions: ["orchestratia/v2", "1.4.0"] })).status).toBe(201);
  });

  it("re-keys a server that registers again under its name", async () => {
    const first = await registerAgent(admin, "rekeyed");
    const second = await registerAgent(admin, "rekeyed");
    expect(second.id).toBe(first.id);
    expectProblem(await call("/api/v1/servers/heartbeat", { apiKey: first.apiKey, body: {} }), 401, "INVALID_API_KEY");
    expect((await call("/api/v1/servers/heartbeat", { apiKey: second.apiKey, body: {} })).status).toBe(200);
  });
});

describe("API keys and heartbeats", () => {
  it("accepts the key as X-API-Key or as a bearer token, and refuses a wrong one", async () => {
    const agent = await registerAgent(admin, "keyholder");
    expect((await call("/api/v1/server/servers", { apiKey: agent.apiKey })).status).toBe(200);
    expect((await call("/api/v1/server/servers", { token: agent.apiKey })).status).toBe(200);
    expectProblem(await call("/api/v1/server/servers", { apiKey: `${agent.apiKey}x` }), 401, "INVALID_API_KEY");
    expectProblem(await call("/api/v1/server/servers"), 401, "UNAUTHORIZED");
    // A person's JWT is not an agent credential.
    expectProblem(await call("/api/v1/server/servers", { token: admin }), 401, "UNAUTHORIZED");
  });

  it("refuses a revoked key", async () => {
    const agent = await registerAgent(admin, "to-revoke");
    const revoked = await call(`/api/v1/servers/${agent.id}/revoke`, { method: "POST", token: admin });
    expect(revoked.json).toMatchObject({ id: agent.id, revoked: true });
    expectProblem(await call("/api/v1/servers/heartbeat", { apiKey: agent.apiKey, body: {} }), 401, "INVALID_API_KEY");
  });

  it("records heartbeats: capabilities, system info, and online within 90 seconds", async () => {
    const agent = await registerAgent(admin, "beating");
    const capabilities = { $schema: "orchestratia/capabilities/v1", languages: ["rust"], max_concurrent_tasks: 2 };
    const beat = await call("/api/v1/servers/heartbeat", { apiKey: agent.apiKey, body: { system_info: { cpu_percent: 12.5 }, capabilities } });
    expect(beat.json).toEqual({ status: "ok", server_time: expect.any(String) });
    const listed = (await call("/api/v1/servers", { token: admin })).json.servers.find((s: { id: string }) => s.id === agent.id);
    expect(listed).toMatchObject({ status: "online", capabilities, system_info: { cpu_percent: 12.5 }, repos: { "api-gateway": "/home/dev/api-gateway" } });
    expect(Date.parse(listed.last_heartbeat)).toBe(Date.parse(beat.json.server_time));

    await env.DB.prepare("UPDATE servers SET last_heartbeat = ?1 WHERE id = ?2").bind(new Date(Date.now() - 91_000).toISOString(), agent.id).run();
    const stale = (await call("/api/v1/servers", { token: admin })).json.servers.find((s: { id: string }) => s.id === agent.id);
    expect(stale.status).toBe("offline");
    const wrong = await call("/api/v1/servers/heartbeat", { apiKey: agent.apiKey, body: { capabilities: { languages: "rust" } } });
    expectProblem(wrong, 422, "VALIDATION_FAILED");
    expect(wrong.json.errors[0].path).toBe("capabilities.languages");
  });
});

describe("scopes, server lists and sessions", () => {
  let scopedA: { id: string; apiKey: string };
  let scopedB: { id: string; apiKey: string };

  beforeAll(async () => {
    scopedA = await registerAgent(admin, "only-alpha", { project_ids: [alpha.id] });
    scopedB = await registerAgent(admin, "only-beta", { project_ids: [beta.id] });
  });

  it("shows an agent only servers that share a project with it", async () => {
    const names = (await call("/api/v1/server/servers", { apiKey: scopedA.apiKey })).json.servers.map((s: { name: string }) => s.name);
    expect(names).toContain("only-alpha");
    expect(names).not.toContain("only-beta");
    expect(names).toContain("dev-backend"); // unscoped servers serve every project
  });

  it("shows people only servers that serve their projects", async () => {
    const member = await createUser(admin, "member");
    await addMember(admin, beta.id, member.id);
    const names = (await call("/api/v1/servers", { token: member.token })).json.servers.map((s: { name: string }) => s.name);
    expect(names).toContain("only-beta");
    expect(names).not.toContain("only-alpha");
    expectProblem(await call(`/api/v1/servers/${scopedA.id}`, { token: member.token }), 404, "NOT_FOUND");
  });

  it("creates, lists and closes sessions within the agent's projects", async () => {
    const created = await call("/api/v1/server/sessions", {
      apiKey: scopedA.apiKey,
      body: { name: "worker-1", project_id: alpha.id, working_directory: "/srv/app", agent_type: "claude_code" },
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: "worker-1", server_name: "only-alpha", status: "running", project_id: alpha.id });

    expectProblem(await call("/api/v1/server/sessions", { apiKey: scopedA.apiKey, body: { name: "worker-1", project_id: alpha.id } }), 409, "SESSION_NAME_TAKEN");
    expectProblem(await call("/api/v1/server/sessions", { apiKey: scopedA.apiKey, body: { name: "w", project_id: beta.id } }), 404, "NOT_FOUND");

    const listed = await call(`/api/v1/server/sessions?project_id=${alpha.id}`, { apiKey: scopedA.apiKey });
    expect(listed.json.sessions).toEqual([expect.objectContaining({ id: created.json.id, name: "worker-1", server_name: "only-alpha", working_directory: "/srv/app" })]);
    expectProblem(await call(`/api/v1/server/sessions?project_id=${alpha.id}`, { apiKey: scopedB.apiKey }), 404, "NOT_FOUND");
    expectProblem(await call(`/api/v1/server/sessions/${created.json.id}`, { method: "DELETE", apiKey: scopedB.apiKey }), 404, "NOT_FOUND");

    const closed = await call(`/api/v1/server/sessions/${created.json.id}`, { method: "DELETE", apiKey: scopedA.apiKey, headers: { "Content-Type": "application/json" } });
    expect(closed.json).toMatchObject({ status: "closed", closed_at: expect.any(String) });
    expect((await call(`/api/v1/server/sessions?project_id=${alpha.id}`, { apiKey: scopedA.apiKey })).json.sessions).toEqual([]);
    // The name is free again once the session is closed.
    expect((await call("/api/v1/server/sessions", { apiKey: scopedA.apiKey, body: { name: "worker-1", project_id: alpha.id } })).status).toBe(201);
  });
});

describe("servers as people see them", () => {
  it("carry their load against capacity and their open sessions in the projects the person can see", async () => {
    const seen = await createProject(admin, "Seen");
    const hidden = await createProject(admin, "Hidden");
    const member = await createUser(admin, "member");
    await addMember(admin, seen.id, member.id);
    const server = await registerAgent(admin, `loaded-${crypto.randomUUID().slice(0, 6)}`);
    await call("/api/v1/servers/heartbeat", { apiKey: server.apiKey, body: { capabilities: { languages: ["go"], max_concurrent_tasks: 3 } } });
    for (const [project, name] of [[seen, "in-seen"], [hidden, "in-hidden"]] as const) {
      expect((await call("/api/v1/server/sessions", { apiKey: server.apiKey, body: { name, project_id: project.id } })).status).toBe(201);
    }
    const task = await call("/api/v1/server/tasks", { apiKey: server.apiKey, body: { title: "busy", project_id: hidden.id } });
    expect((await call(`/api/v1/server/tasks/${task.json.id}/assign`, { apiKey: server.apiKey, body: { server_name: server.name } })).status).toBe(200);

    const asMember = (await call("/api/v1/servers", { token: member.token })).json.servers.find((s: { id: string }) => s.id === server.id);
    expect(asMember).toMatchObject({ active_tasks: 1, max_concurrent_tasks: 3 });
    expect(asMember.sessions.map((s: { name: string }) => s.name)).toEqual(["in-seen"]);
    const asAdmin = (await call("/api/v1/servers", { token: admin })).json.servers.find((s: { id: string }) => s.id === server.id);
    expect(asAdmin.sessions.map((s: { name: string }) => s.name)).toEqual(["in-hidden", "in-seen"]);
  });
});
