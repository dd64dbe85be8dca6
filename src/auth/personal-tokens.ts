/**
 * Personal access tokens (`orcpat_<32 random bytes>`): made by a person for a client that cannot sign in (an MCP
 * client, an A2A client, a script). Only the sha256 is stored. Each use reads the token and its person together, so a
 * revoked or expired token, or a deactivated or deleted person, stops it at the next request.
 */
import { and, eq, isNull, lte, or } from "drizzle-orm";
import type { Db, UserRow } from "../db/client";
import { personalAccessTokens, users } from "../db/schema";
import { useIsNews, USE_RECORD_MS } from "../domain/last-use";
import { unauthorized } from "../http/problem";
import type { TokenLimits } from "./principal";
import { randomSecret, sha256Hex } from "./secrets";

export const PERSONAL_TOKEN_PREFIX = "orcpat_";
/** What randomSecret makes after the prefix: 32 bytes, base64url without padding. */
const SHAPE = /^orcpat_[A-Za-z0-9_-]{43}$/;
/** A stream opened with a token (A2A) runs at most this long before its client subscribes again, the token checked anew. */
const STREAM_SECONDS = 15 * 60;

export const isPersonalToken = (token: string) => token.startsWith(PERSONAL_TOKEN_PREFIX);

/** A new token and the digest to store. */
export async function newPersonalToken(): Promise<{ token: string; hash: string }> {
  const token = randomSecret(PERSONAL_TOKEN_PREFIX);
  return { token, hash: await sha256Hex(token) };
}

const invalid = (why: string) => unauthorized(why, "INVALID_TOKEN");

/**
 * The person a token acts for, what it narrows them to, and until when (seconds since the epoch) a stream opened with
 * it may run. Refusals are 401s that never quote the token.
 */
export async function personOfToken(db: Db, token: string, now = new Date()): Promise<{ user: UserRow; limits: TokenLimits; expiresAt: number }> {
  if (!SHAPE.test(token)) throw invalid("The personal access token is malformed");
  const [row] = await db
    .select({ token: personalAccessTokens, user: users })
    .from(personalAccessTokens)
    .innerJoin(users, eq(users.id, personalAccessTokens.userId))
    .where(eq(personalAccessTokens.tokenHash, await sha256Hex(token)))
    .limit(1);
  if (!row) throw invalid("The personal access token is not one this hub issued (or its person was deleted)");
  const { token: t, user } = row;
  if (t.revokedAt) throw unauthorized("The personal access token was revoked", "PERSONAL_TOKEN_REVOKED");
  const expires = Date.parse(t.expiresAt);
  if (expires <= now.getTime()) throw unauthorized(`The personal access token expired at ${t.expiresAt}`, "PERSONAL_TOKEN_EXPIRED");
  if (user.deactivatedAt) throw invalid("The account behind this personal access token is deactivated");
  if (useIsNews(t.lastUsedAt, now)) await markUsed(db, t.id, now);
  return {
    user,
    limits: { id: t.id, scope: t.scope, projectIds: t.projectIds ?? null },
    expiresAt: Math.floor(Math.min(expires, now.getTime() + STREAM_SECONDS * 1000) / 1000),
  };
}

/** Notes a use; of requests arriving together within the minute, only the first writes. */
async function markUsed(db: Db, id: string, now: Date) {
  const cutoff = new Date(now.getTime() - USE_RECORD_MS).toISOString();
  await db
    .update(personalAccessTokens)
    .set({ lastUsedAt: now.toISOString() })
    .where(and(eq(personalAccessTokens.id, id), or(isNull(personalAccessTokens.lastUsedAt), lte(personalAccessTokens.lastUsedAt, cutoff))));
}
