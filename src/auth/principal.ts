/** Who is calling: a person (JWT) or an agent's server (API key). */
import type { ServerRow, UserRow } from "../db/client";

export type Principal = { kind: "user"; user: UserRow } | { kind: "server"; server: ServerRow };

/** One string per caller, whoever it is: what per-caller records (Idempotency-Keys) are filed under. */
export const callerKey = (p: Principal) => (p.kind === "user" ? `user:${p.user.id}` : `server:${p.server.id}`);

export type Access = "read" | "write";

/** A project access a request was granted, with the name of what it looked up (for the refusal when it no longer holds). */
export interface AccessCheck {
  project_id: string;
  access: Access;
  what: string;
}
