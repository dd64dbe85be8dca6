/**
 * OAuth for MCP clients as a test drives it: the official SDK's client keeping its registration and tokens in memory,
 * the authorize page as a browser fills it in, and the token endpoint and /mcp called with a token by hand.
 */
import { UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { expect } from "vitest";
import { BASE } from "./helpers";
import { MCP_URL, mcpClient, workerFetch } from "./mcp-client";

/** A client's keeping of its registration, tokens and verifier, in memory; the browser is the test. */
export class MemoryProvider implements OAuthClientProvider {
  readonly redirectUrl = "http://127.0.0.1:43123/callback";
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  constructor(readonly clientName = "Test <Agent>") {}
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.clientName,
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation = () => this.client;
  saveClientInformation = (info: OAuthClientInformationMixed) => void (this.client = info);
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => void (this.saved = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => this.verifier;
}

/** The authorize page as a browser sees it: its form's handle and the cookie that binds it to this browser. */
export async function openAuthorizePage(url: URL) {
  const page = await workerFetch(url);
  expect(page.status).toBe(200);
  expect(page.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
  const html = await page.text();
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  return { html, cookie, handle: html.match(/name="handle" value="([^"]+)"/)![1]! };
}

let submissions = 0;
/** The form posted from an address of its own, so that sign-in throttling bites only where a test means it to. */
export const submit = (url: URL, cookie: string, fields: Record<string, string>) =>
  workerFetch(url, {
    method: "POST",
    redirect: "manual",
    headers: { Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded", "CF-Connecting-IP": `198.51.100.${++submissions % 250}` },
    body: new URLSearchParams(fields),
  });

/** The client's exchange of the code (with the PKCE verifier it kept) for tokens. */
export const exchange = (provider: MemoryProvider, code: string) =>
  new StreamableHTTPClientTransport(MCP_URL, { authProvider: provider, fetch: workerFetch }).finishAuth(code);

/** Runs the flow up to the authorize page: the client is refused, discovers, registers, and points the browser there. */
export async function startAuthorization(clientName?: string) {
  const provider = new MemoryProvider(clientName);
  await expect(mcpClient({}, { authProvider: provider })).rejects.toThrow(UnauthorizedError);
  expect(provider.client?.client_id).toBeTruthy();
  return { provider, url: provider.authorizationUrl! };
}

/** The person allows a new client on the authorize page: the code it is sent back with, not yet exchanged. */
export async function allowedCode(person: { email: string; password: string }, clientName?: string) {
  const { provider, url } = await startAuthorization(clientName);
  const { cookie, handle } = await openAuthorizePage(url);
  const allowed = await submit(url, cookie, { handle, decision: "allow", email: person.email, password: person.password });
  expect(allowed.status).toBe(302);
  return { provider, code: new URL(allowed.headers.get("Location")!).searchParams.get("code")! };
}

/** The whole flow: a client the person allowed, holding its tokens. */
export async function authorizedClient(person: { email: string; password: string }, clientName?: string) {
  const { provider, code } = await allowedCode(person, clientName);
  await exchange(provider, code);
  expect(provider.saved?.access_token).toBeTruthy();
  return provider;
}

/** The status /mcp answers an `initialize` sent with this bearer token. */
export async function mcpStatusWith(accessToken: string) {
  const res = await workerFetch(MCP_URL, {
    method: "POST",
    headers: { Authorization: `Bearer ${accessToken}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  });
  await res.body?.cancel();
  return res.status;
}

/** The token endpoint's answer to a grant (a refresh, or a code's exchange) sent by hand for the client. */
export async function tokenEndpoint(provider: MemoryProvider, fields: Record<string, string>) {
  const res = await workerFetch(`${BASE}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ client_id: provider.client!.client_id, ...fields }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, string> };
}

/** Spends the client's refresh token; on success the client keeps the new pair, as a real one does. */
export async function refresh(provider: MemoryProvider) {
  const answer = await tokenEndpoint(provider, { grant_type: "refresh_token", refresh_token: provider.saved!.refresh_token! });
  if (answer.status === 200) provider.saved = answer.json as unknown as OAuthTokens;
  return answer;
}
