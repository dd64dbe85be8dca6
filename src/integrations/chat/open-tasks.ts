/** What a chat's /tasks lists (Telegram, Slack): the open tasks of the projects a person watches, those waiting on a person first. */
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { PRIORITY_RANK } from "../../db/schema";
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

/** The first open tasks of these projects in that order (most urgent, then latest changed, first within a status), and how many there are. */
export async function openTasksOf(env: WorkerEnv, projectIds: readonly string[]): Promise<{ tasks: ListedTask[]; total: number }> {
  if (projectIds.length === 0) return { tasks: [], total: 0 };
  const { results } = await env.DB.prepare(
    `SELECT t.id, t.title, t.status, t.awaiting_approval, p.name AS project, COUNT(*) OVER () AS total FROM tasks t JOIN projects p ON p.id = t.project_id
     WHERE t.project_id IN (SELECT value FROM json_each(?1)) AND t.status IN (SELECT value FROM json_each(?2))
     ORDER BY ${RANK}, ${PRIORITY}, t.updated_at DESC, t.id LIMIT ?3`,
  )
    .bind(JSON.stringify(projectIds), JSON.stringify(LISTED_ORDER), LISTED_TASKS)
    .all<ListedTask & { total: number }>();
  return { tasks: results.map(({ total: _, ...t }) => t), total: results[0]?.total ?? 0 };
}
