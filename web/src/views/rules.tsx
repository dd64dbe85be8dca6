/**
 * Approval rules: the ones the person can read, grouped by what they apply to (every server, a project, a server),
 * each with its patterns, action, agents and whether it is active. Admins manage every rule, members their projects'
 * rules; viewers read. `/rules?new=1&tool_pattern=…&param_pattern=…&scope_type=…&scope_id=…` opens the form prefilled
 * (the Permissions tab's "make a rule from this").
 */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { useMe } from "../me";
import { navigate } from "../router";
import type { ApprovalRule, Server } from "../types";
import { DataTable } from "../ui/data-table";
import { Empty, Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { Problem, useAction } from "./controls";
import { draftOf, emptyDraft, RuleForm, type Choices, type Draft, type Scope } from "./rule-form";

type Editing = { rule?: ApprovalRule; draft: Draft } | null;

/** The form a `?new=1` address asks for, prefilled from its other parameters. */
function prefilled(search: string, choices: Choices): Draft | null {
  const q = new URLSearchParams(search);
  if (q.get("new") !== "1") return null;
  const draft = emptyDraft(choices);
  const scope = q.get("scope_type");
  return {
    ...draft,
    tool_pattern: q.get("tool_pattern") ?? "",
    param_pattern: q.get("param_pattern") ?? "",
    ...(q.get("action") === "deny" ? { action: "deny" as const } : {}),
    ...(scope === "tenant" || scope === "project" || scope === "server" ? { scope_type: scope as Scope, scope_id: q.get("scope_id") ?? "" } : {}),
  };
}

export function Rules() {
  const me = useMe();
  const [rules, setRules] = useState<ApprovalRule[] | null>(null);
  const [projects, setProjects] = useState<{ id: string; name: string }[] | null>(null);
  const [servers, setServers] = useState<Server[]>([]);
  const [editing, setEditing] = useState<Editing>(null);
  const [error, setError] = useState<string | null>(null);
  const isAdmin = me.role === "admin";
  const canWrite = me.role !== "viewer";

  const load = () =>
    ok(hub.GET("/api/v1/approval-rules")).then(
      (r) => (setRules(r.rules), setError(null)),
      (e) => setError(messageOf(e)),
    );
  useEffect(() => {
    void load();
    void ok(hub.GET("/api/v1/projects")).then(
      (r) => setProjects(r.projects.map((p) => ({ id: p.id, name: p.name }))),
      () => setProjects([]),
    );
    void ok(hub.GET("/api/v1/servers")).then(
      (r) => setServers(r.servers),
      () => undefined,
    );
  }, []);

  const choices: Choices = {
    tenant: isAdmin,
    projects: canWrite ? (projects ?? []) : [],
    servers: isAdmin ? servers.filter((s) => !s.revoked).map((s) => ({ id: s.id, name: s.name })) : [],
  };
  // The prefilled form opens once the person's projects are known (the scope picker needs them).
  useEffect(() => {
    if (projects === null || !canWrite) return;
    const draft = prefilled(location.search, choices);
    if (draft) setEditing({ draft });
  }, [projects]);

  const manages = (r: ApprovalRule) => isAdmin || (me.role === "member" && r.scope_type === "project");
  const close = () => {
    setEditing(null);
    if (location.search) navigate("/rules");
  };
  const nameOf = (r: ApprovalRule) =>
    r.scope_type === "tenant"
      ? "Every server"
      : r.scope_type === "project"
        ? `Project ${projects?.find((p) => p.id === r.scope_id)?.name ?? r.scope_id}`
        : `Server ${servers.find((s) => s.id === r.scope_id)?.name ?? r.scope_id}`;
  const groups = new Map<string, ApprovalRule[]>();
  for (const r of [...(rules ?? [])].sort((a, b) => SCOPE_ORDER[a.scope_type] - SCOPE_ORDER[b.scope_type])) {
    const key = nameOf(r);
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }

  return (
    <section class="rules-page">
      <div class="rules-head">
        <h1>Approval rules</h1>
        {canWrite && !editing && (
          <button type="button" onClick={() => setEditing({ draft: emptyDraft(choices) })}>
            New rule
          </button>
        )}
      </div>
      <p class="muted intro">
        Each agent's tool call is decided by the first active rule that matches it: denies before allows, then a server's rules, a project's, every server's.
        Patterns are globs (<code>*</code>, <code>?</code>, <code>[abc]</code>); a call matching no rule asks as usual.
      </p>
      {!canWrite && (
        <p class="read-only" data-read-only>
          Read-only: rules are managed by admins, and a project's rules by its members.
        </p>
      )}
      {editing && (
        <RuleForm
          key={editing.rule?.id ?? "new"}
          rule={editing.rule}
          initial={editing.draft}
          choices={choices}
          onSaved={() => {
            toast(editing.rule ? `Saved “${editing.rule.name}”.` : "Rule created.");
            close();
            void load();
          }}
          onCancel={close}
        />
      )}
      {rules === null && (error ? <Failed what="the rules" message={error} retry={() => void load()} /> : <Loading what="rules" />)}
      {rules?.length === 0 && <Empty title="No rules yet.">Every tool call asks as usual.</Empty>}
      {rules && <Problem message={error} />}
      {[...groups].map(([group, list]) => (
        <section key={group} class="rule-group" aria-label={group}>
          <h2>{group}</h2>
          <DataTable
            class="rules"
            label={`Rules for ${group}`}
            rows={list}
            rowKey={(r) => r.id}
            rowAttributes={(r) => ({ "data-rule-id": r.id, class: r.is_active ? undefined : "inactive" })}
            columns={[
              { label: "Rule", rowHeader: true, cell: (r) => r.name },
              { label: "Tool", cell: (r) => <code>{r.tool_pattern}</code> },
              { label: "Parameter", cell: (r) => (r.param_pattern ? <code class="param">{r.param_pattern}</code> : <span class="muted">any</span>) },
              { label: "Action", cell: (r) => <span class={`decision decision-${r.action === "allow" ? "allowed" : "denied"}`}>{r.action}</span> },
              { label: "Agents", cell: (r) => r.agent_filter },
              {
                label: "Active",
                cell: (r) =>
                  manages(r) ? <RuleActive rule={r} onChanged={load} /> : <span data-active={String(r.is_active)}>{r.is_active ? "on" : "off"}</span>,
              },
              canWrite && {
                label: "Actions",
                actions: true,
                cell: (r) =>
                  manages(r) && (
                    <RuleControls
                      rule={r}
                      onEdit={() => setEditing({ rule: r, draft: draftOf(r) })}
                      onDeleted={() => {
                        if (editing?.rule?.id === r.id) close();
                        void load();
                      }}
                    />
                  ),
              },
            ]}
          />
        </section>
      ))}
    </section>
  );
}

/** A rule's on/off switch: shows the new position while the change is on its way, and puts it back if refused. */
function RuleActive({ rule: r, onChanged }: { rule: ApprovalRule; onChanged: () => Promise<unknown> }) {
  const { run, busy, problem } = useAction();
  const [pending, setPending] = useState<boolean | null>(null);
  const on = pending ?? r.is_active;
  const change = (next: boolean) => {
    setPending(next);
    void run("active", async () => {
      try {
        await ok(hub.PATCH("/api/v1/approval-rules/{rid}", { params: { path: { rid: r.id } }, body: { is_active: next } }));
        await onChanged();
        toast(`${r.name} is ${next ? "on" : "off"}.`);
      } finally {
        setPending(null);
      }
    });
  };
  return (
    <label class="switch">
      <input
        type="checkbox"
        aria-label={`${r.name} active`}
        checked={on}
        disabled={busy !== null}
        aria-busy={busy !== null}
        onChange={(e) => change(e.currentTarget.checked)}
      />
      {on ? "on" : "off"}
      {problem("active")}
    </label>
  );
}

function RuleControls({ rule: r, onEdit, onDeleted }: { rule: ApprovalRule; onEdit: () => void; onDeleted: () => void }) {
  const { run, busy, problem } = useAction();
  const remove = () =>
    void run("delete", async () => {
      if (!confirm(`Delete the rule “${r.name}”? The daemons it reaches stop applying it within a second.`)) return;
      await ok(hub.DELETE("/api/v1/approval-rules/{rid}", { params: { path: { rid: r.id } } }));
      toast(`Deleted the rule “${r.name}”.`);
      onDeleted();
    });
  return (
    <span class="rule-controls">
      <button type="button" class="secondary" aria-label={`Edit ${r.name}`} onClick={onEdit}>
        Edit
      </button>
      <button type="button" class="danger" aria-label={`Delete ${r.name}`} disabled={busy !== null} aria-busy={busy !== null} onClick={remove}>
        Delete
      </button>
      {problem("delete")}
    </span>
  );
}

const SCOPE_ORDER: Record<Scope, number> = { tenant: 0, project: 1, server: 2 };
