/** A dependency's type and contract key as a person picks them, and the calls that add and remove one. */
import { hub, messageOf, ok } from "../api";
import type { Task } from "../types";

export type DependencyType = Task["dependencies"][number]["dependency_type"];

/** The seed's three types, each with what it means for the task that depends. */
export const DEPENDENCY_TYPES: readonly { type: DependencyType; meaning: string }[] = [
  { type: "blocks", meaning: "waits until the other task is done" },
  { type: "input", meaning: "waits, then receives the other task's result under the contract key" },
  { type: "related", meaning: "does not wait: the link is for information" },
];

export interface DependencyChoice {
  type: DependencyType;
  contractKey: string;
}

export const NO_CHOICE: DependencyChoice = { type: "blocks", contractKey: "" };

/** The type and contract key inputs; `idPrefix` keeps their ids apart where two forms are on one page. */
export function DependencyFields({ value, onChange, idPrefix }: { value: DependencyChoice; onChange: (v: DependencyChoice) => void; idPrefix: string }) {
  const meaning = DEPENDENCY_TYPES.find((d) => d.type === value.type)?.meaning;
  return (
    <>
      <label>
        Type
        <select name="dependency_type" value={value.type} onChange={(e) => onChange({ ...value, type: e.currentTarget.value as DependencyType })}>
          {DEPENDENCY_TYPES.map((d) => (
            <option key={d.type} value={d.type}>
              {d.type}
            </option>
          ))}
        </select>
      </label>
      <label>
        {value.type === "input" ? "Contract key (required)" : "Contract key (optional)"}
        <input
          name="contract_key"
          value={value.contractKey}
          placeholder="e.g. api_schema"
          size={16}
          aria-describedby={`${idPrefix}-meaning`}
          onInput={(e) => onChange({ ...value, contractKey: e.currentTarget.value })}
        />
      </label>
      <p class="muted dependency-meaning" id={`${idPrefix}-meaning`}>
        The dependent task {meaning}.
      </p>
    </>
  );
}

/** Makes `taskId` depend on `upstreamId`; the hub refuses a cycle, another project's task, or a task that has left pending. */
export const addDependency = (taskId: string, upstreamId: string, choice: DependencyChoice) =>
  ok(
    hub.POST("/api/v1/tasks/{id}/dependencies", {
      params: { path: { id: taskId } },
      body: { depends_on_task_id: upstreamId, dependency_type: choice.type, contract_key: choice.contractKey.trim() || null },
    }),
  );

export const removeDependency = (taskId: string, upstreamId: string) =>
  ok(hub.DELETE("/api/v1/tasks/{id}/dependencies/{upstreamId}", { params: { path: { id: taskId, upstreamId } } }));

/** The hub's refusal, with the ids of the project's tasks it names shown as their titles (a cycle names every task on it). */
export function refusalOf(e: unknown, titles: (id: string) => string | undefined) {
  return messageOf(e).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
    const title = titles(id);
    return title ? `“${title}”` : id;
  });
}
