/**
 * Making or changing a template: its name, description, parameters and tasks as a form, or the whole of it as JSON in
 * the code editor. The hub's refusal lands beside the field each error names (`tasks.2.dependencies.0.on`); what names
 * no field of the form is said above the buttons. Opens empty, as a saved template, or as the graph of a task.
 */
import { useEffect, useState } from "preact/hooks";
import { messageOf } from "../api";
import { createTemplate, draftFromTask, readTemplate, replaceTemplate } from "../automation-api";
import {
  bodyOf,
  draftOf,
  emptyTask,
  emptyTemplate,
  fieldPaths,
  freshKey,
  type Template,
  type TemplateBody,
  type TemplateDraft,
  type TemplateTaskDraft,
} from "../template-draft";
import { Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { Problem } from "./controls";
import { FieldProblem, refusalOf, type Refusal } from "./field-refusal";
import { lazy } from "./lazy";
import { ParameterFields } from "./template-parameters";
import { TaskTypeList, TemplateTaskFields } from "./template-task";

const LazyEditor = lazy(() => import("./code-editor").then((m) => m.CodeEditor), "the editor");

export type EditorSource = { kind: "new" } | { kind: "template"; templateId: string } | { kind: "task"; taskId: string };

export function TemplateEditor(props: { projectId: string; source: EditorSource; onDone: (saved: Template | null) => void }) {
  const { projectId, source } = props;
  const [draft, setDraft] = useState<TemplateDraft | null>(source.kind === "new" ? emptyTemplate() : null);
  const [failed, setFailed] = useState<string | null>(null);
  const [refusal, setRefusal] = useState<Refusal<string> | null>(null);
  const [busy, setBusy] = useState(false);
  /** The JSON text while editing as JSON (null in the form). */
  const [json, setJson] = useState<string | null>(null);
  const [jsonProblem, setJsonProblem] = useState<string | null>(null);

  const load = () => {
    setFailed(null);
    if (source.kind === "template")
      void readTemplate(projectId, source.templateId).then(
        (t) => setDraft(draftOf(t)),
        (e) => setFailed(messageOf(e)),
      );
    if (source.kind === "task")
      void draftFromTask(projectId, source.taskId).then(
        (tasks) => setDraft(draftOf({ name: "", description: null, parameters: [], tasks })),
        (e) => setFailed(messageOf(e)),
      );
  };
  useEffect(load, [projectId, source.kind, "templateId" in source ? source.templateId : "taskId" in source ? source.taskId : ""]);
  // A refusal is shown where its first field is, which may be far up a long form.
  useEffect(() => {
    if (refusal) document.querySelector(".template-editor [data-field-problem], .template-editor .problem")?.scrollIntoView({ block: "center" });
  }, [refusal]);

  if (failed) return <Failed what={source.kind === "task" ? "the task's graph" : "the template"} message={failed} retry={load} />;
  if (!draft) return <Loading what={source.kind === "task" ? "the task's graph" : "the template"} />;

  const problems = refusal?.fields ?? {};
  const set = (change: Partial<TemplateDraft>) => setDraft({ ...draft, ...change });
  /** A task changed; a new key is followed by the dependencies that named the old one. */
  const setTask = (i: number, t: TemplateTaskDraft) => {
    const old = draft.tasks[i]!.key;
    const renamed = old !== t.key;
    set({
      tasks: draft.tasks.map((x, j) =>
        j === i ? t : renamed ? { ...x, dependencies: x.dependencies.map((d) => (d.on === old ? { ...d, on: t.key } : d)) } : x,
      ),
    });
  };
  const removeTask = (i: number) => {
    const key = draft.tasks[i]!.key;
    set({ tasks: draft.tasks.filter((_, j) => j !== i).map((x) => ({ ...x, dependencies: x.dependencies.filter((d) => d.on !== key) })) });
  };

  const save = async (body: TemplateBody, known: string[]) => {
    setBusy(true);
    setRefusal(null);
    try {
      const saved = source.kind === "template" ? await replaceTemplate(projectId, source.templateId, body) : await createTemplate(projectId, body);
      toast(`Saved the template ${saved.name}.`);
      props.onDone(saved);
    } catch (e) {
      setRefusal(refusalOf(e, known));
    } finally {
      setBusy(false);
    }
  };
  const submit = (e: Event) => {
    e.preventDefault();
    if (json !== null) {
      let body: TemplateBody;
      try {
        body = JSON.parse(json) as TemplateBody;
      } catch (err) {
        return setJsonProblem(`Not JSON: ${(err as Error).message}`);
      }
      setJsonProblem(null);
      return void save(body, []);
    }
    const made = bodyOf(draft);
    if ("errors" in made) return setRefusal({ fields: Object.fromEntries(made.errors.map((x) => [x.path, x.message])), other: null });
    void save(made.body, fieldPaths(draft));
  };
  /** Between the form and JSON: the form's draft as JSON text, or the text read back into the form. */
  const toggleJson = () => {
    setRefusal(null);
    if (json === null) {
      const made = bodyOf(draft);
      if ("errors" in made) return setRefusal({ fields: Object.fromEntries(made.errors.map((x) => [x.path, x.message])), other: null });
      setJsonProblem(null);
      return setJson(JSON.stringify(made.body, null, 2));
    }
    try {
      const body = JSON.parse(json) as Partial<TemplateBody>;
      setDraft(draftOf({ name: body.name ?? "", description: body.description ?? null, parameters: body.parameters ?? [], tasks: body.tasks ?? [] }));
      setJson(null);
      setJsonProblem(null);
    } catch (err) {
      setJsonProblem(`The JSON cannot be read back into the form: ${(err as Error).message}`);
    }
  };

  const title = source.kind === "template" ? `Edit ${draft.name || "the template"}` : source.kind === "task" ? "Save a graph as a template" : "New template";
  return (
    <form class="template-editor panel" onSubmit={submit} aria-labelledby="template-editor-title" noValidate>
      <div class="editor-head">
        <h2 id="template-editor-title">{title}</h2>
        <button type="button" class="secondary" aria-pressed={json !== null} onClick={toggleJson}>
          {json === null ? "Edit as JSON" : "Back to the form"}
        </button>
      </div>
      {source.kind === "task" && json === null && (
        <p class="muted">
          The graph's {draft.tasks.length} tasks, with their dependencies. Name it, add parameters, and put <code>{"{{name}}"}</code> where a run should fill
          one in.
        </p>
      )}
      {json !== null ? (
        <div class="template-json">
          <p class="muted small">
            The template as the API takes it (<code>POST /api/v1/projects/{"{id}"}/templates</code>).
          </p>
          <LazyEditor path="template.json" content={json} readOnly={false} onChange={setJson} onSave={() => submit(new Event("submit"))} />
          <Problem message={jsonProblem} />
        </div>
      ) : (
        <>
          <div class="template-head-fields">
            <label>
              Name
              <input
                name="name"
                value={draft.name}
                required
                maxLength={200}
                placeholder="Nightly dependency update"
                onInput={(e) => set({ name: e.currentTarget.value })}
              />
              <FieldProblem field="name" message={problems["name"]} />
            </label>
            <label class="grow">
              Description
              <input
                name="description"
                value={draft.description}
                maxLength={2000}
                placeholder="optional"
                onInput={(e) => set({ description: e.currentTarget.value })}
              />
              <FieldProblem field="description" message={problems["description"]} />
            </label>
          </div>
          <ParameterFields parameters={draft.parameters} problems={problems} onChange={(parameters) => set({ parameters })} />
          <h3>Tasks</h3>
          <FieldProblem field="tasks" message={problems["tasks"]} />
          {draft.tasks.map((t, i) => (
            <TemplateTaskFields
              key={i}
              index={i}
              task={t}
              otherKeys={draft.tasks.filter((_, j) => j !== i).map((x) => x.key)}
              problems={problems}
              onChange={(x) => setTask(i, x)}
              onRemove={draft.tasks.length > 1 ? () => removeTask(i) : undefined}
            />
          ))}
          <TaskTypeList />
          <button type="button" class="secondary" onClick={() => set({ tasks: [...draft.tasks, emptyTask(freshKey(draft.tasks))] })}>
            Add a task
          </button>
        </>
      )}
      <Problem message={refusal?.other} />
      <div class="dialog-buttons">
        <button type="submit" disabled={busy} aria-busy={busy}>
          Save template
        </button>
        <button type="button" class="secondary" onClick={() => props.onDone(null)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
