/**
 * The MCP clients a person authorised through OAuth: listed and revoked by that person, and all revoked by a password
 * change (their own or an admin's reset) and by the person's deletion. A revoked client's access token is refused on
 * /mcp and its refresh token (or a code not yet exchanged) mints nothing.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { bootstrapAdmin, call, expectProblem, login } from "./helpers";
import { allowedCode, authorizedClient, exchange, mcpStatusWith, openAuthorizePage, refresh, submit, tokenEndpoint, type MemoryProvider } from "./oauth-flow";

let admin: string;
beforeAll(async () => {
  admin = await bootstrapAdmin();
});

let people = 0;
/** A new account, signed in (each sign-in from an address of its own: throttling is not what these tests are about). */
async function createUser(adminToken: string, role: "admin" | "member" | "viewer") {
  const email = `grants-${++people}-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const password = `password-${people}-long`;
  const created = await call("/api/v1/users", { token: adminToken, body: { email, password, role } });
  expect(created.status, created.text).toBe(201);
  const session = await login(email, password);
  expect(session.status, session.text).toBe(200);
  return { id: created.json.id as string, email, password, token: session.json.access_token as string };
}
type Person = Awaited<ReturnType<typeof createUser>>;

const listed = async (person: Person) => {
  const reply = await call("/api/v1/auth/me/mcp-clients", { token: person.token });
  expect(reply.status, reply.text).toBe(200);
  return reply.json.clients as { id: string; client_id: string; client_name: string | null; authorized_at: string; last_used_at: string | null }[];
};

/** The client works: /mcp answers its access token, and its refresh token mints a new pair (which it keeps). */
async function expectWorking(provider: MemoryProvider) {
  expect(await mcpStatusWith(provider.saved!.access_token)).toBe(200);
  const refreshed = await refresh(provider);
  expect(refreshed.status, JSON.stringify(refreshed.json)).toBe(200);
  expect(await mcpStatusWith(provider.saved!.access_token)).toBe(200);
}

/** The client is cut off: its access token is refused on /mcp, and its refresh token mints nothing. */
async function expectCutOff(provider: MemoryProvider) {
  expect(await mcpStatusWith(provider.saved!.access_token)).toBe(401);
  const refreshed = await refresh(provider);
  expect(refreshed.status).toBe(400);
  expect(refreshed.json.error).toBe("invalid_grant");
  expect(refreshed.json.access_token).toBeUndefined();
}

describe("The MCP clients a person authorised", () => {
  it("are listed to that person with their name and when they were allowed and last used, newest first", async () => {
    const person = await createUser(admin, "member");
    const before = new Date().toISOString();
    await authorizedClient(person, "Editor <one>");
    await authorizedClient(person, "Chat two");
    const clients = await listed(person);
    expect(clients.map((c) => c.client_name)).toEqual(["Chat two", "Editor <one>"]);
    for (const c of clients) {
      expect(c.authorized_at >= before).toBe(true);
      // The code's exchange is the client's first use.
      expect(c.last_used_at! >= c.authorized_at).toBe(true);
      expect(c.client_id).toBeTruthy();
    }
  });

  it("allowing the same client again replaces its earlier authorization", async () => {
    const person = await createUser(admin, "member");
    const client = await authorizedClient(person, "Twice");
    const before = client.saved!;
    const [earlier] = await listed(person);
    // The same registration signs the person in again (as a client that lost its tokens does).
    const url = client.authorizationUrl!;
    const { cookie, handle } = await openAuthorizePage(url);
    const allowed = await submit(url, cookie, { handle, decision: "allow", email: person.email, password: person.password });
    await exchange(client, new URL(allowed.headers.get("Location")!).searchParams.get("code")!);
    const now = await listed(person);
    expect(now.map((c) => c.client_name)).toEqual(["Twice"]);
    expect(now[0]!.id).not.toBe(earlier!.id);
    expect(await mcpStatusWith(before.access_token)).toBe(401);
    expect(await mcpStatusWith(client.saved!.access_token)).toBe(200);
  });

  it("are all revoked by a password change: the old access token gets 401 on /mcp, the refresh token mints nothing", async () => {
    const person = await createUser(admin, "member");
    const one = await authorizedClient(person);
    const two = await authorizedClient(person);
    await expectWorking(one);
    const changed = await call("/api/v1/auth/password", {
      token: person.token,
      body: { current_password: person.password, new_password: "another-long-password" },
    });
    expect(changed.status, changed.text).toBe(200);
    await expectCutOff(one);
    await expectCutOff(two);
    expect(await listed(person)).toEqual([]);
    // Allowing a client again, with the new password, works.
    await expectWorking(await authorizedClient({ email: person.email, password: "another-long-password" }));
  });

  it("a code issued before a password change is exchanged for nothing", async () => {
    const person = await createUser(admin, "member");
    const { provider, code } = await allowedCode(person);
    const changed = await call("/api/v1/auth/password", {
      token: person.token,
      body: { current_password: person.password, new_password: "another-long-password" },
    });
    expect(changed.status).toBe(200);
    const exchanged = await tokenEndpoint(provider, {
      grant_type: "authorization_code",
      code,
      code_verifier: provider.verifier,
      redirect_uri: provider.redirectUrl,
    });
    expect(exchanged.status).toBe(400);
    expect(exchanged.json.error).toBe("invalid_grant");
  });

  it("are all revoked when an admin sets the person's password", async () => {
    const person = await createUser(admin, "member");
    const client = await authorizedClient(person);
    await expectWorking(client);
    const reset = await call(`/api/v1/users/${person.id}`, { method: "PATCH", token: admin, body: { password: "reset-by-admin-long" } });
    expect(reset.status, reset.text).toBe(200);
    await expectCutOff(client);
  });

  it("an admin's rename leaves them working", async () => {
    const person = await createUser(admin, "member");
    const client = await authorizedClient(person);
    const renamed = await call(`/api/v1/users/${person.id}`, { method: "PATCH", token: admin, body: { name: "Renamed" } });
    expect(renamed.status).toBe(200);
    await expectWorking(client);
  });

  it("are all revoked by the person's deletion: no token, no session, not even for a code issued before", async () => {
    const person = await createUser(admin, "member");
    const client = await authorizedClient(person);
    const pending = await allowedCode(person, "Pending");
    await expectWorking(client);
    const deleted = await call(`/api/v1/users/${person.id}`, { method: "DELETE", token: admin });
    expect(deleted.status, deleted.text).toBe(200);
    await expectCutOff(client);
    const exchanged = await tokenEndpoint(pending.provider, {
      grant_type: "authorization_code",
      code: pending.code,
      code_verifier: pending.provider.verifier,
      redirect_uri: pending.provider.redirectUrl,
    });
    expect(exchanged.json.error).toBe("invalid_grant");
    const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM mcp_client_grants WHERE user_id = ?1").bind(person.id).first<{ n: number }>();
    expect(rows!.n).toBe(0);
  });

  it("revoking one stops only that client", async () => {
    const person = await createUser(admin, "member");
    const kept = await authorizedClient(person, "Kept");
    const revoked = await authorizedClient(person, "Revoked");
    const id = (await listed(person)).find((c) => c.client_name === "Revoked")!.id;
    const reply = await call(`/api/v1/auth/me/mcp-clients/${id}`, { method: "DELETE", token: person.token });
    expect(reply.status, reply.text).toBe(204);
    await expectCutOff(revoked);
    await expectWorking(kept);
    expect((await listed(person)).map((c) => c.client_name)).toEqual(["Kept"]);
    // Gone is gone: revoking it again is 404.
    expectProblem(await call(`/api/v1/auth/me/mcp-clients/${id}`, { method: "DELETE", token: person.token }), 404, "NOT_FOUND");
  });

  it("another person neither sees nor revokes them, admins included", async () => {
    const person = await createUser(admin, "member");
    const other = await createUser(admin, "member");
    const otherAdmin = await createUser(admin, "admin");
    const client = await authorizedClient(person, "Mine");
    const id = (await listed(person))[0]!.id;
    expect(await listed(other)).toEqual([]);
    expect(await listed(otherAdmin)).toEqual([]);
    for (const who of [other, otherAdmin]) {
      expectProblem(await call(`/api/v1/auth/me/mcp-clients/${id}`, { method: "DELETE", token: who.token }), 404, "NOT_FOUND");
    }
    await expectWorking(client);
    expect((await listed(person)).map((c) => c.id)).toEqual([id]);
  });

  it("the hub's record decides, whatever OAuth storage still holds: a grant without one is refused at once", async () => {
    const person = await createUser(admin, "member");
    const client = await authorizedClient(person);
    await expectWorking(client);
    // As if KV had not yet forgotten the grant where the token is checked: only the hub's row goes.
    await env.DB.prepare("DELETE FROM mcp_client_grants WHERE user_id = ?1").bind(person.id).run();
    await expectCutOff(client);
  });

  it("a client's use is recorded at most once a minute", async () => {
    const person = await createUser(admin, "member");
    const client = await authorizedClient(person);
    const twoMinutesAgo = new Date(Date.now() - 120_000).toISOString();
    await env.DB.prepare("UPDATE mcp_client_grants SET last_used_at = ?2 WHERE user_id = ?1").bind(person.id, twoMinutesAgo).run();
    expect(await mcpStatusWith(client.saved!.access_token)).toBe(200);
    const [first] = await listed(person);
    expect(first!.last_used_at! > twoMinutesAgo).toBe(true);
    expect(await mcpStatusWith(client.saved!.access_token)).toBe(200);
    const [second] = await listed(person);
    expect(second!.last_used_at).toBe(first!.last_used_at);
  });

  it("the people's own sign-in is not touched by revoking a client", async () => {
    const person = await createUser(admin, "member");
    await authorizedClient(person, "Short-lived");
    const id = (await listed(person))[0]!.id;
    expect((await call(`/api/v1/auth/me/mcp-clients/${id}`, { method: "DELETE", token: person.token })).status).toBe(204);
    expect((await login(person.email, person.password)).status).toBe(200);
    expect((await call("/api/v1/auth/me", { token: person.token })).status).toBe(200);
  });
});
