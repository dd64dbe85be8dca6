/**
 * Editing an unfinished task with the new-task form's fields: its type, spec, structured spec, requirements and
 * dependencies only while it is `pending` (the hub keeps them fixed after), the rest until it ends. Loaded when the
 * task page's Edit is opened.
 */
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "../api";
import type { Task } from "../types";
import { Problem } from "./controls";
import { refusalOf, underField, type Refusal } from "./field-refusal";
import { readTask } from "./task-actions";
import { changesOf, dependencyChanges, draftOf, type TaskDraft } from "./task-draft";
import { checkedStructuredSpec, fieldsOf, TaskFields } from "./task-form";
import type { SetDraft } from "./task-fields";

export interface EditProps {
  task: Task;
  /** The tasks it may depend on. */
  tasks: Task[];
  servers: string[];
  onChanged: (t: Task) => void;
}

export function EditTaskForm({ task, tasks, servers, onChanged }: EditProps) {
  const [draft, setDraft] = useState<TaskDraft>(() => draftOf(task));
  const [refusal, setRefusal] = useState<Refusal<string> | null>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  useEffect(() => setDraft(draftOf(task)), [task.id, task.updated_at]);
  const set: SetDraft = (change) => {
    setSaved(false);
    setDraft((d) => ({ ...d, ...change }));
  };
  const pending = task.status === "pending";

  const save = async (e: Event) => {
    e.preventDefault();
    setRefusal(null);
    const structured = checkedStructuredSpec(draft);
    if ("refusal" in structured) return setRefusal(structured.refusal);
    setBusy(true);
    try {
      const path = { params: { path: { id: task.id } } };
      const changes = changesOf(task, draft, structured.value);
      let now = task;
      if (Object.keys(changes).length) now = await ok(hub.PUT("/api/v1/tasks/{id}", { ...path, body: changes }));
      if (pending) {
        const deps = dependencyChanges(task, draft);
        for (const upstreamId of deps.remove)
          await ok(hub.DELETE("/api/v1/tasks/{id}/dependencies/{upstreamId}", { params: { path: { id: task.id, upstreamId } } }));
        for (const dep of deps.add) {
          const field = `dependencies.${draft.dependencies.findIndex((d) => d.taskId === dep.depends_on_task_id)}`;
          await ok(hub.POST("/api/v1/tasks/{id}/dependencies", { ...path, body: dep })).catch((err: unknown) => {
            throw underField(err, field);
          });
        }
        if (deps.remove.length || deps.add.length) now = await readTask(task.id);
      }
      onChanged(now);
      setSaved(true);
    } catch (err) {
      setRefusal(refusalOf(err, fieldsOf(draft)));
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      {!pending && (
        <p class="muted">
          The task has left pending: its type, spec, structured spec, requirements and dependencies are fixed now. The rest may change until it ends.
        </p>
      )}
      <form class="task-form" onSubmit={(e) => void save(e)}>
        <TaskFields
          draft={draft}
          set={set}
          problems={refusal?.fields ?? {}}
          tasks={tasks.filter((t) => t.id !== task.id)}
          servers={servers}
          unfixed={pending}
        />
        <div class="form-end wide">
          <button type="submit" disabled={busy}>
            Save changes
          </button>
          {saved && <span role="status">Saved.</span>}
          <Problem message={refusal?.other} />
        </div>
      </form>
    </>
  );
}
