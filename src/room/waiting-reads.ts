/**
 * What the room reads of the waiting tasks, for auto-assignment: the first in
 * waiting order (most urgent, then oldest), for one operation (`waitingAlone`)
 * or for a group (`groupWaiting`), as one JSON array each.
 */
import { eq, sql, type Placeholder, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { candidatesJson } from "../db/server-candidates";
import { dependencyBlocking, PRIORITY_RANK, projects, READY_TO_OFFER, WAITING } from "../db/schema";
import { builtOnce } from "../db/sql";
import type { Assignable } from "../domain/cascade";
import type { Requirements } from "../protocol/orchestratia-v1";

/** The first `limit` of the project's tasks meeting `condition` (on `t`), in waiting order: most urgent, then oldest. */
const firstWaiting = (projectId: string | Placeholder, condition: SQL, limit: number) =>
  sql`WHERE t.project_id = ${projectId} AND ${condition}
    ORDER BY ${PRIORITY_RANK}, t.created_at, t.id LIMIT ${limit}`;

/**
 * The first tasks meeting `condition` (which names WAITING, or READY_TO_OFFER
 * to read the index of those) as one JSON array; each says
 * whether it is still blocked in D1 and carries its place in waiting order.
 * They are looked for among `among` (the project's tasks, in waiting order,
 * unless given).
 */
const waitingJson = (projectId: string | Placeholder, limit: number, condition: SQL, among: SQL = sql`tasks t`) => sql<string>`(
  SELECT json_group_array(json_object('id', w.id, 'requirements', json(w.requirements), 'require_plan', w.require_plan, 'blocked', w.blocked,
    'rank', w.rank, 'created_at', w.created_at, 'rejected_by', json(w.rejected_by))) FROM (
    SELECT t.id, t.requirements, t.require_plan, t.blocked, ${PRIORITY_RANK} AS rank, t.created_at, t.rejected_by
    FROM ${among} ${firstWaiting(projectId, condition, limit)}) w)`;

/** A waiting task as read: whether D1 still holds it blocked, and its place in waiting order. */
export type Waiting = Assignable & { blocked: boolean; rank: number; createdAt: string };

export const parseWaiting = (json: string): Waiting[] =>
  (
    JSON.parse(json) as {
      id: string;
      requirements: Requirements;
      require_plan: number;
      blocked: number;
      rank: number;
      created_at: string;
      rejected_by: string[] | null;
    }[]
  ).map((w) => ({
    id: w.id,
    requirements: w.requirements,
    requirePlan: Boolean(w.require_plan),
    rejectedBy: w.rejected_by ?? [],
    blocked: Boolean(w.blocked),
    rank: w.rank,
    createdAt: w.created_at,
  }));

/** SQLite's order for text (bytewise), not the locale's. */
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
export const inWaitingOrder = (a: Waiting, b: Waiting) => a.rank - b.rank || compareText(a.createdAt, b.createdAt) || compareText(a.id, b.id);

/** How many waiting tasks one operation considers for auto-assignment. */
export const ASSIGN_BATCH = 100;

/** The waiting tasks one operation considers: unblocked in D1, or unblocked by the operation itself (looked up by id). */
export const waitingAlone = (projectId: string, limit: number, alsoUnblocking: readonly string[]) => {
  if (alsoUnblocking.length === 0) return waitingJson(projectId, limit, READY_TO_OFFER);
  const ready = sql`SELECT id FROM (SELECT t.id FROM tasks t ${firstWaiting(projectId, READY_TO_OFFER, limit)})`;
  const among = sql`(${ready} UNION SELECT value FROM json_each(${JSON.stringify(alsoUnblocking)})) u CROSS JOIN tasks t ON t.id = u.id`;
  return waitingJson(projectId, limit, WAITING, among);
};

/**
 * How many waiting tasks of each kind a group reads: twice what one
 * operation considers, so that the operations of a group rarely have to
 * read again.
 */
export const GROUP_WAITING = 2 * ASSIGN_BATCH;

/**
 * What a group reads of the waiting tasks: those unblocked in D1, and those
 * blocked only by the group's own tasks (which its completions may unblock).
 * The latter are looked for among what depends on the group's tasks, so the
 * read does not grow with the project's backlog.
 * Built once: `projectId` and `ids` (the group's tasks, a JSON array) are bound.
 */
export const groupWaiting = builtOnce((db: Db) => {
  const projectId = sql.placeholder("projectId");
  const inGroup = sql`(SELECT value FROM json_each(${sql.placeholder("ids")}))`;
  // CROSS JOIN keeps SQLite from walking the project's waiting tasks in order and testing each instead.
  const dependents = sql`(SELECT DISTINCT g.task_id FROM task_dependencies g
    WHERE g.depends_on_task_id IN ${inGroup} AND g.dependency_type != 'related' AND g.resolved = 0) g CROSS JOIN tasks t ON t.id = g.task_id`;
  const blockedOnlyByGroup = sql`NOT EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks u ON u.id = d.depends_on_task_id
    WHERE d.task_id = t.id AND ${sql.raw(dependencyBlocking("d", "u"))} AND d.depends_on_task_id NOT IN ${inGroup})`;
  return db
    .select({
      unblocked: waitingJson(projectId, GROUP_WAITING, READY_TO_OFFER).as("unblocked"),
      unblockable: waitingJson(projectId, GROUP_WAITING, sql`${WAITING} AND ${blockedOnlyByGroup}`, dependents).as("unblockable"),
      candidates: candidatesJson(projectId).as("candidates"),
    })
    .from(projects)
    .where(eq(projects.id, projectId))
    .prepare();
});
