/**
 * What a chat's /tasks lists (Telegram, Slack): the open tasks of the projects a person watches, those waiting on a
 * person first. Each shard the projects live on is asked for its first ones, at once, and the answers merged.
 */
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { dbOf } from "../../db/client";
import { PRIORITY_RANK } from "../../db/schema";
import { d1Of, onEachShard, shardsOfProjects } from "../../db/shards";
import type { WorkerEnv } from "../../runtime/worker-env";
import { WAITING_ON_PEOPLE, type ListedTask } from "./listed-task";

/** How many tasks one /tasks answer lists; the rest are counted. */
export const LISTED_TASKS = 15;

/**
 * Open statuses in the order /tasks lists them: waiting on a person (a task awaiting approval among them, after the
 * questions and plans), then at work, then waiting for an agent.
 */
const AT_WORK = ["running", "planning", "assigned", "pending"];
const LISTED_ORDER = [...WAITING_ON_PEOPLE, ...AT_WORK];
const RANK = `CASE ${[
  ...WAITING_ON_PEOPLE.map((s, i) => `WHEN t.status = '${s}' THEN ${i}`),
  `WHEN t.awaiting_approval = 1 THEN ${WAITING_ON_PEOPLE.length}`,
  ...AT_WORK.map((s, i) => `WHEN t.status = '${s}' THEN ${WAITING_ON_PEOPLE.length + 1 + i}`),
].join(" ")} END`;
/** The hub's order of priorities (PRIORITY_RANK names `priority`, which only tasks have here). */
const PRIORITY = new SQLiteSyncDialect().sqlToQuery(PRIORITY_RANK).sql;

type Ranked = ListedTask & { total: number; rank: number; prio: number; updated_at: string };

/** The order of the query's ORDER BY, on rows of several shards. */
const listedOrder = (a: Ranked, b: Ranked) =>
  a.rank - b.rank || a.prio - b.prio || (a.updated_at === b.updated_at ? 0 : a.updated_at > b.updated_at ? -1 : 1) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The first open tasks of these projects in that order (most urgent, then latest changed, first within a status), and how many there are. */
export async function openTasksOf(env: WorkerEnv, projectIds: readonly string[]): Promise<{ tasks: ListedTask[]; total: number }> {
  if (projectIds.length === 0) return { tasks: [], total: 0 };
  const shards = await shardsOfProjects(dbOf(env.DB), projectIds);
  const answers = await onEachShard(env, shards, async (_, ids, shard) => {
    const { results } = await d1Of(env, shard)
      .prepare(
        `SELECT t.id, t.title, t.status, t.awaiting_approval, p.name AS project, ${RANK} AS rank, ${PRIORITY} AS prio, t.updated_at,
                COUNT(*) OVER () AS total
         FROM tasks t JOIN projects p ON p.id = t.project_id
         WHERE t.project_id IN (SELECT value FROM json_each(?1)) AND t.status IN (SELECT value FROM json_each(?2))
         ORDER BY 6, 7, t.updated_at DESC, t.id LIMIT ?3`,
      )
      .bind(JSON.stringify(ids), JSON.stringify(LISTED_ORDER), LISTED_TASKS)
      .all<Ranked>();
    return results;
  });
  const tasks = answers.flat().sort(listedOrder).slice(0, LISTED_TASKS);
  return {
    tasks: tasks.map(({ total: _t, rank: _r, prio: _p, updated_at: _u, ...t }) => t),
    total: answers.reduce((sum, rows) => sum + (rows[0]?.total ?? 0), 0),
  };
}
