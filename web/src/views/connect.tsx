/**
 * Connecting things to a project, at `/projects/{id}/connect`: coding agents over MCP, other agents over A2A, the
 * daemon on agents' machines, agents' telemetry, and the API reference.
 */
import { useEffect, useState } from "preact/hooks";
import { hub, messageOf, ok } from "../api";
import type { ProjectHead } from "../types";
import { A2ACard } from "./a2a-card";
import { McpConnect } from "./connect-mcp";
import { DaemonConnect } from "./connect-daemon";
import { Problem } from "./controls";
import { ProjectTabs } from "./project-tabs";
import { TelemetryConnect } from "./connect-telemetry";

export function Connect({ projectId }: { projectId: string }) {
  const [project, setProject] = useState<ProjectHead | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void ok(hub.GET("/api/v1/projects/{id}", { params: { path: { id: projectId } } })).then(setProject, (e) => setError(messageOf(e)));
  }, [projectId]);

  return (
    <section class="connect">
      <ProjectTabs projectId={projectId} name={project?.name} current="connect" />
      <Problem message={error} />
      <McpConnect projectId={projectId} projectName={project?.name} />
      <A2ACard projectId={projectId} />
      <DaemonConnect projectId={projectId} projectName={project?.name} />
      <TelemetryConnect />
      <section class="panel" aria-labelledby="connect-api-title">
        <h2 id="connect-api-title">The API</h2>
        <p class="muted">
          Everything above, and the rest, is the hub's REST API: its reference, with every route, field and error, is at <a href="/docs">/docs</a>. A script
          sends a personal access token as <code>Authorization: Bearer</code>.
        </p>
      </section>
    </section>
  );
}
