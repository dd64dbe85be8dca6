/**
 * Where each entry of a daemon's log post belongs, by what the hub knows of the posting server: its sessions (and
 * each one's project and current task) and the projects it serves. An entry that belongs nowhere it may write is
 * dropped; nothing of another tenant is stored.
 */

export interface KnownSession {
  project_id: string;
  task_id: string | null;
}

export interface Placement {
  projectId: string;
  sessionId: string | null;
  taskId: string | null;
}

export interface PostingServer {
  /** The server's own sessions named by the post. */
  sessions: Map<string, KnownSession>;
  /** Whether the server serves the project (and the project exists). */
  serves: (projectId: string) => boolean;
}

/**
 * The project, session and task of an entry, or null to drop it: a session must be the server's, and a project
 * named beside it must be the session's; an entry without a session must name a project the server serves. An entry
 * without a project takes its session's.
 */
export function placeEntry(entry: { session_id: string | null; project_id: string | null }, server: PostingServer): Placement | null {
  if (entry.session_id !== null) {
    const session = server.sessions.get(entry.session_id);
    if (!session || !server.serves(session.project_id)) return null;
    if (entry.project_id !== null && entry.project_id !== session.project_id) return null;
    return { projectId: session.project_id, sessionId: entry.session_id, taskId: session.task_id };
  }
  if (entry.project_id !== null && server.serves(entry.project_id)) return { projectId: entry.project_id, sessionId: null, taskId: null };
  return null;
}
