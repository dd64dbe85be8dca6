/** Where a person creates a task: a page of its own (/projects/{id}/tasks/new), and the same form in a dialog over the board. */
import { useRef, useState } from "preact/hooks";
import { useCanWrite } from "../me";
import { useProject } from "../project-store";
import { linkProps, navigate } from "../router";
import type { Task } from "../types";
import { ProjectTabs } from "./project-tabs";
import { lazy } from "./lazy";

/** The form and its fields load when a task is first created. */
const NewTaskForm = lazy(() => import("./task-form").then((m) => m.NewTaskForm), "the task form");

const taskPath = (t: Task) => `/projects/${t.project_id}/tasks/${t.id}`;
export const newTaskPath = (projectId: string) => `/projects/${projectId}/tasks/new`;

export function NewTaskPage({ projectId }: { projectId: string }) {
  const state = useProject(projectId);
  const canWrite = useCanWrite();
  return (
    <section class="new-task-page">
      <ProjectTabs projectId={projectId} name={state.project?.name} current="task" status={state.status} />
      <p>
        <a {...linkProps(`/projects/${projectId}/board`)}>← Board</a>
      </p>
      <h2>New task</h2>
      {canWrite ? (
        <NewTaskForm projectId={projectId} tasks={[...state.tasks.values()]} onCreated={(t) => navigate(taskPath(t))} />
      ) : (
        <p class="muted">Viewers watch the project's tasks; a member or an admin creates them.</p>
      )}
    </section>
  );
}

/** The board's "New task": the form in a modal dialog, which leads to the task once it is made. */
export function NewTaskDialog({ projectId, tasks }: { projectId: string; tasks: Task[] }) {
  const dialog = useRef<HTMLDialogElement>(null);
  // The form is made afresh each time the dialog opens.
  const [open, setOpen] = useState(false);
  const close = () => dialog.current?.close();
  return (
    <>
      <p class="new-task">
        <button
          type="button"
          // `c` presses it (shortcuts.ts).
          data-shortcut="new-task"
          onClick={() => {
            setOpen(true);
            dialog.current?.showModal();
          }}
        >
          New task
        </button>
      </p>
      <dialog ref={dialog} class="task-dialog" aria-labelledby="new-task-title" onClose={() => setOpen(false)}>
        <header>
          <h2 id="new-task-title">New task</h2>
          {/* The board, and the dialog with it, goes away as the page opens. */}
          <a {...linkProps(newTaskPath(projectId))}>Open as a page</a>
          <button type="button" class="link" onClick={close}>
            Close
          </button>
        </header>
        {open && (
          <NewTaskForm
            projectId={projectId}
            tasks={tasks}
            onCreated={(t) => {
              close();
              navigate(taskPath(t));
            }}
          />
        )}
      </dialog>
    </>
  );
}
