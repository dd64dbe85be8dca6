/** A project at a glance. */
import { Empty } from "../ui/states";
import { ProjectTabs } from "./project-tabs";

export function ProjectOverview(props: { projectId: string }) {
  return (
    <section>
      <ProjectTabs projectId={props.projectId} current="overview" />
      <Empty title="The overview is not built yet." />
    </section>
  );
}
