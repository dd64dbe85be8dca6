/**
 * A project's tasks kept live: read once, then changed by its events. An
 * event moves its task at once from what the event says (its new status,
 * assignee, blocked state), and the task is read again shortly after, so what
 * is shown ends as the hub has it even when events come faster than reads.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, hub, ok } from "./api";
import { ProjectFeed, type FeedStatus } from "./live";
import { noteProjectRole } from "./me";
import { tasksOf, type HubEvent, type ProjectHead, type Task, type TaskStatus } from "./types";
import { tasksWithUsageIn, usageAddedByTask, withUsageOf } from "./usage-live";

const REREAD_DELAY_MS = 150;
const MAX_REREAD_DELAY_MS = 10_000;
/** The most tasks one list request reads back (the API's page limit). */
const READ_BATCH = 200;

export interface ProjectState {
  project: ProjectHead | null;
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
  // A review's events carry the review's status (pass, fail, ...), not the task's.
  if (typeof data.status === "string" && !e.event_type.startsWith("review_")) next.status = data.status as TaskStatus;
  if (e.event_type === "task_assigned") {
    next.assigned_server_name = (data.server_name as string | null) ?? null;
    next.assigned_server_id = (data.server_id as string | null) ?? null;
  }
  if (e.event_type === "task_unblocked") next.blocked = false;
  if (e.event_type === "task_approved") next.awaiting_approval = false;
  return next;
}

const taskPage = (projectId: string, cursor: string | null) =>
  ok(hub.GET("/api/v1/tasks", { params: { query: { project_id: projectId, limit: READ_BATCH, ...(cursor ? { cursor } : {}) } } }));

/** The tasks of each project a page is showing live, so the command palette searches what the page has (not a read of its own). */
const shownTasks = new Map<string, Map<string, Task>>();

/** The tasks of this project as a page on screen has them live, or null when no page is showing them. */
export const liveTasksOf = (projectId: string): Task[] | null => {
  const tasks = shownTasks.get(projectId);
  return tasks ? [...tasks.values()] : null;
};

export async function readAllTasks(projectId: string): Promise<Task[]> {
  const all: Task[] = [];
  let cursor: string | null = null;
  do {
    const page = await taskPage(projectId, cursor);
    all.push(...tasksOf(page));
    cursor = page.next_cursor;
  } while (cursor);
  return all;
}

export function useProject(projectId: string, keepEvents = 200): ProjectState {
  const [project, setProject] = useState<ProjectHead | null>(null);
  const [tasks, setTasks] = useState<Map<string, Task>>(new Map());
  const [events, setEvents] = useState<HubEvent[]>([]);
  const [status, setStatus] = useState<FeedStatus>("connecting");
  const [error, setError] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const feed = useRef<ProjectFeed | null>(null);

  useEffect(() => {
    let live = true;
    setProject(null);
    setTasks(new Map());
    setEvents([]);
    setLoaded(false);
    setError(null);
    const stale = new Set<string>();
    let timer: ReturnType<typeof setTimeout> | undefined;
    // One read at a time, so an older read never lands over a newer one.
    let reading = false;
    let failures = 0;

    const reread = async () => {
      timer = undefined;
      reading = true;
      const ids = [...stale];
      stale.clear();
      for (let i = 0; i < ids.length; i += READ_BATCH) {
        const batch = ids.slice(i, i + READ_BATCH);
        let read: Task[] | null = null;
        try {
          read = tasksOf(await ok(hub.GET("/api/v1/tasks", { params: { query: { project_id: projectId, ids: batch.join(","), limit: READ_BATCH } } })));
          failures = 0;
        } catch (e) {
          // The hub refusing (access gone) is final; an outage is read again, less and less often.
          if (!(e instanceof ApiError && e.status < 500)) batch.forEach((id) => stale.add(id));
          failures++;
        }
        if (!live) return;
        if (!read) continue;
        setTasks((current) => {
          const next = new Map(current);
          const found = new Map(read.map((t) => [t.id, t]));
          // A task the read no longer finds was deleted with its project's data.
          for (const id of batch) found.has(id) ? next.set(id, found.get(id)!) : next.delete(id);
          return next;
        });
      }
      reading = false;
      if (live && stale.size > 0) timer ??= setTimeout(() => void reread(), Math.min(MAX_REREAD_DELAY_MS, REREAD_DELAY_MS * 2 ** failures));
    };

    const onEvents = (batch: HubEvent[]) => {
      setEvents((current) => [...batch.slice().reverse(), ...current].slice(0, keepEvents));
      setTasks((current) => {
        const next = new Map(current);
        for (const e of batch) {
          const task = e.task_id ? next.get(e.task_id) : undefined;
          if (task) next.set(task.id, applyEvent(task, e));
          // A usage batch names no one task: it lists what it added to each.
          for (const id of usageAddedByTask(e).keys()) {
            const used = next.get(id);
            if (used) next.set(id, withUsageOf(used, e));
          }
        }
        return next;
      });
      for (const e of batch) if (e.task_id) stale.add(e.task_id);
      for (const id of tasksWithUsageIn(batch)) stale.add(id);
      if (!reading) timer ??= setTimeout(() => void reread(), REREAD_DELAY_MS);
    };

    void (async () => {
      try {
        const p = await ok(hub.GET("/api/v1/projects/{id}", { params: { path: { id: projectId } } }));
        if (!live) return;
        noteProjectRole(projectId, p.my_role);
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

  useEffect(() => {
    if (!loaded) return;
    shownTasks.set(projectId, tasks);
    return () => void (shownTasks.get(projectId) === tasks && shownTasks.delete(projectId));
  }, [projectId, tasks, loaded]);

  return { project, tasks, events, status, error, loaded };
}
