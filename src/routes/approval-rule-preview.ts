/**
 * A rule's preview: what it would change of the calls the permission log holds, decided as the daemon's hook decides
 * them (src/domain/hook-match.ts), before anyone saves it.
 */
import { eq } from "drizzle-orm";
import type { Hono } from "hono";
import { z } from "zod";
import { projectFor } from "../auth/access";
import { person } from "../middleware/guards";
import { nowIso } from "../db/client";
import { recentLogEntries } from "../db/permission-log";
import { readOnShards } from "../views/shard-lists";
import { approvalRules } from "../db/schema";
import { previewAmong } from "../domain/hook-match";
import { readJson } from "../http/body";
import type { HubEnv } from "../http/context";
import { uuid } from "../http/fields";
import { fieldError } from "../http/problem";
import { documented } from "../openapi/operation";
import { permissionLogDays } from "../domain/permission-log-days";
import { rulePreviewSchema } from "../views/approval-rules";
import { checkScope, reachOf, reads } from "./approval-rule-access";
import { createBody, ruleColumns } from "./approval-rule-bodies";

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

/** POST /preview. */
export function previewRoute(people: Hono<HubEnv>) {
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
          : // Each shard the projects live on, at once; the newest of all.
            readOnShards(c.env, c.var.db, projectIds, (db, ids) =>
              recentLogEntries(db, { projectIds: ids, serverId: rule.scope_type === "server" ? scopeId! : undefined, since, limit: PREVIEW_SCAN + 1 }),
            ).then((lists) => lists.flat().sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1))),
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
}
