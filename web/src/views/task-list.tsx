/** A project's tasks as a list: sortable, grouped, with bulk actions over the selected rows. */
import { useProject } from "../project-store";
import { Empty } from "../ui/states";
import { ProjectTabs } from "./project-tabs";
import { ViewSwitch } from "./view-switch";

export function TaskList({ projectId }: { projectId: string }) {
  const state = useProject(projectId);
  return (
    <section class="task-list-page">
      <ProjectTabs projectId={projectId} name={state.project?.name} current="board" status={state.status} />
      <ViewSwitch projectId={projectId} current="list" />
      <Empty title="The list view is not built yet." />
    </section>
  );
}
