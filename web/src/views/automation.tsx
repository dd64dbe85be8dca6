/**
 * A project's automation: templates (graphs saved with parameters), the schedules and triggers that run them, and the
 * runs they made. Members and admins make and change them; viewers read. Each section is a path of its own
 * (/projects/{id}/automation/{section}); lists are read again as runs start and tasks finish.
 */
import { useEffect, useState } from "preact/hooks";
import { listTemplates } from "../automation-api";
import { adoptStyles } from "../adopt-styles";
import { useProjectFeed } from "../project-feed";
import { AUTOMATION_SECTIONS, linkProps, type AutomationSection } from "../router";
import { Problem } from "./controls";
import { ProjectTabs } from "./project-tabs";
import { Runs } from "./automation-runs";
import { Templates } from "./automation-templates";
import pageCss from "./automation.css" with { type: "text" };

adoptStyles(pageCss as string);

/** Events after which what the page shows may have changed. */
const WANTED = new Set(["run_started", "run_skipped", "schedule_changed", "task_completed", "task_failed", "task_cancelled"]);

const LABELS: Record<AutomationSection, string> = { templates: "Templates", schedules: "Schedules", triggers: "Triggers", runs: "Runs" };

/** Names by id, for the runs list and its filters. */
function useNames(projectId: string, latest: unknown) {
  const [templates, setTemplates] = useState(new Map<string, string>());
  useEffect(() => {
    void listTemplates(projectId).then(
      (list) => setTemplates(new Map(list.map((t) => [t.id, t.name]))),
      () => undefined,
    );
  }, [projectId, latest]);
  return { templates, schedules: new Map<string, string>(), triggers: new Map<string, string>() };
}

export function Automation({ projectId, section }: { projectId: string; section: AutomationSection }) {
  const feed = useProjectFeed(projectId, WANTED);
  const names = useNames(projectId, section);
  return (
    <section class="automation">
      <ProjectTabs projectId={projectId} name={feed.project?.name} current="automation" status={feed.status} />
      <Problem message={feed.error} />
      <nav class="sub-tabs" aria-label="Automation">
        {AUTOMATION_SECTIONS.map((s) => (
          <a key={s} {...linkProps(`/projects/${projectId}/automation/${s}`)} aria-current={s === section ? "page" : undefined}>
            {LABELS[s]}
          </a>
        ))}
      </nav>
      {section === "templates" && <Templates projectId={projectId} />}
      {section === "runs" && <Runs projectId={projectId} latest={feed.latest} names={names} />}
    </section>
  );
}
