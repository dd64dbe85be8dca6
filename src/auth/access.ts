/**
 * What a caller may see and change. Admins see every project; members and
 * viewers see the projects they belong to (viewers only read), each membership
 * naming a role that may lower theirs there (a member who is a viewer of a
 * project only reads it); a server sees the projects its registration token
 * allowed, or all when it was unscoped. A project the caller cannot see
 * answers 404, exactly like a missing one.
 */
import { eq, sql, type AnyColumn } from "drizzle-orm";
import { dbOf, type Db, type ProjectRow } from "../db/client";
import { DIRECTORY, rememberShard, shardDb } from "../db/shards";
import { qualified } from "../db/sql";
import { projectMembers, projects, type Role } from "../db/schema";
import type { HubContext } from "../http/context";
import { notFound, Problem, unauthorized } from "../http/problem";
import type { Access, AccessCheck, Principal } from "./principal";
import { narrowedAccess, narrowedProjects, readOnlyRefusal } from "./token-limits";
import { roleInProject, type ProjectRole } from "./roles";

export type { Access };

export function principalOf(c: HubContext): Principal {
  const p = c.var.principal;
  if (!p) throw unauthorized("Authentication required");
  return p;
}

/** The projects the caller may see, each with what they may do there; null means every project, with write access. */
export async function projectAccesses(c: HubContext): Promise<{ id: string; access: Access }[] | null> {
  const p = principalOf(c);
  const own = await ownProjectAccesses(c, p);
  if (own === null) return narrowedProjects(p, null)?.map((id) => ({ id, access: narrowedAccess(p, id, "write") as Access })) ?? null;
  return own.flatMap(({ id, access }) => {
    const narrowed = narrowedAccess(p, id, access);
    return narrowed === "none" ? [] : [{ id, access: narrowed }];
  });
}

/** The person's (or server's) own projects, before a personal access token narrows them. */
async function ownProjectAccesses(c: HubContext, p: Principal): Promise<{ id: string; access: Access }[] | null> {
  if (p.kind === "server") return p.server.projectIds?.map((id) => ({ id, access: "write" as const })) ?? null;
  if (p.user.role === "admin") return null;
  const rows = await c.var.db
    .select({ id: projectMembers.projectId, role: projectMembers.role })
    .from(projectMembers)
    .where(eq(projectMembers.userId, p.user.id));
  return rows.map((r) => ({ id: r.id, access: ownAccessOf(p, r.id, r.role) as Access }));
}

/** Project ids the caller may see; null means every project. A personal access token's projects narrow them. */
export async function visibleProjectIds(c: HubContext): Promise<string[] | null> {
  return (await projectAccesses(c))?.map((a) => a.id) ?? null;
}

/**
 * Whether the caller may see (and, for `write`, change) a project, given a
 * person's membership of it (its role, or null). `what` names the thing looked
 * up, so a refusal reads like "Task not found" — never revealing that it exists.
 */
export function assertAccess(p: Principal, projectId: string, membership: ProjectRole | null, access: Access, what: string) {
  const granted = accessOf(p, projectId, membership);
  if (granted === "none") throw notFound(what);
  if (access === "write" && granted === "read") throw readOnlyRefusal(p);
}

/**
 * Asserts the caller's access to a project, and notes it on the request: an
 * idempotent replay of the request's answer is given only to a caller who
 * would be granted the same again (recheckAccess, idempotency.ts).
 */
export function checkAccess(c: HubContext, projectId: string, membership: ProjectRole | null, access: Access, what: string) {
  assertAccess(principalOf(c), projectId, membership, access, what);
  c.set("accessChecks", [...(c.var.accessChecks ?? []), { project_id: projectId, access, what }]);
}

/**
 * The checks a request passed, made again for the caller now (a replay of
 * its answer): 404 or 403 exactly as the route would answer, when the project
 * is gone, the caller was removed from it, or a member became a viewer (of
 * the hub, or of that project).
 */
export async function recheckAccess(c: HubContext, checks: readonly AccessCheck[]) {
  const p = principalOf(c);
  const ids = [...new Set(checks.map((check) => check.project_id))];
  const { results } = await c.env.DB.prepare(
    `SELECT p.id, (SELECT pm.role FROM project_members pm WHERE pm.project_id = p.id AND pm.user_id = ?2) AS member
     FROM projects p WHERE p.id IN (SELECT value FROM json_each(?1))`,
  )
    .bind(JSON.stringify(ids), p.kind === "user" ? p.user.id : null)
    .all<{ id: string; member: ProjectRole | null }>();
  const found = new Map(results.map((r) => [r.id, r.member]));
  for (const check of checks) {
    const membership = found.get(check.project_id);
    if (membership === undefined) throw notFound(check.what);
    assertAccess(p, check.project_id, membership, check.access, check.what);
  }
}

/**
 * What a caller may do in a project, given a person's membership of it (its role, or null): nothing, read, or read and
 * write (no more than a personal access token allows).
 */
export function accessOf(p: Principal, projectId: string, membership: ProjectRole | null): "none" | Access {
  return narrowedAccess(p, projectId, ownAccessOf(p, projectId, membership));
}

function ownAccessOf(p: Principal, projectId: string, membership: ProjectRole | null): "none" | Access {
  if (p.kind === "server") return p.server.projectIds && !p.server.projectIds.includes(projectId) ? "none" : "write";
  if (p.user.role === "admin") return "write";
  if (membership === null) return "none";
  return roleInProject(p.user.role, membership) === "viewer" ? "read" : "write";
}

/**
 * The caller's membership of the project as one SQL value (its role, or NULL), to fold the check into the query that
 * loads a row.
 */
export const membershipOf = (p: Principal, projectIdColumn: AnyColumn) =>
  sql<ProjectRole | null>`(SELECT pm.role FROM project_members pm WHERE pm.project_id = ${qualified(projectIdColumn)} AND pm.user_id = ${p.kind === "user" ? p.user.id : null})`;

/** The caller's membership of a project as the directory holds it (its role, or null), for a check made on a row read elsewhere. */
export async function membershipIn(c: HubContext, projectId: string): Promise<ProjectRole | null> {
  const [row] = await dbOf(c.env.DB)
    .select({ member: membershipOf(principalOf(c), projects.id) })
    .from(projects)
    .where(eq(projects.id, projectId));
  return row?.member ?? null;
}

/** The project, if the caller may see it (and, for `write`, change it), with the caller's role there (null for a server). */
export async function projectWithRoleFor(c: HubContext, projectId: string, access: Access = "read"): Promise<{ project: ProjectRow; role: Role | null }> {
  const p = principalOf(c);
  // The directory's row and membership, even once the request reads a project's rows on its shard.
  const [row] = await dbOf(c.env.DB)
    .select({ project: projects, member: membershipOf(p, projects.id) })
    .from(projects)
    .where(eq(projects.id, projectId));
  if (!row) throw notFound("Project");
  checkAccess(c, projectId, row.member, access, "Project");
  // A project on the move takes no write until it has moved (its room refuses those it is asked for alike).
  if (access === "write" && row.project.movingTo)
    throw new Problem(503, "PROJECT_MOVING", `The project is moving to shard ${row.project.movingTo}; retry shortly`, undefined, { "Retry-After": "5" });
  c.set("logProject", projectId);
  const role = p.kind === "server" ? null : row.member === null ? p.user.role : roleInProject(p.user.role, row.member);
  return { project: row.project, role };
}

/** Where the project's rows are read: its shard (the directory's in the request's session). */
export const projectDb = (c: HubContext, project: { shard: string }): Db => (project.shard === DIRECTORY ? c.var.db : shardDb(c.env, project.shard));

export async function projectFor(c: HubContext, projectId: string, access: Access = "read"): Promise<ProjectRow> {
  return (await projectWithRoleFor(c, projectId, access)).project;
}

/**
 * The project, as projectFor, and from here on the request reads and writes its rows on its shard (`c.var.db`; the
 * directory stays at `c.env.DB`). For routes that touch only the project's own rows after it.
 */
export async function projectDataFor(c: HubContext, projectId: string, access: Access = "read"): Promise<ProjectRow> {
  const project = await projectFor(c, projectId, access);
  if (project.shard !== DIRECTORY) c.set("db", shardDb(c.env, project.shard));
  rememberShard(project.id, project.shard);
  return project;
}

/** Whether two project scopes share a project (null = every project; an empty scope shares none). */
export function scopesOverlap(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a?.length === 0 || b?.length === 0) return false;
  if (a === null || b === null) return true;
  return a.some((id) => b.includes(id));
}
