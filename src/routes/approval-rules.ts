/**
 * Approval rules (API.md "Approval rules and the permission log"): people manage them here; each daemon fetches the
 * ones that apply to its server, in the order its PreToolUse hook applies them, and is told to fetch again when one
 * of them changes. Who may read and change which rules is approval-rule-access.ts; the preview is
 * approval-rule-preview.ts; the daemon's side is daemon-approval-rules.ts.
 */
import { and, eq } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { currentUser, person } from "../middleware/guards";
import { nowIso } from "../db/client";
import { approvalRules } from "../db/schema";
import { inHookOrder } from "../domain/approval-rules";
import { readJson, readQuery } from "../http/body";
import type { HubEnv } from "../http/context";
import { notFound } from "../http/problem";
import { documented } from "../openapi/operation";
import { approvalRuleSchema, approvalRuleView } from "../views/approval-rules";
import { changeable, checkScope, reachOf, reads, ruleFor } from "./approval-rule-access";
import { createBody, listQuery, ruleColumns, updateBody } from "./approval-rule-bodies";
import { putOnRecord, tellDaemons } from "./approval-rule-notices";
import { previewRoute } from "./approval-rule-preview";
import { daemonApprovalRuleRoutes } from "./daemon-approval-rules";

const people = new Hono<HubEnv>();
export const approvalRuleRoutes = { people, agents: daemonApprovalRuleRoutes };

const ROLES_TEXT =
  "Admins manage every rule; members create, edit and delete the rules of projects they belong to; everyone reads the tenant rules, " +
  "the rules of their projects and the server rules of servers serving one of their projects (others answer 404).";

// Registered in this order: the API's description follows it.
people.post(
  "/",
  documented({
    id: "createApprovalRule",
    tag: "Approval rules",
    summary: "Create an approval rule",
    description:
      ROLES_TEXT +
      "\n\nThe daemon's PreToolUse hook decides a tool call by the first active rule that matches it (`fnmatch` globs on the tool's name and its main parameter). " +
      "Every daemon the rule reaches is told (`approval_rules_updated`) and fetches its rules again. 422 names the field for a `tool_pattern` that can never match a tool name, " +
      "a `param_pattern` over 1000 characters, a `scope_id` that does not fit `scope_type` or that the caller cannot see, and an unknown agent in `agent_filter`.",
    caller: "person",
    body: createBody,
    responses: { 201: approvalRuleSchema },
  }),
  person("member"),
  async (c) => {
    const body = await readJson(c, createBody);
    const scopeId = body.scope_id ?? null;
    await checkScope(c, await reachOf(c), body.scope_type, scopeId);
    const now = nowIso();
    const [rule] = await c.var.db
      .insert(approvalRules)
      .values({
        id: crypto.randomUUID(),
        name: body.name,
        ...ruleColumns(body),
        scopeId,
        isActive: body.is_active ?? true,
        createdBy: currentUser(c).id,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    await tellDaemons(c, rule!);
    await putOnRecord(c, "created", rule!);
    return c.json(approvalRuleView(rule!), 201);
  },
);

previewRoute(people);

people.get(
  "/",
  documented({
    id: "listApprovalRules",
    tag: "Approval rules",
    summary: "List approval rules",
    description:
      "The rules the caller can read (" +
      ROLES_TEXT +
      "), inactive ones included, in the order the hook applies them: deny before allow, then server, project, tenant, then oldest first.",
    caller: "person",
    query: listQuery,
    responses: { 200: z.object({ rules: z.array(approvalRuleSchema) }) },
  }),
  person(),
  async (c) => {
    const { scope_type, scope_id } = readQuery(c, listQuery);
    const reach = await reachOf(c);
    const rows = await c.var.db
      .select()
      .from(approvalRules)
      .where(and(scope_type ? eq(approvalRules.scopeType, scope_type) : undefined, scope_id ? eq(approvalRules.scopeId, scope_id) : undefined));
    return c.json({ rules: inHookOrder(rows.filter((r) => reads(reach, r.scopeType, r.scopeId))).map(approvalRuleView) });
  },
);

people.get(
  "/:rid",
  documented({ id: "getApprovalRule", tag: "Approval rules", summary: "Get an approval rule", caller: "person", responses: { 200: approvalRuleSchema } }),
  person(),
  async (c) => c.json(approvalRuleView((await ruleFor(c)).rule)),
);

people.patch(
  "/:rid",
  documented({
    id: "updateApprovalRule",
    tag: "Approval rules",
    summary: "Update an approval rule",
    description: "Fields left out stay as they were; the same checks as at creation apply to the result. Daemons the rule reached or now reaches are told.",
    caller: "person",
    body: updateBody,
    responses: { 200: approvalRuleSchema },
  }),
  person("member"),
  async (c) => {
    const { rule, reach } = await changeable(c);
    const body = await readJson(c, updateBody);
    const scopeType = body.scope_type ?? rule.scopeType;
    // A new scope type without an id means the new scope has none (tenant) or is missing one (422).
    const scopeId = body.scope_id !== undefined ? body.scope_id : body.scope_type !== undefined && body.scope_type !== rule.scopeType ? null : rule.scopeId;
    await checkScope(c, reach, scopeType, scopeId);
    const [updated] = await c.var.db
      .update(approvalRules)
      .set({
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.tool_pattern !== undefined ? { toolPattern: body.tool_pattern } : {}),
        ...(body.param_pattern !== undefined ? { paramPattern: body.param_pattern } : {}),
        ...(body.action !== undefined ? { action: body.action } : {}),
        ...(body.agent_filter !== undefined ? { agentFilter: body.agent_filter } : {}),
        ...(body.is_active !== undefined ? { isActive: body.is_active } : {}),
        scopeType,
        scopeId,
        updatedAt: nowIso(),
      })
      .where(eq(approvalRules.id, rule.id))
      .returning();
    if (!updated) throw notFound("Approval rule");
    await tellDaemons(c, rule, updated);
    await putOnRecord(c, "updated", updated, rule);
    return c.json(approvalRuleView(updated));
  },
);

people.delete(
  "/:rid",
  documented({
    id: "deleteApprovalRule",
    tag: "Approval rules",
    summary: "Delete an approval rule",
    description: "Daemons the rule reached are told, and their hooks stop applying it.",
    caller: "person",
    responses: { 204: { description: "Deleted" } },
  }),
  person("member"),
  async (c) => {
    const { rule } = await changeable(c);
    await c.var.db.delete(approvalRules).where(eq(approvalRules.id, rule.id));
    await tellDaemons(c, rule);
    await putOnRecord(c, "deleted", rule);
    return c.body(null, 204);
  },
);
