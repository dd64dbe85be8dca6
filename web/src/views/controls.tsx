/** Small controls the pages share. */
import { useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
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

/** Whether a task waits for a person's approval before its work may begin (an agent created it in a project that asks for that). */
export const awaitsApproval = (task: Task) => task.awaiting_approval && !["done", "failed", "cancelled"].includes(task.status);

/** Lets a task awaiting approval go ahead; `onApproved` gets the task as the hub answered it. */
export function ApproveButton({ task, onApproved }: { task: Task; onApproved?: (t: Task) => void }) {
  const { run, busy, problem } = useAction();
  const approve = () =>
    run("approve", async () => {
      const approved = await ok(hub.POST("/api/v1/tasks/{id}/approve", { params: { path: { id: task.id } } }));
      onApproved?.(approved);
    });
  return (
    <span class="action approve">
      <button type="button" disabled={busy !== null} onClick={() => void approve()} title="Let the agent's task be assigned and started">
        Approve
      </button>
      {problem("approve")}
    </span>
  );
}
