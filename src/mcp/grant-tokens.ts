/** What the hub reads off the OAuth library's codes and tokens, and its rules about them; no I/O. */

/**
 * The grant a code or token belongs to. The library's codes and tokens are `<userId>:<grantId>:<secret>` (its
 * `Token` type says so), and user ids here are UUIDs, never holding `:`. Undefined for anything else.
 */
export function grantIdOf(codeOrToken: string): string | undefined {
  const parts = codeOrToken.split(":");
  return parts.length === 3 && parts[1] ? parts[1] : undefined;
}

/** How seldom a grant's last use is written: a client busy on /mcp costs one write a minute, not one per request. */
export { USE_RECORD_MS as GRANT_USE_RECORD_MS, useIsNews } from "../domain/last-use";

/** The scopes a request asks for that the hub does not offer, in the order asked. */
export const unknownScopes = (requested: readonly string[], offered: readonly string[]) => requested.filter((s) => !offered.includes(s));
