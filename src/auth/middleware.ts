/**
 * Guards for routes. Each route names who may call it: `person(role)` for
 * people with a JWT, `agent` for servers with an API key. Both include the
 * Idempotency-Key handling, which needs to know the caller.
 */
import { eq, sql } from "drizzle-orm";
import { every } from "hono/combine";
import { createMiddleware } from "hono/factory";
import { servers, users, type Role } from "../db/schema";
import type { UserRow } from "../db/client";
import { builtOnce } from "../db/sql";
import type { HubContext, HubEnv } from "../http/context";
import { idempotent } from "../http/idempotency";
import { forbidden, unauthorized } from "../http/problem";
import { InvalidToken, verifyAccessToken } from "./jwt";
import { hasRole } from "./roles";
import { sha256Hex } from "./secrets";

export const API_KEY_PREFIX = "orc_";

/** The token of `Authorization: Bearer <token>`: a person's JWT, or an agent's API key. */
export function bearerToken(c: HubContext): string | undefined {
  const header = c.req.header("Authorization");
  const match = header?.match(/^Bearer\s+(.+)$/i);
  return match?.[1]?.trim();
}

/** Checks a person's access token and makes its user the caller; the expiry of the token is returned. */
export async function signInWithToken(c: HubContext, token: string): Promise<{ user: UserRow; expiresAt: number }> {
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
  c.set("principal", { kind: "user", user });
  return { user, expiresAt: identity.expiresAt };
}

const authenticatePerson = createMiddleware<HubEnv>(async (c, next) => {
  const token = bearerToken(c);
  if (!token) throw unauthorized("Sign in: send `Authorization: Bearer <access token>`");
  if (token.startsWith(API_KEY_PREFIX)) throw unauthorized("This endpoint is for people; an agent API key is not accepted here");
  await signInWithToken(c, token);
  await next();
});

const requireRole = (role: Role) =>
  createMiddleware<HubEnv>(async (c, next) => {
    const principal = c.var.principal;
    if (principal?.kind !== "user" || !hasRole(principal.user.role, role)) {
      throw forbidden(`This needs the ${role} role`);
    }
    await next();
  });

/** People with at least `role` (viewer: any signed-in person). */
export const person = (role: Role = "viewer") => every(authenticatePerson, requireRole(role), idempotent);

/** The API key an agent sent, from `X-API-Key` or `Authorization: Bearer orc_...`. */
export function apiKeyOf(c: HubContext): string | undefined {
  const header = c.req.header("X-API-Key")?.trim();
  if (header) return header;
  const token = bearerToken(c);
  return token?.startsWith(API_KEY_PREFIX) ? token : undefined;
}

/** Every agent request looks its key up. */
const serverByKeyHash = builtOnce((db) => db.select().from(servers).where(eq(servers.apiKeyHash, sql.placeholder("hash"))).limit(1).prepare());

export async function serverForApiKey(c: HubContext, apiKey: string) {
  const row = await serverByKeyHash(c.var.db).get({ hash: await sha256Hex(apiKey) });
  return row && !row.revokedAt ? row : undefined;
}

const authenticateAgent = createMiddleware<HubEnv>(async (c, next) => {
  const apiKey = apiKeyOf(c);
  if (!apiKey) throw unauthorized("Send the server's API key as `X-API-Key: orc_...`");
  const server = await serverForApiKey(c, apiKey);
  if (!server) throw unauthorized("The API key is invalid or has been revoked", "INVALID_API_KEY");
  c.set("principal", { kind: "server", server });
  await next();
});

export const agent = every(authenticateAgent, idempotent);

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
