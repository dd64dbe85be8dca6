/**
 * A project's agent sessions kept live: the project's feed is followed from
 * its head before the sessions are read, then a session event shows its new
 * status at once and has the sessions read again shortly after, so what is
 * shown ends as the hub has it.
 */
import { useEffect, useState } from "preact/hooks";
import { hub, ok } from "./api";
import type { FeedStatus } from "./live";
import { useProjectFeed, useReread } from "./project-feed";
import type { HubEvent, ProjectHead, Session, SessionStatus } from "./types";

const SESSION_EVENTS = new Set(["session_created", "session_started", "session_closed", "session_error", "session_mcp_status"]);
/** Files moving between people and a session's machine. */
export const FILE_EVENTS = new Set(["file_uploaded", "file_delivered", "file_pulled", "file_failed"]);
/** A session's page follows both. */
const SESSION_PAGE_EVENTS = new Set([...SESSION_EVENTS, ...FILE_EVENTS]);

export type SessionFilter = "all" | "open" | "closed";

/** A session as the events say it is now, before it is read again. */
function withEvents(session: Session, events: HubEvent[]): Session {
  let next = session;
  for (const e of events) {
    if (e.data.session_id !== session.id || typeof e.data.status !== "string") continue;
    next = { ...next, status: e.data.status as SessionStatus };
    if (typeof e.data.exit_code === "number") next.exit_code = e.data.exit_code;
    if (typeof e.data.error === "string") next.error = e.data.error;
    if (typeof e.data.mcp_status === "string") next.mcp_status = e.data.mcp_status as Session["mcp_status"];
  }
  return next;
}

export interface SessionsState {
  project: ProjectHead | null;
  status: FeedStatus;
  sessions: Session[] | null;
  error: string | null;
  /** Reads the sessions again now (after an action changed one). */
  reread: () => void;
}

/** The project's sessions (newest first, at most 100), live. */
export function useSessions(projectId: string, filter: SessionFilter): SessionsState {
  const feed = useProjectFeed(projectId, SESSION_EVENTS);
  const [sessions, setSessions] = useState<Session[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reread = useReread(
    () => ok(hub.GET("/api/v1/projects/{id}/sessions", { params: { path: { id: projectId }, query: { status: filter } } })),
    (r) => {
      setSessions(r.sessions);
      setError(null);
    },
    setError,
  );
  useEffect(() => {
    setSessions(null);
    if (feed.project) reread(0);
  }, [feed.project, filter]);
  useEffect(() => {
    if (feed.latest.length === 0) return;
    setSessions((current) => current && current.map((s) => withEvents(s, feed.latest)));
    reread();
  }, [feed.latest]);
  return { project: feed.project, status: feed.status, sessions, error: feed.error ?? error, reread: () => reread(0) };
}

export interface SessionState {
  project: ProjectHead | null;
  status: FeedStatus;
  session: Session | null;
  error: string | null;
  reread: () => void;
  /** The latest batch of the session's file events (a new array each time). */
  files: HubEvent[];
}

/** One session, live, with its file events. */
export function useSession(projectId: string, sessionId: string): SessionState {
  const feed = useProjectFeed(projectId, SESSION_PAGE_EVENTS);
  const [session, setSession] = useState<Session | null>(null);
  const [files, setFiles] = useState<HubEvent[]>([]);
  const [error, setError] = useState<string | null>(null);
  const reread = useReread(
    () => ok(hub.GET("/api/v1/projects/{id}/sessions/{sid}", { params: { path: { id: projectId, sid: sessionId } } })),
    (s) => {
      setSession(s);
      setError(null);
    },
    setError,
  );
  useEffect(() => {
    setSession(null);
    if (feed.project) reread(0);
  }, [feed.project, sessionId]);
  useEffect(() => {
    const mine = feed.latest.filter((e) => e.data.session_id === sessionId);
    const files = mine.filter((e) => FILE_EVENTS.has(e.event_type));
    if (files.length > 0) setFiles(files);
    if (files.length === mine.length) return;
    setSession((current) => current && withEvents(current, mine));
    reread();
  }, [feed.latest]);
  return { project: feed.project, status: feed.status, session, error: feed.error ?? error, reread: () => reread(0), files };
}
