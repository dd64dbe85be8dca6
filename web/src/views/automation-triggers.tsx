/**
 * A project's inbound triggers: each with its kind, template, URL (to copy) and what fires it; for members and admins,
 * the form that adds one (its URL and secret then shown once, with GitHub's setup steps), secret rotation, pause and
 * resume, and delete.
 */
import { useState } from "preact/hooks";
import {
  changeTrigger,
  deleteTrigger,
  listTemplates,
  listTriggers,
  NO_EVENTS,
  rotateTriggerSecret,
  type Trigger,
  type TriggerWithSecret,
} from "../automation-api";
import { useCanWrite } from "../me";
import { linkProps } from "../router";
import { DataTable } from "../ui/data-table";
import { Empty, Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { useLiveRead } from "../usage-reads";
import { Problem, useAction } from "./controls";
import { CopyButton } from "./copy";
import { TriggerForm } from "./trigger-form";
import { TriggerSecret } from "./trigger-secret";

/** What fires a trigger, in a line. */
function firedBy(t: Trigger): string {
  if (t.kind === "http") return "a POST with its secret";
  const g = t.github;
  if (!g) return "GitHub";
  return g.events
    .map((e) =>
      e === "issues.labeled"
        ? `issues labelled${g.label ? ` "${g.label}"` : ""}`
        : e === "issue_comment.created"
          ? `comments${g.command ? ` starting ${g.command}` : ""}`
          : "pull requests opened",
    )
    .join(", ");
}

export function Triggers({ projectId }: { projectId: string }) {
  const canWrite = useCanWrite();
  const triggers = useLiveRead(() => listTriggers(projectId), [projectId], NO_EVENTS);
  const templates = useLiveRead(() => listTemplates(projectId), [projectId], NO_EVENTS);
  const [adding, setAdding] = useState(false);
  const [shown, setShown] = useState<{ trigger: TriggerWithSecret; rotated: boolean } | null>(null);
  const { run, busy, problem } = useAction();
  const list = triggers.value;
  const templateName = (id: string) => templates.value?.find((t) => t.id === id)?.name ?? "…";

  const pause = (t: Trigger) =>
    void run(`pause-${t.id}`, async () => {
      await changeTrigger(projectId, t.id, { paused: !t.paused });
      toast(t.paused ? "Resumed the trigger." : "Paused the trigger: its calls are refused until resumed.");
      triggers.reread();
    });
  const rotate = (t: Trigger) =>
    confirm("Rotate the trigger's secret? The old one stops working at once.") &&
    void run(`rotate-${t.id}`, async () => setShown({ trigger: await rotateTriggerSecret(projectId, t.id), rotated: true }));
  const remove = (t: Trigger) =>
    confirm(`Delete the trigger ${t.name ?? t.url}? Its URL stops answering; its runs stay.`) &&
    void run(`delete-${t.id}`, async () => {
      await deleteTrigger(projectId, t.id);
      toast("Deleted the trigger.");
      if (shown?.trigger.id === t.id) setShown(null);
      triggers.reread();
    });

  return (
    <section class="automation-section" aria-labelledby="triggers-title">
      <div class="section-head">
        <h2 id="triggers-title">Triggers</h2>
        {canWrite && !adding && (
          <button type="button" disabled={templates.value?.length === 0} onClick={() => setAdding(true)}>
            New trigger
          </button>
        )}
      </div>
      <p class="muted">
        A trigger is a URL of the hub that runs a template when it is called: by GitHub on repository events, or by any system with the trigger's secret.
        {canWrite && templates.value?.length === 0 && " Make a template first: a trigger runs one."}
      </p>
      {adding && templates.value && (
        <TriggerForm
          projectId={projectId}
          templates={templates.value}
          onCancel={() => setAdding(false)}
          onCreated={(t) => {
            setAdding(false);
            setShown({ trigger: t, rotated: false });
            triggers.reread();
          }}
        />
      )}
      {shown && <TriggerSecret trigger={shown.trigger} rotated={shown.rotated} onDone={() => setShown(null)} />}
      {list !== null && <Problem message={triggers.error} />}
      {list === null ? (
        triggers.error ? (
          <Failed what="the triggers" message={triggers.error} retry={triggers.reread} />
        ) : (
          <Loading what="triggers" />
        )
      ) : list.length === 0 ? (
        <Empty title="No triggers yet.">A trigger starts a template's graph when GitHub or another system calls its URL.</Empty>
      ) : (
        <DataTable
          class="triggers"
          label="Triggers"
          rows={list}
          rowKey={(t) => t.id}
          rowAttributes={(t) => ({ "data-trigger-id": t.id, "data-paused": String(t.paused) })}
          columns={[
            {
              label: "Trigger",
              rowHeader: true,
              cell: (t) => (
                <span class="stack">
                  <span>{t.name ?? (t.kind === "github" ? "GitHub webhook" : "HTTP call")}</span>
                  <span class="muted small">{firedBy(t)}</span>
                </span>
              ),
            },
            { label: "Kind", cell: (t) => (t.kind === "github" ? "GitHub" : "HTTP") },
            { label: "Template", cell: (t) => templateName(t.template_id) },
            {
              label: "URL",
              cell: (t) => (
                <span class="trigger-url">
                  <code>{t.url}</code>
                  <CopyButton text={t.url} label="Copy URL" />
                </span>
              ),
            },
            { label: "State", cell: (t) => <span class={`status ${t.paused ? "paused" : "status-done"}`}>{t.paused ? "paused" : "active"}</span> },
            {
              label: "Actions",
              actions: true,
              cell: (t) => (
                <span class="row-actions">
                  {canWrite && (
                    <button type="button" class="secondary" disabled={busy !== null} onClick={() => pause(t)}>
                      {t.paused ? "Resume" : "Pause"}
                    </button>
                  )}
                  {canWrite && (
                    <button type="button" class="secondary" disabled={busy !== null} onClick={() => rotate(t)}>
                      Rotate secret
                    </button>
                  )}
                  <a class="button secondary" {...linkProps(`/projects/${projectId}/automation/runs?trigger_id=${t.id}`)}>
                    Runs
                  </a>
                  {canWrite && (
                    <button type="button" class="danger" disabled={busy !== null} onClick={() => remove(t)}>
                      Delete
                    </button>
                  )}
                  {problem(`pause-${t.id}`)}
                  {problem(`rotate-${t.id}`)}
                  {problem(`delete-${t.id}`)}
                </span>
              ),
            },
          ]}
        />
      )}
    </section>
  );
}
