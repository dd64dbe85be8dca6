/**
 * Guards for routes. Each route names who may call it: `person(role)` for
 * people with a JWT or a personal access token, `agent` for servers with an
 * API key. Both include the Idempotency-Key handling, which needs to know the caller.
 */
import { eq, sql } from "drizzle-orm";
import { every } from "hono/combine";
import { createMiddleware } from "hono/factory";
import { servers, users, type Role } from "../db/schema";
import type { ServerRow, UserRow } from "../db/client";
import { builtOnce } from "../db/sql";
import type { HubContext, HubEnv } from "../http/context";
import { idempotent } from "./idempotency";
import { forbidden, unauthorized } from "../http/problem";
import { InvalidToken, verifyAccessToken } from "../auth/jwt";
import { KeyLookups } from "../auth/key-lookups";
import { hasRole } from "../auth/roles";
import { sha256Hex } from "../auth/secrets";
import { isPersonalToken, personOfToken } from "../auth/personal-tokens";
import { tokenRefusal } from "../auth/token-limits";
import type { TokenLimits } from "../auth/principal";
import { assertActive } from "../auth/active-account";

/** The one check of whether an account may act (deactivated ones may not): every way a credential becomes a person calls it. */
export { assertActive };

export const API_KEY_PREFIX = "orc_";

/** The token of `Authorization: Bearer <token>`: a person's JWT or personal access token, or an agent's API key. */
export function bearerToken(c: HubContext): string | undefined {
  const header = c.req.header("Authorization");
  const match = header?.match(/^Bearer\s+(.+)$/i);
  return match?.[1]?.trim();
}

/**
 * Checks a person's access token (or personal access token, `orcpat_`) and makes its user the caller; the expiry of
 * the token is returned (for a personal token, the most a stream opened with it may run).
 */
export async function signInWithToken(c: HubContext, token: string): Promise<{ user: UserRow; expiresAt: number; token?: TokenLimits }> {
  if (isPersonalToken(token)) {
    const { user, limits, expiresAt } = await personOfToken(c.var.db, token);
    c.set("principal", { kind: "user", user, token: limits });
    return { user, expiresAt, token: limits };
  }
  let identity;
  try {
    identity = await verifyAccessToken(c.env, token);
  } catch (e) {
    if (e instanceof InvalidToken) throw unauthorized(e.message, "INVALID_TOKEN");
    throw e;
  }
  const user = await c.var.db.query.users.findFirst({
    where: "userId" in identity ? eq(users.id, identity.userId) : eq(users.email, identity.email),
  });
  if (!user) {
    if ("email" in identity) throw forbidden("No hub account matches this identity's email", "NO_ACCOUNT");
    throw unauthorized("The account behind this token no longer exists", "INVALID_TOKEN");
  }
  assertActive(user);
  c.set("principal", { kind: "user", user });
  return { user, expiresAt: identity.expiresAt };
}

const authenticatePerson = createMiddleware<HubEnv>(async (c, next) => {
  const token = bearerToken(c);
  if (!token) throw unauthorized("Sign in: send `Authorization: Bearer <access token or personal access token>`");
  if (token.startsWith(API_KEY_PREFIX)) throw unauthorized("This endpoint is for people; an agent API key is not accepted here");
  await signInWithToken(c, token);
  await next();
});

const requireRole = (role: Role) =>
  createMiddleware<HubEnv>(async (c, next) => {
    const principal = c.var.principal;
    if (principal?.kind !== "user") throw forbidden(`This needs the ${role} role`);
    // What the token can never do is named before what its person cannot do now.
    const refusal = tokenRefusal(principal, role, c.req.method);
    if (refusal) throw refusal;
    if (!hasRole(principal.user.role, role)) throw forbidden(`This needs the ${role} role`);
    await next();
  });

/** People with at least `role` (viewer: any signed-in person). */
export const person = (role: Role = "viewer") => every(authenticatePerson, requireRole(role), idempotent);

const refusePersonalTokens = createMiddleware<HubEnv>(async (c, next) => {
  const principal = c.var.principal;
  if (principal?.kind === "user" && principal.token)
    throw forbidden("Sign in to do this: a personal access token cannot manage tokens or the password", "PERSONAL_TOKEN_NOT_ACCEPTED");
  await next();
});

/** A person signed in (not by a personal access token): for what only the account's holder does, such as making tokens. */
export const signedInPerson = () => every(authenticatePerson, requireRole("viewer"), refusePersonalTokens, idempotent);

/**
 * People, on a route whose body streams to storage as it arrives (uploads): without Idempotency-Key replay, which
 * would read the whole body to fingerprint it.
 */
export const personStreaming = (role: Role) => every(authenticatePerson, requireRole(role));

/** The API key an agent sent, from `X-API-Key` or `Authorization: Bearer orc_...`. */
export function apiKeyOf(c: HubContext): string | undefined {
  const header = c.req.header("X-API-Key")?.trim();
  if (header) return header;
  const token = bearerToken(c);
  return token?.startsWith(API_KEY_PREFIX) ? token : undefined;
}

/** An agent request looks its key up by its digest. */
const serverByKeyHash = builtOnce((db) =>
  db
    .select()
    .from(servers)
    .where(eq(servers.apiKeyHash, sql.placeholder("hash")))
    .limit(1)
    .prepare(),
);

/** How long this isolate answers an API key from a lookup it made: the longest a revoked key can still read. */
export const API_KEY_LOOKUP_TTL_MS = 30_000;

/** This isolate's API-key lookups (key digest → server, or none), each answered for at most API_KEY_LOOKUP_TTL_MS. */
export const apiKeyLookups = new KeyLookups<ServerRow>({ ttlMs: API_KEY_LOOKUP_TTL_MS, maxEntries: 1_000 });

/** The server whose API key this is, read from D1 now (and remembered); undefined for an unknown or revoked key. */
export async function serverForApiKey(c: HubContext, apiKey: string) {
  const hash = await sha256Hex(apiKey);
  return liveServer(await apiKeyLookups.refresh(hash, () => serverByKeyHash(c.var.db).get({ hash })));
}

/** The server whose API key this is, as this isolate last read it (at most API_KEY_LOOKUP_TTL_MS ago). */
export async function rememberedServerForApiKey(c: HubContext, apiKey: string) {
  const hash = await sha256Hex(apiKey);
  return liveServer(await apiKeyLookups.lookup(hash, () => serverByKeyHash(c.var.db).get({ hash })));
}

const liveServer = (row: ServerRow | undefined) => (row && !row.revokedAt ? row : undefined);

const isRead = (c: HubContext) => c.req.method === "GET" || c.req.method === "HEAD";

/**
 * `remembered`: whether a lookup this isolate remembers will do. Reads take it; so do writes that only a project's
 * room makes, since the room refuses a revoked key at once whatever the lookup said. Other writes read the key now.
 */
const authenticateAgent = (remembered: (c: HubContext) => boolean) =>
  createMiddleware<HubEnv>(async (c, next) => {
    const apiKey = apiKeyOf(c);
    if (!apiKey) throw unauthorized("Send the server's API key as `X-API-Key: orc_...`");
    const server = remembered(c) ? await rememberedServerForApiKey(c, apiKey) : await serverForApiKey(c, apiKey);
    if (!server) throw unauthorized("The API key is invalid or has been revoked", "INVALID_API_KEY");
    c.set("principal", { kind: "server", server });
    await next();
  });

/** Agents (servers with an API key). A read may be answered for a key revoked up to 30 s ago; a write reads the key. */
export const agent = every(authenticateAgent(isRead), idempotent);

/**
 * Agents on routes whose writes all go through a project's room (RoomActor carries the key's digest, and the room
 * refuses a revoked one): no D1 read for a key this isolate looked up in the last 30 s.
 */
export const roomAgent = every(
  authenticateAgent(() => true),
  idempotent,
);

export function currentUser(c: HubContext) {
  const p = c.var.principal;
  if (p?.kind !== "user") throw unauthorized("Sign in first");
  return p.user;
}

export function currentServer(c: HubContext) {
  const p = c.var.principal;
  if (p?.kind !== "server") throw unauthorized("Send the server's API key");
  return p.server;
}
