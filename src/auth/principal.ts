/** Who is calling: a person (JWT, or a personal access token) or an agent's server (API key). */
import type { ServerRow, UserRow } from "../db/client";
import type { TokenScope } from "../db/schema";

/** What a personal access token narrows its person's access to (src/auth/token-limits.ts applies it). */
export interface TokenLimits {
  id: string;
  scope: TokenScope;
  /** Null: every project its person can see at the time of each use. */
  projectIds: string[] | null;
}

export type Principal = { kind: "user"; user: UserRow; token?: TokenLimits } | { kind: "server"; server: ServerRow };

/** One string per caller, whoever it is: what per-caller records (Idempotency-Keys) are filed under. */
export const callerKey = (p: Principal) => (p.kind === "user" ? `user:${p.user.id}` : `server:${p.server.id}`);

export type Access = "read" | "write";

/** A project access a request was granted, with the name of what it looked up (for the refusal when it no longer holds). */
export interface AccessCheck {
  project_id: string;
  access: Access;
  what: string;
}
