/** Choosing the tasks a task depends on, by searching the project's tasks, each with its type and contract key. */
import { useState } from "preact/hooks";
import type { Task } from "../types";
import { FieldProblem } from "./field-refusal";
import { DEPENDENCY_TYPES, type DependencyType, type DraftDependency } from "./task-draft";
import type { Problems } from "./task-fields";

const MAX_RESULTS = 8;

const TYPE_HELP: Record<DependencyType, string> = {
  blocks: "waits until it is done",
  input: "waits for it, and receives its result's contract",
  related: "for information only, never waits",
};

/** Tasks matching what was typed (title or id), newest first, leaving out those already chosen. */
function search(tasks: Task[], text: string, chosen: Set<string>) {
  const q = text.trim().toLowerCase();
  if (!q) return [];
  return tasks
    .filter((t) => !chosen.has(t.id) && (t.title.toLowerCase().includes(q) || t.id.startsWith(q)))
    .sort((a, b) => b.created_at.localeCompare(a.created_at))
    .slice(0, MAX_RESULTS);
}

interface Props {
  /** The tasks it may depend on (the project's, without the task itself). */
  tasks: Task[];
  value: DraftDependency[];
  onChange: (deps: DraftDependency[]) => void;
  /** Refusals by `dependencies.<n>` and `dependencies`. */
  problems: Problems;
}

export function DependencyPicker({ tasks, value, onChange, problems }: Props) {
  const [text, setText] = useState("");
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const found = search(tasks, text, new Set(value.map((d) => d.taskId)));
  const set = (i: number, change: Partial<DraftDependency>) => onChange(value.map((d, j) => (j === i ? { ...d, ...change } : d)));
  return (
    <fieldset class="dependencies wide">
      <legend>Dependencies</legend>
      {value.length > 0 && (
        <ul class="chosen-dependencies">
          {value.map((d, i) => {
            const upstream = byId.get(d.taskId);
            const name = upstream?.title ?? d.taskId.slice(0, 8);
            return (
              <li key={d.taskId} data-dependency={d.taskId}>
                <span class="upstream">
                  <strong>{name}</strong> {upstream && <span class={`status status-${upstream.status}`}>{upstream.status.replace("_", " ")}</span>}
                </span>
                <label>
                  Dependency type
                  <select value={d.type} onChange={(e) => set(i, { type: e.currentTarget.value as DependencyType })} title={TYPE_HELP[d.type]}>
                    {DEPENDENCY_TYPES.map((t) => (
                      <option value={t} key={t}>
                        {t}: {TYPE_HELP[t]}
                      </option>
                    ))}
                  </select>
                </label>
                <label>
                  Contract key{d.type === "input" ? "" : " (optional)"}
                  <input
                    value={d.contractKey}
                    required={d.type === "input"}
                    maxLength={100}
                    placeholder="api_schema"
                    onInput={(e) => set(i, { contractKey: e.currentTarget.value })}
                  />
                </label>
                <button type="button" class="link" onClick={() => onChange(value.filter((_, j) => j !== i))} aria-label={`Remove the dependency on ${name}`}>
                  Remove
                </button>
                <FieldProblem field={`dependencies.${i}`} message={problems[`dependencies.${i}`]} />
              </li>
            );
          })}
        </ul>
      )}
      <label>
        Find a task to depend on
        <input type="search" name="dependency-search" placeholder="title or id" value={text} onInput={(e) => setText(e.currentTarget.value)} />
      </label>
      {text.trim() && found.length === 0 && <p class="muted">No other task of the project matches.</p>}
      {found.length > 0 && (
        <ul class="dependency-results" aria-label="Matching tasks">
          {found.map((t) => (
            <li key={t.id}>
              <button
                type="button"
                class="link"
                onClick={() => {
                  onChange([...value, { taskId: t.id, type: "blocks", contractKey: "" }]);
                  setText("");
                }}
              >
                Depend on “{t.title}”
              </button>{" "}
              <span class={`status status-${t.status}`}>{t.status.replace("_", " ")}</span> <span class="badge type">{t.type}</span>
            </li>
          ))}
        </ul>
      )}
      <FieldProblem field="dependencies" message={problems.dependencies} />
    </fieldset>
  );
}
