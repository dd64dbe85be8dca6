/** Small controls the pages share. */
import { useState } from "preact/hooks";
import { messageOf } from "../api";
import type { Task } from "../types";

/**
 * Runs the actions of a page, one at a time, and shows a refusal next to the
 * control that asked (`problem(key)` where the control is).
 */
export function useAction() {
  const [error, setError] = useState<{ key: string; message: string } | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const run = async (key: string, action: () => Promise<unknown>) => {
    setBusy(key);
    setError(null);
    try {
      await action();
    } catch (e) {
      setError({ key, message: messageOf(e) });
    } finally {
      setBusy(null);
    }
  };
  const problem = (key: string) =>
    error?.key === key ? (
      <span class="problem" role="alert">
        {error.message}
      </span>
    ) : null;
  return { run, busy, problem };
}

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
