/** Defects found in review, each pinned by a test. */
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, call, createProject, createUser, daemonRegistration, expectProblem, login, registerAgent, registrationToken } from "./helpers";
import { dashboard, isEvent } from "./sockets";
import { cli, createWorld, expectOk, newTask, openSession, T, taskStatus, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("Regressions");
});

describe("registration cannot take over a server", () => {
  it("refuses to re-key a server outside the token's scope, or from another machine", async () => {
    const other = await createProject(w.admin, "Elsewhere");
    const victim = await registerAgent(w.admin, "victim", { project_ids: [w.project.id] });
    const foreignToken = await registrationToken(w.admin, { project_ids: [other.id] });
    expectProblem(await call("/api/v1/servers/register", { body: daemonRegistration("victim", foreignToken) }), 409, "SERVER_NAME_TAKEN");
    expect((await call("/api/v1/server/servers", { apiKey: victim.apiKey })).status).toBe(200);
    const otherMachine = await call("/api/v1/servers/register", {
      body: { ...daemonRegistration("victim", await registrationToken(w.admin)), machine_id: "ffffffffffffffffffffffffffffffff" },
    });
    expectProblem(otherMachine, 409, "SERVER_NAME_TAKEN");
    // The refused attempts spent no use of their tokens, and the rightful owner can still re-key.
    expect((await call("/api/v1/servers/register", { body: daemonRegistration("victim", await registrationToken(w.admin, { project_ids: [w.project.id] })) })).status).toBe(201);
  });
});

describe("secrets", () => {
  it("never stores a registration token for idempotent replay", async () => {
    const headers = { "Idempotency-Key": "token-once" };
    const first = await call("/api/v1/servers/tokens", { token: w.admin, body: {}, headers });
    expect(first.status).toBe(201);
    const row = await env.DB.prepare("SELECT response_body FROM idempotency_keys WHERE key = 'token-once'").first<{ response_body: string | null }>();
    expect(row!.response_body).toBeNull();
    expectProblem(await call("/api/v1/servers/tokens", { token: w.admin, body: {}, headers }), 409, "IDEMPOTENT_SECRET_NOT_REPLAYED");
    expect((await env.DB.prepare("SELECT count(*) AS n FROM registration_tokens WHERE id = ?1").bind(first.json.id).first<{ n: number }>())!.n).toBe(1);
  });

  it("signs a user out everywhere when their password changes", async () => {
    const user = await createUser(w.admin, "member");
    const session = await login(user.email, user.password);
    await expectOk(call(`/api/v1/users/${user.id}`, { method: "PATCH", token: w.admin, body: { password: "reset-by-admin" } }));
    expectProblem(await call("/api/v1/auth/refresh", { body: { refresh_token: session.json.refresh_token } }), 401, "INVALID_REFRESH_TOKEN");
  });
});

describe("scope", () => {
  it("keeps a session's check and status to its own project", async () => {
    const p2 = await createProject(w.admin, "Second");
    await openSession(w.worker.apiKey, p2.id, "worker-second");
    const elsewhere = (await expectOk(cli(w.orchestrator.apiKey, "POST", T, { title: "in p2", project_id: p2.id }), 201)).json.id;
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${elsewhere}/assign`, { server_name: w.worker.name }));
    const check = await expectOk(cli(w.worker.apiKey, "GET", `${T}/check?session_id=${w.workerSession}`));
    expect(check.json.tasks.map((t: { id: string }) => t.id)).not.toContain(elsewhere);
    const status = await expectOk(cli(w.worker.apiKey, "GET", `/api/v1/server/status?session_id=${w.workerSession}`));
    expect(status.json.tasks.map((t: { id: string }) => t.id)).not.toContain(elsewhere);
  });

  it("lists tasks and projects for a member of more than 100 projects", async () => {
    const member = await createUser(w.admin, "member");
    for (let i = 0; i < 105; i++) {
      const { json } = await call("/api/v1/projects", { token: member.token, body: { name: `many ${i}` } });
      expect(json.id).toBeTruthy();
    }
    expect((await expectOk(call("/api/v1/projects", { token: member.token }))).json.projects).toHaveLength(105);
    expect((await call("/api/v1/tasks", { token: member.token })).status).toBe(200);
    expect((await call("/api/v1/interventions", { token: member.token })).status).toBe(200);
  });

  it("shows a person with no projects no servers, and hides servers' addresses and scopes from non-admins", async () => {
    const loner = await createUser(w.admin, "viewer");
    expect((await call("/api/v1/servers", { token: loner.token })).json.servers).toEqual([]);
    const seen = (await call("/api/v1/server/servers", { apiKey: w.worker.apiKey })).json.servers[0];
    expect(seen).not.toHaveProperty("project_ids");
    expect(seen).not.toHaveProperty("ip");
    expect((await call("/api/v1/servers", { token: w.admin })).json.servers[0]).toHaveProperty("project_ids");
  });
});

describe("timeouts survive waiting for a human", () => {
  it("re-arms the alarm when an answered task goes back to work", async () => {
    const id = await newTask(w, { timeout_seconds: 60 });
    await expectOk(cli(w.orchestrator.apiKey, "POST", `${T}/${id}/assign`, { session_name: "worker" }));
    await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/start`));
    const help = await expectOk(cli(w.worker.apiKey, "POST", `${T}/${id}/help`, { question: "q?", intervention_type: "question" }));
    await env.DB.prepare("UPDATE tasks SET deadline_at = ?1 WHERE id = ?2").bind(new Date(Date.now() - 1000).toISOString(), id).run();
    const room = env.PROJECT_ROOM.get(env.PROJECT_ROOM.idFromName(w.project.id));
    await runDurableObjectAlarm(room);
    expect(await taskStatus(w, id)).toBe("needs_human");
    await expectOk(cli(w.orchestrator.apiKey, "POST", `/api/v1/server/interventions/${help.json.intervention_id}/respond`, { response: "left" }));
    expect(await runDurableObjectAlarm(room)).toBe(true);
    expect(await taskStatus(w, id)).toBe("failed");
  });
});

describe("storable input", () => {
  it("refuses JSON fields too large for a row with 422 naming the field", async () => {
    const big = await cli(w.orchestrator.apiKey, "POST", T, { title: "big", project_id: w.project.id, requirements: { tags: ["x"], blob: "y".repeat(600 * 1024) } });
    expectProblem(big, 422, "VALIDATION_FAILED");
    expect(big.json.errors[0].path).toBe("requirements");
    const manyCriteria = await cli(w.orchestrator.apiKey, "POST", T, { title: "c", project_id: w.project.id, acceptance_criteria: Array(200).fill("é") });
    expect(manyCriteria.json.errors[0].path).toBe("acceptance_criteria");
  });
});

describe("live access follows membership", () => {
  it("closes a removed member's dashboard, and refuses to renew it", async () => {
    const member = await createUser(w.admin, "member");
    await addMember(w.admin, w.project.id, member.id);
    const socket = await dashboard(w.project.id, member.token);
    await newTask(w);
    await socket.next(isEvent);
    await expectOk(call(`/api/v1/projects/${w.project.id}/members/${member.id}`, { method: "DELETE", token: w.admin }));
    expect(await socket.closed).toEqual({ code: 4003, reason: "access to this project was revoked" });

    await addMember(w.admin, w.project.id, member.id);
    const again = await dashboard(w.project.id, member.token);
    await call(`/api/v1/projects/${w.project.id}/members/${member.id}`, { method: "DELETE", token: w.admin });
    await again.closed;
    const third = await createUser(w.admin, "member");
    await addMember(w.admin, w.project.id, third.id);
    const renewing = await dashboard(w.project.id, third.token);
    await env.DB.prepare("DELETE FROM project_members WHERE user_id = ?1").bind(third.id).run();
    renewing.send({ type: "auth", access_token: third.token });
    expect((await renewing.closed).code).toBe(4003);
  });
});
