/** Paths of the dashboard, with the History API (the Worker answers every unknown path with the app). */
import { useEffect, useState } from "preact/hooks";

export type Route =
  | { page: "projects" }
  /** A project at a glance: throughput, time to done, failures, questions, agents, health, spend, activity. */
  | { page: "overview"; projectId: string }
  | { page: "board"; projectId: string }
  | { page: "graph"; projectId: string }
  | { page: "code-health"; projectId: string }
  /** The period is the page's query (`?days=`, read by the page itself). */
  | { page: "usage"; projectId: string }
  | { page: "activity"; projectId: string }
  | { page: "members"; projectId: string }
  | { page: "settings"; projectId: string }
  | { page: "new-task"; projectId: string }
  | { page: "connect"; projectId: string }
  | { page: "task"; projectId: string; taskId: string }
  | { page: "sessions"; projectId: string }
  | { page: "session"; projectId: string; sessionId: string }
  | { page: "webhooks"; projectId: string; webhookId?: string }
  /** Templates, schedules, triggers and runs; which template is edited and what runs are filtered by are the page's query. */
  | { page: "automation"; projectId: string; section: AutomationSection }
  /** Its filters are the page's query (read by the page itself). */
  | { page: "permissions"; projectId: string }
  | { page: "inbox" }
  | { page: "account" }
  | { page: "agents" }
  | { page: "server"; serverId: string }
  | { page: "rules" }
  | { page: "access" }
  | { page: "people" }
  /** Slack for the hub (admins): the app's manifest, installing it, the workspaces it is in; `?installed=` after an install. */
  | { page: "slack" }
  /** Usage across every project the person sees. */
  | { page: "usage-all" }
  /** An invite link (the token is the page's query, read by the page itself); open without signing in. */
  | { page: "invite" }
  | { page: "not-found" };

export const AUTOMATION_SECTIONS = ["templates", "schedules", "triggers", "runs"] as const;
export type AutomationSection = (typeof AUTOMATION_SECTIONS)[number];

export function parseRoute(path: string): Route {
  const parts = path.split("/").filter(Boolean);
  if (parts.length === 0 || (parts.length === 1 && parts[0] === "projects")) return { page: "projects" };
  if (parts[0] === "inbox" && parts.length === 1) return { page: "inbox" };
  if (parts[0] === "agents" && parts.length === 1) return { page: "agents" };
  if (parts[0] === "servers" && parts[1] && parts.length === 2) return { page: "server", serverId: parts[1] };
  if (parts[0] === "rules" && parts.length === 1) return { page: "rules" };
  if (parts[0] === "access" && parts.length === 1) return { page: "access" };
  if (parts[0] === "people" && parts.length === 1) return { page: "people" };
  if (parts[0] === "settings" && parts[1] === "slack" && parts.length === 2) return { page: "slack" };
  if (parts[0] === "invite" && parts.length === 1) return { page: "invite" };
  if (parts[0] === "account" && parts.length === 1) return { page: "account" };
  if (parts[0] === "usage" && parts.length === 1) return { page: "usage-all" };
  if (parts[0] === "projects" && parts[1]) {
    const projectId = parts[1];
    if (parts.length === 2 || parts[2] === "board") return { page: "board", projectId };
    if (parts[2] === "overview" && parts.length === 3) return { page: "overview", projectId };
    if (parts[2] === "graph") return { page: "graph", projectId };
    if (parts[2] === "code-health" && parts.length === 3) return { page: "code-health", projectId };
    if (parts[2] === "usage" && parts.length === 3) return { page: "usage", projectId };
    if (parts[2] === "activity") return { page: "activity", projectId };
    if (parts[2] === "members") return { page: "members", projectId };
    if (parts[2] === "settings") return { page: "settings", projectId };
    // `new` is not a task id (ids are UUIDs): the new-task page.
    if (parts[2] === "tasks" && parts[3] === "new" && parts.length === 4) return { page: "new-task", projectId };
    if (parts[2] === "connect" && parts.length === 3) return { page: "connect", projectId };
    if (parts[2] === "tasks" && parts[3]) return { page: "task", projectId, taskId: parts[3] };
    if (parts[2] === "sessions" && parts.length === 3) return { page: "sessions", projectId };
    if (parts[2] === "sessions" && parts[3]) return { page: "session", projectId, sessionId: parts[3] };
    if (parts[2] === "permissions" && parts.length === 3) return { page: "permissions", projectId };
    if (parts[2] === "automation" && parts.length <= 4) {
      const section = AUTOMATION_SECTIONS.find((x) => x === (parts[3] ?? "templates"));
      if (section) return { page: "automation", projectId, section };
    }
    if (parts[2] === "webhooks") return { page: "webhooks", projectId, ...(parts[3] ? { webhookId: parts[3] } : {}) };
  }
  return { page: "not-found" };
}

const listeners = new Set<() => void>();

export function navigate(path: string) {
  if (path === location.pathname + location.search) return;
  history.pushState(null, "", path);
  listeners.forEach((l) => l());
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.pathname));
    listeners.add(update);
    addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      removeEventListener("popstate", update);
    };
  }, []);
  return route;
}

/** A link that navigates without reloading the page. */
export function linkProps(path: string) {
  return {
    href: path,
    onClick: (e: MouseEvent) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      e.preventDefault();
      navigate(path);
    },
  };
}
