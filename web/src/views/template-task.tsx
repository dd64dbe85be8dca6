/**
 * One task of a template in its editor: its key (what other tasks' dependencies name), the fields a task is created
 * with, and its dependencies on the template's other tasks, each with its type and, for an input, its contract key.
 */
import { DEPENDENCY_TYPES, type DependencyDraft, type DependencyType, type TemplateTaskDraft } from "../template-draft";
import { PRIORITIES } from "./controls";
import { FieldProblem } from "./field-refusal";
import { TYPE_SUGGESTIONS } from "./task-draft";

type Problems = Partial<Record<string, string>>;

export function TemplateTaskFields(props: {
  index: number;
  task: TemplateTaskDraft;
  /** The keys of the template's other tasks, which a dependency may name. */
  otherKeys: string[];
  problems: Problems;
  onChange: (t: TemplateTaskDraft) => void;
  onRemove?: () => void;
}) {
  const { task: t, index, problems } = props;
  const at = `tasks.${index}`;
  const set = (change: Partial<TemplateTaskDraft>) => props.onChange({ ...t, ...change });
  const problem = (field: string) => <FieldProblem field={`${at}.${field}`} message={problems[`${at}.${field}`]} />;
  const setDependency = (j: number, change: Partial<DependencyDraft>) =>
    set({ dependencies: t.dependencies.map((d, k) => (k === j ? { ...d, ...change } : d)) });
  const unused = props.otherKeys.find((k) => !t.dependencies.some((d) => d.on === k));
  return (
    <fieldset class="template-task" data-task-key={t.key}>
      <legend>
        Task {index + 1}
        {t.title.trim() ? `: ${t.title}` : ""}
      </legend>
      <FieldProblem field={at} message={problems[at]} />
      <div class="template-task-fields">
        <label>
          Key
          <input name={`${at}.key`} value={t.key} required autoComplete="off" onInput={(e) => set({ key: e.currentTarget.value })} />
          {problem("key")}
        </label>
        <label class="wide">
          Title
          <input name={`${at}.title`} value={t.title} required placeholder="Fix {{issue}}" onInput={(e) => set({ title: e.currentTarget.value })} />
          {problem("title")}
        </label>
        <label>
          Type
          <input name={`${at}.type`} value={t.type} list="template-task-types" onInput={(e) => set({ type: e.currentTarget.value })} />
          {problem("type")}
        </label>
        <label>
          Priority
          <select name={`${at}.priority`} value={t.priority} onChange={(e) => set({ priority: e.currentTarget.value as TemplateTaskDraft["priority"] })}>
            {PRIORITIES.map((p) => (
              <option key={p}>{p}</option>
            ))}
          </select>
          {problem("priority")}
        </label>
        <label class="switch">
          <input type="checkbox" name={`${at}.require_plan`} checked={t.requirePlan} onChange={(e) => set({ requirePlan: e.currentTarget.checked })} /> requires
          a plan
        </label>
        <label class="full">
          Spec
          <textarea name={`${at}.spec`} rows={4} value={t.spec} onInput={(e) => set({ spec: e.currentTarget.value })} />
          {problem("spec")}
        </label>
        <label class="wide">
          Acceptance criteria (one a line)
          <textarea name={`${at}.acceptance_criteria`} rows={3} value={t.acceptance} onInput={(e) => set({ acceptance: e.currentTarget.value })} />
          {problem("acceptance_criteria")}
        </label>
        <label class="wide">
          Requirements (JSON)
          <textarea
            name={`${at}.requirements`}
            class="mono"
            rows={3}
            value={t.requirements}
            placeholder='{"languages": ["python"], "tools": ["git"]}'
            spellcheck={false}
            onInput={(e) => set({ requirements: e.currentTarget.value })}
          />
          {problem("requirements")}
        </label>
      </div>
      <div class="template-dependencies">
        <h4>Depends on</h4>
        {problem("dependencies")}
        {t.dependencies.length === 0 && <p class="muted small">Nothing: it can start at once.</p>}
        {t.dependencies.map((d, j) => {
          const dep = `${at}.dependencies.${j}`;
          const keys = props.otherKeys.includes(d.on) || !d.on ? props.otherKeys : [d.on, ...props.otherKeys];
          return (
            <div class="dependency-row" key={j}>
              <label>
                Task
                <select name={`${dep}.on`} value={d.on} onChange={(e) => setDependency(j, { on: e.currentTarget.value })}>
                  {keys.map((k) => (
                    <option key={k}>{k}</option>
                  ))}
                </select>
                <FieldProblem field={`${dep}.on`} message={problems[`${dep}.on`]} />
              </label>
              <label>
                As
                <select name={`${dep}.dependency_type`} value={d.type} onChange={(e) => setDependency(j, { type: e.currentTarget.value as DependencyType })}>
                  {DEPENDENCY_TYPES.map((x) => (
                    <option key={x}>{x}</option>
                  ))}
                </select>
              </label>
              {d.type === "input" && (
                <label>
                  Contract key
                  <input
                    name={`${dep}.contract_key`}
                    value={d.contractKey}
                    placeholder="design_doc"
                    onInput={(e) => setDependency(j, { contractKey: e.currentTarget.value })}
                  />
                  <FieldProblem field={`${dep}.contract_key`} message={problems[`${dep}.contract_key`]} />
                </label>
              )}
              <button
                type="button"
                class="secondary"
                aria-label={`Remove the dependency on ${d.on}`}
                onClick={() => set({ dependencies: t.dependencies.filter((_, k) => k !== j) })}
              >
                Remove
              </button>
              <FieldProblem field={dep} message={problems[dep]} />
            </div>
          );
        })}
        <div class="template-task-buttons">
          <button
            type="button"
            class="secondary"
            disabled={unused === undefined}
            onClick={() => unused !== undefined && set({ dependencies: [...t.dependencies, { on: unused, type: "blocks", contractKey: "" }] })}
          >
            Add a dependency
          </button>
          {props.onRemove && (
            <button type="button" class="secondary" onClick={props.onRemove}>
              Remove task {index + 1}
            </button>
          )}
        </div>
      </div>
    </fieldset>
  );
}

/** The type suggestions the editor's type fields share. */
export const TaskTypeList = () => (
  <datalist id="template-task-types">
    {TYPE_SUGGESTIONS.map((t) => (
      <option key={t} value={t} />
    ))}
  </datalist>
);
