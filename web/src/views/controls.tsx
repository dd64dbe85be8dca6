/** Small controls the pages share. */
import type { Task } from "../types";

/** A refusal or failure, announced to screen readers, shown where the person acted. */
export function Problem({ message }: { message: string | null | undefined }) {
  return message ? (
    <p class="problem" role="alert">
      {message}
    </p>
  ) : null;
}

export const PRIORITIES: Task["priority"][] = ["low", "normal", "high", "critical"];

export function PrioritySelect({ value, onChange, name }: { value: string; onChange: (priority: Task["priority"]) => void; name?: string }) {
  return (
    <label>
      Priority
      <select name={name} value={value} onChange={(e) => onChange(e.currentTarget.value as Task["priority"])}>
        {PRIORITIES.map((p) => (
          <option key={p}>{p}</option>
        ))}
      </select>
    </label>
  );
}
