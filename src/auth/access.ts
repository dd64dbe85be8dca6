/**
 * What a caller may see and change. Admins see every project; members and
 * viewers see the projects they belong to (viewers only read); a server sees
 * the projects its registration token allowed, or all when it was unscoped.
 * A project the caller cannot see answers 404, exactly like a missing one.
 */
import { eq, sql, type AnyColumn } from "drizzle-orm";
import type { ProjectRow } from "../db/client";
import { qualified } from "../db/sql";
import { projectMembers, projects } from "../db/schema";
import type { HubContext } from "../http/context";
import { notFound, unauthorized } from "../http/problem";
import type { Access, AccessCheck, Principal } from "./principal";
import { narrowedAccess, narrowedProjects, readOnlyRefusal } from "./token-limits";

export type { Access };

export function principalOf(c: HubContext): Principal {
  const p = c.var.principal;
  if (!p) throw unauthorized("Authentication required");
  return p;
}

/** Project ids the caller may see; null means every project. A personal access token's projects narrow them. */
export async function visibleProjectIds(c: HubContext): Promise<string[] | null> {
  const p = principalOf(c);
  return narrowedProjects(p, await projectsOf(c, p));
}

async function projectsOf(c: HubContext, p: Principal): Promise<string[] | null> {
  if (p.kind === "server") return p.server.projectIds ?? null;
  if (p.user.role === "admin") return null;
  const rows = await c.var.db.select({ id: projectMembers.projectId }).from(projectMembers).where(eq(projectMembers.userId, p.user.id));
  return rows.map((r) => r.id);
}

/**
 * Whether the caller may see (and, for `write`, change) a project, given
 * whether a person is a member of it. `what` names the thing looked up, so a
 * refusal reads like "Task not found" — never revealing that it exists.
 */
export function assertAccess(p: Principal, projectId: string, isMember: boolean, access: Access, what: string) {
  const granted = accessOf(p, projectId, isMember);
  if (granted === "none") throw notFound(what);
  if (access === "write" && granted === "read") throw readOnlyRefusal(p);
}

/**
 * Asserts the caller's access to a project, and notes it on the request: an
 * idempotent replay of the request's answer is given only to a caller who
 * would be granted the same again (recheckAccess, idempotency.ts).
 */
export function checkAccess(c: HubContext, projectId: string, isMember: boolean, access: Access, what: string) {
  assertAccess(principalOf(c), projectId, isMember, access, what);
  c.set("accessChecks", [...(c.var.accessChecks ?? []), { project_id: projectId, access, what }]);
}

/**
 * The checks a request passed, made again for the caller now (a replay of
 * its answer): 404 or 403 exactly as the route would answer, when the project
 * is gone, the caller was removed from it, or a member became a viewer.
 */
export async function recheckAccess(c: HubContext, checks: readonly AccessCheck[]) {
  const p = principalOf(c);
  const ids = [...new Set(checks.map((check) => check.project_id))];
  const { results } = await c.env.DB.prepare(
    `SELECT p.id, (SELECT 1 FROM project_members pm WHERE pm.project_id = p.id AND pm.user_id = ?2) AS member
     FROM projects p WHERE p.id IN (SELECT value FROM json_each(?1))`,
  )
    .bind(JSON.stringify(ids), p.kind === "user" ? p.user.id : null)
    .all<{ id: string; member: number | null }>();
  const found = new Map(results.map((r) => [r.id, r.member !== null]));
  for (const check of checks) {
    const isMember = found.get(check.project_id);
    if (isMember === undefined) throw notFound(check.what);
    assertAccess(p, check.project_id, isMember, check.access, check.what);
  }
}

/** What a caller may do in a project: nothing, read, or read and write (no more than a personal access token allows). */
export function accessOf(p: Principal, projectId: string, isMember: boolean): "none" | Access {
  return narrowedAccess(p, projectId, ownAccessOf(p, projectId, isMember));
}

function ownAccessOf(p: Principal, projectId: string, isMember: boolean): "none" | Access {
  if (p.kind === "server") return p.server.projectIds && !p.server.projectIds.includes(projectId) ? "none" : "write";
  if (p.user.role === "admin") return "write";
  if (!isMember) return "none";
  return p.user.role === "viewer" ? "read" : "write";
}

/** The caller's membership of the project as one SQL value (1 or NULL), to fold the check into the query that loads a row. */
export const membershipOf = (p: Principal, projectIdColumn: AnyColumn) =>
  sql<
    number | null
  >`(SELECT 1 FROM project_members pm WHERE pm.project_id = ${qualified(projectIdColumn)} AND pm.user_id = ${p.kind === "user" ? p.user.id : null})`;

export async function projectFor(c: HubContext, projectId: string, access: Access = "read"): Promise<ProjectRow> {
  const p = principalOf(c);
  const [row] = await c.var.db
    .select({ project: projects, member: membershipOf(p, projects.id) })
    .from(projects)
    .where(eq(projects.id, projectId));
  if (!row) throw notFound("Project");
  checkAccess(c, projectId, row.member !== null, access, "Project");
  c.set("logProject", projectId);
  return row.project;
}

/** Whether two project scopes share a project (null = every project; an empty scope shares none). */
export function scopesOverlap(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a?.length === 0 || b?.length === 0) return false;
  if (a === null || b === null) return true;
  return a.some((id) => b.includes(id));
}
