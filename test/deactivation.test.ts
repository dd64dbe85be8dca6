/**
 * Deactivating an account stops it at once, whatever it holds: access tokens, sign-in, refresh tokens, MCP clients,
 * live feeds, terminals and Telegram; reactivating lets the person sign in again.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { UserRow } from "../src/db/client";
import { accessTo } from "../src/integrations/people";
import { terminalAccess } from "../src/server-link/terminal-access";
import { bootstrapAdmin, call, createProject, expectProblem, login, registerAgent } from "./helpers";
import { mcpStatusWith, authorizedClient, refresh as refreshClient } from "./oauth-flow";
import { createPerson } from "./people-helpers";
import { dashboard } from "./sockets";

let admin: string;
let adminId: string;
beforeAll(async () => {
  admin = await bootstrapAdmin();
  adminId = (await call("/api/v1/auth/me", { token: admin })).json.id;
});

const setActive = (userId: string, active: boolean, token = admin) => call(`/api/v1/users/${userId}`, { method: "PATCH", token, body: { active } });
const userRow = async (id: string) => {
  const r = (await env.DB.prepare("SELECT * FROM users WHERE id = ?1").bind(id).first<Record<string, string | null>>())!;
  return {
    id: r.id,
    email: r.email,
    name: r.name,
    role: r.role,
    passwordHash: null,
    deactivatedAt: r.deactivated_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  } as UserRow;
};

describe("deactivating an account", () => {
  it("is shown on the user, refuses its access token, its sign-in and its refresh token at once", async () => {
    const person = await createPerson(admin, "member");
    const before = await call("/api/v1/auth/me", { token: person.token });
    expect(before.json).toMatchObject({ active: true, deactivated_at: null });

    const off = await setActive(person.id, false);
    expect(off.status, off.text).toBe(200);
    expect(off.json.active).toBe(false);
    expect(Date.parse(off.json.deactivated_at)).toBeGreaterThan(Date.now() - 60_000);
    const listed = (await call("/api/v1/users", { token: admin })).json.users.find((u: { id: string }) => u.id === person.id);
    expect(listed).toMatchObject({ active: false, deactivated_at: off.json.deactivated_at });
    // Deactivating again keeps the first time.
    expect((await setActive(person.id, false)).json.deactivated_at).toBe(off.json.deactivated_at);

    expectProblem(await call("/api/v1/auth/me", { token: person.token }), 401, "ACCOUNT_DEACTIVATED");
    expectProblem(await call("/api/v1/projects", { token: person.token }), 401, "ACCOUNT_DEACTIVATED");
    expectProblem(await login(person.email, person.password), 401, "ACCOUNT_DEACTIVATED");
    // A wrong password learns nothing about the account.
    expectProblem(await login(person.email, "not-the-password"), 401, "INVALID_CREDENTIALS");
    expectProblem(await call("/api/v1/auth/refresh", { body: { refresh_token: person.refresh } }), 401, "INVALID_REFRESH_TOKEN");
    const revoked = await env.DB.prepare("SELECT COUNT(*) AS n FROM refresh_tokens WHERE user_id = ?1 AND revoked_at IS NULL").bind(person.id).first();
    expect(revoked!.n).toBe(0);
    // On /mcp too, with the person's own token.
    expect(await mcpStatusWith(person.token)).toBe(401);
  });

  it("refuses a refresh token that was still live when the account was deactivated", async () => {
    const person = await createPerson(admin, "member");
    // As if deactivated between the revocation and the refresh: the account's state decides.
    await env.DB.prepare("UPDATE users SET deactivated_at = ?2 WHERE id = ?1").bind(person.id, new Date().toISOString()).run();
    expectProblem(await call("/api/v1/auth/refresh", { body: { refresh_token: person.refresh } }), 401, "ACCOUNT_DEACTIVATED");
  });

  it("cuts off the MCP clients the person authorised: their tokens are refused and mint nothing, and none can be authorised", async () => {
    const person = await createPerson(admin, "member");
    const client = await authorizedClient(person, "Editor");
    expect(await mcpStatusWith(client.saved!.access_token)).toBe(200);
    expect((await setActive(person.id, false)).status).toBe(200);
    expect(await mcpStatusWith(client.saved!.access_token)).toBe(401);
    const refreshed = await refreshClient(client);
    expect(refreshed.status).toBe(400);
    expect(refreshed.json.error).toBe("invalid_grant");
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM mcp_client_grants WHERE user_id = ?1").bind(person.id).first())!.n).toBe(0);
    await expect(authorizedClient(person, "Another")).rejects.toThrow();
  });

  it("closes the person's live feeds and refuses to reopen them, and ends their terminal and Telegram access", async () => {
    const project = await createProject(admin);
    const server = await registerAgent(admin, `deact-${crypto.randomUUID().slice(0, 6)}`, { project_ids: [project.id] });
    const person = await createPerson(admin, "member");
    expect((await call(`/api/v1/projects/${project.id}/members`, { token: admin, body: { user_id: person.id } })).status).toBe(201);
    const socket = await dashboard(project.id, person.token);
    expect(await terminalAccess(env.DB, person.id, server.id, project.id)).toEqual({ watch: true, write: true });
    expect(await accessTo(env, await userRow(person.id), project.id)).toBe("write");

    expect((await setActive(person.id, false)).status).toBe(200);
    expect(await socket.closed).toEqual({ code: 4003, reason: "access to this project was revoked" });
    expect(await terminalAccess(env.DB, person.id, server.id, project.id)).toEqual({ watch: false, write: false });
    expect(await accessTo(env, await userRow(person.id), project.id)).toBe("none");
    const refused = await call(`/api/v1/projects/${project.id}/ws`, { headers: { Upgrade: "websocket", "Sec-WebSocket-Protocol": `bearer, ${person.token}` } });
    expect(refused.status).toBe(401);
    expect(refused.json.code).toBe("ACCOUNT_DEACTIVATED");
  });

  it("is for admins, never of themselves, and names the field of a malformed change", async () => {
    const person = await createPerson(admin, "member");
    expectProblem(await setActive(person.id, false, person.token), 403, "FORBIDDEN");
    expectProblem(await setActive(adminId, false), 409, "CANNOT_DEACTIVATE_SELF");
    expect((await call("/api/v1/auth/me", { token: admin })).json.active).toBe(true);
    const bad = await call(`/api/v1/users/${person.id}`, { method: "PATCH", token: admin, body: { active: "no" } });
    expectProblem(bad, 422, "VALIDATION_FAILED");
    expect(bad.json.errors[0].path).toBe("active");
    expectProblem(await setActive(crypto.randomUUID(), false), 404, "NOT_FOUND");
  });
});

describe("reactivating an account", () => {
  it("lets the person sign in again with the same password, and act with their role", async () => {
    const project = await createProject(admin);
    const person = await createPerson(admin, "member");
    await call(`/api/v1/projects/${project.id}/members`, { token: admin, body: { user_id: person.id } });
    await setActive(person.id, false);
    expectProblem(await login(person.email, person.password), 401, "ACCOUNT_DEACTIVATED");
    const on = await setActive(person.id, true);
    expect(on.json).toMatchObject({ active: true, deactivated_at: null });
    const again = await login(person.email, person.password);
    expect(again.status, again.text).toBe(200);
    const token = again.json.access_token;
    expect((await call("/api/v1/tasks", { token, body: { project_id: project.id, title: "back at work" } })).status).toBe(201);
    expect((await call("/api/v1/auth/refresh", { body: { refresh_token: again.json.refresh_token } })).status).toBe(200);
  });
});
