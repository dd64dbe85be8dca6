/**
 * Clearing the OAuth library's own records (KV) of grants the hub has ended in D1. The D1 row is what keeps a grant
 * live (src/mcp/grant-check.ts), so a failure here leaves only inert records, which expire on their own: it is logged,
 * and the person's request that ended the grant still succeeds.
 */
import { hubBaseUrl } from "../http/base-url";
import type { HubContext } from "../http/context";
import { logError } from "../runtime/log";
import { authorizationServer } from "./oauth";

const helpers = (c: HubContext) => authorizationServer(hubBaseUrl(c)).getOAuthApi(c.env);

/** Drops the library's records of one grant of the person's: the grant, its refresh token and access tokens. */
export async function dropLibraryGrant(c: HubContext, userId: string, grantId: string) {
  try {
    await helpers(c).revokeGrant(grantId, userId);
  } catch (e) {
    logError("An ended MCP client grant stayed in OAuth storage", { user_id: userId, grant_id: grantId }, e);
  }
}

/** Drops the library's records of every grant of the person's. */
export async function dropLibraryGrantsOf(c: HubContext, userId: string) {
  const oauth = helpers(c);
  try {
    // Listed in full first: the listing's cursor is not to be trusted across deletions.
    const grantIds: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await oauth.listUserGrants(userId, { cursor });
      grantIds.push(...page.items.map((g) => g.id));
      cursor = page.cursor;
    } while (cursor);
    await Promise.all(grantIds.map((id) => oauth.revokeGrant(id, userId)));
  } catch (e) {
    logError("A person's ended MCP client grants stayed in OAuth storage", { user_id: userId }, e);
  }
}
