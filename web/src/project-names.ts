/**
 * The projects the person sees, read once for the whole dashboard (the sidebar, the palette, pages that name projects)
 * and read again when one is created or renamed (`reloadProjects`).
 */
import { useEffect, useState } from "preact/hooks";
import { hub, ok, onSignedOut } from "./api";
import type { Project } from "./types";

let projects: Project[] | null = null;
let reading: Promise<void> | null = null;
const listeners = new Set<(p: Project[]) => void>();
// Whoever signs in next sees their own projects.
onSignedOut(() => {
  projects = null;
  reading = null;
});

export function reloadProjects(): Promise<void> {
  reading = ok(hub.GET("/api/v1/projects")).then(
    (r) => {
      projects = r.projects;
      listeners.forEach((l) => l(r.projects));
    },
    () => undefined,
  );
  return reading;
}

/** The projects (null until the first read lands; a failed read leaves what was there). */
export function useProjects(): Project[] | null {
  const [shown, setShown] = useState(projects);
  useEffect(() => {
    listeners.add(setShown);
    if (!reading) void reloadProjects();
    return () => void listeners.delete(setShown);
  }, []);
  return shown;
}

/** The names of the projects by id (an empty map until read). */
export function useProjectNames(): Map<string, string> {
  const list = useProjects();
  return new Map((list ?? []).map((p) => [p.id, p.name]));
}
