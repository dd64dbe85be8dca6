/** Servers that could take a project's tasks, as matching sees them. */
import { sql } from "drizzle-orm";
import { isOnline } from "../domain/presence";
import type { Candidate } from "../domain/matching";
import type { Capabilities } from "../protocol/orchestratia-v1";
import type { Db } from "./client";

/** Servers serving the project, with their active tasks (assigned, planning, running) across all projects. One query. */
export async function serverCandidates(db: Db, projectId: string): Promise<Candidate[]> {
  const rows = await db.all<{
    id: string;
    name: string;
    capabilities: string | null;
    repos: string | null;
    os: string | null;
    last_heartbeat: string | null;
    project_ids: string | null;
    active: number;
  }>(sql`
    SELECT s.id, s.name, s.capabilities, s.repos, s.os, s.last_heartbeat, s.project_ids,
      (SELECT COUNT(*) FROM tasks t WHERE t.assigned_server_id = s.id AND t.status IN ('assigned', 'planning', 'running')) AS active
    FROM servers s WHERE s.revoked_at IS NULL`);
  const now = Date.now();
  return rows
    .filter((r) => r.project_ids === null || (JSON.parse(r.project_ids) as string[]).includes(projectId))
    .map((r) => ({
      id: r.id,
      name: r.name,
      capabilities: r.capabilities ? (JSON.parse(r.capabilities) as Capabilities) : null,
      repos: r.repos ? JSON.parse(r.repos) : null,
      os: r.os,
      online: isOnline(r.last_heartbeat, now),
      activeTasks: r.active,
    }));
}
