/**
 * A role per project: a membership names member or viewer, which lowers the person's own role there and never raises
 * it. Every door that writes honours it (REST, MCP, approval rules, terminals), and a change closes the person's feeds.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { terminalAccess } from "../src/server-link/terminal-access";
import { bootstrapAdmin, call, createProject, expectProblem, registerAgent, type Reply } from "./helpers";
import { createPerson as createUser } from "./people-helpers";
import { asPerson, refusal, structured } from "./mcp-client";
import { dashboard } from "./sockets";

let admin: string;
let adminId: string;
beforeAll(async () => {
  admin = await bootstrapAdmin();
  adminId = (await call("/api/v1/auth/me", { token: admin })).json.id;
});

const members = (projectId: string) => `/api/v1/projects/${projectId}/members`;
const join = (projectId: string, userId: string, role?: string) =>
  call(members(projectId), { token: admin, body: { user_id: userId, ...(role ? { role } : {}) } });
const setRole = (projectId: string, userId: string, role: string, token = admin) =>
  call(`${members(projectId)}/${userId}`, { method: "PATCH", token, body: { role } });
const newTask = (token: string, projectId: string, title = "a task") => call("/api/v1/tasks", { token, body: { project_id: projectId, title } });

function ok(reply: Reply, status = 200) {
  expect(reply.status, reply.text).toBe(status);
  return reply.json;
}

describe("project members with a role", () => {
  it("are added as members by default or as viewers, listed with what the role makes of theirs, and changed by admins", async () => {
    const project = await createProject(admin);
    const [alice, bob] = [await createUser(admin, "member"), await createUser(admin, "member")];
    const added = ok(await join(project.id, alice.id), 201);
    expect(added.member).toMatchObject({ id: alice.id, role: "member", project_role: "member", effective_role: "member" });
    ok(await join(project.id, bob.id, "viewer"), 201);

    const listed = ok(await call(members(project.id), { token: alice.token })).members;
    expect(listed.find((m: { id: string }) => m.id === bob.id)).toMatchObject({ role: "member", project_role: "viewer", effective_role: "viewer" });

    // Adding again: the same role (or none) changes nothing; another role is a conflict that points to PATCH.
    expect(ok(await join(project.id, bob.id), 201).member.project_role).toBe("viewer");
    expect(ok(await join(project.id, bob.id, "viewer"), 201).member.project_role).toBe("viewer");
    const clash = await join(project.id, bob.id, "member");
    expectProblem(clash, 409, "CONFLICT");
    expect(clash.json.detail).toContain("PATCH");

    expect(ok(await setRole(project.id, bob.id, "member"))).toMatchObject({ id: bob.id, project_role: "member", effective_role: "member" });
    expect(ok(await setRole(project.id, bob.id, "member")).project_role).toBe("member");
  });

  it("refuses what is not an admin's to do, and malformed or unknown members", async () => {
    const project = await createProject(admin);
    const [alice, outsider] = [await createUser(admin, "member"), await createUser(admin, "member")];
    ok(await join(project.id, alice.id), 201);
    expectProblem(await setRole(project.id, alice.id, "viewer", alice.token), 403, "FORBIDDEN");
    expectProblem(await call(members(project.id), { token: alice.token, body: { user_id: outsider.id } }), 403, "FORBIDDEN");
    expectProblem(await call(`${members(project.id)}/${alice.id}`, { method: "DELETE", token: alice.token }), 403, "FORBIDDEN");
    const badRole = await setRole(project.id, alice.id, "admin");
    expectProblem(badRole, 422, "VALIDATION_FAILED");
    expect(badRole.json.errors[0].path).toBe("role");
    expect((await join(project.id, outsider.id, "owner")).json.errors[0].path).toBe("role");
    expectProblem(await setRole(project.id, outsider.id, "viewer"), 404, "NOT_FOUND");
    expectProblem(await setRole(project.id, "not-a-uuid", "viewer"), 404, "NOT_FOUND");
    expectProblem(await setRole(crypto.randomUUID(), alice.id, "viewer"), 404, "NOT_FOUND");
  });
});

describe("what a project role allows", () => {
  it("makes a member of the hub who is a viewer of a project read it, never write it, while they write their other projects", async () => {
    const [viewed, owned] = [await createProject(admin), await createProject(admin)];
    const person = await createUser(admin, "member");
    ok(await join(viewed.id, person.id, "viewer"), 201);
    ok(await join(owned.id, person.id, "member"), 201);
    const task = ok(await newTask(admin, viewed.id, "seen, not touched"), 201);

    expect(ok(await call(`/api/v1/projects/${viewed.id}`, { token: person.token })).my_role).toBe("viewer");
    expect(ok(await call(`/api/v1/projects/${owned.id}`, { token: person.token })).my_role).toBe("member");
    expect(ok(await call(`/api/v1/tasks/${task.id}`, { token: person.token })).title).toBe("seen, not touched");
    expect(ok(await call(`/api/v1/tasks?project_id=${viewed.id}`, { token: person.token })).tasks).toHaveLength(1);

    expectProblem(await newTask(person.token, viewed.id), 403, "FORBIDDEN");
    expectProblem(await call(`/api/v1/tasks/${task.id}`, { method: "DELETE", token: person.token }), 403, "FORBIDDEN");
    expectProblem(await call(`/api/v1/projects/${viewed.id}`, { method: "PUT", token: person.token, body: { name: "renamed" } }), 403, "FORBIDDEN");
    expectProblem(await call(`/api/v1/projects/${viewed.id}/webhooks`, { token: person.token, body: { url: "https://example.com/hook" } }), 403, "FORBIDDEN");
    const rule = { name: "r", tool_pattern: "Bash", action: "allow", scope_type: "project" };
    expectProblem(await call("/api/v1/approval-rules", { token: person.token, body: { ...rule, scope_id: viewed.id } }), 403, "FORBIDDEN");
    expect((await call("/api/v1/approval-rules", { token: person.token, body: { ...rule, scope_id: owned.id } })).status).toBe(201);
    // An admin's rule of the viewed project: the person reads it and may not change it.
    const adminRule = ok(await call("/api/v1/approval-rules", { token: admin, body: { ...rule, scope_id: viewed.id } }), 201);
    expect(ok(await call(`/api/v1/approval-rules/${adminRule.id}`, { token: person.token })).id).toBe(adminRule.id);
    expectProblem(await call(`/api/v1/approval-rules/${adminRule.id}`, { method: "PATCH", token: person.token, body: { name: "x" } }), 403, "FORBIDDEN");

    expect((await newTask(person.token, owned.id)).status).toBe(201);
    const tasks = ok(await call(`/api/v1/tasks?project_id=${viewed.id}`, { token: admin })).tasks;
    expect(tasks.map((t: { title: string }) => t.title)).toEqual(["seen, not touched"]);
  });

  it("never raises a role: a viewer of the hub who is a member of a project still only reads it; an admin stays an admin", async () => {
    const project = await createProject(admin);
    const viewer = await createUser(admin, "viewer");
    const otherAdmin = await createUser(admin, "admin");
    ok(await join(project.id, viewer.id, "member"), 201);
    ok(await join(project.id, otherAdmin.id, "viewer"), 201);
    const listed = ok(await call(members(project.id), { token: admin })).members;
    expect(listed.find((m: { id: string }) => m.id === viewer.id).effective_role).toBe("viewer");
    expect(listed.find((m: { id: string }) => m.id === otherAdmin.id).effective_role).toBe("admin");
    expect(ok(await call(`/api/v1/projects/${project.id}`, { token: viewer.token })).my_role).toBe("viewer");
    expectProblem(await newTask(viewer.token, project.id), 403, "FORBIDDEN");
    expect(ok(await call(`/api/v1/projects/${project.id}`, { token: otherAdmin.token })).my_role).toBe("admin");
    expect((await newTask(otherAdmin.token, project.id)).status).toBe(201);
  });

  it("takes effect on the next request, and on an idempotent replay", async () => {
    const project = await createProject(admin);
    const person = await createUser(admin, "member");
    ok(await join(project.id, person.id), 201);
    const headers = { "Idempotency-Key": `replay-${crypto.randomUUID()}` };
    const first = await call("/api/v1/tasks", { token: person.token, headers, body: { project_id: project.id, title: "once" } });
    expect(first.status, first.text).toBe(201);
    ok(await setRole(project.id, person.id, "viewer"));
    expectProblem(await call("/api/v1/tasks", { token: person.token, headers, body: { project_id: project.id, title: "once" } }), 403, "FORBIDDEN");
    expectProblem(await newTask(person.token, project.id), 403, "FORBIDDEN");
    ok(await setRole(project.id, person.id, "member"));
    expect((await newTask(person.token, project.id)).status).toBe(201);
  });

  it("holds on MCP: a viewer of the project reads through its tools and every write is refused", async () => {
    const project = await createProject(admin);
    const person = await createUser(admin, "member");
    ok(await join(project.id, person.id, "viewer"), 201);
    const task = ok(await newTask(admin, project.id, "read over MCP"), 201);
    const { client } = await asPerson(person.token);
    expect(structured(await client.callTool({ name: "get_task", arguments: { id: task.id } })).title).toBe("read over MCP");
    refusal(await client.callTool({ name: "create_task", arguments: { project_id: project.id, title: "by a project viewer" } }), 403, "FORBIDDEN");
    refusal(await client.callTool({ name: "cancel_task", arguments: { id: task.id } }), 403, "FORBIDDEN");
    await client.close();
  });

  it("decides typing in a terminal: a viewer of any project the server serves watches and never types", async () => {
    const [p1, p2] = [await createProject(admin), await createProject(admin)];
    const server = await registerAgent(admin, `roles-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [p1.id, p2.id] });
    const person = await createUser(admin, "member");
    ok(await join(p1.id, person.id), 201);
    ok(await join(p2.id, person.id), 201);
    expect(await terminalAccess(env.DB, person.id, server.id, p1.id)).toEqual({ watch: true, write: true });
    ok(await setRole(p2.id, person.id, "viewer"));
    // Typing in p1's session reaches p2 too (one API key): watching only, in either project.
    expect(await terminalAccess(env.DB, person.id, server.id, p1.id)).toEqual({ watch: true, write: false });
    expect(await terminalAccess(env.DB, person.id, server.id, p2.id)).toEqual({ watch: true, write: false });
    expect(await terminalAccess(env.DB, adminId, server.id, p2.id)).toEqual({ watch: true, write: true });
    // Starting a session there is refused before the daemon is asked.
    const start = await call(`/api/v1/projects/${p1.id}/sessions`, { token: person.token, body: { server_id: server.id } });
    expectProblem(start, 403, "NOT_ALLOWED");
    ok(await setRole(p2.id, person.id, "member"));
    expect(await terminalAccess(env.DB, person.id, server.id, p1.id)).toEqual({ watch: true, write: true });
    expectProblem(await call(`/api/v1/projects/${p1.id}/sessions`, { token: person.token, body: { server_id: server.id } }), 409, "DAEMON_OFFLINE");
  });

  it("closes the person's live feed of the project when their role there changes, so it reconnects under the new role", async () => {
    const [project, other] = [await createProject(admin), await createProject(admin)];
    const person = await createUser(admin, "member");
    ok(await join(project.id, person.id), 201);
    ok(await join(other.id, person.id), 201);
    const socket = await dashboard(project.id, person.token);
    const untouched = await dashboard(other.id, person.token);
    ok(await setRole(project.id, person.id, "viewer"));
    expect(await socket.closed).toEqual({ code: 4003, reason: "access to this project was revoked" });
    // A viewer still watches: the feed opens again.
    const again = await dashboard(project.id, person.token);
    expect(again.ws.readyState).toBe(WebSocket.OPEN);
    // Another project's feed stays open.
    ok(await newTask(admin, other.id), 201);
    expect((await untouched.next((f) => f.type === "event")).type).toBe("event");
    again.ws.close();
    untouched.ws.close();
  });
});
