/**
 * The daemon's side of approval rules (approval-rules.ts): the rules of its server, as its PreToolUse hook applies
 * them. It fetches them again when told `approval_rules_updated` and each time it connects.
 */
import { eq, or } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { agent, currentServer } from "../middleware/guards";
import { approvalRules } from "../db/schema";
import { rulesForServer } from "../domain/approval-rules";
import type { HubEnv } from "../http/context";
import { documented } from "../openapi/operation";
import { hookRuleSchema, hookRuleView } from "../views/approval-rules";

export const daemonApprovalRuleRoutes = new Hono<HubEnv>();

daemonApprovalRuleRoutes.get(
  "/approval-rules",
  documented({
    id: "listApprovalRulesForAgent",
    tag: "Approval rules",
    summary: "The approval rules of this server",
    description:
      "A JSON array (what the daemon writes to its hook's rules file as is): the active rules that apply to the calling server — tenant rules, its own server rules " +
      "and the rules of the projects it serves — in the order the hook applies them (first match wins): deny before allow, then server, project, tenant, then oldest first.",
    caller: "agent",
    responses: { 200: z.array(hookRuleSchema) },
  }),
  agent,
  async (c) => {
    const server = currentServer(c);
    const rows = await c.var.db
      .select()
      .from(approvalRules)
      .where(or(eq(approvalRules.scopeType, "tenant"), eq(approvalRules.scopeType, "project"), eq(approvalRules.scopeId, server.id)));
    return c.json(rulesForServer(rows, { id: server.id, projectIds: server.projectIds ?? null }).map(hookRuleView));
  },
);
