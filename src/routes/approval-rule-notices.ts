/**
 * Who hears of an approval rule's change, once it is committed: the connected daemons whose hooks apply it, and the
 * record of each project it reaches. Both look at the rule before and after the change, so a rule moved out of a
 * scope is heard of there too.
 */
import { eq, isNull, sql } from "drizzle-orm";
import { projects, servers, type approvalRules } from "../db/schema";
import type { ApprovalScope } from "../domain/approval-rules";
import type { HubContext } from "../http/context";
import { runInRoom } from "../room/client";
import { linkStub } from "../server-link/client";
import { hookRuleView } from "../views/approval-rules";

type RuleRow = typeof approvalRules.$inferSelect;

/** The live servers a rule of this scope reaches: every one for tenant rules, itself for server rules, those serving the project for project rules. */
async function serversReached(c: HubContext, scopeType: ApprovalScope, scopeId: string | null): Promise<string[]> {
  if (scopeType === "server") return scopeId ? [scopeId] : [];
  const rows = await c.var.db
    .select({ id: servers.id })
    .from(servers)
    .where(
      scopeType === "tenant"
        ? isNull(servers.revokedAt)
        : sql`${servers.revokedAt} IS NULL AND (${servers.projectIds} IS NULL OR EXISTS (SELECT 1 FROM json_each(${servers.projectIds}) WHERE value = ${scopeId}))`,
    );
  return rows.map((r) => r.id);
}

/**
 * After a write commits: `approval_rules_updated` to each connected daemon the rule reaches (before and after the
 * change), so its hook's rules file follows. A daemon away hears nothing: it fetches its rules again when it connects.
 */
export async function tellDaemons(c: HubContext, ...scopes: Pick<RuleRow, "scopeType" | "scopeId">[]) {
  const ids = new Set((await Promise.all(scopes.map((s) => serversReached(c, s.scopeType, s.scopeId)))).flat());
  c.executionCtx.waitUntil(Promise.all([...ids].map((id) => linkStub(c.env, id).notifyConnected({ type: "approval_rules_updated" }))));
}

/** The projects a rule of this scope reaches: its own, those its server serves (every one for a server serving all), or every one. */
async function projectsReached(c: HubContext, scopeType: ApprovalScope, scopeId: string | null): Promise<string[]> {
  if (scopeType === "project") return scopeId ? [scopeId] : [];
  const server =
    scopeType === "server" && scopeId ? await c.var.db.query.servers.findFirst({ columns: { projectIds: true }, where: eq(servers.id, scopeId) }) : undefined;
  if (server?.projectIds) return server.projectIds;
  if (scopeType === "server" && !server) return [];
  return (await c.var.db.select({ id: projects.id }).from(projects)).map((p) => p.id);
}

/**
 * The change goes on the record of every project the rule reached before or reaches after it (`approval_rule_changed`),
 * with who made it; answered once it is there.
 */
export async function putOnRecord(c: HubContext, change: "created" | "updated" | "deleted", rule: RuleRow, before: RuleRow = rule) {
  const view = hookRuleView(rule);
  const was = hookRuleView(before);
  const changed = change === "updated" ? (Object.keys(view) as (keyof typeof view)[]).filter((k) => view[k] !== was[k]) : [];
  if (change === "updated" && changed.length === 0) return;
  const reached = await Promise.all([projectsReached(c, before.scopeType, before.scopeId), projectsReached(c, rule.scopeType, rule.scopeId)]);
  await Promise.all([...new Set(reached.flat())].map((projectId) => runInRoom(c, projectId, { op: "note_rule_change", change, rule: view, changed })));
}
