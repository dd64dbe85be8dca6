/**
 * What can be done to the selected tasks at once: assign them, set their priority, cancel them (after a confirmation).
 * Each task goes through its own route; the outcome is one toast naming every refusal, and the board's live store shows
 * the changes as their events arrive.
 */
import { useState } from "preact/hooks";
import { hub, ok } from "../api";
import { runOverTasks, summarise, type BulkOutcome } from "../task-bulk";
import { PRIORITIES, type Priority } from "../task-table";
import type { Task } from "../types";
import { Dialog } from "../ui/dialog";
import { toast } from "../ui/toasts";
import { AssigneeSelect, assignBodyOf, useAssignees } from "./assignee-select";

const CANCEL_LISTED = 8;

interface Props {
  projectId: string;
  selected: Task[];
  onClear: () => void;
  /** After an action: the tasks it failed for (kept selected, to try again or look at). */
  onDone: (failed: Task[]) => void;
}

export function TaskBulkBar({ projectId, selected, onClear, onDone }: Props) {
  const assignees = useAssignees(projectId);
  const [assignee, setAssignee] = useState("");
  const [priority, setPriority] = useState<Priority | "">("");
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const n = selected.length;

  const run = async (act: (t: Task) => Promise<unknown>, verb: string, to = "") => {
    setBusy(true);
    let outcome: BulkOutcome;
    try {
      outcome = await runOverTasks(selected, act);
    } finally {
      setBusy(false);
    }
    toast(summarise(outcome, verb, to), outcome.failed.length ? "error" : "ok");
    onDone(outcome.failed.map((f) => f.task));
  };
  const path = (t: Task) => ({ params: { path: { id: t.id } } });

  return (
    <div class="bulk-bar" role="region" aria-label="Selected tasks">
      <span class="bulk-count">
        <strong>{n}</strong> selected
      </span>
      <button type="button" class="ghost" onClick={onClear} disabled={busy}>
        Clear
      </button>
      <form
        class="bulk-action"
        onSubmit={(e) => {
          e.preventDefault();
          const body = assignBodyOf(assignee);
          const to = "server_name" in body ? ` to ${body.server_name}` : " to the session";
          void run((t) => ok(hub.POST("/api/v1/tasks/{id}/assign", { ...path(t), body })), "Assigned", to);
        }}
      >
        <AssigneeSelect
          value={assignee}
          onChange={setAssignee}
          none={assignees ? "choose a server or session" : "loading…"}
          servers={(assignees?.servers ?? []).map((s) => ({ name: s.name, label: `${s.name} (${s.status})` }))}
          sessions={assignees?.sessions ?? []}
        />
        <button type="submit" class="secondary" disabled={busy || !assignee}>
          Assign
        </button>
      </form>
      <form
        class="bulk-action"
        onSubmit={(e) => {
          e.preventDefault();
          const to = priority as Priority;
          void run((t) => ok(hub.PUT("/api/v1/tasks/{id}", { ...path(t), body: { priority: to } })), "Set", ` to ${to} priority`);
        }}
      >
        <label>
          Priority
          <select name="bulk-priority" value={priority} onChange={(e) => setPriority(e.currentTarget.value as Priority)}>
            <option value="">choose</option>
            {PRIORITIES.map((p) => (
              <option key={p}>{p}</option>
            ))}
          </select>
        </label>
        <button type="submit" class="secondary" disabled={busy || !priority}>
          Set priority
        </button>
      </form>
      <button type="button" class="danger bulk-cancel" disabled={busy} onClick={() => setConfirming(true)}>
        Cancel tasks
      </button>
      {busy && (
        <span class="muted" role="status">
          Working…
        </span>
      )}
      <Dialog open={confirming} title={`Cancel ${n} task${n === 1 ? "" : "s"}?`} onClose={() => setConfirming(false)}>
        <p>Agents working on them are told to stop. Tasks already finished stay as they are.</p>
        <ul class="bulk-confirm-list">
          {selected.slice(0, CANCEL_LISTED).map((t) => (
            <li key={t.id}>{t.title}</li>
          ))}
          {n > CANCEL_LISTED && <li class="muted">and {n - CANCEL_LISTED} more</li>}
        </ul>
        <div class="dialog-actions">
          <button type="button" class="secondary" onClick={() => setConfirming(false)}>
            Keep them
          </button>
          <button
            type="button"
            class="danger"
            onClick={() => {
              setConfirming(false);
              void run((t) => ok(hub.DELETE("/api/v1/tasks/{id}", path(t))), "Cancelled");
            }}
          >
            Cancel {n} task{n === 1 ? "" : "s"}
          </button>
        </div>
      </Dialog>
    </div>
  );
}
