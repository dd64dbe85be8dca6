/** "Save as template" for a task's graph: the template editor opens with the graph's tasks and dependencies filled in. */
import { useCanWrite } from "../me";
import { linkProps } from "../router";
import type { Task } from "../types";

export const saveAsTemplatePath = (task: Pick<Task, "id" | "project_id">) => `/projects/${task.project_id}/automation/templates?from_task=${task.id}`;

/** For those who may make templates. */
export function SaveAsTemplate({ task }: { task: Task }) {
  const canWrite = useCanWrite();
  if (!canWrite) return null;
  return (
    <a
      class="button secondary save-as-template"
      {...linkProps(saveAsTemplatePath(task))}
      title="Save this task's graph (what it depends on and what depends on it) as a template"
    >
      Save as template
    </a>
  );
}
