/** What the command palette offers, built from what the dashboard has read: pages, projects, tasks, sessions, servers. */
import { PLACES, PROJECT_PLACES, projectPath } from "./places";
import type { Project, Server, Session, Task } from "./types";

export type ItemKind = "page" | "project" | "task" | "session" | "server";

export interface PaletteItem {
  /** Unique among the items (the option's element id is made from it). */
  key: string;
  kind: ItemKind;
  label: string;
  /** A second line: where or what it is. */
  detail?: string;
  path: string;
  /** Matched by its prefix as well as the label (a task's id). */
  id?: string;
}

export interface PaletteData {
  admin: boolean;
  canWrite: boolean;
  /** The project the person is in, if any. */
  project?: { id: string; name: string };
  projects: Project[];
  tasks: Task[];
  sessions: Session[];
  servers: Server[];
}

const STATUS_WORDS: Record<string, string> = { plan_review: "plan review", needs_human: "needs a human" };

export function paletteItems(d: PaletteData): PaletteItem[] {
  const items: PaletteItem[] = [];
  for (const p of PLACES) if (!p.admin || d.admin) items.push({ key: `page:${p.path}`, kind: "page", label: p.label, path: p.path });
  if (d.project) {
    const { id, name } = d.project;
    for (const p of PROJECT_PLACES) {
      if (!p.write || d.canWrite) items.push({ key: `page:${id}:${p.path}`, kind: "page", label: p.label, detail: name, path: projectPath(id, p) });
    }
  }
  for (const p of d.projects) items.push({ key: `project:${p.id}`, kind: "project", label: p.name, path: `/projects/${p.id}/board` });
  for (const t of d.tasks) {
    const status = STATUS_WORDS[t.status] ?? t.status;
    items.push({
      key: `task:${t.id}`,
      kind: "task",
      label: t.title,
      detail: `${t.id.slice(0, 8)} · ${status}`,
      path: `/projects/${t.project_id}/tasks/${t.id}`,
      id: t.id,
    });
  }
  for (const s of d.sessions) {
    items.push({
      key: `session:${s.id}`,
      kind: "session",
      label: s.name,
      detail: `${s.server_name} · ${s.status}`,
      path: `/projects/${s.project_id}/sessions/${s.id}`,
    });
  }
  for (const s of d.servers)
    items.push({ key: `server:${s.id}`, kind: "server", label: s.name, detail: `${s.hostname} · ${s.status}`, path: `/servers/${s.id}` });
  return items;
}
