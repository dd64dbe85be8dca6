/** Approval rules as people and daemons see them (API.md "Approval rules and the permission log"). */
import { z } from "zod";
import { APPROVAL_ACTIONS, APPROVAL_SCOPES, PERMISSION_DECISIONS, type approvalRules } from "../db/schema";
import { id, timestamp } from "./fields";

/** What the daemon's hook reads of a rule, field for field (`GET /api/v1/server/approval-rules`). */
export const hookRuleSchema = z
  .object({
    id,
    name: z.string(),
    tool_pattern: z.string().meta({ description: "fnmatch glob on the tool's name; `*` for every tool" }),
    param_pattern: z
      .string()
      .nullable()
      .meta({ description: "fnmatch glob on the tool's main parameter (command, file path, URL, search pattern); null for any" }),
    action: z.enum(APPROVAL_ACTIONS),
    scope_type: z.enum(APPROVAL_SCOPES),
    scope_id: id.nullable().meta({ description: "The project or server; null for tenant rules" }),
    agent_filter: z.string().meta({ description: "`all`, or a comma list of `claude`, `codex`, `gemini`" }),
    is_active: z.boolean(),
  })
  .meta({ id: "HookApprovalRule" });

export const approvalRuleSchema = hookRuleSchema
  .extend({ created_by: id.nullable(), created_at: timestamp, updated_at: timestamp })
  .meta({ id: "ApprovalRule" });

type RuleRow = typeof approvalRules.$inferSelect;

export const hookRuleView = (r: RuleRow): z.infer<typeof hookRuleSchema> => ({
  id: r.id,
  name: r.name,
  tool_pattern: r.toolPattern,
  param_pattern: r.paramPattern,
  action: r.action,
  scope_type: r.scopeType,
  scope_id: r.scopeId,
  agent_filter: r.agentFilter,
  is_active: r.isActive,
});

export const approvalRuleView = (r: RuleRow): z.infer<typeof approvalRuleSchema> => ({
  ...hookRuleView(r),
  created_by: r.createdBy,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

/** What a rule would have decided of the logged calls (`POST /api/v1/approval-rules/preview`). */
export const rulePreviewSchema = z
  .object({
    matched: z.number().int().meta({ description: "Scanned entries the rule matches" }),
    decided: z.number().int().meta({ description: "Matched entries the rule would decide: no rule before it in the hook's order matches them" }),
    scanned: z.number().int().meta({ description: "Entries of the last PERMISSION_LOG_DAYS looked at" }),
    would_change: z
      .number()
      .int()
      .meta({ description: "Scanned entries the rules with this one would decide otherwise than the active rules decide them now" }),
    truncated: z.boolean().meta({ description: "Whether older entries were left unscanned (at most 5000, the newest, are)" }),
    samples: z
      .array(
        z.object({
          id,
          project_id: id,
          tool_name: z.string(),
          parameter: z.string().meta({ description: "The tool's main parameter the hook matches `param_pattern` against; empty when it has none" }),
          decision: z.enum(PERMISSION_DECISIONS).meta({ description: "The decision logged then" }),
          decision_now: z.enum(PERMISSION_DECISIONS).meta({ description: "What the active rules decide of it now" }),
          decision_under_rule: z.enum(PERMISSION_DECISIONS).meta({ description: "What the active rules with this one would decide of it" }),
          decided_by_rule: z.boolean().meta({ description: "Whether this rule would decide it (false: a rule before it does)" }),
          created_at: timestamp,
        }),
      )
      .meta({ description: "Up to 20 matched entries, newest first" }),
  })
  .meta({ id: "ApprovalRulePreview" });
