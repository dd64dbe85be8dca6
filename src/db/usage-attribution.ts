/**
 * The reads and the one write that attribute telemetry to hub sessions (src/telemetry/attribution.ts): sessions by id,
 * agents' own session ids remembered beside them (`agent_session_links`), and a person's memberships of their
 * projects. Each takes a whole export's ids in one query.
 */
import type { ProjectRole } from "../auth/roles";

export interface AttributedSession {
  id: string;
  project_id: string;
  server_id: string;
  agent_type: string | null;
}

export async function sessionsByIds(d1: D1Database, ids: readonly string[]): Promise<AttributedSession[]> {
  if (ids.length === 0) return [];
  const { results } = await d1
    .prepare("SELECT id, project_id, server_id, agent_type FROM sessions WHERE id IN (SELECT value FROM json_each(?1))")
    .bind(JSON.stringify(ids))
    .all<AttributedSession>();
  return results;
}

/** The hub session each of these agent session ids was first seen beside. */
export async function linkedSessions(d1: D1Database, agentSessionIds: readonly string[]): Promise<{ agent_session_id: string; session_id: string }[]> {
  if (agentSessionIds.length === 0) return [];
  const { results } = await d1
    .prepare("SELECT agent_session_id, session_id FROM agent_session_links WHERE agent_session_id IN (SELECT value FROM json_each(?1))")
    .bind(JSON.stringify(agentSessionIds))
    .all<{ agent_session_id: string; session_id: string }>();
  return results;
}

/**
 * Remembers each agent session id beside its hub session (one seen before keeps its first link), and answers the links
 * as D1 now holds them, in the same batch.
 */
export async function linkAgentSessions(
  d1: D1Database,
  links: readonly { agentSessionId: string; sessionId: string }[],
  now: string,
): Promise<{ agent_session_id: string; session_id: string }[]> {
  if (links.length === 0) return [];
  const ids = JSON.stringify(links.map((l) => l.agentSessionId));
  const [, stored] = await d1.batch([
    d1
      .prepare(
        `INSERT INTO agent_session_links (agent_session_id, session_id, created_at)
         SELECT value ->> 0, value ->> 1, ?2 FROM json_each(?1) WHERE true
         ON CONFLICT (agent_session_id) DO NOTHING`,
      )
      .bind(JSON.stringify(links.map((l) => [l.agentSessionId, l.sessionId])), now),
    d1.prepare("SELECT agent_session_id, session_id FROM agent_session_links WHERE agent_session_id IN (SELECT value FROM json_each(?1))").bind(ids),
  ]);
  return (stored as D1Result<{ agent_session_id: string; session_id: string }>).results;
}

/** The person's role in each of these projects they are a member of. */
export async function membershipsIn(d1: D1Database, userId: string, projectIds: readonly string[]): Promise<Map<string, ProjectRole>> {
  if (projectIds.length === 0) return new Map();
  const { results } = await d1
    .prepare("SELECT project_id, role FROM project_members WHERE user_id = ?1 AND project_id IN (SELECT value FROM json_each(?2))")
    .bind(userId, JSON.stringify(projectIds))
    .all<{ project_id: string; role: ProjectRole }>();
  return new Map(results.map((r) => [r.project_id, r.role]));
}
