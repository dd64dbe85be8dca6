/**
 * What a caller may see and change. Admins see every project; members and
 * viewers see the projects they belong to (viewers only read); a server sees
 * the projects its registration token allowed, or all when it was unscoped.
 * A project the caller cannot see answers 404, exactly like a missing one.
 */
import { and, eq } from "drizzle-orm";
import type { ProjectRow } from "../db/client";
import { projectMembers, projects } from "../db/schema";
import type { HubContext, Principal } from "../http/context";
import { forbidden, notFound, unauthorized } from "../http/problem";

export type Access = "read" | "write";

function principalOf(c: HubContext): Principal {
  const p = c.var.principal;
  if (!p) throw unauthorized("Authentication required");
  return p;
}

/** Project ids the caller may see; null means every project. */
export async function visibleProjectIds(c: HubContext): Promise<string[] | null> {
  const p = principalOf(c);
  if (p.kind === "server") return p.server.projectIds ?? null;
  if (p.user.role === "admin") return null;
  const rows = await c.var.db
    .select({ id: projectMembers.projectId })
    .from(projectMembers)
    .where(eq(projectMembers.userId, p.user.id));
  return rows.map((r) => r.id);
}

export async function projectFor(c: HubContext, projectId: string, access: Access = "read"): Promise<ProjectRow> {
  const p = principalOf(c);
  const project = await c.var.db.query.projects.findFirst({ where: eq(projects.id, projectId) });
  if (!project) throw notFound("Project");
  if (p.kind === "server") {
    if (p.server.projectIds && !p.server.projectIds.includes(projectId)) throw notFound("Project");
    return project;
  }
  if (p.user.role !== "admin") {
    const member = await c.var.db.query.projectMembers.findFirst({
      where: and(eq(projectMembers.projectId, projectId), eq(projectMembers.userId, p.user.id)),
    });
    if (!member) throw notFound("Project");
    if (access === "write" && p.user.role === "viewer") throw forbidden("Viewers can only read this project");
  }
  return project;
}

/** Whether two project scopes share a project (null = every project). */
export function scopesOverlap(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a === null || b === null) return true;
  return a.some((id) => b.includes(id));
}
