/**
 * Approval rules: the ones the person can read, grouped by what they apply to (every server, a project, a server),
 * each with its patterns, action, agents and whether it is active. Admins manage every rule, members their projects'
 * rules; viewers read. `/rules?new=1&tool_pattern=…&param_pattern=…&scope_type=…&scope_id=…` opens the form prefilled
 * (the Permissions tab's "make a rule from this").
 */
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "../api";
import { useMe } from "../me";
import { navigate } from "../router";
import type { ApprovalRule, Server } from "../types";
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
  const { run, busy, problem } = useAction();
  const isAdmin = me.role === "admin";
  const canWrite = me.role !== "viewer";

  const load = () =>
    ok(hub.GET("/api/v1/approval-rules")).then(
      (r) => setRules(r.rules),
      (e: Error) => setError(e.message),
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
            close();
            void load();
          }}
          onCancel={close}
        />
      )}
      <Problem message={error} />
      {rules?.length === 0 && <p class="muted">No rules yet: every tool call asks as usual.</p>}
      {[...groups].map(([group, list]) => (
        <section key={group} class="rule-group" aria-label={group}>
          <h2>{group}</h2>
          <table class="servers rules" data-loaded="true">
            <thead>
              <tr>
                <th scope="col">Rule</th>
                <th scope="col">Tool</th>
                <th scope="col">Parameter</th>
                <th scope="col">Action</th>
                <th scope="col">Agents</th>
                <th scope="col">Active</th>
                {canWrite && (
                  <th scope="col">
                    <span class="muted">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {list.map((r) => (
                <tr key={r.id} data-rule-id={r.id} class={r.is_active ? undefined : "inactive"}>
                  <th scope="row">{r.name}</th>
                  <td>
                    <code>{r.tool_pattern}</code>
                  </td>
                  <td>{r.param_pattern ? <code class="param">{r.param_pattern}</code> : <span class="muted">any</span>}</td>
                  <td>
                    <span class={`decision decision-${r.action === "allow" ? "allowed" : "denied"}`}>{r.action}</span>
                  </td>
                  <td>{r.agent_filter}</td>
                  <td>
                    {manages(r) ? (
                      <label class="switch">
                        <input
                          type="checkbox"
                          aria-label={`${r.name} active`}
                          checked={r.is_active}
                          disabled={busy !== null}
                          onChange={() =>
                            void run(`active-${r.id}`, async () => {
                              await ok(hub.PATCH("/api/v1/approval-rules/{rid}", { params: { path: { rid: r.id } }, body: { is_active: !r.is_active } }));
                              await load();
                            })
                          }
                        />
                        {r.is_active ? "on" : "off"}
                        {problem(`active-${r.id}`)}
                      </label>
                    ) : (
                      <span data-active={String(r.is_active)}>{r.is_active ? "on" : "off"}</span>
                    )}
                  </td>
                  {canWrite && (
                    <td>
                      {manages(r) && (
                        <span class="rule-controls">
                          <button type="button" class="secondary" aria-label={`Edit ${r.name}`} onClick={() => setEditing({ rule: r, draft: draftOf(r) })}>
                            Edit
                          </button>
                          <button
                            type="button"
                            class="danger"
                            aria-label={`Delete ${r.name}`}
                            disabled={busy !== null}
                            onClick={() =>
                              void run(`delete-${r.id}`, async () => {
                                if (!confirm(`Delete the rule “${r.name}”? The daemons it reaches stop applying it within a second.`)) return;
                                await ok(hub.DELETE("/api/v1/approval-rules/{rid}", { params: { path: { rid: r.id } } }));
                                if (editing?.rule?.id === r.id) close();
                                await load();
                              })
                            }
                          >
                            Delete
                          </button>
                          {problem(`delete-${r.id}`)}
                        </span>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ))}
    </section>
  );
}

const SCOPE_ORDER: Record<Scope, number> = { tenant: 0, project: 1, server: 2 };
