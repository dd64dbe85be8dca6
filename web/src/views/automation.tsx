/**
 * A project's automation: templates (graphs saved with parameters), the schedules and triggers that run them, and the
 * runs they made. Members and admins make and change them; viewers read. Each section is a path of its own
 * (/projects/{id}/automation/{section}); lists are read again as runs start and tasks finish.
 */
import { useEffect, useState } from "preact/hooks";
import { listSchedules, listTemplates, listTriggers } from "../automation-api";
import { adoptStyles } from "../adopt-styles";
import { useProjectFeed } from "../project-feed";
import { AUTOMATION_SECTIONS, linkProps, type AutomationSection } from "../router";
import { Problem } from "./controls";
import { ProjectTabs } from "./project-tabs";
import { Runs } from "./automation-runs";
import { Schedules } from "./automation-schedules";
import { Templates } from "./automation-templates";
import { Triggers } from "./automation-triggers";
import pageCss from "./automation.css" with { type: "text" };

adoptStyles(pageCss as string);

/** Events after which what the page shows may have changed. */
const WANTED = new Set(["run_started", "run_skipped", "schedule_changed", "task_completed", "task_failed", "task_cancelled"]);

const LABELS: Record<AutomationSection, string> = { templates: "Templates", schedules: "Schedules", triggers: "Triggers", runs: "Runs" };

/** Names by id, for the runs list and its filters: read when the runs are shown. */
function useNames(projectId: string, wanted: boolean) {
  const [names, setNames] = useState({ templates: new Map<string, string>(), schedules: new Map<string, string>(), triggers: new Map<string, string>() });
  useEffect(() => {
    if (!wanted) return;
    const named = <T,>(list: Promise<T[]>, name: (x: T) => [string, string]) =>
      list.then(
        (xs) => new Map(xs.map(name)),
        () => new Map<string, string>(),
      );
    void Promise.all([
      named(listTemplates(projectId), (t) => [t.id, t.name]),
      named(listSchedules(projectId), (s) => [s.id, s.name ?? s.cron]),
      named(listTriggers(projectId), (t) => [t.id, t.name ?? (t.kind === "github" ? "GitHub webhook" : "HTTP call")]),
    ]).then(([templates, schedules, triggers]) => setNames({ templates, schedules, triggers }));
  }, [projectId, wanted]);
  return names;
}

export function Automation({ projectId, section }: { projectId: string; section: AutomationSection }) {
  const feed = useProjectFeed(projectId, WANTED);
  const names = useNames(projectId, section === "runs");
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
      {section === "schedules" && <Schedules projectId={projectId} latest={feed.latest} />}
      {section === "triggers" && <Triggers projectId={projectId} />}
      {section === "runs" && <Runs projectId={projectId} latest={feed.latest} names={names} />}
    </section>
  );
}
