/**
 * The MCP clients people authorised, as the hub keeps them in D1 (mcp_client_grants): recorded when the person allows
 * a client, confirmed at each token exchange, checked on each /mcp request, listed and revoked by their person. A row
 * is what keeps a grant live; the OAuth library's records in KV are cleaned up beside it (src/mcp/grant-revocation.ts).
 */
import { and, desc, eq, gt, isNull, lt, ne, or, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { mcpClientGrants, users } from "../db/schema";

/** A grant as its person sees it. */
export type ClientGrant = Pick<typeof mcpClientGrants.$inferSelect, "grantId" | "clientId" | "clientName" | "createdAt" | "lastUsedAt">;

export interface NewClientGrant {
  grantId: string;
  userId: string;
  clientId: string;
  clientName: string | null;
}

/**
 * Records that the person allowed a client, live until `expiresAt` (the code's lifetime: the exchange extends it). The
 * person's earlier grants to the same client go, as the library replaces them in KV. False when the person is gone.
 */
export async function recordClientGrant(db: Db, grant: NewClientGrant, now: Date, expiresAt: Date): Promise<boolean> {
  // Selected from users, so that a person deleted (or deactivated) meanwhile records nothing (rather than failing on the foreign key).
  const inserted = await db.all<{ grant_id: string }>(sql`
    INSERT INTO mcp_client_grants (grant_id, user_id, client_id, client_name, created_at, expires_at)
    SELECT ${grant.grantId}, id, ${grant.clientId}, ${grant.clientName}, ${now.toISOString()}, ${expiresAt.toISOString()} FROM users WHERE id = ${grant.userId} AND deactivated_at IS NULL
    RETURNING grant_id`);
  if (inserted.length === 0) return false;
  await db
    .delete(mcpClientGrants)
    .where(and(eq(mcpClientGrants.userId, grant.userId), eq(mcpClientGrants.clientId, grant.clientId), ne(mcpClientGrants.grantId, grant.grantId)));
  return true;
}

/**
 * At the token endpoint: whether the grant is still live (its person has neither revoked it nor changed their password,
 * nor been deleted or deactivated), marking it used; `extendTo` moves its expiry (the code exchange, to the refresh token's lifetime).
 */
export async function holdGrantAtTokenEndpoint(db: Db, grantId: string, userId: string, now: Date, extendTo?: Date): Promise<boolean> {
  const at = now.toISOString();
  const held = await db
    .update(mcpClientGrants)
    .set({ lastUsedAt: at, ...(extendTo ? { expiresAt: extendTo.toISOString() } : {}) })
    .where(and(eq(mcpClientGrants.grantId, grantId), eq(mcpClientGrants.userId, userId), gt(mcpClientGrants.expiresAt, at), activePerson(userId)))
    .returning({ grantId: mcpClientGrants.grantId });
  return held.length > 0;
}

/** Whether the person's account is active: a deactivated person's grants mint nothing and reach nothing. */
const activePerson = (userId: string) => sql`EXISTS (SELECT 1 FROM users WHERE id = ${userId} AND deactivated_at IS NULL)`;

/** On an /mcp request: the person a live grant acts as (their role now, while their account is active), and when the grant was last marked used. */
export async function liveGrantHolder(db: Db, grantId: string, userId: string, now: Date) {
  const [row] = await db
    .select({ role: users.role, lastUsedAt: mcpClientGrants.lastUsedAt })
    .from(mcpClientGrants)
    .innerJoin(users, eq(users.id, mcpClientGrants.userId))
    .where(
      and(
        eq(mcpClientGrants.grantId, grantId),
        eq(mcpClientGrants.userId, userId),
        gt(mcpClientGrants.expiresAt, now.toISOString()),
        isNull(users.deactivatedAt),
      ),
    )
    .limit(1);
  return row;
}

/** Marks the grant used at `now`, unless it was marked after `since` (so that a busy client writes once a minute). */
export async function markGrantUsed(db: Db, grantId: string, now: Date, since: Date) {
  await db
    .update(mcpClientGrants)
    .set({ lastUsedAt: now.toISOString() })
    .where(and(eq(mcpClientGrants.grantId, grantId), or(isNull(mcpClientGrants.lastUsedAt), lt(mcpClientGrants.lastUsedAt, since.toISOString()))));
}

/** The person's live grants, newest first. */
export const clientGrantsOf = (db: Db, userId: string, now: Date): Promise<ClientGrant[]> =>
  db
    .select({
      grantId: mcpClientGrants.grantId,
      clientId: mcpClientGrants.clientId,
      clientName: mcpClientGrants.clientName,
      createdAt: mcpClientGrants.createdAt,
      lastUsedAt: mcpClientGrants.lastUsedAt,
    })
    .from(mcpClientGrants)
    .where(and(eq(mcpClientGrants.userId, userId), gt(mcpClientGrants.expiresAt, now.toISOString())))
    .orderBy(desc(mcpClientGrants.createdAt));

/** Ends one grant of the person's; false when they have no such grant (another person's included). */
export async function endClientGrant(db: Db, userId: string, grantId: string): Promise<boolean> {
  const gone = await db
    .delete(mcpClientGrants)
    .where(and(eq(mcpClientGrants.grantId, grantId), eq(mcpClientGrants.userId, userId)))
    .returning({ grantId: mcpClientGrants.grantId });
  return gone.length > 0;
}

/** Ends every grant of the person's: a statement, to commit in one batch with what causes it (a new password). */
export const endClientGrantsOf = (db: Db, userId: string) => db.delete(mcpClientGrants).where(eq(mcpClientGrants.userId, userId));
