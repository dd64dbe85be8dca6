/**
 * Approval rules (API.md "Approval rules and the permission log"): people manage them here; each daemon fetches the
 * ones that apply to its server, in the order its PreToolUse hook applies them, and is told to fetch again when one
 * of them changes.
 *
 * Who may do what: admins manage every rule. Members create, edit and delete the rules of projects they belong to.
 * Everyone reads the tenant rules, the rules of their projects and the server rules of servers serving one of their
 * projects; any other rule answers 404.
 */
import { and, eq, isNull, or, sql } from "drizzle-orm";
import { Hono } from "hono";
import { z } from "zod";
import { principalOf, projectFor, scopesOverlap, visibleProjectIds } from "../auth/access";
import { agent, currentServer, currentUser, person } from "../middleware/guards";
import { nowIso } from "../db/client";
import { recentLogEntries } from "../db/permission-log";
import { APPROVAL_ACTIONS, APPROVAL_SCOPES, approvalRules, projects, servers } from "../db/schema";
import { MAX_PARAM_PATTERN, inHookOrder, parseAgentFilter, rulesForServer, toolPatternProblem, type ApprovalScope } from "../domain/approval-rules";
import { previewAmong } from "../domain/hook-match";
import { permissionLogDays } from "../cron/maintenance";
import { readJson, readQuery } from "../http/body";
import type { HubContext, HubEnv } from "../http/context";
import { label, uuid } from "../http/fields";
import { fieldError, forbidden, notFound } from "../http/problem";
import { documented } from "../openapi/operation";
import { runInRoom } from "../room/client";
import { linkStub } from "../server-link/client";
import { approvalRuleSchema, approvalRuleView, hookRuleSchema, hookRuleView, rulePreviewSchema } from "../views/approval-rules";

type RuleRow = typeof approvalRules.$inferSelect;

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
const createBody = z.object({
  ...ruleFields,
  param_pattern: ruleFields.param_pattern.optional(),
  scope_id: ruleFields.scope_id.optional(),
  agent_filter: ruleFields.agent_filter.optional(),
  is_active: ruleFields.is_active.optional(),
});
const updateBody = z.object(
  Object.fromEntries(Object.entries(ruleFields).map(([k, v]) => [k, v.optional()])) as {
    [K in keyof typeof ruleFields]: z.ZodOptional<(typeof ruleFields)[K]>;
  },
);
const listQuery = z.object({ scope_type: z.enum(APPROVAL_SCOPES).optional(), scope_id: uuid.optional() });

/** A rule's columns as given at creation (or to a preview), with the defaults of what was left out. */
const ruleColumns = (body: Omit<z.infer<typeof createBody>, "name" | "is_active">) => ({
  toolPattern: body.tool_pattern,
  paramPattern: body.param_pattern ?? null,
  action: body.action,
  scopeType: body.scope_type,
  agentFilter: body.agent_filter ?? "all",
});

const isAdmin = (c: HubContext) => {
  const p = principalOf(c);
  return p.kind === "user" && p.user.role === "admin";
};

/** What a person reaches beyond tenant rules: null for admins (everything), else their projects and the servers serving them. */
async function reachOf(c: HubContext): Promise<{ projects: Set<string>; servers: Set<string> } | null> {
  const visible = await visibleProjectIds(c);
  if (visible === null) return null;
  const rows = await c.var.db.select({ id: servers.id, projectIds: servers.projectIds }).from(servers);
  return { projects: new Set(visible), servers: new Set(rows.filter((s) => scopesOverlap(visible, s.projectIds ?? null)).map((s) => s.id)) };
}

type Reach = Awaited<ReturnType<typeof reachOf>>;

const reads = (reach: Reach, scopeType: ApprovalScope, scopeId: string | null) =>
  reach === null || scopeType === "tenant" || (scopeId !== null && (scopeType === "project" ? reach.projects : reach.servers).has(scopeId));

/** The rule, if the caller may read it (404 otherwise, exactly like a missing one). */
async function ruleFor(c: HubContext): Promise<{ rule: RuleRow; reach: Reach }> {
  const [rule, reach] = await Promise.all([c.var.db.query.approvalRules.findFirst({ where: eq(approvalRules.id, c.req.param("rid")!) }), reachOf(c)]);
  if (!rule || !reads(reach, rule.scopeType, rule.scopeId)) throw notFound("Approval rule");
  return { rule, reach };
}

/** 403 unless the caller may manage rules of this scope; 422 naming `scope_id` when it does not fit the scope or names what the caller cannot see. */
async function checkScope(c: HubContext, reach: Reach, scopeType: ApprovalScope, scopeId: string | null, field = "scope_id") {
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
}

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
async function tellDaemons(c: HubContext, ...scopes: Pick<RuleRow, "scopeType" | "scopeId">[]) {
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
async function putOnRecord(c: HubContext, change: "created" | "updated" | "deleted", rule: RuleRow, before: RuleRow = rule) {
  const view = hookRuleView(rule);
  const was = hookRuleView(before);
  const changed = change === "updated" ? (Object.keys(view) as (keyof typeof view)[]).filter((k) => view[k] !== was[k]) : [];
  if (change === "updated" && changed.length === 0) return;
  const reached = await Promise.all([projectsReached(c, before.scopeType, before.scopeId), projectsReached(c, rule.scopeType, rule.scopeId)]);
  await Promise.all([...new Set(reached.flat())].map((projectId) => runInRoom(c, projectId, { op: "note_rule_change", change, rule: view, changed })));
}

const people = new Hono<HubEnv>();
const agents = new Hono<HubEnv>();
export const approvalRuleRoutes = { people, agents };

const ROLES_TEXT =
  "Admins manage every rule; members create, edit and delete the rules of projects they belong to; everyone reads the tenant rules, " +
  "the rules of their projects and the server rules of servers serving one of their projects (others answer 404).";

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

/** Entries a preview scans at most, newest first, and matched entries it describes. */
const PREVIEW_SCAN = 5_000;
const PREVIEW_SAMPLES = 20;

const previewBody = z.object({
  rule: createBody.extend({ name: createBody.shape.name.optional() }).omit({ is_active: true }),
  rule_id: uuid.optional().meta({ description: "The rule being edited: the preview puts the rule in its place instead of beside it" }),
  project_id: uuid
    .optional()
    .meta({ description: "For a tenant or server rule: the project whose log to look at (default: every project the caller can see)" }),
});

people.post(
  "/preview",
  documented({
    id: "previewApprovalRule",
    tag: "Approval rules",
    summary: "What a rule would change of the logged calls",
    description:
      "The rule (as it would be created, with the same checks and 422s, `name` optional) put among the active rules, in place of `rule_id` " +
      "for an edit, and the permission log of the last `PERMISSION_LOG_DAYS` decided as the hook decides each call: by the first rule in the " +
      "hook's order that matches it (the tool pattern on the tool's name, the parameter pattern on its main parameter, which a call without one " +
      "matches, the agent filter on the entry's agent, a server rule on its server's calls), `asked` when none does. It looks at the log of the " +
      "rule's project; for a tenant or server rule, of `project_id` or else of every project the caller can see (a server rule: only the entries " +
      "its server posted). At most the newest 5000 entries are scanned (`truncated` says when older ones were left). `matched` counts the entries " +
      "the rule matches, `decided` those it would decide (no rule before it matches them), `would_change` those the rules would decide otherwise " +
      "than the active rules decide them now.",
    caller: "person",
    body: previewBody,
    responses: { 200: rulePreviewSchema },
  }),
  person("member"),
  async (c) => {
    const { rule, rule_id, project_id } = await readJson(c, previewBody);
    const scopeId = rule.scope_id ?? null;
    const reach = await reachOf(c);
    await checkScope(c, reach, rule.scope_type, scopeId, "rule.scope_id");
    const edited = rule_id === undefined ? undefined : await c.var.db.query.approvalRules.findFirst({ where: eq(approvalRules.id, rule_id) });
    if (rule_id !== undefined && (!edited || !reads(reach, edited.scopeType, edited.scopeId))) throw fieldError("rule_id", "is not a rule you can see");
    let projectIds: string[] | null;
    if (rule.scope_type === "project") projectIds = [scopeId!];
    else if (project_id !== undefined) projectIds = [(await projectFor(c, project_id)).id];
    else projectIds = reach === null ? null : [...reach.projects];
    const since = new Date(Date.now() - permissionLogDays(c.env.PERMISSION_LOG_DAYS) * 86_400_000).toISOString();
    const [rows, active] = await Promise.all([
      projectIds?.length === 0
        ? []
        : recentLogEntries(c.var.db, { projectIds, serverId: rule.scope_type === "server" ? scopeId! : undefined, since, limit: PREVIEW_SCAN + 1 }),
      c.var.db.select().from(approvalRules).where(eq(approvalRules.isActive, true)),
    ]);
    const scanned = rows.slice(0, PREVIEW_SCAN);
    const candidate = { ...ruleColumns(rule), scopeId, id: edited?.id ?? crypto.randomUUID(), createdAt: edited?.createdAt ?? nowIso() };
    const preview = previewAmong(candidate, active, scanned, PREVIEW_SAMPLES);
    const samples = preview.samples.map((e) => ({
      id: e.id,
      project_id: e.projectId,
      tool_name: e.toolName,
      parameter: e.parameter,
      decision: e.decision,
      decision_now: e.now,
      decision_under_rule: e.withRule,
      decided_by_rule: e.decidedByRule,
      created_at: e.createdAt,
    }));
    return c.json({
      matched: preview.matched,
      decided: preview.decided,
      scanned: scanned.length,
      would_change: preview.wouldChange,
      truncated: rows.length > PREVIEW_SCAN,
      samples,
    });
  },
);

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

/** The rule, if the caller may change it: 404 when they cannot read it, 403 when they only read it. */
async function changeable(c: HubContext) {
  const found = await ruleFor(c);
  if (!isAdmin(c) && (found.rule.scopeType !== "project" || currentUser(c).role !== "member")) {
    throw forbidden("Only admins manage tenant and server rules; members manage their projects' rules");
  }
  return found;
}

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

agents.get(
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
