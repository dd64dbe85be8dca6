/**
 * "Run now": a template's parameters as a typed form (text, number, checkbox; the required ones marked), the hub's
 * refusal beside the parameter it names, and once the graph is made, the run and links to its tasks.
 */
import { useState } from "preact/hooks";
import { instantiate, type TemplateParameter } from "../automation-api";
import { linkProps } from "../router";
import { parameterValues, typedDefaults, type Template } from "../template-draft";
import type { Task } from "../types";
import { Dialog } from "../ui/dialog";
import { Problem } from "./controls";
import { FieldProblem, refusalOf, type Refusal } from "./field-refusal";

/** The fields of a template's parameters, as typed (a checkbox's as true or false); problems by `parameters.<name>`. */
export function ParameterInputs(props: {
  parameters: readonly TemplateParameter[];
  values: Record<string, string | boolean>;
  problems: Partial<Record<string, string>>;
  onChange: (values: Record<string, string | boolean>) => void;
}) {
  if (props.parameters.length === 0) return <p class="muted">The template has no parameters.</p>;
  return (
    <div class="parameter-inputs">
      {props.parameters.map((p) => {
        const field = `parameters.${p.name}`;
        const set = (v: string | boolean) => props.onChange({ ...props.values, [p.name]: v });
        const hint = p.description && <span class="muted small">{p.description}</span>;
        return p.type === "boolean" ? (
          <label class="switch" key={p.name}>
            <input type="checkbox" name={field} checked={props.values[p.name] === true} onChange={(e) => set(e.currentTarget.checked)} /> {p.name}
            {hint}
            <FieldProblem field={field} message={props.problems[field]} />
          </label>
        ) : (
          <label key={p.name}>
            <span>
              {p.name} {p.required ? <span class="required">(required)</span> : <span class="muted">(optional)</span>}
            </span>
            <input
              name={field}
              {...(p.type === "number" ? { type: "number", step: "any" } : { type: "text" })}
              aria-required={p.required ? "true" : undefined}
              aria-invalid={props.problems[field] ? "true" : undefined}
              value={String(props.values[p.name] ?? "")}
              onInput={(e) => set(e.currentTarget.value)}
            />
            {hint}
            <FieldProblem field={field} message={props.problems[field]} />
          </label>
        );
      })}
    </div>
  );
}

export function RunDialog(props: { projectId: string; template: Template; onClose: () => void; onRan: () => void }) {
  const { projectId, template } = props;
  const [values, setValues] = useState(() => typedDefaults(template.parameters));
  const [refusal, setRefusal] = useState<Refusal<string> | null>(null);
  const [busy, setBusy] = useState(false);
  const [ran, setRan] = useState<{ runId: string; tasks: Task[] } | null>(null);
  const known = template.parameters.map((p) => `parameters.${p.name}`);

  const run = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setRefusal(null);
    try {
      const answer = await instantiate(projectId, template.id, parameterValues(template.parameters, values));
      setRan({ runId: answer.run_id, tasks: answer.tasks });
      props.onRan();
    } catch (err) {
      setRefusal(refusalOf(err, known));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog open title={`Run ${template.name}`} onClose={props.onClose} class="run-dialog">
      {ran ? (
        <div class="run-made" role="status" data-run-id={ran.runId}>
          <p>
            Started a run of {template.name}: {ran.tasks.length} {ran.tasks.length === 1 ? "task" : "tasks"}.
          </p>
          <ul class="run-tasks">
            {ran.tasks.map((t) => (
              <li key={t.id}>
                <a {...linkProps(`/projects/${projectId}/tasks/${t.id}`)}>{t.title}</a>{" "}
                <span class={`status status-${t.status}`}>{t.status.replace("_", " ")}</span>
              </li>
            ))}
          </ul>
          <p class="dialog-buttons">
            <a {...linkProps(`/projects/${projectId}/board`)}>The board</a>
            <a {...linkProps(`/projects/${projectId}/automation/runs?template_id=${template.id}`)}>Runs of {template.name}</a>
            <button type="button" class="secondary" onClick={props.onClose}>
              Close
            </button>
          </p>
        </div>
      ) : (
        <form onSubmit={(e) => void run(e)} noValidate>
          <p class="muted">
            Makes the template's {template.tasks.length} {template.tasks.length === 1 ? "task" : "tasks"} now, all of them or none.
          </p>
          <ParameterInputs parameters={template.parameters} values={values} problems={refusal?.fields ?? {}} onChange={setValues} />
          <Problem message={refusal?.other} />
          <div class="dialog-buttons">
            <button type="submit" disabled={busy} aria-busy={busy}>
              Run now
            </button>
            <button type="button" class="secondary" onClick={props.onClose}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </Dialog>
  );
}
