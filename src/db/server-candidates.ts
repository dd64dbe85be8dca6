/** Servers that could take a project's tasks, as matching sees them. */
import { sql, type Placeholder, type SQLWrapper } from "drizzle-orm";
import { effectiveCapabilities } from "../domain/capability-union";
import { DEFAULT_MAX_CONCURRENT_TASKS, type Candidate } from "../domain/matching";
import { isOnline } from "../domain/presence";
import type { Capabilities } from "../protocol/orchestratia-v1";
import type { Db } from "./client";
import { UNFINISHED_TASK } from "./schema";

/**
 * The active tasks (assigned, planning, running) of a server, across all projects; `activeTasksOfServer` for `servers s`.
 * Unfinished ones only (UNFINISHED_TASK), so the server's index is read no further than them.
 */
export const activeTasksOf = (serverId: SQLWrapper) =>
  sql<number>`(SELECT COUNT(*) FROM tasks t WHERE t.assigned_server_id = ${serverId} AND ${UNFINISHED_TASK} AND t.status IN ('assigned', 'planning', 'running'))`;
export const activeTasksOfServer = activeTasksOf(sql`s.id`);

/** The most tasks a server takes at once, of its row `server` (servers): as declared by an admin, else as it reports. */
export const maxTasksOf = (server: SQLWrapper) =>
  sql<number>`CAST(COALESCE(${server}.declared_capabilities ->> '$.max_concurrent_tasks', ${server}.capabilities ->> '$.max_concurrent_tasks', ${DEFAULT_MAX_CONCURRENT_TASKS}) AS INTEGER)`;

/**
 * The live servers serving the project as one JSON array, with their active
 * tasks (assigned, planning, running) across all projects — a scalar
 * subquery, so it can ride along in another query. Servers of other
 * projects are left out here rather than after reading them all.
 */
export const candidatesJson = (projectId: string | Placeholder) => sql<string>`(SELECT json_group_array(json_object(
    'id', s.id, 'name', s.name, 'capabilities', json(s.capabilities), 'declared', json(s.declared_capabilities), 'repos', json(s.repos), 'os', s.os,
    'last_heartbeat', s.last_heartbeat, 'active', ${activeTasksOfServer}))
  FROM servers s WHERE s.revoked_at IS NULL AND (s.project_ids IS NULL OR EXISTS (SELECT 1 FROM json_each(s.project_ids) WHERE value = ${projectId})))`;

interface CandidateJson {
  id: string;
  name: string;
  capabilities: Capabilities | null;
  declared: Capabilities | null;
  repos: unknown;
  os: string | null;
  last_heartbeat: string | null;
  active: number;
}

/** The servers `candidatesJson` read. */
export function parseCandidates(json: string, now = Date.now()): Candidate[] {
  return (JSON.parse(json) as CandidateJson[]).map((s) => ({
    id: s.id,
    name: s.name,
    capabilities: effectiveCapabilities(s.capabilities, s.declared),
    repos: s.repos,
    os: s.os,
    online: isOnline(s.last_heartbeat, now),
    activeTasks: s.active,
  }));
}

/** Servers serving the project, with their load. One query. */
export async function serverCandidates(db: Db, projectId: string): Promise<Candidate[]> {
  const [row] = await db.all<{ candidates: string }>(sql`SELECT ${candidatesJson(projectId)} AS candidates`);
  return parseCandidates(row!.candidates);
}
