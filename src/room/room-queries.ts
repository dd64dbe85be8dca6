/** What a room reads besides its operations' reads: presence, timers, uploads left behind, the event log for replays, access. */
import { and, asc, eq, gt, isNotNull, lte, min } from "drizzle-orm";
import type { Db } from "../db/client";
import { events, tasks } from "../db/schema";
import type { Dependents, SessionRef, TaskSessions } from "../server-link/pushes";
import type { TaskStatus } from "../domain/lifecycle";
import { LEASED_STATUSES } from "../protocol/compute-protocol";

export const lastHeartbeat = async (d1: D1Database, serverId: string) =>
  (await d1.prepare("SELECT last_heartbeat FROM servers WHERE id = ?1").bind(serverId).first<{ last_heartbeat: string | null }>())?.last_heartbeat;

/** The project's tasks the assignment lease watches, with their server's last heartbeat. */
export async function leasedTasks(d1: D1Database, projectId: string) {
  const { results } = await d1
    .prepare(
      `SELECT t.id, t.status, t.assigned_at, t.assigned_server_id AS server_id, s.last_heartbeat
       FROM tasks t JOIN servers s ON s.id = t.assigned_server_id
       WHERE t.project_id = ?1 AND t.status IN (SELECT value FROM json_each(?2))`,
    )
    .bind(projectId, JSON.stringify(LEASED_STATUSES))
    .all<{ id: string; status: TaskStatus; assigned_at: string | null; server_id: string; last_heartbeat: string | null }>();
  return results;
}

/** Running tasks whose timeout has passed. */
export const overdueTasks = (db: Db, projectId: string, now: string) =>
  db
    .select({ id: tasks.id, timeoutSeconds: tasks.timeoutSeconds })
    .from(tasks)
    .where(and(eq(tasks.projectId, projectId), eq(tasks.status, "running"), isNotNull(tasks.deadlineAt), lte(tasks.deadlineAt, now)));

/** When the next running task times out (ms since epoch), if any does. */
export async function nextDeadline(db: Db, projectId: string): Promise<number | null> {
  const [row] = await db
    .select({ at: min(tasks.deadlineAt) })
    .from(tasks)
    .where(and(eq(tasks.projectId, projectId), eq(tasks.status, "running"), isNotNull(tasks.deadlineAt)));
  return row?.at ? Date.parse(row.at) : null;
}

/** When the next question an agent waits on expires. */
export async function nextQuestionExpiry(d1: D1Database, projectId: string): Promise<number | null> {
  const next = await d1
    .prepare("SELECT MIN(expires_at) AS at FROM interventions WHERE project_id = ?1 AND status = 'pending' AND expires_at IS NOT NULL")
    .bind(projectId)
    .first<{ at: string | null }>();
  return next?.at ? Date.parse(next.at) : null;
}

/**
 * Forgets DataRefs whose upload never completed: pending ones past their
 * URL's expiry, and uploads still streaming `graceMs` past it. Returns their ids.
 */
export async function forgetAbandonedUploads(d1: D1Database, projectId: string, now: number, graceMs: number): Promise<string[]> {
  const { results } = await d1
    .prepare(
      `DELETE FROM datarefs WHERE project_id = ?1 AND status != 'complete'
         AND ((status = 'pending' AND upload_expires_at <= ?2) OR (status = 'uploading' AND upload_expires_at <= ?3))
       RETURNING id`,
    )
    .bind(projectId, new Date(now).toISOString(), new Date(now - graceMs).toISOString())
    .all<{ id: string }>();
  return results.map((r) => r.id);
}

/** When the next unfinished upload's URL expires. */
export async function nextUploadExpiry(d1: D1Database, projectId: string): Promise<number | null> {
  const next = await d1
    .prepare("SELECT MIN(upload_expires_at) AS at FROM datarefs WHERE project_id = ?1 AND status != 'complete'")
    .bind(projectId)
    .first<{ at: string | null }>();
  return next?.at ? Date.parse(next.at) : null;
}

/** How many events follow `since`, and the last seq. */
/** How many events after `since` D1 holds, the last, and whether some after it moved to the archive (src/archive/). */
export const eventBacklog = (d1: D1Database, projectId: string, since: number) =>
  d1
    .prepare(
      `SELECT COUNT(*) AS n, MAX(seq) AS head,
         EXISTS (SELECT 1 FROM archive_batches WHERE project_id = ?1 AND seq_max > ?2 AND kind = 'tasks' AND step = 'done') AS archived
       FROM events WHERE project_id = ?1 AND seq > ?2`,
    )
    .bind(projectId, since)
    .first<{ n: number; head: number | null; archived: number }>();

export const eventsAfter = (db: Db, projectId: string, after: number, limit: number) =>
  db
    .select()
    .from(events)
    .where(and(eq(events.projectId, projectId), gt(events.seq, after)))
    .orderBy(asc(events.seq))
    .limit(limit);

/** Whether a person may still see the project: an active admin, or an active member of it (of any role). */
export async function maySeeProject(d1: D1Database, projectId: string, userId: string): Promise<boolean> {
  const access = await d1
    .prepare(
      "SELECT u.role, (SELECT 1 FROM project_members pm WHERE pm.project_id = ?1 AND pm.user_id = u.id) AS member FROM users u WHERE u.id = ?2 AND u.deactivated_at IS NULL",
    )
    .bind(projectId, userId)
    .first<{ role: string; member: number | null }>();
  return Boolean(access && (access.role === "admin" || access.member !== null));
}

/** Each task's title and the sessions it concerns: the one it is given to and the one that created it, with their servers. */
export async function taskSessions(d1: D1Database, taskIds: string[]): Promise<Map<string, TaskSessions>> {
  if (taskIds.length === 0) return new Map();
  const { results } = await d1
    .prepare(
      `SELECT t.id, t.title,
              t.target_session_id AS target_id, ts.server_id AS target_server_id, tv.name AS target_server_name,
              t.source_session_id AS source_id, ss.server_id AS source_server_id, sv.name AS source_server_name
       FROM tasks t
       LEFT JOIN sessions ts ON ts.id = t.target_session_id LEFT JOIN servers tv ON tv.id = ts.server_id
       LEFT JOIN sessions ss ON ss.id = t.source_session_id LEFT JOIN servers sv ON sv.id = ss.server_id
       WHERE t.id IN (SELECT value FROM json_each(?1)) AND (t.target_session_id IS NOT NULL OR t.source_session_id IS NOT NULL)`,
    )
    .bind(JSON.stringify(taskIds))
    .all<Record<"id" | "title" | `${"target" | "source"}_${"id" | "server_id" | "server_name"}`, string | null>>();
  const ref = (r: (typeof results)[number], side: "target" | "source"): SessionRef | null => {
    const sessionId = r[`${side}_id`];
    const serverId = r[`${side}_server_id`];
    return sessionId && serverId ? { sessionId, serverId, serverName: r[`${side}_server_name`] ?? "" } : null;
  };
  return new Map(results.map((r) => [r.id!, { title: r.title ?? "", target: ref(r, "target"), source: ref(r, "source") }]));
}

/** The project's open sessions with these names, by name. */
export async function openSessionsNamed(d1: D1Database, projectId: string, names: string[]): Promise<Map<string, SessionRef[]>> {
  if (names.length === 0) return new Map();
  const { results } = await d1
    .prepare(
      `SELECT s.id, s.name, s.server_id, v.name AS server_name FROM sessions s JOIN servers v ON v.id = s.server_id
       WHERE s.project_id = ?1 AND s.status IN ('starting', 'running') AND s.name IN (SELECT value FROM json_each(?2))`,
    )
    .bind(projectId, JSON.stringify(names))
    .all<{ id: string; name: string; server_id: string; server_name: string }>();
  const byName = new Map<string, SessionRef[]>();
  for (const r of results) byName.set(r.name, [...(byName.get(r.name) ?? []), { sessionId: r.id, serverId: r.server_id, serverName: r.server_name }]);
  return byName;
}

/**
 * The open sessions working on unfinished tasks that depend (`blocks` or `input`) on these, by upstream, with the
 * upstream's title and its own session.
 */
export async function dependentSessions(d1: D1Database, upstreamIds: string[]): Promise<Map<string, Dependents>> {
  if (upstreamIds.length === 0) return new Map();
  const { results } = await d1
    .prepare(
      `SELECT u.id AS upstream_id, u.title, u.target_session_id AS upstream_session_id, s.id AS session_id, s.server_id, v.name AS server_name
       FROM tasks u
       JOIN task_dependencies d ON d.depends_on_task_id = u.id AND d.dependency_type != 'related'
       JOIN tasks t ON t.id = d.task_id AND t.status NOT IN ('done', 'failed', 'cancelled')
       JOIN sessions s ON s.id = t.target_session_id AND s.status IN ('starting', 'running')
       JOIN servers v ON v.id = s.server_id
       WHERE u.id IN (SELECT value FROM json_each(?1))`,
    )
    .bind(JSON.stringify(upstreamIds))
    .all<{ upstream_id: string; title: string; upstream_session_id: string | null; session_id: string; server_id: string; server_name: string }>();
  const byUpstream = new Map<string, Dependents>();
  for (const r of results) {
    const entry = byUpstream.get(r.upstream_id) ?? { title: r.title, upstreamSessionId: r.upstream_session_id, sessions: [] };
    if (!entry.sessions.some((s) => s.sessionId === r.session_id))
      entry.sessions.push({ sessionId: r.session_id, serverId: r.server_id, serverName: r.server_name });
    byUpstream.set(r.upstream_id, entry);
  }
  return byUpstream;
}
