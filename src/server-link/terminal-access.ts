/**
 * Who may watch and who may type in a session's terminal (API.md
 * "Terminal"), read from D1: the Worker decides it when a terminal opens, and
 * the server's link asks again while it stays open, since a person's access
 * changes under an open socket (removed from a project, made a viewer,
 * deactivated).
 */
import { roleInProject, type ProjectRole } from "../auth/roles";
import type { Role } from "../db/schema";

export interface TerminalAccess {
  /** May see the session's project: an admin, or a member or viewer of it (while their account is active). */
  watch: boolean;
  /**
   * May type: a session's agent runs with its server's API key, so typing
   * into it reaches every project the server serves. Admins may; members only
   * on a server whose projects they all belong to as members (a viewer of any
   * of them may not); viewers never.
   */
  write: boolean;
}

/** One query: the person's role, their membership of the session's project, and how many of the server's projects they may not write in. */
export async function terminalAccess(db: D1Database, userId: string, serverId: string, projectId: string): Promise<TerminalAccess> {
  const row = await db
    .prepare(
      `SELECT u.role,
         (SELECT role FROM project_members WHERE user_id = u.id AND project_id = ?3) AS membership,
         (SELECT project_ids IS NULL FROM servers WHERE id = ?2) AS unscoped,
         (SELECT COUNT(*) FROM servers s, json_each(s.project_ids) p
          WHERE s.id = ?2 AND NOT EXISTS (SELECT 1 FROM project_members WHERE user_id = u.id AND project_id = p.value AND role = 'member')) AS outside
       FROM users u WHERE u.id = ?1 AND u.deactivated_at IS NULL`,
    )
    .bind(userId, serverId, projectId)
    .first<{ role: Role; membership: ProjectRole | null; unscoped: number | null; outside: number }>();
  if (!row) return { watch: false, write: false };
  const admin = row.role === "admin";
  const watch = admin || row.membership !== null;
  const writer = row.membership !== null && roleInProject(row.role, row.membership) !== "viewer";
  // A server serving every project (unscoped) reaches projects nobody but an admin belongs to all of.
  return { watch, write: watch && (admin || (writer && row.unscoped === 0 && row.outside === 0)) };
}

/** How long a check stays good for a viewer's next frames: typing costs a D1 read at most once a second. */
export const ACCESS_CHECK_TTL_MS = 1000;

/**
 * A viewer's access, checked again before it types once the last check is
 * older than ACCESS_CHECK_TTL_MS. The link is also told at once when a
 * person's access changes through the API (forgetUser), which drops what was
 * checked; the time limit covers what that cannot: a change made while the
 * terminal was opening, or a notice that never arrived. So a person who lost
 * the project or was made a viewer types nothing more a second after the
 * change at the latest, and a keystroke costs a D1 read only once a second.
 */
export class AccessChecks<Viewer extends { userId: string }> {
  private readonly checked = new Map<WebSocket, { at: number; access: TerminalAccess }>();
  private readonly reading = new Map<WebSocket, Promise<TerminalAccess>>();
  /** Bumped by forgetUser: a read begun before it is not kept. */
  private generation = 0;

  constructor(private readonly read: (viewer: Viewer) => Promise<TerminalAccess>) {}

  /** The viewer's access, as checked within the last ACCESS_CHECK_TTL_MS (concurrent frames share one read). */
  async of(ws: WebSocket, viewer: Viewer, now = Date.now()): Promise<TerminalAccess> {
    const known = this.checked.get(ws);
    if (known && now - known.at < ACCESS_CHECK_TTL_MS) return known.access;
    let pending = this.reading.get(ws);
    if (!pending) {
      const generation = this.generation;
      const read: Promise<TerminalAccess> = this.read(viewer).then((access) => {
        if (this.reading.get(ws) === read) this.reading.delete(ws);
        // An access change was reported while this was read: the answer may predate it, so it is read again.
        if (generation !== this.generation) return this.of(ws, viewer);
        this.checked.set(ws, { at: now, access });
        return access;
      });
      read.catch(() => this.reading.get(ws) === read && this.reading.delete(ws));
      pending = read;
      this.reading.set(ws, pending);
    }
    return pending;
  }

  /** A person's access changed: their viewers are checked again at their next frame. */
  forgetUser(userId: string, viewerOf: (ws: WebSocket) => Viewer) {
    this.generation++;
    for (const ws of [...this.checked.keys(), ...this.reading.keys()]) {
      if (viewerOf(ws).userId === userId) this.forget(ws);
    }
  }

  forget(ws: WebSocket) {
    this.checked.delete(ws);
    this.reading.delete(ws);
  }
}
