/**
 * The hub's word on an OAuth grant the library found valid: live only while its row in mcp_client_grants stands (its
 * person has not revoked it, changed their password, or been deleted) and its person's account is active. Asked at the token endpoint, before a code or
 * refresh token mints anything, and on each /mcp request, so that revocation does not wait for KV to forget.
 */
import { OAuthError } from "@cloudflare/workers-oauth-provider";
import type { Db } from "../db/client";
import type { Role } from "../db/schema";
import { holdGrantAtTokenEndpoint, liveGrantHolder, markGrantUsed } from "./client-grants";
import { GRANT_USE_RECORD_MS, grantIdOf, useIsNews } from "./grant-tokens";

/**
 * At the token endpoint (the library's exchange callback): refuses a grant that is no longer live with `invalid_grant`,
 * which also has the library drop its records. A code's exchange extends the grant to `refreshSeconds`.
 */
export async function requireLiveGrant(db: Db, grantType: string, grantId: string, userId: string, refreshSeconds: number): Promise<void> {
  const now = new Date();
  const extendTo = grantType === "authorization_code" ? new Date(now.getTime() + refreshSeconds * 1000) : undefined;
  if (await holdGrantAtTokenEndpoint(db, grantId, userId, now, extendTo)) return;
  throw new OAuthError("invalid_grant", {
    description: "This authorization was revoked or has ended: sign in again",
    internal: { category: "token-exchange-callback", reason: "grant_not_live" },
  });
}

/** On an /mcp request with a token the library validated: the role its person has now, or null when the grant is over. */
export async function roleOfLiveGrant(db: Db, token: string, userId: string): Promise<Role | null> {
  const grantId = grantIdOf(token);
  if (!grantId) return null;
  const now = new Date();
  const holder = await liveGrantHolder(db, grantId, userId, now);
  if (!holder) return null;
  if (useIsNews(holder.lastUsedAt, now)) await markGrantUsed(db, grantId, now, new Date(now.getTime() - GRANT_USE_RECORD_MS));
  return holder.role;
}
