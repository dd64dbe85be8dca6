/** The fields a schedule's form and a trigger's form share: the template it runs, and an optional name. */
import type { Template } from "../template-draft";
import { FieldProblem } from "./field-refusal";

export function TemplateField(props: { templates: Template[]; value: string; onPick: (id: string) => void; problem?: string }) {
  return (
    <label>
      Template
      <select name="template_id" value={props.value} onChange={(e) => props.onPick(e.currentTarget.value)}>
        {props.templates.map((t) => (
          <option key={t.id} value={t.id}>
            {t.name}
          </option>
        ))}
      </select>
      <FieldProblem field="template_id" message={props.problem} />
    </label>
  );
}

export function NameField(props: { value: string; onInput: (name: string) => void; example: string; problem?: string }) {
  return (
    <label>
      Name
      <input
        name="name"
        value={props.value}
        maxLength={200}
        placeholder={`optional, such as ${props.example}`}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
      <FieldProblem field="name" message={props.problem} />
    </label>
  );
}
