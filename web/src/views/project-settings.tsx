/** A project's settings: everyone sees them, admins change them. */
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "../api";
import { useMe } from "../me";
import type { Project } from "../types";
import { ProjectTabs } from "./project-tabs";
import { Problem, useAction } from "./controls";

export function ProjectSettingsPage({ projectId }: { projectId: string }) {
  const me = useMe();
  const [project, setProject] = useState<Project | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { run, busy, problem } = useAction();
  useEffect(() => {
    void ok(hub.GET("/api/v1/projects/{id}", { params: { path: { id: projectId } } })).then(setProject, (e) => setError(e.message));
  }, [projectId]);
  const isAdmin = me.role === "admin";
  const change = (setting: "approve_agent_tasks" | "remote_exec", on: boolean) =>
    run(setting, async () =>
      setProject(await ok(hub.PATCH("/api/v1/projects/{id}", { params: { path: { id: projectId } }, body: { settings: { [setting]: on } } }))),
    );
  return (
    <section class="project-settings">
      <ProjectTabs projectId={projectId} name={project?.name} current="settings" />
      <Problem message={error} />
      {project && (
        <>
          <section class="panel" aria-labelledby="approval-heading">
            <h2 id="approval-heading">Approving agents' tasks</h2>
            <label class="switch">
              <input
                type="checkbox"
                name="approve-agent-tasks"
                checked={project.settings.approve_agent_tasks}
                disabled={!isAdmin || busy !== null}
                onChange={(e) => void change("approve_agent_tasks", e.currentTarget.checked)}
              />
              Tasks that agents create wait for a person's approval
            </label>
            <p class="muted">
              When this is on, a task an agent creates is not auto-assigned and its agent does not start on it until a member or admin presses Approve on its
              card, its page or in Telegram; tasks people create never wait. Turning it off leaves the tasks already waiting as they are.
            </p>
            {!isAdmin && <p class="muted small">Only admins change this.</p>}
            {problem("approve_agent_tasks")}
          </section>
          <section class="panel" aria-labelledby="remote-exec-heading">
            <h2 id="remote-exec-heading">Remote commands and files</h2>
            <label class="switch">
              <input
                type="checkbox"
                name="remote-exec"
                checked={project.settings.remote_exec}
                disabled={!isAdmin || busy !== null}
                onChange={(e) => void change("remote_exec", e.currentTarget.checked)}
              />
              Agents may run commands in each other's sessions
            </label>
            <p class="muted">
              When this is on, any agent in the project may run shell commands in another session of the project (on that session's machine) and send it files;
              every command and every file sent is recorded in the project's events.
            </p>
            {!isAdmin && <p class="muted small">Only admins change this.</p>}
            {problem("remote_exec")}
          </section>
        </>
      )}
    </section>
  );
}
