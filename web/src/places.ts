/**
 * The dashboard's places, named once for the command palette and the `g` shortcuts: the sidebar's pages and a
 * project's tabs, each with its path and, for the most used, the letter that `g` then that letter goes to.
 */

export interface Place {
  label: string;
  path: string;
  /** `g` then this letter goes here. */
  letter?: string;
  /** Shown only to admins (the sidebar shows them only to admins). */
  admin?: boolean;
  /** Shown only to those who can change the project (as its tabs do). */
  write?: boolean;
}

export const PLACES: Place[] = [
  { label: "Projects", path: "/", letter: "p" },
  { label: "Inbox", path: "/inbox", letter: "i" },
  { label: "Agents and servers", path: "/agents", letter: "a" },
  { label: "Rules", path: "/rules", letter: "r" },
  { label: "Usage", path: "/usage", letter: "u" },
  { label: "Access", path: "/access", admin: true },
  { label: "People", path: "/people", admin: true },
  { label: "Slack", path: "/settings/slack", admin: true },
  { label: "Account settings", path: "/account" },
];

/** A project's pages, by the path under /projects/{id}/. */
export const PROJECT_PLACES: Place[] = [
  { label: "Overview", path: "overview", letter: "o" },
  { label: "Board", path: "board", letter: "b" },
  { label: "List", path: "board?view=list", letter: "l" },
  { label: "Graph", path: "graph", letter: "g" },
  { label: "Code health", path: "code-health", letter: "h" },
  { label: "Usage", path: "usage" },
  { label: "Activity", path: "activity" },
  { label: "Sessions", path: "sessions", letter: "s" },
  { label: "Permissions", path: "permissions" },
  { label: "Members", path: "members" },
  { label: "Automation", path: "automation" },
  { label: "Webhooks", path: "webhooks", write: true },
  { label: "Settings", path: "settings", letter: "e" },
  { label: "Connect", path: "connect" },
  { label: "New task", path: "tasks/new", write: true },
];

export const projectPath = (projectId: string, place: Place) => `/projects/${projectId}/${place.path}`;
