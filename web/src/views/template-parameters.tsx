/** A template's parameters in its editor: each with its name, type, whether it is required, its default and what it is for. */
import { emptyParameter, PARAMETER_TYPES, type ParameterDraft, type ParameterType } from "../template-draft";
import { FieldProblem } from "./field-refusal";

type Problems = Partial<Record<string, string>>;

export function ParameterFields(props: { parameters: ParameterDraft[]; problems: Problems; onChange: (p: ParameterDraft[]) => void }) {
  const { parameters, problems } = props;
  const set = (i: number, change: Partial<ParameterDraft>) => props.onChange(parameters.map((p, j) => (j === i ? { ...p, ...change } : p)));
  return (
    <fieldset class="template-parameters">
      <legend>Parameters</legend>
      <p class="muted small">
        Write <code>{"{{name}}"}</code> in a task's title, spec, acceptance criteria or requirements: each run fills it in with the value it is given.
      </p>
      <FieldProblem field="parameters" message={problems["parameters"]} />
      {parameters.map((p, i) => {
        const at = `parameters.${i}`;
        return (
          <div class="parameter-row" key={i} data-parameter={i}>
            <label>
              Name
              <input
                name={`${at}.name`}
                value={p.name}
                required
                placeholder="repo"
                autoComplete="off"
                onInput={(e) => set(i, { name: e.currentTarget.value })}
              />
              <FieldProblem field={`${at}.name`} message={problems[`${at}.name`]} />
            </label>
            <label>
              Type
              <select name={`${at}.type`} value={p.type} onChange={(e) => set(i, { type: e.currentTarget.value as ParameterType, default: "" })}>
                {PARAMETER_TYPES.map((t) => (
                  <option key={t}>{t}</option>
                ))}
              </select>
              <FieldProblem field={`${at}.type`} message={problems[`${at}.type`]} />
            </label>
            <label class="switch">
              <input type="checkbox" name={`${at}.required`} checked={p.required} onChange={(e) => set(i, { required: e.currentTarget.checked })} /> required
            </label>
            <label>
              Default
              {p.type === "boolean" ? (
                <select name={`${at}.default`} value={p.default} onChange={(e) => set(i, { default: e.currentTarget.value })}>
                  <option value="">none</option>
                  <option value="true">true</option>
                  <option value="false">false</option>
                </select>
              ) : (
                <input
                  name={`${at}.default`}
                  value={p.default}
                  inputMode={p.type === "number" ? "decimal" : undefined}
                  placeholder="none"
                  onInput={(e) => set(i, { default: e.currentTarget.value })}
                />
              )}
              <FieldProblem field={`${at}.default`} message={problems[`${at}.default`]} />
            </label>
            <label class="grow">
              Description
              <input name={`${at}.description`} value={p.description} placeholder="optional" onInput={(e) => set(i, { description: e.currentTarget.value })} />
              <FieldProblem field={`${at}.description`} message={problems[`${at}.description`]} />
            </label>
            <button
              type="button"
              class="secondary"
              aria-label={`Remove the parameter ${p.name || i + 1}`}
              onClick={() => props.onChange(parameters.filter((_, j) => j !== i))}
            >
              Remove
            </button>
            <FieldProblem field={at} message={problems[at]} />
          </div>
        );
      })}
      <button type="button" class="secondary" onClick={() => props.onChange([...parameters, emptyParameter()])}>
        Add a parameter
      </button>
    </fieldset>
  );
}
