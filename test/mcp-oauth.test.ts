/**
 * OAuth 2.1 for MCP clients, end to end with the official SDK's client: it finds the authorization server from the
 * 401, registers itself, sends the person to the hub's authorize page (signed in there with their hub password), and
 * exchanges the code with its PKCE verifier for a token that calls tools as that person.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { addMember, createUser } from "./helpers";
import { mcpClient, refusal, structured, workerFetch } from "./mcp-client";
import { exchange, openAuthorizePage, startAuthorization, submit } from "./oauth-flow";
import { createWorld, type World } from "./task-world";

let w: World;
beforeAll(async () => {
  w = await createWorld("MCP OAuth");
});

describe("OAuth for MCP clients", () => {
  it("publishes the protected resource's and the authorization server's metadata", async () => {
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const res = await workerFetch(`https://hub.test${path}`);
      expect(await res.json()).toMatchObject({ resource: "https://hub.test/mcp", authorization_servers: ["https://hub.test"] });
    }
    const server = (await (await workerFetch("https://hub.test/.well-known/oauth-authorization-server")).json()) as Record<string, unknown>;
    expect(server).toMatchObject({
      issuer: "https://hub.test",
      authorization_endpoint: "https://hub.test/oauth/authorize",
      token_endpoint: "https://hub.test/oauth/token",
      registration_endpoint: "https://hub.test/oauth/register",
      code_challenge_methods_supported: ["S256"],
    });
  });

  it("registers a client, signs the person in on the authorize page, exchanges the code with PKCE, and calls tools as them", async () => {
    const member = await createUser(w.admin, "member");
    await addMember(w.admin, w.project.id, member.id);
    const { provider, url } = await startAuthorization();
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    const { html, cookie, handle } = await openAuthorizePage(url);
    // The client named itself: its name is shown escaped, and where access goes is said.
    expect(html).toContain("Allow Test &#60;Agent&#62; to work as you");
    expect(html).toContain("<strong>127.0.0.1</strong>");

    const wrong = await submit(url, cookie, { handle, decision: "allow", email: member.email, password: "not-the-password" });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("Wrong email or password");

    const allowed = await submit(url, cookie, { handle, decision: "allow", email: member.email, password: member.password });
    expect(allowed.status).toBe(302);
    const back = new URL(allowed.headers.get("Location")!);
    expect(`${back.origin}${back.pathname}`).toBe(provider.redirectUrl);
    expect(back.searchParams.get("iss")).toBe("https://hub.test");
    const code = back.searchParams.get("code")!;

    await exchange(provider, code);
    expect(provider.saved?.access_token).toBeTruthy();

    const { client } = await mcpClient({}, { authProvider: provider });
    const created = structured(await client.callTool({ name: "create_task", arguments: { project_id: w.project.id, title: "Through OAuth" } }));
    expect(created).toMatchObject({ title: "Through OAuth", created_by: member.email });
    await client.close();
  });

  it("a token acts with the person's role: a viewer's token reads and cannot write", async () => {
    const viewer = await createUser(w.admin, "viewer");
    await addMember(w.admin, w.project.id, viewer.id);
    const { provider, url } = await startAuthorization();
    const { cookie, handle } = await openAuthorizePage(url);
    const allowed = await submit(url, cookie, { handle, decision: "allow", email: viewer.email, password: viewer.password });
    await exchange(provider, new URL(allowed.headers.get("Location")!).searchParams.get("code")!);
    const { client } = await mcpClient({}, { authProvider: provider });
    expect(structured(await client.callTool({ name: "list_projects", arguments: {} })).projects.map((p: { id: string }) => p.id)).toEqual([w.project.id]);
    refusal(await client.callTool({ name: "create_task", arguments: { project_id: w.project.id, title: "Viewer via OAuth" } }), 403, "FORBIDDEN");
    await client.close();
  });

  it("denying sends the browser back to the client with access_denied, and the handle cannot be used again", async () => {
    const { provider, url } = await startAuthorization();
    const { cookie, handle } = await openAuthorizePage(url);
    const denied = await submit(url, cookie, { handle, decision: "deny" });
    expect(denied.status).toBe(302);
    const back = new URL(denied.headers.get("Location")!);
    expect(`${back.origin}${back.pathname}`).toBe(provider.redirectUrl);
    expect(back.searchParams.get("error")).toBe("access_denied");
    const again = await submit(url, cookie, { handle, decision: "allow", email: "x@example.com", password: "whatever-password" });
    expect(again.status).not.toBe(302);
  });

  it("a request for a scope the hub does not offer goes back to the client with invalid_scope, not to the consent page", async () => {
    const { provider, url } = await startAuthorization();
    expect(url.searchParams.get("scope")).toBe("mcp");
    url.searchParams.set("scope", "mcp admin:everything");
    url.searchParams.set("state", "state-kept");
    const refused = await workerFetch(url, { redirect: "manual" });
    expect(refused.status).toBe(302);
    const back = new URL(refused.headers.get("Location")!);
    expect(`${back.origin}${back.pathname}`).toBe(provider.redirectUrl);
    expect(back.searchParams.get("error")).toBe("invalid_scope");
    expect(back.searchParams.get("error_description")).toContain('"admin:everything"');
    expect(back.searchParams.get("state")).toBe("state-kept");
    expect(back.searchParams.get("iss")).toBe("https://hub.test");
    expect(back.searchParams.get("code")).toBeNull();

    // A redirect URI the client did not register is never redirected to, whatever the scope: the hub's page says why.
    url.searchParams.set("redirect_uri", "https://elsewhere.example/callback");
    const page = await workerFetch(url, { redirect: "manual" });
    expect(page.status).toBe(400);
    expect(page.headers.get("Location")).toBeNull();
    expect(page.headers.get("Content-Type")).toContain("text/html");
  });

  it("a made-up token is refused with the challenge", async () => {
    const res = await workerFetch("https://hub.test/mcp", {
      method: "POST",
      headers: { Authorization: "Bearer someone:grant:made-up", "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: "{}",
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
  });
});
