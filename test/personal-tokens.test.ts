/**
 * Personal access tokens: made, listed and revoked by their person only; a bearer on the REST API, /mcp and A2A that
 * never does more than its person may do now, nor more than its scope and projects allow; refused once expired,
 * revoked, tampered with, or its person is removed, deactivated or deleted; never written to a log.
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { sha256Hex } from "../src/auth/secrets";
import { addMember, bootstrapAdmin, call, createProject, createUser, expectProblem, login, type Reply } from "./helpers";
import { a2aBase, fetchAs, rpc } from "./a2a-client";
import { asPerson, MCP_URL, refusal, structured, workerFetch } from "./mcp-client";
import { PERSON_TOOLS } from "./mcp-tool-names";

let admin: string;
let member: Awaited<ReturnType<typeof createUser>>;
let alpha: { id: string };
let beta: { id: string };
beforeAll(async () => {
  admin = await bootstrapAdmin();
  member = await createUser(admin, "member");
  alpha = await createProject(admin, "Alpha");
  beta = await createProject(admin, "Beta");
  await addMember(admin, alpha.id, member.id);
  await addMember(admin, beta.id, member.id);
});

const TOKENS = "/api/v1/auth/me/tokens";

async function makeToken(signedIn: string, body: Record<string, unknown> = {}) {
  const made = await call(TOKENS, { token: signedIn, body: { name: "laptop", scope: "write", ...body } });
  expect(made.status, made.text).toBe(201);
  return made.json as { id: string; name: string; token: string; scope: string; project_ids: string[] | null; expires_at: string };
}

const listed = async (signedIn: string) => {
  const reply = await call(TOKENS, { token: signedIn });
  expect(reply.status, reply.text).toBe(200);
  return reply.json.tokens as { id: string; name: string; last_used_at: string | null; project_ids: string[] | null; token?: string }[];
};

const newTask = (token: string, projectId: string) => call("/api/v1/tasks", { token, body: { project_id: projectId, title: "From a token" } });
const projectIdsSeen = async (token: string) => ((await call("/api/v1/projects", { token })).json.projects as { id: string }[]).map((p) => p.id);
const row = (id: string) => env.DB.prepare("SELECT * FROM personal_access_tokens WHERE id = ?").bind(id).first<Record<string, string | null>>();

describe("making, listing and revoking tokens", () => {
  it("shows the token once, keeps only its sha256, and lists it without it", async () => {
    const before = Date.now();
    const made = await makeToken(member.token, { name: "CI", scope: "read" });
    expect(made.token).toMatch(/^orcpat_[A-Za-z0-9_-]{43}$/);
    expect(made).toMatchObject({ name: "CI", scope: "read", project_ids: null });
    // Left out, the expiry is 90 days away.
    const days = (Date.parse(made.expires_at) - before) / 86_400_000;
    expect(days).toBeGreaterThan(89.9);
    expect(days).toBeLessThan(90.1);
    const stored = await row(made.id);
    expect(stored!.token_hash).toBe(await sha256Hex(made.token));
    expect(JSON.stringify(stored)).not.toContain(made.token.slice(7));
    const mine = await listed(member.token);
    const entry = mine.find((t) => t.id === made.id)!;
    expect(entry).toMatchObject({ name: "CI", last_used_at: null, project_ids: null });
    expect(JSON.stringify(mine)).not.toContain(made.token);
  });

  it("refuses a bad body naming the field, and projects the person cannot see", async () => {
    const outsider = await createUser(admin, "member");
    const cases: [Record<string, unknown>, string][] = [
      [{ scope: "write" }, "name"],
      [{ name: "x", scope: "admin" }, "scope"],
      [{ name: "x", scope: "read", expires_in_seconds: 366 * 86_400 }, "expires_in_seconds"],
      [{ name: "x", scope: "read", expires_in_seconds: 10 }, "expires_in_seconds"],
      [{ name: "x", scope: "read", project_ids: [] }, "project_ids"],
      [{ name: "x", scope: "read", project_ids: ["not-a-uuid"] }, "project_ids.0"],
      // A project that exists but is not theirs reads exactly like one that does not.
      [{ name: "x", scope: "read", project_ids: [alpha.id] }, "project_ids"],
      [{ name: "x", scope: "read", project_ids: [crypto.randomUUID()] }, "project_ids"],
    ];
    for (const [body, field] of cases) {
      const reply = await call(TOKENS, { token: outsider.token, body });
      expectProblem(reply, 422, "VALIDATION_FAILED");
      expect(
        reply.json.errors.map((e: { path: string }) => e.path),
        JSON.stringify(body),
      ).toEqual([field]);
    }
    expect(await listed(outsider.token)).toEqual([]);
  });

  it("lets only its person revoke it: another's id is 404 and their token goes on working", async () => {
    const other = await createUser(admin, "member");
    await addMember(admin, alpha.id, other.id);
    const theirs = await makeToken(other.token);
    expectProblem(await call(`${TOKENS}/${theirs.id}`, { method: "DELETE", token: member.token }), 404, "NOT_FOUND");
    expect((await call(`/api/v1/projects/${alpha.id}`, { token: theirs.token })).status).toBe(200);
    expect((await call(`${TOKENS}/${theirs.id}`, { method: "DELETE", token: other.token })).status).toBe(204);
    const refused = await call(`/api/v1/projects/${alpha.id}`, { token: theirs.token });
    expectProblem(refused, 401, "PERSONAL_TOKEN_REVOKED");
    expect((await listed(other.token)).map((t) => t.id)).not.toContain(theirs.id);
    expectProblem(await call(`${TOKENS}/${theirs.id}`, { method: "DELETE", token: other.token }), 404, "NOT_FOUND");
  });

  it("cannot make, list or revoke tokens, change the password or open a socket itself", async () => {
    const made = await makeToken(member.token);
    const refusals = [
      await call(TOKENS, { token: made.token, body: { name: "child", scope: "write" } }),
      await call(TOKENS, { token: made.token }),
      await call(`${TOKENS}/${made.id}`, { method: "DELETE", token: made.token }),
      await call("/api/v1/auth/password", { token: made.token, body: { current_password: member.password, new_password: "a-new-password-1" } }),
    ];
    for (const reply of refusals) expectProblem(reply, 403, "PERSONAL_TOKEN_NOT_ACCEPTED");
    const socket = await call(`/api/v1/projects/${alpha.id}/ws?access_token=${made.token}`, { headers: { Upgrade: "websocket" } });
    expectProblem(socket, 403, "PERSONAL_TOKEN_NOT_ACCEPTED");
    expect((await login(member.email, member.password)).status).toBe(200);
  });
});

describe("what a token may do on the REST API", () => {
  it("a read token reads everything its person sees and changes nothing, naming its scope", async () => {
    const read = await makeToken(member.token, { scope: "read" });
    expect(await projectIdsSeen(read.token)).toEqual(expect.arrayContaining([alpha.id, beta.id]));
    expect((await call(`/api/v1/tasks?project_id=${alpha.id}`, { token: read.token })).status).toBe(200);
    const writes: Reply[] = [
      await newTask(read.token, alpha.id),
      await call("/api/v1/projects", { token: read.token, body: { name: "Not made" } }),
      await call(`/api/v1/projects/${alpha.id}`, { method: "PATCH", token: read.token, body: { description: "changed" } }),
    ];
    for (const reply of writes) {
      expectProblem(reply, 403, "TOKEN_SCOPE");
      expect(reply.json.detail).toContain("scope is read");
    }
    // Its person may still write.
    expect((await newTask(member.token, alpha.id)).status).toBe(201);
  });

  it("a token for some projects sees only those: others are 404 as if missing, and hub-wide admin routes are refused", async () => {
    const adminMe = (await call("/api/v1/auth/me", { token: admin })).json;
    const limited = await makeToken(admin, { project_ids: [alpha.id, alpha.id] });
    expect(limited.project_ids).toEqual([alpha.id]);
    expect(await projectIdsSeen(limited.token)).toEqual([alpha.id]);
    expectProblem(await call(`/api/v1/projects/${beta.id}`, { token: limited.token }), 404, "NOT_FOUND");
    expectProblem(await call(`/api/v1/tasks?project_id=${beta.id}`, { token: limited.token }), 404, "NOT_FOUND");
    // A body naming a project it cannot see reads as one naming no project.
    const hidden = await newTask(limited.token, beta.id);
    expectProblem(hidden, 422, "VALIDATION_FAILED");
    expect(hidden.json.errors).toEqual([{ path: "project_id", message: "no such project" }]);
    const betaTask = (await newTask(admin, beta.id)).json.id;
    expectProblem(await call(`/api/v1/tasks/${betaTask}`, { token: limited.token }), 404, "NOT_FOUND");
    const listedTasks = (await call("/api/v1/tasks", { token: limited.token })).json.tasks as { project_id: string }[];
    expect(listedTasks.every((t) => t.project_id === alpha.id)).toBe(true);
    expect((await newTask(limited.token, alpha.id)).status).toBe(201);
    for (const path of ["/api/v1/users", "/api/v1/servers/tokens"]) expectProblem(await call(path, { token: limited.token }), 403, "TOKEN_SCOPE");
    expectProblem(await call("/api/v1/servers/tokens", { token: limited.token, body: {} }), 403, "TOKEN_SCOPE");
    // The same admin's token for every project may.
    const whole = await makeToken(admin);
    expect((await call("/api/v1/users", { token: whole.token })).json.users.map((u: { id: string }) => u.id)).toContain(adminMe.id);
  });

  it("follows its person's role and memberships at each use", async () => {
    const person = await createUser(admin, "member");
    await addMember(admin, alpha.id, person.id);
    const write = await makeToken(person.token);
    const limited = await makeToken(person.token, { project_ids: [alpha.id] });
    expect((await newTask(write.token, alpha.id)).status).toBe(201);
    await call(`/api/v1/users/${person.id}`, { method: "PATCH", token: admin, body: { role: "viewer" } });
    expectProblem(await newTask(write.token, alpha.id), 403, "FORBIDDEN");
    expect((await call(`/api/v1/projects/${alpha.id}/members/${person.id}`, { method: "DELETE", token: admin })).status).toBe(200);
    expectProblem(await call(`/api/v1/projects/${alpha.id}`, { token: write.token }), 404, "NOT_FOUND");
    expect(await projectIdsSeen(limited.token)).toEqual([]);
    expectProblem(await call(`/api/v1/projects/${alpha.id}`, { token: limited.token }), 404, "NOT_FOUND");
  });
});

describe("refused tokens", () => {
  it("an expired token is 401 PERSONAL_TOKEN_EXPIRED", async () => {
    const made = await makeToken(member.token, { expires_in_seconds: 60 });
    expect((await call("/api/v1/auth/me", { token: made.token })).status).toBe(200);
    await env.DB.prepare("UPDATE personal_access_tokens SET expires_at = ? WHERE id = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), made.id)
      .run();
    expectProblem(await call("/api/v1/auth/me", { token: made.token }), 401, "PERSONAL_TOKEN_EXPIRED");
    // Still listed (with its expiry) until revoked.
    expect((await listed(member.token)).map((t) => t.id)).toContain(made.id);
  });

  it("a tampered or malformed token is 401 INVALID_TOKEN, and no answer quotes it", async () => {
    const made = await makeToken(member.token);
    const last = made.token.at(-1) === "A" ? "B" : "A";
    for (const bad of [made.token.slice(0, -1) + last, made.token + "x", "orcpat_short", "orcpat_" + "!".repeat(43)]) {
      const reply = await call("/api/v1/auth/me", { token: bad });
      expectProblem(reply, 401, "INVALID_TOKEN");
      expect(reply.text).not.toContain(bad.slice(7, 30));
    }
  });

  it("a deactivated or deleted person's token is 401", async () => {
    const person = await createUser(admin, "member");
    const made = await makeToken(person.token);
    await env.DB.prepare("UPDATE users SET deactivated_at = ? WHERE id = ?").bind(new Date().toISOString(), person.id).run();
    const deactivated = await call("/api/v1/auth/me", { token: made.token });
    expectProblem(deactivated, 401, "INVALID_TOKEN");
    expect(deactivated.json.detail).toContain("deactivated");
    await env.DB.prepare("UPDATE users SET deactivated_at = NULL WHERE id = ?").bind(person.id).run();
    expect((await call("/api/v1/auth/me", { token: made.token })).status).toBe(200);
    expect((await call(`/api/v1/users/${person.id}`, { method: "DELETE", token: admin })).status).toBe(200);
    expectProblem(await call("/api/v1/auth/me", { token: made.token }), 401, "INVALID_TOKEN");
    expect(await row(made.id)).toBeNull();
  });
});

describe("last use", () => {
  it("is written on first use, then at most once a minute", async () => {
    const made = await makeToken(member.token);
    await call("/api/v1/auth/me", { token: made.token });
    const first = (await row(made.id))!.last_used_at!;
    expect(Date.now() - Date.parse(first)).toBeLessThan(10_000);
    await call("/api/v1/auth/me", { token: made.token });
    await call("/api/v1/projects", { token: made.token });
    expect((await row(made.id))!.last_used_at).toBe(first);
    const earlier = new Date(Date.now() - 61_000).toISOString();
    await env.DB.prepare("UPDATE personal_access_tokens SET last_used_at = ? WHERE id = ?").bind(earlier, made.id).run();
    await call("/api/v1/auth/me", { token: made.token });
    const later = (await row(made.id))!.last_used_at!;
    expect(later > earlier).toBe(true);
    expect((await listed(member.token)).find((t) => t.id === made.id)!.last_used_at).toBe(later);
  });
});

describe("on /mcp", () => {
  it("lists a person's tools, sees only the token's projects, and a read token's writes are refused", async () => {
    const limited = await makeToken(member.token, { project_ids: [beta.id] });
    const { client } = await asPerson(limited.token);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(PERSON_TOOLS);
    const projects = structured(await client.callTool({ name: "list_projects", arguments: {} }));
    expect(projects.projects.map((p: { id: string }) => p.id)).toEqual([beta.id]);
    refusal(await client.callTool({ name: "create_task", arguments: { project_id: alpha.id, title: "Hidden" } }), 422, "VALIDATION_FAILED");
    expect(structured(await client.callTool({ name: "create_task", arguments: { project_id: beta.id, title: "Seen" } })).title).toBe("Seen");
    await client.close();

    const read = await makeToken(member.token, { scope: "read" });
    const { client: reader } = await asPerson(read.token);
    refusal(await reader.callTool({ name: "create_task", arguments: { project_id: alpha.id, title: "No" } }), 403, "TOKEN_SCOPE");
    expect(structured(await reader.callTool({ name: "list_tasks", arguments: { project_id: alpha.id } })).tasks.length).toBeGreaterThan(0);
    await reader.close();
  });

  it("refuses a revoked or expired token with its code and where to sign in", async () => {
    const made = await makeToken(member.token);
    await call(`${TOKENS}/${made.id}`, { method: "DELETE", token: member.token });
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    const res = await workerFetch(MCP_URL, {
      method: "POST",
      headers: { Authorization: `Bearer ${made.token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify(init),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe("PERSONAL_TOKEN_REVOKED");
    expect(res.headers.get("WWW-Authenticate")).toContain("resource_metadata=");
  });
});

describe("on A2A", () => {
  it("reads a card and sends a message as its person, within its projects and scope", async () => {
    const limited = await makeToken(member.token, { project_ids: [alpha.id] });
    expect((await fetchAs(limited.token)(`${a2aBase(alpha.id)}.well-known/agent-card.json`)).status).toBe(200);
    expect((await fetchAs(limited.token)(`${a2aBase(beta.id)}.well-known/agent-card.json`)).status).toBe(404);
    const send = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "SendMessage",
      params: { message: { messageId: `pat-${id}`, role: "ROLE_USER", parts: [{ text: "Write the changelog" }] } },
    });
    const sent = await rpc(alpha.id, limited.token, send(1));
    expect(sent.body.result?.task?.id ?? sent.body.result?.id, JSON.stringify(sent.body)).toBeTruthy();

    const read = await makeToken(member.token, { scope: "read", project_ids: [alpha.id] });
    const refused = await fetchAs(read.token)(a2aBase(alpha.id), {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify(send(2)),
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe("TOKEN_SCOPE");
    const list = await rpc(alpha.id, read.token, { jsonrpc: "2.0", id: 3, method: "ListTasks", params: {} });
    expect(list.body.result.tasks.length).toBeGreaterThan(0);
  });
});

describe("logs", () => {
  const levelBefore = env.LOG_LEVEL;
  afterEach(() => {
    env.LOG_LEVEL = levelBefore;
    vi.restoreAllMocks();
  });

  it("never carry a token, used or refused", async () => {
    const made = await makeToken(member.token);
    const written: string[] = [];
    env.LOG_LEVEL = "debug";
    for (const m of ["log", "info", "warn", "error", "debug"] as const)
      vi.spyOn(console, m).mockImplementation((...args: unknown[]) => void written.push(args.map(String).join(" ")));
    await call("/api/v1/projects", { token: made.token });
    await call(`/api/v1/projects/${alpha.id}?x=${made.token}`, { token: made.token });
    await call("/api/v1/auth/me", { token: made.token.slice(0, -2) + "zz" });
    expect(written.length).toBeGreaterThan(0);
    const secret = made.token.slice(7);
    expect(written.filter((line) => line.includes(secret.slice(0, 20)))).toEqual([]);
  });
});
