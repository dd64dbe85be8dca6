/** A project's header: its name, its pages, and whether its live feed is connected. */
import { useCanWrite, useMe, useProjectRole } from "../me";
import type { FeedStatus } from "../live";
import { useProjectNames } from "../project-names";
import { linkProps } from "../router";

type Tab =
  | "overview"
  | "board"
  | "graph"
  | "code-health"
  | "usage"
  | "activity"
  | "sessions"
  | "permissions"
  | "members"
  | "webhooks"
  | "automation"
  | "settings"
  | "connect";

const STATUS_TEXT: Record<FeedStatus, string> = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…", closed: "disconnected" };

export function ProjectTabs(props: { projectId: string; name?: string; current: Tab | "task" | "session"; status?: FeedStatus }) {
  const canWrite = useCanWrite();
  const me = useMe();
  const projectRole = useProjectRole(me.role === "member" ? props.projectId : undefined);
  const names = useProjectNames();
  const viewer = me.role === "viewer" || projectRole === "viewer";
  const tab = (page: Tab, label: string) => (
    <a {...linkProps(`/projects/${props.projectId}/${page}`)} aria-current={props.current === page ? "page" : undefined}>
      {label}
    </a>
  );
  return (
    <header class="project-head">
      <h1>{props.name ?? names.get(props.projectId) ?? "…"}</h1>
      <nav aria-label="Project">
        {tab("overview", "Overview")}
        {tab("board", "Board")}
        {tab("graph", "Graph")}
        {tab("code-health", "Code health")}
        {tab("usage", "Usage")}
        {tab("activity", "Activity")}
        {tab("sessions", "Sessions")}
        {tab("permissions", "Permissions")}
        {tab("members", "Members")}
        {tab("automation", "Automation")}
        {/* Webhooks are set up by members and admins; viewers are refused them. */}
        {canWrite && tab("webhooks", "Webhooks")}
        {tab("settings", "Settings")}
        {tab("connect", "Connect")}
      </nav>
      {viewer && (
        <p class="read-only-note" role="note">
          You are a viewer of this project: you can read everything here but not change it.
        </p>
      )}
      {props.status && (
        <span class={`feed feed-${props.status}`} role="status" data-feed={props.status}>
          {STATUS_TEXT[props.status]}
        </span>
      )}
    </header>
  );
}
