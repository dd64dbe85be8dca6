/**
 * OAuth 2.1 for MCP clients that sign a person in through the browser (@cloudflare/workers-oauth-provider): the
 * authorization server (its metadata, dynamic client registration, the token endpoint with PKCE) and the MCP endpoint
 * as its protected resource (its metadata, the 401 challenge naming it, token validation). Both are made once per
 * base URL, since the hub's URL may be the request's origin.
 */
import { OAuthAuthorizationServer, OAuthResourceServer, type OAuthResourceContext } from "@cloudflare/workers-oauth-provider";
import { dbOf } from "../db/client";
import type { HubContext } from "../http/context";
import type { WorkerEnv } from "../runtime/worker-env";
import { requireLiveGrant, roleOfLiveGrant } from "./grant-check";

export const MCP_PATH = "/mcp";
export const AUTHORIZE_PATH = "/oauth/authorize";
/** The one scope: a token acts as the person who approved it, with their role; nothing narrower is offered. */
export const MCP_SCOPE = "mcp";
/** Every scope the authorization server offers: a request for any other is refused with `invalid_scope`. */
export const SCOPES_OFFERED = [MCP_SCOPE];
/** How long an access token the hub issues to an MCP client lasts; the client refreshes it after. */
const ACCESS_TOKEN_SECONDS = 3600;
/** How long a grant lasts from its code's exchange (the library's default, stated so the hub's record agrees). */
const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
/** How long the library keeps an unexchanged code. */
export const AUTHORIZATION_CODE_SECONDS = 600;

/** What the hub keeps with an OAuth grant: the person it acts as. */
export interface GrantProps {
  userId: string;
  role: string;
}

/** What a request to /mcp carried, once validated: a person, by an OAuth token or by their own access token. */
export type BearerProps = GrantProps & { via: "oauth" | "jwt" };

export type BearerHandler = (c: HubContext, props: BearerProps, auth: OAuthResourceContext<BearerProps>["auth"]) => Promise<Response>;

/** Validates a bearer token that is not the hub's own access token (those are recognised by shape and checked by the hub). */
export type HubTokenCheck = (c: HubContext, token: string) => Promise<{ props: BearerProps; expiresAt: number } | null>;

interface OAuthPair {
  authorization: OAuthAuthorizationServer<WorkerEnv>;
  resource: OAuthResourceServer<WorkerEnv, BearerProps>;
}

const pairs = new Map<string, OAuthPair>();
/** The request each resource-server call is for: the library hands handlers the Request, the hub needs its context. */
const contexts = new WeakMap<Request, { c: HubContext; handle: BearerHandler; hubToken: HubTokenCheck }>();

const looksLikeJwt = (token: string) => /^eyJ[\w-]*\.[\w-]+\.[\w-]+$/.test(token);

function pairFor(base: string): OAuthPair {
  let pair = pairs.get(base);
  if (pair) return pair;
  const resourceUrl = `${base}${MCP_PATH}`;
  const authorization = new OAuthAuthorizationServer<WorkerEnv>({
    issuer: base,
    resources: [resourceUrl],
    authorizeEndpoint: AUTHORIZE_PATH,
    tokenEndpoint: "/oauth/token",
    clientRegistrationEndpoint: "/oauth/register",
    scopesSupported: SCOPES_OFFERED,
    accessTokenTTL: ACCESS_TOKEN_SECONDS,
    refreshTokenTTL: REFRESH_TOKEN_SECONDS,
    // Nothing is minted for a grant the hub no longer holds live (revoked, a new password, its person deleted).
    tokenExchangeCallback: ({ grantType, grantId, userId, env }) => requireLiveGrant(dbOf(env.DB), grantType, grantId, userId, REFRESH_TOKEN_SECONDS),
  });
  const resource = new OAuthResourceServer<WorkerEnv, BearerProps>({
    resourceMetadata: { resource: resourceUrl, authorization_servers: [base], resource_name: "Orchestratia hub (MCP)" },
    requiredScopes: [MCP_SCOPE],
    validateToken: (env, request) => async (audience, token) => {
      const held = contexts.get(request)!;
      if (looksLikeJwt(token)) {
        const checked = await held.hubToken(held.c, token);
        return checked && { props: checked.props, audience, expiresAt: checked.expiresAt };
      }
      const valid = await authorization.validateToken<GrantProps>(audience, token, env);
      if (!valid) return null;
      // KV may still hold a token of a grant that has ended: the hub's own record decides, with the person's role now.
      const role = await roleOfLiveGrant(held.c.var.db, token, valid.userId);
      return role && { ...valid, props: { userId: valid.userId, role, via: "oauth" } };
    },
    handler: {
      fetch: (request, _env, ctx) => {
        const held = contexts.get(request)!;
        return held.handle(held.c, ctx.props, ctx.auth);
      },
    },
  });
  pair = { authorization, resource };
  pairs.set(base, pair);
  return pair;
}

/** The authorization server of the hub at `base`: its endpoints (fetch) and the authorize step's helpers. */
export const authorizationServer = (base: string) => pairFor(base).authorization;

/**
 * Serves a request to /mcp that carries no API key, or to the protected-resource metadata: the library challenges one
 * without a bearer token (401 naming the metadata), validates the token, and hands the person it stands for to `handle`.
 */
export function asProtectedResource(c: HubContext, base: string, handle: BearerHandler, hubToken: HubTokenCheck, request = c.req.raw): Promise<Response> {
  contexts.set(request, { c, handle, hubToken });
  // A context of its own: the library sets `props` and `auth` on the one it is given.
  const ctx = { waitUntil: (p: Promise<unknown>) => c.executionCtx.waitUntil(p), passThroughOnException: () => {}, props: {} } as unknown as ExecutionContext;
  return pairFor(base).resource.fetch(request, c.env, ctx);
}
