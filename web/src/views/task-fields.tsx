/** The task form's fields, shared by the new-task form and a task's Edit: each shows the hub's refusal beside it. */
import { useState } from "preact/hooks";
import { FieldProblem } from "./field-refusal";
import { lazy } from "./lazy";
import { Markdown } from "./markdown";
import { REQUIREMENT_LISTS, TYPE_SUGGESTIONS, type RequirementList, type TaskDraft } from "./task-draft";

/** CodeMirror loads only when a structured spec is edited. */
const LazyEditor = lazy(() => import("./code-editor").then((m) => m.CodeEditor), "the editor");

export type Problems = Partial<Record<string, string>>;
export type SetDraft = (change: Partial<TaskDraft>) => void;

export function TypeField({ value, onChange, problem }: { value: string; onChange: (type: string) => void; problem?: string }) {
  return (
    <label>
      Type
      <input name="type" list="task-types" required maxLength={100} value={value} onInput={(e) => onChange(e.currentTarget.value)} />
      <datalist id="task-types">
        {TYPE_SUGGESTIONS.map((t) => (
          <option value={t} key={t} />
        ))}
      </datalist>
      <FieldProblem field="type" message={problem} />
    </label>
  );
}

/** The spec as markdown, with how it will read beside it. */
export function SpecField({ value, onChange, problem }: { value: string; onChange: (spec: string) => void; problem?: string }) {
  return (
    <div class="spec-field wide">
      <label>
        Spec (markdown)
        <textarea name="spec" rows={9} maxLength={200_000} value={value} onInput={(e) => onChange(e.currentTarget.value)} />
        <FieldProblem field="spec" message={problem} />
      </label>
      <section class="spec-preview" aria-label="Spec preview">
        <span class="label">Preview</span>
        {value.trim() ? <Markdown source={value} /> : <p class="muted">The spec, as the task page will show it.</p>}
      </section>
    </div>
  );
}

export function CriteriaField({ value, onChange, problem }: { value: string[]; onChange: (criteria: string[]) => void; problem?: string }) {
  const set = (i: number, text: string) => onChange(value.map((c, j) => (j === i ? text : c)));
  return (
    <fieldset class="criteria wide">
      <legend>Acceptance criteria</legend>
      {value.length === 0 && <p class="muted">None yet: what must hold for the task to be done?</p>}
      <ol>
        {value.map((c, i) => (
          <li key={i}>
            <input aria-label={`Criterion ${i + 1}`} maxLength={2000} value={c} onInput={(e) => set(i, e.currentTarget.value)} />
            <button type="button" class="link" onClick={() => onChange(value.filter((_, j) => j !== i))} aria-label={`Remove criterion ${i + 1}`}>
              Remove
            </button>
          </li>
        ))}
      </ol>
      <button type="button" class="secondary" onClick={() => onChange([...value, ""])}>
        Add a criterion
      </button>
      <FieldProblem field="acceptance_criteria" message={problem} />
    </fieldset>
  );
}

const LIST_LABELS: Record<RequirementList, string> = {
  languages: "Languages (all required)",
  environments: "Environments (one required)",
  tools: "Tools (preferred)",
  tags: "Tags (preferred)",
};

/** The seed's requirements/v1: what a server must (or should) offer to be given the task. */
export function RequirementsFields({ draft, set, problems, servers }: { draft: TaskDraft; set: SetDraft; problems: Problems; servers: string[] }) {
  return (
    <fieldset class="requirements-fields wide">
      <legend>Requirements</legend>
      <label>
        Repository (required)
        <input name="requirements-repo" maxLength={200} value={draft.repo} onInput={(e) => set({ repo: e.currentTarget.value })} />
        <FieldProblem field="requirements.repo" message={problems["requirements.repo"]} />
      </label>
      {REQUIREMENT_LISTS.map((list) => (
        <label key={list}>
          {LIST_LABELS[list]}
          <input
            name={`requirements-${list}`}
            placeholder="comma-separated"
            value={draft.lists[list]}
            onInput={(e) => set({ lists: { ...draft.lists, [list]: e.currentTarget.value } })}
          />
          <FieldProblem field={`requirements.${list}`} message={problems[`requirements.${list}`]} />
        </label>
      ))}
      <label>
        Preferred server
        <input
          name="requirements-prefer-server"
          list="task-servers"
          maxLength={200}
          value={draft.preferServer}
          onInput={(e) => set({ preferServer: e.currentTarget.value })}
        />
        <datalist id="task-servers">
          {servers.map((s) => (
            <option value={s} key={s} />
          ))}
        </datalist>
        <FieldProblem field="requirements.prefer_server" message={problems["requirements.prefer_server"]} />
      </label>
      <FieldProblem field="requirements" message={problems.requirements} />
    </fieldset>
  );
}

/** A starting point the hub accepts (orchestratia/task-spec/v1 needs at least one requirement). */
const TEMPLATE = JSON.stringify(
  {
    $schema: "orchestratia/task-spec/v1",
    requirements: [{ description: "What must be true when it is done", priority: "must" }],
    output_expectations: { contracts: {} },
  },
  null,
  2,
);

/** The structured spec (orchestratia/task-spec/v1) as JSON; `problem` is the parse error or the hub's refusal. */
export function StructuredSpecField({ value, onChange, problem }: { value: string; onChange: (json: string) => void; problem?: string }) {
  // The editor keeps its own text: a template replaces it by making a new one.
  const [version, setVersion] = useState(0);
  return (
    <div class="structured-spec-field wide">
      <span class="label" id="structured-spec-label">
        Structured spec (JSON, orchestratia/task-spec/v1)
      </span>
      {!value.trim() && (
        <button
          type="button"
          class="secondary"
          onClick={() => {
            onChange(TEMPLATE);
            setVersion(version + 1);
          }}
        >
          Start from the template
        </button>
      )}
      <LazyEditor key={version} path="structured-spec.json" content={value} readOnly={false} onChange={onChange} onSave={() => undefined} />
      <FieldProblem field="structured_spec" message={problem} />
    </div>
  );
}
