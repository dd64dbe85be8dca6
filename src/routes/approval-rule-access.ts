/**
 * Who reaches which approval rules. Admins manage every rule; members create, edit and delete the rules of projects
 * they belong to as members (not as viewers); everyone reads the tenant rules, the rules of their projects and the server rules of servers serving
 * one of their projects. Any other rule answers 404, exactly like a missing one.
 */
import { eq } from "drizzle-orm";
import { principalOf, projectAccesses, scopesOverlap } from "../auth/access";
import { isHubAdmin } from "../auth/token-limits";
import { approvalRules, servers } from "../db/schema";
import type { ApprovalScope } from "../domain/approval-rules";
import type { HubContext } from "../http/context";
import { fieldError, forbidden, notFound } from "../http/problem";

export type RuleRow = typeof approvalRules.$inferSelect;

const isAdmin = (c: HubContext) => isHubAdmin(principalOf(c));

/**
 * What a person reaches beyond tenant rules: null for admins (everything), else their projects (and those of them
 * they may write in) and the servers serving them.
 */
export async function reachOf(c: HubContext): Promise<{ projects: Set<string>; writes: Set<string>; servers: Set<string> } | null> {
  const accesses = await projectAccesses(c);
  if (accesses === null) return null;
  const visible = accesses.map((a) => a.id);
  const rows = await c.var.db.select({ id: servers.id, projectIds: servers.projectIds }).from(servers);
  return {
    projects: new Set(visible),
    writes: new Set(accesses.filter((a) => a.access === "write").map((a) => a.id)),
    servers: new Set(rows.filter((s) => scopesOverlap(visible, s.projectIds ?? null)).map((s) => s.id)),
  };
}

const VIEWERS_READ = "Viewers of a project read its rules; its members and admins manage them";

export type Reach = Awaited<ReturnType<typeof reachOf>>;

export const reads = (reach: Reach, scopeType: ApprovalScope, scopeId: string | null) =>
  reach === null || scopeType === "tenant" || (scopeId !== null && (scopeType === "project" ? reach.projects : reach.servers).has(scopeId));

/** The rule, if the caller may read it (404 otherwise, exactly like a missing one). */
export async function ruleFor(c: HubContext): Promise<{ rule: RuleRow; reach: Reach }> {
  const [rule, reach] = await Promise.all([c.var.db.query.approvalRules.findFirst({ where: eq(approvalRules.id, c.req.param("rid")!) }), reachOf(c)]);
  if (!rule || !reads(reach, rule.scopeType, rule.scopeId)) throw notFound("Approval rule");
  return { rule, reach };
}

/** The rule, if the caller may change it: 404 when they cannot read it, 403 when they only read it. */
export async function changeable(c: HubContext) {
  const found = await ruleFor(c);
  if (!isAdmin(c) && found.rule.scopeType !== "project") throw forbidden("Only admins manage tenant and server rules; members manage their projects' rules");
  if (found.reach !== null && !found.reach.writes.has(found.rule.scopeId!)) throw forbidden(VIEWERS_READ);
  return found;
}

/** 403 unless the caller may manage rules of this scope; 422 naming `scope_id` when it does not fit the scope or names what the caller cannot see. */
export async function checkScope(c: HubContext, reach: Reach, scopeType: ApprovalScope, scopeId: string | null, field = "scope_id") {
  if (!isAdmin(c) && scopeType !== "project") throw forbidden("Only admins manage tenant and server rules; members manage their projects' rules");
  if (scopeType === "tenant") {
    if (scopeId !== null) throw fieldError(field, "must be left out for a tenant rule, which applies to every server");
    return;
  }
  if (scopeId === null) throw fieldError(field, `is required for a ${scopeType} rule: the ${scopeType} it applies to`);
  const exists =
    scopeType === "project"
      ? await c.var.db.query.projects.findFirst({ columns: { id: true }, where: (p, { eq }) => eq(p.id, scopeId) })
      : await c.var.db.query.servers.findFirst({ columns: { id: true }, where: (s, { and, eq, isNull }) => and(eq(s.id, scopeId), isNull(s.revokedAt)) });
  if (!exists || !reads(reach, scopeType, scopeId)) throw fieldError(field, `is not a ${scopeType} you can see`);
  if (scopeType === "project" && reach !== null && !reach.writes.has(scopeId)) throw forbidden(VIEWERS_READ);
}
