/** Agent sessions as the people's and the agents' surfaces list them. */
import { and, desc, eq, inArray } from "drizzle-orm";
import { sessionView } from "./agents";
import type { Db } from "../db/client";
import { OPEN_SESSION_STATUSES, servers, sessions } from "../db/schema";
import { inJsonList } from "../db/sql";

export type SessionFilter = "open" | "ended" | "all";

/** Sessions in these projects (null: every project), newest first. */
export async function listSessions(db: Db, projectIds: readonly string[] | null, filter: SessionFilter, limit?: number) {
  if (projectIds?.length === 0) return [];
  const query = db
    .select({ session: sessions, serverName: servers.name })
    .from(sessions)
    .innerJoin(servers, eq(servers.id, sessions.serverId))
    .where(
      and(
        projectIds ? inJsonList(sessions.projectId, [...projectIds]) : undefined,
        filter === "all" ? undefined : inArray(sessions.status, filter === "open" ? OPEN_SESSION_STATUSES : ["closed", "error"]),
      ),
    )
    .orderBy(desc(sessions.createdAt));
  const rows = limit ? await query.limit(limit) : await query;
  return rows.map((r) => sessionView(r.session, r.serverName));
}
