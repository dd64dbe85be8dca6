/** The signed-in person, provided by the app to every view (views import it from here, not from the app, which imports them). */
import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import { hub, ok } from "./api";
import { parseRoute } from "./router";
import type { Me, Role } from "./types";

export const MeContext = createContext<Me | null>(null);
export const useMe = () => useContext(MeContext)!;

/**
 * The person's role in each project, as the hub last answered it with the project (`my_role`): a membership may make
 * a member a viewer there. Read once per project, and noted again whenever a page reads the project.
 */
const projectRoles = new Map<string, Role>();
const reading = new Map<string, Promise<void>>();
const listeners = new Set<() => void>();

export function noteProjectRole(projectId: string, role: Role | null) {
  if (role === null || projectRoles.get(projectId) === role) return;
  projectRoles.set(projectId, role);
  listeners.forEach((l) => l());
}

function readProjectRole(projectId: string) {
  if (!reading.has(projectId)) {
    const read = ok(hub.GET("/api/v1/projects/{id}", { params: { path: { id: projectId } } }))
      .then((p) => noteProjectRole(projectId, p.my_role))
      .catch(() => undefined)
      .finally(() => reading.delete(projectId));
    reading.set(projectId, read);
  }
}

/** The person's role in the project (undefined until the hub has said). */
export function useProjectRole(projectId: string | undefined): Role | undefined {
  const [, changed] = useState(0);
  useEffect(() => {
    if (!projectId) return;
    const listener = () => changed((n) => n + 1);
    listeners.add(listener);
    if (!projectRoles.has(projectId)) readProjectRole(projectId);
    return () => void listeners.delete(listener);
  }, [projectId]);
  return projectId ? projectRoles.get(projectId) : undefined;
}

/**
 * Whether the signed-in person may change things here: viewers only watch, and so does a member on the pages of a
 * project they are a viewer of (nothing is offered until the hub has said which).
 */
export function useCanWrite() {
  const me = useMe();
  const route = parseRoute(location.pathname);
  const projectId = me.role === "member" && "projectId" in route ? route.projectId : undefined;
  const role = useProjectRole(projectId);
  if (!projectId) return me.role !== "viewer";
  return role !== undefined && role !== "viewer";
}
