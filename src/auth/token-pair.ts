/**
 * Access + refresh tokens for people. Refresh tokens are opaque, stored as
 * sha256 digests, and rotate on every use; presenting one that was already
 * rotated means it leaked, so its whole family is revoked.
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Db, UserRow } from "../db/client";
import { nowIso } from "../db/client";
import { refreshTokens } from "../db/schema";
import type { Env } from "../runtime/env";
import { unauthorized } from "../http/problem";
import type { z } from "zod";
import { type tokenPairSchema, userView } from "../views/people";
import { ACCESS_TOKEN_TTL_SECONDS, issueAccessToken } from "./jwt";
import { randomSecret, sha256Hex } from "./secrets";
import { assertActive } from "./active-account";

export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;
const REFRESH_PREFIX = "orr_";

export async function issueTokenPair(env: Env, db: Db, user: UserRow, familyId: string = crypto.randomUUID()): Promise<z.infer<typeof tokenPairSchema>> {
  const refreshToken = randomSecret(REFRESH_PREFIX);
  const now = Date.now();
  await db.insert(refreshTokens).values({
    id: crypto.randomUUID(),
    userId: user.id,
    familyId,
    tokenHash: await sha256Hex(refreshToken),
    expiresAt: new Date(now + REFRESH_TOKEN_TTL_MS).toISOString(),
    createdAt: new Date(now).toISOString(),
  });
  return {
    user: userView(user),
    access_token: await issueAccessToken(env, user.id, user.role),
    token_type: "bearer",
    expires_in: ACCESS_TOKEN_TTL_SECONDS,
    refresh_token: refreshToken,
  };
}

const revokeFamily = (db: Db, familyId: string) =>
  db
    .update(refreshTokens)
    .set({ revokedAt: nowIso() })
    .where(and(eq(refreshTokens.familyId, familyId), isNull(refreshTokens.revokedAt)));

/** Spends a refresh token and returns a new pair in the same family. */
export async function rotateRefreshToken(env: Env, db: Db, presented: string) {
  const row = await db.query.refreshTokens.findFirst({ where: eq(refreshTokens.tokenHash, await sha256Hex(presented)) });
  if (!row || row.revokedAt) throw unauthorized("The refresh token is invalid or revoked", "INVALID_REFRESH_TOKEN");
  if (Date.parse(row.expiresAt) <= Date.now()) throw unauthorized("The refresh token has expired", "INVALID_REFRESH_TOKEN");

  // Only one presentation of a token can win this update; any other is a reuse.
  const spent = await db
    .update(refreshTokens)
    .set({ rotatedAt: nowIso() })
    .where(and(eq(refreshTokens.id, row.id), isNull(refreshTokens.rotatedAt), isNull(refreshTokens.revokedAt)))
    .returning({ id: refreshTokens.id });
  if (spent.length === 0) {
    await revokeFamily(db, row.familyId);
    throw unauthorized("This refresh token was already used; every session from that sign-in is now revoked", "REFRESH_TOKEN_REUSED");
  }
  const user = await db.query.users.findFirst({ where: (u, { eq }) => eq(u.id, row.userId) });
  if (!user) throw unauthorized("The account behind this token no longer exists", "INVALID_REFRESH_TOKEN");
  assertActive(user);
  return issueTokenPair(env, db, user, row.familyId);
}

/** Signs out: the token's family can no longer be refreshed. Unknown tokens are ignored. */
export async function revokeRefreshToken(db: Db, presented: string) {
  const row = await db.query.refreshTokens.findFirst({ where: eq(refreshTokens.tokenHash, await sha256Hex(presented)) });
  if (row) await revokeFamily(db, row.familyId);
}

/** Signs the user out everywhere: after a password change no earlier refresh token works. */
export const revokeAllRefreshTokens = (db: Db, userId: string) =>
  db
    .update(refreshTokens)
    .set({ revokedAt: nowIso() })
    .where(and(eq(refreshTokens.userId, userId), isNull(refreshTokens.revokedAt)));
