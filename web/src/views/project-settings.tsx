/** A project's settings: everyone sees them, admins change them. */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "../api";
import { useMe } from "../me";
import type { Project } from "../types";
import { ProjectTabs } from "./project-tabs";
import { A2ACard } from "./a2a-card";
import { Problem, useAction } from "./controls";

type Setting = keyof Project["settings"];

/** One setting's switch, with what it does and who may change it. */
function SettingSwitch(props: {
  setting: Setting;
  heading: string;
  label: string;
  children: ComponentChildren;
  project: Project;
  isAdmin: boolean;
  busy: boolean;
  change: (setting: Setting, on: boolean) => unknown;
  problem: (key: string) => ComponentChildren;
}) {
  const { setting, isAdmin } = props;
  return (
    <section class="panel" aria-labelledby={`${setting}-heading`}>
      <h2 id={`${setting}-heading`}>{props.heading}</h2>
      <label class="switch">
        <input
          type="checkbox"
          name={setting.replaceAll("_", "-")}
          checked={props.project.settings[setting]}
          disabled={!isAdmin || props.busy}
          onChange={(e) => void props.change(setting, e.currentTarget.checked)}
        />
        {props.label}
      </label>
      <p class="muted">{props.children}</p>
      {!isAdmin && <p class="muted small">Only admins change this.</p>}
      {props.problem(setting)}
    </section>
  );
}

export function ProjectSettingsPage({ projectId }: { projectId: string }) {
  const me = useMe();
  const [project, setProject] = useState<Project | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { run, busy, problem } = useAction();
  useEffect(() => {
    void ok(hub.GET("/api/v1/projects/{id}", { params: { path: { id: projectId } } })).then(setProject, (e) => setError(e.message));
  }, [projectId]);
  const isAdmin = me.role === "admin";
  const change = (setting: Setting, on: boolean) =>
    run(setting, async () =>
      setProject(await ok(hub.PATCH("/api/v1/projects/{id}", { params: { path: { id: projectId } }, body: { settings: { [setting]: on } } }))),
    );
  const switchProps = { isAdmin, busy: busy !== null, change, problem };
  return (
    <section class="project-settings">
      <ProjectTabs projectId={projectId} name={project?.name} current="settings" />
      <Problem message={error} />
      {project && (
        <>
          <SettingSwitch
            setting="approve_agent_tasks"
            heading="Approving agents' tasks"
            label="Tasks that agents create wait for a person's approval"
            project={project}
            {...switchProps}
          >
            When this is on, a task an agent creates is not auto-assigned and its agent does not start on it until a member or admin presses Approve on its
            card, its page or in Telegram; tasks people create never wait. Turning it off leaves the tasks already waiting as they are.
          </SettingSwitch>
          <SettingSwitch
            setting="remote_exec"
            heading="Remote commands and files"
            label="Agents may run commands in each other's sessions"
            project={project}
            {...switchProps}
          >
            When this is on, any agent in the project may run shell commands in another session of the project (on that session's machine) and send it files;
            every command and every file sent is recorded in the project's events.
          </SettingSwitch>
          <A2ACard projectId={projectId} />
        </>
      )}
    </section>
  );
}
