/**
 * What people write of an approval rule: the bodies its routes take, each field checked as the daemon's hook will read
 * it, and the columns a body stands for.
 */
import { z } from "zod";
import { APPROVAL_ACTIONS, APPROVAL_SCOPES } from "../db/schema";
import { MAX_PARAM_PATTERN, parseAgentFilter, toolPatternProblem } from "../domain/approval-rules";
import { label, uuid } from "../http/fields";

const toolPattern = z.string("must be a string").superRefine((value, ctx) => {
  const problem = toolPatternProblem(value);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});
/** Empty means any parameter, as the hook reads it: stored as null. */
const paramPattern = z
  .string("must be a string or null")
  .max(MAX_PARAM_PATTERN, `must be at most ${MAX_PARAM_PATTERN} characters`)
  .transform((v) => (v === "" ? null : v))
  .nullable();
const agentFilter = z.string("must be a string").transform((value, ctx) => {
  const parsed = parseAgentFilter(value);
  if (!parsed.ok) ctx.addIssue({ code: "custom", message: parsed.message });
  return parsed.ok ? parsed.value : value;
});

const ruleFields = {
  name: label(),
  tool_pattern: toolPattern.meta({
    description: "fnmatch glob on the tool's name (`Bash`, `WebFetch`, `shell`, `run_shell_command`, `mcp__*`); `*` for every tool",
  }),
  param_pattern: paramPattern.meta({ description: "fnmatch glob on the tool's main parameter; left out, null or empty: any" }),
  action: z.enum(APPROVAL_ACTIONS),
  scope_type: z.enum(APPROVAL_SCOPES),
  scope_id: uuid.nullable().meta({ description: "The project or server; left out (or null) for tenant rules" }),
  agent_filter: agentFilter.meta({ description: "`all` (the default) or a comma list of `claude`, `codex`, `gemini`" }),
  is_active: z.boolean("must be a boolean"),
};
export const createBody = z.object({
  ...ruleFields,
  param_pattern: ruleFields.param_pattern.optional(),
  scope_id: ruleFields.scope_id.optional(),
  agent_filter: ruleFields.agent_filter.optional(),
  is_active: ruleFields.is_active.optional(),
});
export const updateBody = z.object(
  Object.fromEntries(Object.entries(ruleFields).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof typeof ruleFields]: z.ZodOptional<(typeof ruleFields)[K]>;
  },
);
export const listQuery = z.object({ scope_type: z.enum(APPROVAL_SCOPES).optional(), scope_id: uuid.optional() });

/** A rule's columns as given at creation (or to a preview), with the defaults of what was left out. */
export const ruleColumns = (body: Omit<z.infer<typeof createBody>, "name" | "is_active">) => ({
  toolPattern: body.tool_pattern,
  paramPattern: body.param_pattern ?? null,
  action: body.action,
  scopeType: body.scope_type,
  agentFilter: body.agent_filter ?? "all",
});
