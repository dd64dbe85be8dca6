/**
 * The permission log's reads and writes (schema.ts `permissionLog`): whose sessions a daemon's entries belong to,
 * the inserts of a batch, a project's pages newest first, and the housekeeping's deletions. Each project's entries are
 * written by its own log writer (src/permission-log/writer.ts), never through its room.
 */
import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import { ACTIVE } from "../domain/lifecycle";
import type { Db } from "./client";
import { permissionLog, sessions, UNFINISHED_TASK_TEXT, type PermissionDecision } from "./schema";

/** A session of the posting server, its project, and the task it is working on now (if any). */
export interface LoggingSession {
  id: string;
  project_id: string;
  task_id: string | null;
}

/**
 * The posting server's sessions among `ids`, each with its current task (the newest assigned, planning or running
 * task addressed to it): one query for the whole post. A session of another server is simply not found.
 */
export async function sessionsOfServer(d1: D1Database, serverId: string, ids: string[]): Promise<Map<string, LoggingSession>> {
  if (ids.length === 0) return new Map();
  const { results } = await d1
    .prepare(
      `SELECT s.id, s.project_id,
         (SELECT t.id FROM tasks t WHERE t.target_session_id = s.id AND ${UNFINISHED_TASK_TEXT} AND t.status IN (SELECT value FROM json_each(?3))
          ORDER BY t.updated_at DESC, t.id DESC LIMIT 1) AS task_id
       FROM sessions s WHERE s.server_id = ?1 AND s.id IN (SELECT value FROM json_each(?2))`,
    )
    .bind(serverId, JSON.stringify(ids), JSON.stringify(ACTIVE))
    .all<LoggingSession>();
  return new Map(results.map((r) => [r.id, r]));
}

/** The task each of the sessions is working on now (as sessionsOfServer has it), for entries the telemetry makes. */
export async function currentTasks(d1: D1Database, sessionIds: string[]): Promise<Map<string, string | null>> {
  if (sessionIds.length === 0) return new Map();
  const { results } = await d1
    .prepare(
      `SELECT s.id,
         (SELECT t.id FROM tasks t WHERE t.target_session_id = s.id AND ${UNFINISHED_TASK_TEXT} AND t.status IN (SELECT value FROM json_each(?2))
          ORDER BY t.updated_at DESC, t.id DESC LIMIT 1) AS task_id
       FROM sessions s WHERE s.id IN (SELECT value FROM json_each(?1))`,
    )
    .bind(JSON.stringify(sessionIds), JSON.stringify(ACTIVE))
    .all<{ id: string; task_id: string | null }>();
  return new Map(results.map((r) => [r.id, r.task_id]));
}

/** Which of `ids` are projects that exist. */
export async function existingProjects(d1: D1Database, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { results } = await d1.prepare("SELECT id FROM projects WHERE id IN (SELECT value FROM json_each(?1))").bind(JSON.stringify(ids)).all<{ id: string }>();
  return new Set(results.map((r) => r.id));
}

/** A row to insert, in the order of INSERT_ROWS' columns. */
export type LogRow = [
  id: string,
  projectId: string,
  sessionId: string | null,
  taskId: string | null,
  toolName: string,
  toolInput: string,
  truncated: 0 | 1,
  decision: PermissionDecision,
  matchedRuleId: string | null,
  reason: string | null,
  agentName: string | null,
  createdAt: string,
  serverId: string,
  receivedAt: string,
];

/**
 * Rows arrive as one JSON array bound to one parameter, so a statement inserts hundreds of rows whatever D1's limit
 * of 100 parameters a statement.
 */
const INSERT_ROWS = `INSERT INTO permission_log (id, project_id, server_id, session_id, task_id, tool_name, tool_input, tool_input_truncated,
  decision, matched_rule_id, reason, agent_name, created_at, received_at)
  SELECT value ->> 0, value ->> 1, value ->> 12, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6,
    value ->> 7, value ->> 8, value ->> 9, value ->> 10, value ->> 11, value ->> 13
  FROM json_each(?1)`;

/** A statement's JSON stays well under D1's 2 MB for a value (characters count up to 3 bytes each); rows per statement are bounded too. */
const MAX_CHUNK_CHARS = 500_000;
const MAX_CHUNK_ROWS = 1_000;

/** The rows in chunks a statement each; pure, so the bounds are tested without a database. */
export function chunksOf(rows: LogRow[]): string[] {
  const chunks: string[] = [];
  let parts: string[] = [];
  let chars = 0;
  for (const row of rows) {
    const json = JSON.stringify(row);
    if (parts.length > 0 && (chars + json.length + 1 > MAX_CHUNK_CHARS || parts.length === MAX_CHUNK_ROWS)) {
      chunks.push(`[${parts.join(",")}]`);
      parts = [];
      chars = 0;
    }
    parts.push(json);
    chars += json.length + 1;
  }
  if (parts.length > 0) chunks.push(`[${parts.join(",")}]`);
  return chunks;
}

/**
 * A telemetry row is kept only while its session's entries are not the hook's, decided in the statement itself (so
 * atomically in D1), and once however often its export is sent again: its id is derived from the event, and a row
 * already there is left as it is.
 */
const INSERT_TELEMETRY_ROWS = `INSERT OR IGNORE INTO permission_log (id, project_id, server_id, session_id, task_id, tool_name, tool_input,
  tool_input_truncated, decision, matched_rule_id, reason, agent_name, created_at, received_at, source)
  SELECT value ->> 0, value ->> 1, value ->> 12, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6,
    value ->> 7, value ->> 8, value ->> 9, value ->> 10, value ->> 11, value ->> 13, 'telemetry'
  FROM json_each(?1)
  WHERE NOT EXISTS (SELECT 1 FROM permission_log_sessions m WHERE m.project_id = value ->> 1 AND m.session_id = value ->> 2 AND m.source = 'hook')`;

/** Sessions' source, set where it is new; `?3` 'hook' also takes a session over from the telemetry. */
const MARK_SESSIONS = `INSERT INTO permission_log_sessions (project_id, session_id, source)
  SELECT ?1, value, ?3 FROM json_each(?2) WHERE true
  ON CONFLICT (project_id, session_id) DO UPDATE SET source = excluded.source WHERE excluded.source = 'hook' AND source <> 'hook'`;

/**
 * The hook is installed for every session of a daemon, so its entries cover a session from its start: the telemetry
 * ones of a session it now logs go in the batch that writes its entries, and no call is ever listed twice. Only for
 * sessions whose entries were the telemetry's: that walks the project's log, once a session.
 */
const DELETE_TELEMETRY_OF_SESSIONS = `DELETE FROM permission_log
  WHERE project_id = ?1 AND source = 'telemetry' AND session_id IN (SELECT value FROM json_each(?2))`;

/** Which of these sessions of the project have had their entries from the telemetry so far. */
async function telemetrySessions(d1: D1Database, projectId: string, sessionIds: string[]): Promise<string[]> {
  if (sessionIds.length === 0) return [];
  const { results } = await d1
    .prepare(
      "SELECT session_id FROM permission_log_sessions WHERE project_id = ?1 AND source = 'telemetry' AND session_id IN (SELECT value FROM json_each(?2))",
    )
    .bind(projectId, JSON.stringify(sessionIds))
    .all<{ session_id: string }>();
  return results.map((r) => r.session_id);
}

/** The rows of a batch by where they came from; one project's. */
export interface LogBatch {
  hook: LogRow[];
  telemetry: LogRow[];
}

const sessionsOf = (rows: LogRow[]) => [...new Set(rows.flatMap((row) => (row[2] ? [row[2]] : [])))];

/**
 * Writes a project's batch in one transaction with `also` (what the hook's rows owe others): the hook's rows, the
 * deletion of the telemetry rows of sessions the hook now logs, the sessions' sources, then the telemetry rows (which
 * see those sources and skip the hook's sessions). All of it or none. Only the project's PermissionLogWriter calls
 * this, one batch at a time, so what it reads of the sessions' sources holds until its batch commits. Answers the
 * results of `also`, the rows the whole batch wrote, and how many telemetry rows were kept.
 */
export async function insertLogRows(
  d1: D1Database,
  batch: LogBatch,
  also: D1PreparedStatement[] = [],
): Promise<{ also: D1Result[]; rowsWritten: number; telemetryKept: number }> {
  const { hook, telemetry } = batch;
  if (hook.length + telemetry.length === 0) return { also: [], rowsWritten: 0, telemetryKept: 0 };
  const projectId = (hook[0] ?? telemetry[0])![1];
  const insert = d1.prepare(INSERT_ROWS);
  const statements = chunksOf(hook).map((chunk) => insert.bind(chunk));
  const hookSessions = sessionsOf(hook);
  const takenOver = await telemetrySessions(d1, projectId, hookSessions);
  if (takenOver.length > 0) statements.push(d1.prepare(DELETE_TELEMETRY_OF_SESSIONS).bind(projectId, JSON.stringify(takenOver)));
  if (hookSessions.length > 0) statements.push(d1.prepare(MARK_SESSIONS).bind(projectId, JSON.stringify(hookSessions), "hook"));
  const firstTelemetry = statements.length;
  const insertTelemetry = d1.prepare(INSERT_TELEMETRY_ROWS);
  statements.push(...chunksOf(telemetry).map((chunk) => insertTelemetry.bind(chunk)));
  const telemetryRows = statements.length;
  const telemetrySessionIds = sessionsOf(telemetry);
  if (telemetrySessionIds.length > 0) statements.push(d1.prepare(MARK_SESSIONS).bind(projectId, JSON.stringify(telemetrySessionIds), "telemetry"));
  const results = await d1.batch([...statements, ...also]);
  return {
    also: results.slice(statements.length),
    rowsWritten: results.reduce((sum, r) => sum + (r.meta.rows_written ?? 0), 0),
    telemetryKept: results.slice(firstTelemetry, telemetryRows).reduce((sum, r) => sum + (r.meta.changes ?? 0), 0),
  };
}

export interface LogFilter {
  projectId: string;
  sessionId?: string;
  taskId?: string;
  decision?: PermissionDecision;
  tool?: string;
  /** Entries strictly older than this (created_at, id), as the previous page ended. */
  before?: [string, string];
  limit: number;
}

/** A page of a project's log, newest first, with its sessions' names; one more row than `limit` says whether more follow. */
export async function logPage(db: Db, f: LogFilter) {
  const conditions: (SQL | undefined)[] = [
    eq(permissionLog.projectId, f.projectId),
    f.sessionId ? eq(permissionLog.sessionId, f.sessionId) : undefined,
    f.taskId ? eq(permissionLog.taskId, f.taskId) : undefined,
    f.decision ? eq(permissionLog.decision, f.decision) : undefined,
    f.tool ? eq(permissionLog.toolName, f.tool) : undefined,
    f.before ? sql`(${permissionLog.createdAt}, ${permissionLog.id}) < (${f.before[0]}, ${f.before[1]})` : undefined,
  ];
  return db
    .select({ entry: permissionLog, sessionName: sessions.name })
    .from(permissionLog)
    .leftJoin(sessions, eq(sessions.id, permissionLog.sessionId))
    .where(and(...conditions))
    .orderBy(desc(permissionLog.createdAt), desc(permissionLog.id))
    .limit(f.limit + 1);
}

/** Rows deleted per statement, and statements per sweep: the rest waits for the next hour. */
const DELETE_CHUNK = 5_000;
const MAX_DELETES_PER_SWEEP = 100;

/**
 * Deletes entries older than `cutoff`, project by project along the primary key, in bounded chunks, of the projects
 * `projects` (SQL text on `p`, of projects) holds for; returns how many rows went.
 */
export async function deleteLogBefore(d1: D1Database, cutoff: string, projects = "1"): Promise<number> {
  // One seek along the primary key per project finds the projects that have any.
  const { results: due } = await d1
    .prepare(`SELECT p.id FROM projects p WHERE (${projects}) AND EXISTS (SELECT 1 FROM permission_log l WHERE l.project_id = p.id AND l.created_at < ?1)`)
    .bind(cutoff)
    .all<{ id: string }>();
  const chunk = d1.prepare(
    `DELETE FROM permission_log WHERE (project_id, created_at, id) IN
       (SELECT project_id, created_at, id FROM permission_log WHERE project_id = ?1 AND created_at < ?2 LIMIT ?3)`,
  );
  let deleted = 0;
  let statements = 0;
  for (const { id } of due) {
    for (;;) {
      if (statements++ >= MAX_DELETES_PER_SWEEP) return deleted;
      const { meta } = await chunk.bind(id, cutoff, DELETE_CHUNK).run();
      deleted += meta.changes;
      if (meta.changes < DELETE_CHUNK) break;
    }
  }
  return deleted;
}

export interface RecentLogFilter {
  /** The projects whose entries count; null: every project. */
  projectIds: string[] | null;
  /** Only the entries this server posted. */
  serverId?: string;
  since: string;
  limit: number;
}

/** The newest entries since `since` across the projects (what a rule's preview scans), newest first. */
export function recentLogEntries(db: Db, f: RecentLogFilter) {
  return db
    .select({
      id: permissionLog.id,
      projectId: permissionLog.projectId,
      serverId: permissionLog.serverId,
      toolName: permissionLog.toolName,
      toolInput: permissionLog.toolInput,
      decision: permissionLog.decision,
      agentName: permissionLog.agentName,
      createdAt: permissionLog.createdAt,
    })
    .from(permissionLog)
    .where(
      and(
        f.projectIds ? sql`${permissionLog.projectId} IN (SELECT value FROM json_each(${JSON.stringify(f.projectIds)}))` : undefined,
        f.serverId ? eq(permissionLog.serverId, f.serverId) : undefined,
        sql`${permissionLog.createdAt} >= ${f.since}`,
      ),
    )
    .orderBy(desc(permissionLog.createdAt), desc(permissionLog.id))
    .limit(f.limit);
}
