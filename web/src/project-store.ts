/**
 * A project's tasks kept live: read once, then changed by its events. An
 * event moves its task at once from what the event says (its new status,
 * assignee, blocked state), and the task is read again shortly after, so what
 * is shown ends as the hub has it even when events come faster than reads.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "./api";
import { ProjectFeed, type FeedStatus } from "./live";
import type { HubEvent, Project, Task, TaskStatus } from "./types";

const REREAD_DELAY_MS = 150;
const PARALLEL_READS = 6;

export interface ProjectState {
  project: Project | null;
  tasks: Map<string, Task>;
  events: HubEvent[];
  status: FeedStatus;
  error: string | null;
  loaded: boolean;
}

/** What an event tells of its task before the task is read again. */
function applyEvent(task: Task, e: HubEvent): Task {
  const data = e.data;
  const next = { ...task };
  if (typeof data.status === "string") next.status = data.status as TaskStatus;
  if (e.event_type === "task_assigned") {
    next.assigned_server_name = (data.server_name as string | null) ?? null;
    next.assigned_server_id = (data.server_id as string | null) ?? null;
  }
  if (e.event_type === "task_unblocked") next.blocked = false;
  return next;
}

export async function readAllTasks(projectId: string): Promise<Task[]> {
  const all: Task[] = [];
  let cursor: string | null = null;
  do {
    const page: { tasks: Task[]; next_cursor: string | null } = await api(`/api/v1/tasks?project_id=${projectId}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    all.push(...page.tasks);
    cursor = page.next_cursor;
  } while (cursor);
  return all;
}

export function useProject(projectId: string, keepEvents = 200): ProjectState {
  const [project, setProject] = useState<Project | null>(null);
  const [tasks, setTasks] = useState<Map<string, Task>>(new Map());
  const [events, setEvents] = useState<HubEvent[]>([]);
  const [status, setStatus] = useState<FeedStatus>("connecting");
  const [error, setError] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const feed = useRef<ProjectFeed | null>(null);

  useEffect(() => {
    let live = true;
    const stale = new Set<string>();
    let timer: ReturnType<typeof setTimeout> | undefined;

    const reread = async () => {
      timer = undefined;
      const ids = [...stale];
      stale.clear();
      for (let i = 0; i < ids.length; i += PARALLEL_READS) {
        const read = await Promise.all(ids.slice(i, i + PARALLEL_READS).map((id) => api<Task>(`/api/v1/tasks/${id}`).catch(() => null)));
        if (!live) return;
        setTasks((current) => {
          const next = new Map(current);
          read.forEach((t, j) => (t ? next.set(t.id, t) : next.delete(ids[i + j]!)));
          return next;
        });
      }
    };

    const onEvents = (batch: HubEvent[]) => {
      setEvents((current) => [...batch.slice().reverse(), ...current].slice(0, keepEvents));
      setTasks((current) => {
        const next = new Map(current);
        for (const e of batch) {
          const task = e.task_id ? next.get(e.task_id) : undefined;
          if (task) next.set(task.id, applyEvent(task, e));
        }
        return next;
      });
      for (const e of batch) if (e.task_id) stale.add(e.task_id);
      timer ??= setTimeout(() => void reread(), REREAD_DELAY_MS);
    };

    void (async () => {
      try {
        const p = await api<Project & { last_seq: number }>(`/api/v1/projects/${projectId}`);
        if (!live) return;
        setProject(p);
        // Follow the log from the project's head, then read the tasks: nothing that happens in between is missed.
        feed.current = new ProjectFeed(projectId, p.last_seq, onEvents, setStatus);
        feed.current.start();
        const all = await readAllTasks(projectId);
        if (!live) return;
        setTasks((current) => {
          const next = new Map(all.map((t) => [t.id, t]));
          // Events applied while reading win over what the read saw.
          for (const [id, t] of current) next.set(id, t);
          return next;
        });
        setLoaded(true);
      } catch (e) {
        if (live) setError((e as Error).message);
      }
    })();
    return () => {
      live = false;
      clearTimeout(timer);
      feed.current?.stop();
    };
  }, [projectId]);

  return { project, tasks, events, status, error, loaded };
}
