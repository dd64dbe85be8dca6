/**
 * A task-format client knows its tasks by its own request `id` (the task's
 * `client_id`, unique per project), and checks their status by it: such an id
 * is looked for among the caller's projects only.
 */
import { and, eq, sql } from "drizzle-orm";
import { visibleProjectIds } from "../auth/access";
import { tasks } from "../db/schema";
import { inJsonList } from "../db/sql";
import type { HubContext } from "../http/context";
import { conflict, notFound } from "../http/problem";
import { readOnShards } from "../views/shard-lists";
import { DIRECTORY, shardDb } from "../db/shards";

/** How many projects an ambiguous id's refusal names. */
const LISTED = 20;

/**
 * The caller's task whose client id this is, in `projectId` when given; 404 when none of the caller's projects has
 * one (another project's is not the caller's to find), 409 `AMBIGUOUS_TASK_ID` when several do.
 */
export async function taskByClientId(c: HubContext, clientId: string, projectId?: string): Promise<{ id: string; projectId: string }> {
  const visible = await visibleProjectIds(c);
  if (projectId && visible && !visible.includes(projectId)) throw notFound("Task");
  const scope = projectId ? [projectId] : visible;
  if (scope?.length === 0) throw notFound("Task");
  // Each shard the projects live on, at once.
  const lists = await readOnShards(c.env, c.var.db, scope, (db, ids, shard) =>
    db
      .select({ id: tasks.id, projectId: tasks.projectId, shard: sql<string>`${shard}` })
      .from(tasks)
      // Each project is looked up by its (project_id, client_id) index, all of them too when the caller sees every project.
      .where(and(ids ? inJsonList(tasks.projectId, ids) : sql`${tasks.projectId} IN (SELECT id FROM projects)`, eq(tasks.clientId, clientId)))
      .limit(LISTED),
  );
  const rows = lists.flat().slice(0, LISTED);
  const [only] = rows;
  if (!only) throw notFound("Task");
  if (rows.length > 1) {
    throw conflict(`Tasks in ${rows.length} of your projects have this id: add project_id to choose one`, "AMBIGUOUS_TASK_ID", {
      project_ids: rows.map((r) => r.projectId),
    });
  }
  // The rest of the request reads the task's rows on its project's shard.
  if (only.shard !== DIRECTORY) c.set("db", shardDb(c.env, only.shard));
  return { id: only.id, projectId: only.projectId };
}
