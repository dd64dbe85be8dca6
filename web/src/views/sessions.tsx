/** A project's agent sessions, live: starting one, closing or killing open ones, and a way into each terminal. */
import { useState } from "preact/hooks";
import { useCanWrite } from "../me";
import { useSessions, type SessionFilter } from "../session-store";
import { linkProps } from "../router";
import { ProjectTabs } from "./project-tabs";
import { Problem } from "./controls";
import { agentLabel } from "../agent-types";
import { McpStatusBadge, SessionControls, SessionStatusBadge } from "./session-controls";
import { StartSession } from "./start-session";
import { absoluteTime } from "../time-format";

export function Sessions({ projectId }: { projectId: string }) {
  const canWrite = useCanWrite();
  const [filter, setFilter] = useState<SessionFilter>("all");
  const state = useSessions(projectId, filter);
  const sessions = state.sessions;

  return (
    <section class="sessions-page">
      <ProjectTabs projectId={projectId} name={state.project?.name} current="sessions" status={state.status} />
      <Problem message={state.error} />
      {canWrite && <StartSession projectId={projectId} onStarted={state.reread} />}
      <div class="filters">
        <label>
          Show
          <select value={filter} onChange={(e) => setFilter(e.currentTarget.value as SessionFilter)}>
            <option value="all">all sessions</option>
            <option value="open">open</option>
            <option value="closed">closed</option>
          </select>
        </label>
        <span class="muted" aria-live="polite">
          {sessions ? `${sessions.length} ${sessions.length === 1 ? "session" : "sessions"}` : "Loading sessions…"}
        </span>
      </div>
      {sessions && sessions.length > 0 && (
        <table class="servers sessions stack" data-loaded="true">
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col">Status</th>
              <th scope="col">Server</th>
              <th scope="col">Agent</th>
              <th scope="col">Role</th>
              <th scope="col">Working directory</th>
              <th scope="col">Created</th>
              {canWrite && (
                <th scope="col">
                  <span class="muted">End</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {sessions.map((s) => (
              <tr key={s.id} data-session-id={s.id}>
                <th scope="row">
                  <a {...linkProps(`/projects/${projectId}/sessions/${s.id}`)}>{s.name}</a>
                </th>
                <td data-label="Status">
                  <SessionStatusBadge session={s} /> <McpStatusBadge status={s.mcp_status} />
                  {s.status === "error" && s.error && <div class="problem">{s.error}</div>}
                </td>
                <td data-label="Server">{s.server_name}</td>
                <td data-label="Agent">{s.agent_type ? agentLabel(s.agent_type) : <span class="muted">{agentLabel(null)}</span>}</td>
                <td data-label="Role">{s.role}</td>
                <td data-label="Working directory">{s.working_directory ? <code>{s.working_directory}</code> : <span class="muted">default</span>}</td>
                <td data-label="Created">
                  <time dateTime={s.created_at}>{absoluteTime(s.created_at)}</time>
                </td>
                {canWrite && (
                  <td>
                    <SessionControls session={s} onChanged={state.reread} />
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {sessions?.length === 0 && <p class="muted">{filter === "all" ? "No session has been started in this project yet." : `No ${filter} sessions.`}</p>}
    </section>
  );
}
