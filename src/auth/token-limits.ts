/**
 * How a personal access token narrows what its person may do: never more than the person may do now (their role and
 * memberships are read at each use) and never more than the token allows (its scope and its projects). Applied on top
 * of the person's own access (src/auth/access.ts), so the two rules stay apart.
 */
import type { Role } from "../db/schema";
import { forbidden, Problem } from "../http/problem";
import type { Access, Principal } from "./principal";

/** The access a token leaves of what its person has in a project. */
export function narrowedAccess(p: Principal, projectId: string, granted: "none" | Access): "none" | Access {
  if (p.kind !== "user" || !p.token || granted === "none") return granted;
  if (p.token.projectIds && !p.token.projectIds.includes(projectId)) return "none";
  return p.token.scope === "read" ? "read" : granted;
}

/** The projects a token leaves visible of those its person sees (null: every project). */
export function narrowedProjects(p: Principal, visible: string[] | null): string[] | null {
  if (p.kind !== "user" || !p.token?.projectIds) return visible;
  const allowed = p.token.projectIds;
  return visible === null ? [...allowed] : visible.filter((id) => allowed.includes(id));
}

/** Whether the caller acts as an admin over the whole hub: signed in as one, or by a write token for all projects. */
export const isHubAdmin = (p: Principal | undefined) => p?.kind === "user" && p.user.role === "admin" && !p.token?.projectIds && p.token?.scope !== "read";

/** The refusal of a write by a read token. */
export const readOnlyToken = () => forbidden("This token's scope is read: it may look but not change anything", "TOKEN_SCOPE");

/** The refusal of a write to a project the caller may only read: a read token's, or a viewer's. */
export const readOnlyRefusal = (p: Principal): Problem =>
  p.kind === "user" && p.token?.scope === "read" ? readOnlyToken() : forbidden("Viewers can only read this project");

/** Why this caller's token may not use a route that needs `role` (with its HTTP method), or null when it may. */
export function tokenRefusal(p: Principal, role: Role, method: string): Problem | null {
  if (p.kind !== "user" || !p.token) return null;
  if (p.token.scope === "read" && method !== "GET" && method !== "HEAD") return readOnlyToken();
  if (p.token.projectIds && role === "admin")
    return forbidden("This token is limited to some projects: routes that span the hub need a token for all projects", "TOKEN_SCOPE");
  return null;
}
