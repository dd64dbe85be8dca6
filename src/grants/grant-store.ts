/**
 * SSH access grants in D1 (API.md "SSH access grants and tunnels"), read and
 * ended the same way by the Worker (the admin's revocation, the daemons'
 * reconciliation) and by the servers' links (a tunnel's check, expiry).
 */
import type { GrantStatus } from "../db/schema";

/** The hub makes every grant's `ssh_username` this: the user the target's daemon creates (ssh_setup.py). */
export const SSH_USERNAME = "orchestratia";
/** Source ports are handed out from here up, as the daemon's listeners expect (`localhost:30xxx`). */
export const FIRST_BIND_PORT = 30_001;
export const LAST_BIND_PORT = 39_999;
export const DEFAULT_GRANT_SECONDS = 24 * 60 * 60;
export const MAX_GRANT_SECONDS = 30 * 24 * 60 * 60;

export interface GrantRow {
  id: string;
  source_server_id: string;
  target_server_id: string;
  source_server_name: string;
  target_server_name: string;
  project_id: string;
  privilege_level: "standard" | "elevated";
  local_bind_port: number;
  target_port: number;
  ssh_username: string;
  public_key: string;
  sealed_private_key: string;
  status: GrantStatus;
  created_by: string;
  created_at: string;
  expires_at: string;
  ended_at: string | null;
}

const SELECT = `SELECT g.*, s.name AS source_server_name, t.name AS target_server_name
  FROM access_grants g JOIN servers s ON s.id = g.source_server_id JOIN servers t ON t.id = g.target_server_id`;

/** A grant's status as people see it: an active grant past its expiry is expired, whether or not its alarm has run yet. */
export const grantStatusAt = (g: Pick<GrantRow, "status" | "expires_at">, now = Date.now()): GrantStatus =>
  g.status === "active" && Date.parse(g.expires_at) <= now ? "expired" : g.status;

export const isLive = (g: Pick<GrantRow, "status" | "expires_at">, now = Date.now()) => grantStatusAt(g, now) === "active";

export async function grantById(db: D1Database, id: string): Promise<GrantRow | null> {
  return db.prepare(`${SELECT} WHERE g.id = ?1`).bind(id).first<GrantRow>();
}

/** Every grant, newest first (the admins' list). */
export async function allGrants(db: D1Database, limit: number): Promise<GrantRow[]> {
  return (await db.prepare(`${SELECT} ORDER BY g.created_at DESC, g.id LIMIT ?1`).bind(limit).all<GrantRow>()).results;
}

/** The live grants a server takes part in, as either side: what its daemon reconciles against. */
export async function liveGrantsOf(db: D1Database, serverId: string, now = new Date().toISOString()): Promise<GrantRow[]> {
  return (
    await db
      .prepare(`${SELECT} WHERE g.status = 'active' AND g.expires_at > ?2 AND (g.source_server_id = ?1 OR g.target_server_id = ?1) ORDER BY g.created_at`)
      .bind(serverId, now)
      .all<GrantRow>()
  ).results;
}

/** The projects two servers both serve (a server with no list serves every project), oldest first. */
export async function sharedProjects(db: D1Database, a: string[] | null, b: string[] | null): Promise<string[]> {
  const rows = await db
    .prepare(
      `SELECT id FROM projects
       WHERE (?1 IS NULL OR id IN (SELECT value FROM json_each(?1))) AND (?2 IS NULL OR id IN (SELECT value FROM json_each(?2)))
       ORDER BY created_at, id LIMIT 100`,
    )
    .bind(a && JSON.stringify(a), b && JSON.stringify(b))
    .all<{ id: string }>();
  return rows.results.map((r) => r.id);
}

/** The lowest port in the range no live grant of the source holds; null when every one is taken. */
export async function freeBindPort(db: D1Database, sourceServerId: string): Promise<number | null> {
  const taken = await db
    .prepare("SELECT local_bind_port AS port FROM access_grants WHERE source_server_id = ?1 AND status = 'active' ORDER BY local_bind_port")
    .bind(sourceServerId)
    .all<{ port: number }>();
  let port = FIRST_BIND_PORT;
  for (const { port: used } of taken.results) {
    if (used > port) break;
    if (used === port) port++;
  }
  return port <= LAST_BIND_PORT ? port : null;
}

/** Ends a grant that is still active; the row as ended, or null when it had already ended (nothing changes then). */
export async function endGrant(db: D1Database, id: string, status: "revoked" | "expired"): Promise<GrantRow | null> {
  const ended = await db
    .prepare("UPDATE access_grants SET status = ?2, ended_at = ?3 WHERE id = ?1 AND status = 'active' RETURNING id")
    .bind(id, status, new Date().toISOString())
    .first<{ id: string }>();
  return ended ? grantById(db, id) : null;
}
