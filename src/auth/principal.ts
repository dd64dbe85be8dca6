/** Who is calling: a person (JWT) or an agent's server (API key). */
import type { ServerRow, UserRow } from "../db/client";

export type Principal = { kind: "user"; user: UserRow } | { kind: "server"; server: ServerRow };

/** One string per caller, whoever it is: what per-caller records (Idempotency-Keys) are filed under. */
export const callerKey = (p: Principal) => (p.kind === "user" ? `user:${p.user.id}` : `server:${p.server.id}`);
