/** A project's settings: everyone sees them, admins change them. */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import { useMe } from "../me";
import type { Project } from "../types";
import { Failed, Loading } from "../ui/states";
import { toast } from "../ui/toasts";
import { ProjectTabs } from "./project-tabs";
import { A2ACard } from "./a2a-card";
import { Problem } from "./controls";
import { LivenessSettings, type LivenessChange } from "./liveness-settings";
import { ArchiveSettings } from "./archive-settings";
import { ReviewPolicyPanel } from "./review-policy";
import { SlackChannelsPanel } from "./slack-channels";

/** The settings that are on or off. */
type Setting = { [K in keyof Project["settings"]]: Project["settings"][K] extends boolean ? K : never }[keyof Project["settings"]];

/**
 * One setting's switch, with what it does and who may change it. While its change is on its way the switch shows the
 * new position, disabled and busy; a refusal puts it back and says why.
 */
function SettingSwitch(props: {
  setting: Setting;
  heading: string;
  label: string;
  children: ComponentChildren;
  /** More of the panel, below what the setting does. */
  after?: ComponentChildren;
  project: Project;
  isAdmin: boolean;
  save: (setting: Setting, on: boolean) => Promise<void>;
}) {
  const { setting, isAdmin } = props;
  const [pending, setPending] = useState<boolean | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const saved = props.project.settings[setting];
  const change = async (on: boolean) => {
    setPending(on);
    setProblem(null);
    try {
      await props.save(setting, on);
      toast(`${props.heading}: ${on ? "on" : "off"}.`);
    } catch (e) {
      setProblem(`Not changed: ${messageOf(e)}`);
      toast(`${props.heading} was not changed.`, "error");
    } finally {
      setPending(null);
    }
  };
  return (
    <section class="panel" aria-labelledby={`${setting}-heading`}>
      <h2 id={`${setting}-heading`}>{props.heading}</h2>
      <label class="switch">
        <input
          type="checkbox"
          name={setting.replaceAll("_", "-")}
          checked={pending ?? saved}
          disabled={!isAdmin || pending !== null}
          aria-busy={pending !== null}
          onChange={(e) => void change(e.currentTarget.checked)}
        />
        {props.label}
        {pending !== null && <span class="spinner" aria-hidden="true" />}
      </label>
      <p class="muted">{props.children}</p>
      {props.after}
      {!isAdmin && <p class="muted small">Only admins change this.</p>}
      <Problem message={problem} />
    </section>
  );
}

export function ProjectSettingsPage({ projectId }: { projectId: string }) {
  const me = useMe();
  const [project, setProject] = useState<Project | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    void ok(hub.GET("/api/v1/projects/{id}", { params: { path: { id: projectId } } })).then(
      (p) => (setProject(p), setError(null)),
      (e) => setError(messageOf(e)),
    );
  useEffect(load, [projectId]);
  const isAdmin = me.role === "admin";
  const change = async (settings: Partial<Project["settings"]>) => {
    setProject(await ok(hub.PATCH("/api/v1/projects/{id}", { params: { path: { id: projectId } }, body: { settings } })));
  };
  const save = (setting: Setting, on: boolean) => change({ [setting]: on });
  const switchProps = { isAdmin, save };
  return (
    <section class="project-settings">
      <ProjectTabs projectId={projectId} name={project?.name} current="settings" />
      {!project && (error ? <Failed what="the project's settings" message={error} retry={load} /> : <Loading what="settings" />)}
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
          <SettingSwitch
            setting="require_result"
            heading="Liveness"
            label="A completed task must say what it did"
            project={project}
            after={<LivenessSettings settings={project.settings} isAdmin={isAdmin} save={(c: LivenessChange) => change(c)} />}
            {...switchProps}
          >
            When this is on, a task its agent completes without a summary or a contract waits on a person instead of ending: its result is kept, and answering
            its question sends it back to the agent to complete again. Its dependents wait meanwhile.
          </SettingSwitch>
          <ArchiveSettings project={project} isAdmin={isAdmin} save={(c) => change(c)} />
          <ReviewPolicyPanel projectId={projectId} isAdmin={isAdmin} remoteExec={project.settings.remote_exec} />
          <SlackChannelsPanel projectId={projectId} />
          <A2ACard projectId={projectId} />
        </>
      )}
    </section>
  );
}
