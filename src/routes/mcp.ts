/**
 * The MCP endpoint (`/mcp`, Streamable HTTP) and the OAuth routes MCP clients use to sign a person in. Requests are
 * checked against DNS rebinding (Origin, and Host when PUBLIC_URL is set), then authenticated: an agent's API key
 * here, a person's personal access token by the hub's sign-in, any other bearer token (a person's access token, or an
 * OAuth token the hub issued) by the protected resource (src/mcp/oauth.ts). Then src/mcp/server.ts answers, calling
 * the REST routes as the caller (with the caller's own token, so a personal token's limits hold on every call).
 */
import { AuthorizationError, authorizationErrorRedirect, CimdFetchError } from "@cloudflare/workers-oauth-provider";
import { Hono } from "hono";
import { z } from "zod";
import { issueAccessToken } from "../auth/jwt";
import { isPersonalToken } from "../auth/personal-tokens";
import { apiKeyOf, bearerToken, rememberedServerForApiKey, signInWithToken } from "../middleware/guards";
import { hubBaseUrl } from "../http/base-url";
import type { HubContext, HubEnv } from "../http/context";
import { allowedOrigins } from "../http/cors";
import { Problem } from "../http/problem";
import type { ProblemCode } from "../http/problem-codes";
import { authorizePage, PAGE_HEADERS } from "../mcp/authorize-page";
import type { CallerHeaders } from "../http/internal-request";
import type { McpCaller } from "../mcp/dispatch";
import { recordClientGrant } from "../mcp/client-grants";
import { grantIdOf, unknownScopes } from "../mcp/grant-tokens";
import {
  asProtectedResource,
  AUTHORIZATION_CODE_SECONDS,
  AUTHORIZE_PATH,
  authorizationServer,
  MCP_PATH,
  MCP_SCOPE,
  SCOPES_OFFERED,
  type BearerHandler,
  type HubTokenCheck,
} from "../mcp/oauth";
import { allResponses, takeAnswers } from "../mcp/elicitation-answers";
import { listen } from "../mcp/listen";
import { answersForms } from "../mcp/tasks";
import { answerLegacy, answerModern, isLegacyRequest, listenRequest } from "../mcp/serving";
import type { SessionOwner } from "../mcp/session";
import { endSession, sessionInUse, sessionPort, sessionStub } from "../mcp/session-client";
import { documented } from "../openapi/operation";
import { signInWithPassword } from "./auth";

const SESSION_HEADER = "Mcp-Session-Id";
/** How long a subscriptions/listen stream lasts before it ends and its client listens again (credentials checked anew). */
const LISTEN_MS = 15 * 60 * 1000;

/** Names that always mean this machine: a page on them is the hub's own only when the hub answers there too. */
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * DNS rebinding: a browser page of another origin (or a name pointed at the hub) must not reach /mcp. Without
 * PUBLIC_URL the hub knows its own origin only from the request, whose Host a rebound name controls, so a page is
 * taken for the hub's own only on a loopback name; elsewhere its origin must be in CORS_ORIGINS.
 */
function checkOrigin(c: HubContext) {
  const base = new URL(hubBaseUrl(c));
  const host = new URL(c.req.url).host;
  if (c.env.PUBLIC_URL && host !== base.host) throw new Problem(403, "FORBIDDEN_HOST", `The MCP endpoint answers only at ${base.host}, not ${host}`);
  const origin = c.req.header("Origin");
  if (!origin || allowedOrigins(c.env.CORS_ORIGINS).includes(origin)) return;
  const own = origin === base.origin && (Boolean(c.env.PUBLIC_URL) || LOOPBACK.has(base.hostname));
  if (!own) throw new Problem(403, "FORBIDDEN_ORIGIN", `Pages from ${origin} may not use the MCP endpoint (only ${base.origin} and CORS_ORIGINS)`);
}

/** A 401 for bad credentials that, like the protected resource's own, names where to learn how to sign in. */
const refused = (c: HubContext, code: ProblemCode, detail: string) =>
  new Problem(401, code, detail, undefined, {
    "WWW-Authenticate": `Bearer realm="orchestratia", error="invalid_token", resource_metadata="${hubBaseUrl(c)}/.well-known/oauth-protected-resource${MCP_PATH}"`,
  });
const keyRefused = (c: HubContext) => refused(c, "INVALID_API_KEY", "The API key is invalid or has been revoked");

/** A person's own access token (the dashboard's JWT): checked by the hub's sign-in, as every REST route checks it. */
const hubToken: HubTokenCheck = async (c, token) => {
  try {
    const { user, expiresAt } = await signInWithToken(c, token);
    return { props: { userId: user.id, role: user.role, via: "jwt" }, expiresAt };
  } catch (e) {
    if (e instanceof Problem && (e.status === 401 || e.status === 403)) return null;
    throw e;
  }
};

/** A POST's body as JSON, or undefined when it is not JSON. */
function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether a message opens a session (the transport checks its shape; this only decides whether to name one). */
const isInitialize = (m: unknown): m is { params?: { capabilities?: { elicitation?: unknown } } } =>
  typeof m === "object" && m !== null && (m as { method?: unknown }).method === "initialize";

export function mcpRoutes(app: Hono<HubEnv>) {
  const r = new Hono<HubEnv>();

  /** One request to /mcp from an authenticated caller; `until` is when its credentials lapse (ms), when they do. */
  async function answer(c: HubContext, caller: McpCaller, owner: SessionOwner, until = Infinity): Promise<Response> {
    const sessionId = c.req.header(SESSION_HEADER);
    if (c.req.method === "GET") {
      if (!sessionId)
        throw new Problem(405, "METHOD_NOT_ALLOWED", "Open a session first: the stream of notifications belongs to one", undefined, { Allow: "POST, DELETE" });
      const stream = await sessionStub(c.env, sessionId).fetch("https://session/stream", { headers: { "X-Mcp-Owner": owner.key } });
      if (stream.status === 404) throw new Problem(404, "NOT_FOUND", "Unknown or ended MCP session: initialize again");
      return stream;
    }
    if (c.req.method === "DELETE") {
      if (!sessionId) throw new Problem(400, "MALFORMED_REQUEST", `Name the session to end in ${SESSION_HEADER}`);
      if (!(await endSession(c.env, sessionId, owner.key))) throw new Problem(404, "NOT_FOUND", "Unknown or ended MCP session");
      return new Response(null, { status: 204 });
    }
    const text = await c.req.text();
    const parsed = parsedJson(text);
    // A body that is not JSON goes to the 2025 transport as it came, which answers it with JSON-RPC's parse error.
    if (parsed === undefined) return answerLegacy(app, { c, caller }, new Request(c.req.url, { method: "POST", headers: c.req.raw.headers, body: text }));
    if (!(await isLegacyRequest(c.req.raw, parsed))) {
      const listening = listenRequest(c, parsed);
      if (listening instanceof Response) return listening;
      if (listening) return listen(app, { c, caller }, { roomUserId: owner.roomUserId, expiresAt: Math.min(Date.now() + LISTEN_MS, until) }, listening);
      return answerModern(app, { c, caller }, c.req.raw, parsed);
    }
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    const initialize = messages.find(isInitialize);
    const opening = initialize ? crypto.randomUUID() : undefined;
    if (opening) await sessionStub(c.env, opening).claim(owner, answersForms(initialize?.params?.capabilities ?? {}));
    else if (sessionId && !(await sessionInUse(c.env, sessionId, owner.key)))
      throw new Problem(404, "NOT_FOUND", "Unknown or ended MCP session: initialize again");
    if (sessionId && !opening && allResponses(messages)) {
      await takeAnswers(app, { c, caller }, sessionId, owner.key, messages);
      return new Response(null, { status: 202 });
    }
    const current = opening ?? sessionId;
    const session = current ? sessionPort(c.env, current, owner.key) : undefined;
    const res = await answerLegacy(app, { c, caller, session }, c.req.raw, parsed);
    if (!opening || !res.ok) return res;
    const headers = new Headers(res.headers);
    headers.set(SESSION_HEADER, opening);
    return new Response(res.body, { status: res.status, headers });
  }

  /**
   * A person, by the protected resource's word: tools act with an access token of theirs (the one they sent, or one
   * made for this request, which never leaves the Worker and lasts as long as a listen stream may).
   */
  const asPerson: BearerHandler = async (c, props, auth) => {
    const token = props.via === "jwt" ? auth.token : await issueAccessToken(c.env, props.userId, props.role, `${LISTEN_MS / 1000}s`);
    const headers: CallerHeaders = { Authorization: `Bearer ${token}` };
    const owner = { key: `user:${props.userId}`, roomUserId: props.userId };
    return answer(c, { audience: "person", headers }, owner, auth.expiresAt ? auth.expiresAt * 1000 : Infinity);
  };

  /**
   * A person by a personal access token: checked here with its own refusals (expired, revoked), and sent on with every
   * tool's request, which checks it again with its scope and projects. Its sessions are its own, not its person's.
   */
  async function asTokenHolder(c: HubContext, token: string) {
    let signedIn;
    try {
      signedIn = await signInWithToken(c, token);
    } catch (e) {
      if (e instanceof Problem && e.status === 401) throw refused(c, e.code, e.detail);
      throw e;
    }
    const owner = { key: `token:${signedIn.token?.id}`, roomUserId: signedIn.user.id };
    return answer(c, { audience: "person", headers: { Authorization: `Bearer ${token}` } }, owner, signedIn.expiresAt ? signedIn.expiresAt * 1000 : Infinity);
  }

  async function endpoint(c: HubContext) {
    checkOrigin(c);
    const apiKey = apiKeyOf(c);
    const bearer = bearerToken(c);
    if (!apiKey && bearer && isPersonalToken(bearer)) return asTokenHolder(c, bearer);
    if (!apiKey) return asProtectedResource(c, hubBaseUrl(c), asPerson, hubToken);
    const server = await rememberedServerForApiKey(c, apiKey);
    if (!server) throw keyRefused(c);
    const owner = { key: `server:${server.id}`, roomUserId: `server:${server.id}` };
    return answer(c, { audience: "agent", headers: { "X-API-Key": apiKey } }, owner);
  }

  const described = (id: string, method: string, summary: string, description: string, responses: Parameters<typeof documented>[0]["responses"]) =>
    documented({
      id,
      tag: "MCP",
      summary,
      description: `${description}\n\nCredentials: an agent's API key (\`X-API-Key\` or \`Authorization: Bearer orc_...\`), a person's access token or personal access token (\`orcpat_...\`: its scope and projects hold on every tool), or an OAuth token the hub issued (${method} needs the same). A foreign \`Origin\` is 403 \`FORBIDDEN_ORIGIN\`; without credentials, 401 with \`WWW-Authenticate: Bearer resource_metadata=...\`.`,
      caller: ["agent", "person"],
      headers: {
        [SESSION_HEADER]: "The session `initialize` answered with (2025 revisions)",
        "MCP-Protocol-Version": "The revision the client speaks",
        "Mcp-Method": "The JSON-RPC method (2026-07-28)",
        "Mcp-Name": "The tool, prompt, resource URI or task id the request names (2026-07-28)",
      },
      responses,
    });

  r.post(
    MCP_PATH,
    described(
      "mcpMessage",
      "POST",
      "Send MCP messages",
      "JSON-RPC messages of the Model Context Protocol (Streamable HTTP), answered as JSON. Revision 2026-07-28 first: `server/discover`, then " +
        "stateless requests, each carrying its revision, client and capabilities in `_meta` and the headers `MCP-Protocol-Version`, `Mcp-Method` " +
        "and `Mcp-Name` (a missing or mismatched header is 400, an unserved revision -32022). The 2025 revisions (2025-11-25, 2025-06-18, " +
        "2025-03-26) open with `initialize`, which answers a new `Mcp-Session-Id`.",
      { 200: { description: "The JSON-RPC answer", contentType: "application/json" }, 202: { description: "Notifications and answers accepted" } },
    ),
    endpoint,
  );
  r.get(
    MCP_PATH,
    described(
      "mcpStream",
      "GET",
      "Open an MCP session's stream",
      "The session's server-sent events (2025 revisions): `notifications/resources/updated` for subscribed resources, and `elicitation/create` for the questions agents ask about the tasks the client made (when it declared `elicitation`).",
      {
        200: { description: "Server-sent events", contentType: "text/event-stream" },
      },
    ),
    endpoint,
  );
  r.delete(
    MCP_PATH,
    described("mcpEndSession", "DELETE", "End an MCP session", "Ends the session named by `Mcp-Session-Id`: its subscriptions and stream.", {
      204: { description: "Ended" },
    }),
    endpoint,
  );

  // The protected resource's metadata (RFC 9728), under the resource's path and at the root, where clients look too.
  const resourceMetadata = (id: string, where: string) =>
    documented({
      id,
      tag: "MCP",
      summary: `Protected-resource metadata of /mcp${where}`,
      description: "RFC 9728: the resource (`<hub>/mcp`), the authorization server that issues its tokens (the hub), and the scope to ask for (`mcp`).",
      caller: "anyone",
      responses: { 200: { description: "The metadata", contentType: "application/json" } },
    });
  r.get(`/.well-known/oauth-protected-resource${MCP_PATH}`, resourceMetadata("mcpResourceMetadata", ""), (c) =>
    asProtectedResource(c, hubBaseUrl(c), asPerson, hubToken),
  );
  const atResourcePath = (c: HubContext) => new Request(`${new URL(c.req.url).origin}/.well-known/oauth-protected-resource${MCP_PATH}`, c.req.raw);
  r.get("/.well-known/oauth-protected-resource", resourceMetadata("mcpResourceMetadataAtRoot", " (at the root)"), (c) =>
    asProtectedResource(c, hubBaseUrl(c), asPerson, hubToken, atResourcePath(c)),
  );
  // The authorization server's metadata, client registration and token endpoint are the library's.
  for (const path of ["/.well-known/oauth-authorization-server", "/oauth/register", "/oauth/token"])
    r.all(path, (c) => authorizationServer(hubBaseUrl(c)).fetch(c.req.raw, c.env, c.executionCtx as ExecutionContext));

  const authorizeForm = z.object({ handle: z.string(), decision: z.string().optional(), email: z.string().optional(), password: z.string().optional() });
  const page = (html: string, status = 200, headers?: Headers) => {
    const all = new Headers(headers);
    for (const [k, v] of Object.entries(PAGE_HEADERS)) all.set(k, v);
    return new Response(html, { status, headers: all });
  };

  /** A refusal of the authorize step that must not go back to the client: shown on the hub's page. */
  const authorizeFailed = (e: unknown) => {
    if (e instanceof AuthorizationError && e.redirectTo) return Response.redirect(e.redirectTo, 302);
    if (e instanceof AuthorizationError || e instanceof CimdFetchError) {
      const message = e instanceof AuthorizationError ? e.description : "This application could not be verified.";
      return page(`<!doctype html><meta charset="utf-8"><title>Not allowed</title><p>${message.replace(/[&<>"']/g, "")}</p>`, 400);
    }
    throw e;
  };

  /**
   * The hub's record of the grant just made, which its code's exchange needs (src/mcp/grant-check.ts): its id is the
   * code's, its client named as it registered itself.
   */
  async function recordGrant(c: HubContext, clientId: string, userId: string, redirectTo: string) {
    const grantId = grantIdOf(new URL(redirectTo).searchParams.get("code") ?? "");
    if (!grantId) throw new Error("The authorization code names no grant");
    const client = await authorizationServer(hubBaseUrl(c)).getOAuthApi(c.env).lookupClient(clientId);
    const now = new Date();
    const expiresAt = new Date(now.getTime() + AUTHORIZATION_CODE_SECONDS * 1000);
    const recorded = await recordClientGrant(c.var.db, { grantId, userId, clientId, clientName: client?.clientName ?? null }, now, expiresAt);
    if (!recorded) throw new AuthorizationError("access_denied", { description: "This account no longer exists." });
  }

  r.get(
    AUTHORIZE_PATH,
    documented({
      id: "oauthAuthorize",
      tag: "MCP",
      summary: "Allow an MCP client",
      description: "OAuth 2.1's authorize step for MCP clients: a page that signs the person in (email and password) and asks them to allow the client.",
      caller: "anyone",
      responses: { 200: { description: "The page", contentType: "text/html" }, 302: { description: "Back to the client, when its request is refused" } },
    }),
    async (c) => {
      try {
        const oauth = authorizationServer(hubBaseUrl(c)).getOAuthApi(c.env);
        const request = await oauth.parseAuthRequest(c.req.raw);
        // The client and its redirect URI are valid by now (parseAuthRequest refuses others on the hub's page), so
        // a scope the hub does not offer goes back to the client as OAuth's own error (RFC 6749 §4.1.2.1).
        const unknown = unknownScopes(request.scope, SCOPES_OFFERED);
        if (unknown.length > 0) {
          const why = `Unknown scope ${unknown.map((s) => `"${s}"`).join(", ")}: this hub offers only ${SCOPES_OFFERED.join(", ")}`;
          return Response.redirect(authorizationErrorRedirect(request, "invalid_scope", why), 302);
        }
        const details = await oauth.describeConsent(request);
        const consent = await oauth.beginConsent(request);
        return page(authorizePage(consent.handle, details), 200, consent.headers);
      } catch (e) {
        return authorizeFailed(e);
      }
    },
  );
  r.post(
    AUTHORIZE_PATH,
    documented({
      id: "oauthAuthorizeDecision",
      tag: "MCP",
      summary: "Sign in and allow (or deny) an MCP client",
      description:
        "The authorize page's form: `handle`, `decision` (`allow` or `deny`), `email` and `password`. Allowing signs the person in as the dashboard does " +
        "(the same throttling) and redirects to the client with an authorization code; a wrong password shows the page again (401).",
      caller: "anyone",
      responses: {
        200: { description: "The page again", contentType: "text/html" },
        302: { description: "Back to the client, with a code or `access_denied`" },
      },
    }),
    async (c) => {
      const oauth = authorizationServer(hubBaseUrl(c)).getOAuthApi(c.env);
      try {
        const form = authorizeForm.safeParse(Object.fromEntries(await c.req.formData()));
        if (!form.success) return page(authorizePage("", null, "The form was incomplete: open the link from your application again."), 400);
        const { handle, decision, email, password } = form.data;
        if (decision !== "allow") {
          const denied = await oauth.denyConsent(c.req.raw, handle);
          return new Response(null, { status: 302, headers: denied.headers });
        }
        let user;
        try {
          user = await signInWithPassword(c, email ?? "", password ?? "");
        } catch (e) {
          if (!(e instanceof Problem) || (e.status !== 401 && e.status !== 429)) throw e;
          const details = await oauth.describeConsent(await oauth.parseAuthRequest(c.req.raw));
          return page(authorizePage(handle, details, e.detail, email), e.status, new Headers(e.headers));
        }
        const approved = await oauth.approveConsent(c.req.raw, handle, { scope: [MCP_SCOPE] });
        const { redirectTo } = await oauth.completeAuthorization({
          request: approved.request,
          userId: user.id,
          metadata: { email: user.email },
          scope: [MCP_SCOPE],
          props: { userId: user.id, role: user.role },
        });
        await recordGrant(c, approved.request.clientId, user.id, redirectTo);
        approved.headers.set("Location", redirectTo);
        return new Response(null, { status: 302, headers: approved.headers });
      } catch (e) {
        return authorizeFailed(e);
      }
    },
  );

  return r;
}
