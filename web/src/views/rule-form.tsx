/**
 * Creating or editing an approval rule: its patterns, action, agents and scope (limited to what the person may
 * manage), a preview of what it would have decided of the calls logged in the last 30 days, and the hub's refusals
 * beside the field they name.
 */
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "../api";
import { FieldProblem, refusalOf as refusalNaming } from "./field-refusal";
import type { ApprovalRule, RulePreview } from "../types";
import { DataTable } from "../ui/data-table";
import { absoluteTime } from "../time-format";

export type Scope = ApprovalRule["scope_type"];

export interface Draft {
  name: string;
  tool_pattern: string;
  param_pattern: string;
  action: ApprovalRule["action"];
  agent_filter: string;
  scope_type: Scope;
  scope_id: string;
}

export const emptyDraft = (scopes: Choices): Draft => ({
  name: "",
  tool_pattern: "",
  param_pattern: "",
  action: "allow",
  agent_filter: "all",
  scope_type: scopes.tenant ? "tenant" : "project",
  scope_id: scopes.tenant ? "" : (scopes.projects[0]?.id ?? ""),
});

export const draftOf = (r: ApprovalRule): Draft => ({
  name: r.name,
  tool_pattern: r.tool_pattern,
  param_pattern: r.param_pattern ?? "",
  action: r.action,
  agent_filter: r.agent_filter,
  scope_type: r.scope_type,
  scope_id: r.scope_id ?? "",
});

/** What the person may put a rule on: admins every scope, members their projects only. */
export interface Choices {
  tenant: boolean;
  projects: { id: string; name: string }[];
  servers: { id: string; name: string }[];
}

const SCOPE_LABELS: Record<Scope, string> = { tenant: "Every server", project: "A project", server: "A server" };
const FIELDS = ["name", "tool_pattern", "param_pattern", "action", "agent_filter", "scope_type", "scope_id"] as const;
type Field = (typeof FIELDS)[number];
/** A preview names the rule's fields under `rule.`. */
const refusalOf = (e: unknown) => refusalNaming<Field>(e, FIELDS, /^rule\./);

const bodyOf = (d: Draft) => ({
  name: d.name.trim(),
  tool_pattern: d.tool_pattern,
  param_pattern: d.param_pattern === "" ? null : d.param_pattern,
  action: d.action,
  agent_filter: d.agent_filter.trim() || "all",
  scope_type: d.scope_type,
  scope_id: d.scope_type === "tenant" ? null : d.scope_id || null,
});

interface Props {
  /** The rule being edited; none: a new one. */
  rule?: ApprovalRule;
  initial: Draft;
  choices: Choices;
  onSaved: (rule: ApprovalRule) => void;
  onCancel: () => void;
}

export function RuleForm({ rule, initial, choices, onSaved, onCancel }: Props) {
  const [draft, setDraft] = useState<Draft>(initial);
  const [refusal, setRefusal] = useState<ReturnType<typeof refusalOf> | null>(null);
  const [preview, setPreview] = useState<RulePreview | null>(null);
  const [busy, setBusy] = useState<"preview" | "save" | null>(null);

  const set = (change: Partial<Draft>) => {
    setDraft({ ...draft, ...change });
    setPreview(null);
  };
  const act = async (what: "preview" | "save", action: () => Promise<void>) => {
    setBusy(what);
    setRefusal(null);
    try {
      await action();
    } catch (e) {
      setRefusal(refusalOf(e));
    } finally {
      setBusy(null);
    }
  };
  const runPreview = () =>
    act("preview", async () => {
      const { name: _, ...ruleBody } = bodyOf(draft);
      setPreview(await ok(hub.POST("/api/v1/approval-rules/preview", { body: { rule: ruleBody, ...(rule ? { rule_id: rule.id } : {}) } })));
    });
  const save = (e: Event) => {
    e.preventDefault();
    void act("save", async () => {
      const body = bodyOf(draft);
      onSaved(
        rule
          ? await ok(hub.PATCH("/api/v1/approval-rules/{rid}", { params: { path: { rid: rule.id } }, body }))
          : await ok(hub.POST("/api/v1/approval-rules", { body })),
      );
    });
  };
  const refused = (field: Field) => <FieldProblem field={field} message={refusal?.fields[field]} />;
  const scopeTypes = (["tenant", "project", "server"] as const).filter((s) => s === "project" || choices.tenant);
  const targets = draft.scope_type === "project" ? choices.projects : draft.scope_type === "server" ? choices.servers : [];
  // A form opened before the page had read the person's projects (or servers) chooses the first once they arrive.
  const firstTarget = targets[0]?.id;
  useEffect(() => {
    if (!draft.scope_id && firstTarget) setDraft((d) => (d.scope_id ? d : { ...d, scope_id: firstTarget }));
  }, [firstTarget, draft.scope_id]);

  return (
    <section class="panel rule-form" aria-label={rule ? `Edit ${rule.name}` : "New rule"}>
      <h2>{rule ? `Edit “${rule.name}”` : "New rule"}</h2>
      <form onSubmit={save}>
        <div class="rule-fields">
          <label>
            Name
            <input name="name" required maxLength={200} value={draft.name} onInput={(e) => set({ name: e.currentTarget.value })} />
            {refused("name")}
          </label>
          <label>
            Tool pattern
            <input
              name="tool_pattern"
              required
              placeholder="Bash, WebFetch, mcp__*, *"
              value={draft.tool_pattern}
              onInput={(e) => set({ tool_pattern: e.currentTarget.value })}
            />
            {refused("tool_pattern")}
          </label>
          <label class="grow">
            Parameter pattern
            <input
              name="param_pattern"
              placeholder="any (npm test*, /repo/src/*, https://*)"
              value={draft.param_pattern}
              onInput={(e) => set({ param_pattern: e.currentTarget.value })}
            />
            {refused("param_pattern")}
          </label>
          <label>
            Action
            <select name="action" value={draft.action} onChange={(e) => set({ action: e.currentTarget.value as Draft["action"] })}>
              <option value="allow">allow</option>
              <option value="deny">deny</option>
            </select>
            {refused("action")}
          </label>
          <label>
            Agents
            <input
              name="agent_filter"
              placeholder="all, or claude,codex,gemini"
              value={draft.agent_filter}
              onInput={(e) => set({ agent_filter: e.currentTarget.value })}
            />
            {refused("agent_filter")}
          </label>
          <label>
            Applies to
            <select
              name="scope_type"
              value={draft.scope_type}
              onChange={(e) => {
                const scope_type = e.currentTarget.value as Scope;
                const first = scope_type === "project" ? choices.projects[0] : scope_type === "server" ? choices.servers[0] : undefined;
                set({ scope_type, scope_id: first?.id ?? "" });
              }}
            >
              {scopeTypes.map((s) => (
                <option key={s} value={s}>
                  {SCOPE_LABELS[s]}
                </option>
              ))}
            </select>
            {refused("scope_type")}
          </label>
          {draft.scope_type !== "tenant" && (
            <label>
              {draft.scope_type === "project" ? "Project" : "Server"}
              <select name="scope_id" value={draft.scope_id} onChange={(e) => set({ scope_id: e.currentTarget.value })}>
                {!targets.some((t) => t.id === draft.scope_id) && <option value={draft.scope_id}>{draft.scope_id ? "(one you cannot manage)" : "—"}</option>}
                {targets.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
              </select>
              {refused("scope_id")}
            </label>
          )}
        </div>
        <div class="actions-row">
          <button type="button" class="secondary" disabled={busy !== null} onClick={() => void runPreview()}>
            Preview
          </button>
          <button type="submit" disabled={busy !== null} aria-busy={busy === "save"}>
            {rule ? "Save changes" : "Create rule"}
          </button>
          <button type="button" class="ghost" onClick={onCancel}>
            Cancel
          </button>
        </div>
        {refusal?.other && (
          <p class="problem" role="alert">
            {refusal.other}
          </p>
        )}
      </form>
      {preview && <PreviewResult preview={preview} />}
    </section>
  );
}

function PreviewResult({ preview }: { preview: RulePreview }) {
  return (
    <div class="rule-preview" data-preview>
      <p>
        Matches <strong data-matched>{preview.matched}</strong> of {preview.scanned}
        {preview.truncated ? " (the newest)" : ""} calls logged in the last 30 days
        {preview.matched > 0 && (
          <>
            {" "}
            and would decide <strong data-decided>{preview.decided}</strong> of them
            {preview.decided < preview.matched && <> (rules before it in the hook's order decide the others)</>}
          </>
        )}
        . With it, <strong data-would-change>{preview.would_change}</strong> would be decided otherwise than the rules decide them now.
      </p>
      {preview.samples.length > 0 && (
        <DataTable
          class="rule-samples"
          label="Logged calls the rule matches"
          rows={preview.samples}
          rowKey={(x) => x.id}
          rowAttributes={(x) => ({ "data-sample-id": x.id })}
          columns={[
            { label: "When", cell: (x) => absoluteTime(x.created_at) },
            { label: "Tool", cell: (x) => <code>{x.tool_name}</code> },
            { label: "Parameter", cell: (x) => (x.parameter ? <code class="param">{x.parameter}</code> : <span class="muted">none</span>) },
            { label: "Logged", cell: (x) => <span class={`decision decision-${x.decision}`}>{x.decision}</span> },
            { label: "Now", cell: (x) => <span class={`decision decision-${x.decision_now}`}>{x.decision_now}</span> },
            {
              label: "With this rule",
              cell: (x) => (
                <>
                  <span class={`decision decision-${x.decision_under_rule}`}>{x.decision_under_rule}</span>
                  {!x.decided_by_rule && <span class="muted small"> by an earlier rule</span>}
                </>
              ),
            },
          ]}
        />
      )}
    </div>
  );
}
