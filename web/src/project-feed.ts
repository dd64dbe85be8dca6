/**
 * What pages other than the board need from a project's live feed: the
 * project, whether the feed is connected, and the latest batch of the events
 * they care about, to read what they show again after.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { hub, messageOf, ok } from "./api";
import { ProjectFeed, type FeedStatus, type PermissionLoggedFrame } from "./live";
import type { HubEvent, ProjectHead } from "./types";

const REREAD_DELAY_MS = 150;

export interface ProjectFeedState {
  project: ProjectHead | null;
  status: FeedStatus;
  /** The wanted events of the latest batch the feed delivered. */
  latest: HubEvent[];
  /** The latest `permission_logged` frame (a new object each time), null before any. */
  logged: PermissionLoggedFrame | null;
  error: string | null;
}

/** Follows the project's feed from its head; `wanted` picks the event types kept (all when left out). */
export function useProjectFeed(projectId: string, wanted?: ReadonlySet<string>): ProjectFeedState {
  const [project, setProject] = useState<ProjectHead | null>(null);
  const [status, setStatus] = useState<FeedStatus>("connecting");
  const [latest, setLatest] = useState<HubEvent[]>([]);
  const [logged, setLogged] = useState<PermissionLoggedFrame | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    let feed: ProjectFeed | null = null;
    setProject(null);
    setLatest([]);
    setLogged(null);
    setError(null);
    void ok(hub.GET("/api/v1/projects/{id}", { params: { path: { id: projectId } } })).then(
      (p) => {
        if (!live) return;
        feed = new ProjectFeed(
          projectId,
          p.last_seq,
          (batch) => {
            const mine = wanted ? batch.filter((e) => wanted.has(e.event_type)) : batch;
            if (mine.length > 0) setLatest(mine);
          },
          setStatus,
          setLogged,
        );
        feed.start();
        setProject(p);
      },
      (e) => live && setError(messageOf(e)),
    );
    return () => {
      live = false;
      feed?.stop();
    };
  }, [projectId]);

  return { project, status, latest, logged, error };
}

/** Reads shortly after being asked (asks close together make one read); only the latest read lands. */
export function useReread<T>(read: () => Promise<T>, land: (value: T) => void, fail: (message: string) => void) {
  const reads = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(
    () => () => {
      clearTimeout(timer.current);
      reads.current++;
    },
    [],
  );
  return (delay = REREAD_DELAY_MS) => {
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      const n = ++reads.current;
      void read().then(
        (value) => n === reads.current && land(value),
        (e) => n === reads.current && fail(messageOf(e)),
      );
    }, delay);
  };
}
