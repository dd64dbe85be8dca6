/**
 * A project's templates: the list (its parameters and tasks, its runs), and for members and admins the editor, Run now
 * and delete. The page's query says what the editor holds: `?edit=<id>`, `?edit=new`, or `?from_task=<id>` (a graph
 * saved as a template, from a task's page).
 */
import { useState } from "preact/hooks";
import { deleteTemplate, listTemplates, NO_EVENTS } from "../automation-api";
import { useCanWrite } from "../me";
import { linkProps, navigate } from "../router";
import type { Template } from "../template-draft";
import { DataTable } from "../ui/data-table";
import { Empty, Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { useLiveRead } from "../usage-reads";
import { Problem, useAction } from "./controls";
import { RunDialog } from "./run-dialog";
import { TemplateEditor, type EditorSource } from "./template-editor";

export function sourceOf(search: string): EditorSource | null {
  const q = new URLSearchParams(search);
  const edit = q.get("edit");
  const fromTask = q.get("from_task");
  if (fromTask) return { kind: "task", taskId: fromTask };
  if (edit === "new") return { kind: "new" };
  if (edit) return { kind: "template", templateId: edit };
  return null;
}

export function Templates({ projectId }: { projectId: string }) {
  const canWrite = useCanWrite();
  const templates = useLiveRead(() => listTemplates(projectId), [projectId], NO_EVENTS);
  const [running, setRunning] = useState<Template | null>(null);
  const { run, busy, problem } = useAction();
  const base = `/projects/${projectId}/automation/templates`;
  const source = canWrite ? sourceOf(location.search) : null;

  if (source)
    return (
      <TemplateEditor
        key={location.search}
        projectId={projectId}
        source={source}
        onDone={(saved) => {
          navigate(base);
          if (saved) templates.reread();
        }}
      />
    );

  const list = templates.value;
  const remove = (t: Template) =>
    confirm(`Delete the template ${t.name}? Its schedules and triggers are deleted with it; its runs and their tasks stay.`) &&
    void run(`delete-${t.id}`, async () => {
      await deleteTemplate(projectId, t.id);
      toast(`Deleted the template ${t.name}.`);
      templates.reread();
    });

  return (
    <section class="automation-section" aria-labelledby="templates-title">
      <div class="section-head">
        <h2 id="templates-title">Templates</h2>
        {canWrite && (
          <a class="button" {...linkProps(`${base}?edit=new`)}>
            New template
          </a>
        )}
      </div>
      <p class="muted">
        A template is a graph of tasks saved with parameters: run it now, on a schedule, or when another system (or GitHub) calls its trigger. To save an
        existing graph, open one of its tasks and choose "Save as template".
      </p>
      {list !== null && <Problem message={templates.error} />}
      {list === null ? (
        templates.error ? (
          <Failed what="the templates" message={templates.error} retry={templates.reread} />
        ) : (
          <Loading what="templates" />
        )
      ) : list.length === 0 ? (
        <Empty title="No templates yet.">
          {canWrite ? "Make one with New template, or save a task's graph from its page." : "Members and admins make them."}
        </Empty>
      ) : (
        <DataTable
          class="templates"
          label="Templates"
          rows={list}
          rowKey={(t) => t.id}
          rowAttributes={(t) => ({ "data-template": t.name })}
          columns={[
            {
              label: "Template",
              rowHeader: true,
              cell: (t) => (
                <div class="endpoint">
                  <span>{t.name}</span>
                  {t.description && <span class="muted small">{t.description}</span>}
                </div>
              ),
            },
            {
              label: "Parameters",
              cell: (t) =>
                t.parameters.length === 0 ? (
                  <span class="muted">none</span>
                ) : (
                  <span class="param-names">
                    {t.parameters.map((p) => (
                      <code key={p.name}>
                        {p.name}: {p.type}
                        {p.required ? "" : "?"}
                      </code>
                    ))}
                  </span>
                ),
            },
            {
              label: "Tasks",
              cell: (t) => (
                <details class="template-tasks">
                  <summary>
                    {t.tasks.length} {t.tasks.length === 1 ? "task" : "tasks"}
                  </summary>
                  <ol>
                    {t.tasks.map((x) => (
                      <li key={x.key}>
                        {x.title}
                        {x.dependencies?.length ? <span class="muted small"> after {x.dependencies.map((d) => d.on).join(", ")}</span> : null}
                      </li>
                    ))}
                  </ol>
                </details>
              ),
            },
            {
              label: "Actions",
              actions: true,
              cell: (t) => (
                <span class="row-actions">
                  {canWrite && (
                    <button type="button" onClick={() => setRunning(t)}>
                      Run now
                    </button>
                  )}
                  {canWrite && (
                    <a class="button secondary" {...linkProps(`${base}?edit=${t.id}`)} aria-label={`Edit ${t.name}`}>
                      Edit
                    </a>
                  )}
                  <a class="button secondary" {...linkProps(`/projects/${projectId}/automation/runs?template_id=${t.id}`)} aria-label={`Runs of ${t.name}`}>
                    Runs
                  </a>
                  {canWrite && (
                    <button type="button" class="danger" disabled={busy !== null} onClick={() => remove(t)} aria-label={`Delete ${t.name}`}>
                      Delete
                    </button>
                  )}
                  {problem(`delete-${t.id}`)}
                </span>
              ),
            },
          ]}
        />
      )}
      {running && <RunDialog projectId={projectId} template={running} onClose={() => setRunning(null)} onRan={() => undefined} />}
    </section>
  );
}
