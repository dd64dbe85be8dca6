/**
 * What the command palette searches, read when it opens: the projects (already read for the sidebar), the open
 * project's tasks (as the page on screen has them live, else read once), its sessions, and the servers. The hub has no
 * search across projects' tasks, so tasks are those of the project the person is in.
 */
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "./api";
import { useProjects } from "./project-names";
import { liveTasksOf, readAllTasks } from "./project-store";
import type { Project, Server, Session, Task } from "./types";

export interface PaletteSources {
  projects: Project[];
  tasks: Task[];
  sessions: Session[];
  servers: Server[];
  /** Reads still under way. */
  pending: number;
  /** What could not be read ("tasks", "sessions", "servers"). */
  failed: string[];
}

export function usePaletteSources(projectId: string | null): PaletteSources {
  const projects = useProjects();
  const [tasks, setTasks] = useState<Task[]>(() => (projectId && liveTasksOf(projectId)) || []);
  const [sessions, setSessions] = useState<Session[]>([]);
  const [servers, setServers] = useState<Server[]>([]);
  const [pending, setPending] = useState(0);
  const [failed, setFailed] = useState<string[]>([]);

  useEffect(() => {
    let live = true;
    const read = <T>(what: string, reading: Promise<T>, use: (value: T) => void) => {
      setPending((n) => n + 1);
      void reading
        .then(
          (value) => live && use(value),
          () => live && setFailed((f) => [...f, what]),
        )
        .finally(() => live && setPending((n) => n - 1));
    };
    if (projectId) {
      if (!liveTasksOf(projectId)) read("tasks", readAllTasks(projectId), setTasks);
      read("sessions", ok(hub.GET("/api/v1/projects/{id}/sessions", { params: { path: { id: projectId } } })), (r) => setSessions(r.sessions));
    }
    read("servers", ok(hub.GET("/api/v1/servers")), (r) => setServers(r.servers));
    return () => void (live = false);
  }, [projectId]);

  return { projects: projects ?? [], tasks, sessions, servers, pending, failed };
}
