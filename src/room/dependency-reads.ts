/**
 * What the room reads of its tasks' dependencies: what blocks a task (to start it), what depends on it and its open
 * questions (to end it). One task's for one operation; many tasks' in one statement for a group (`groupTasks`), or as a
 * batch leaves them (`heldTasksInBatch`).
 */
import { and, getTableColumns, sql, type Placeholder, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { dependencyBlocking, tasks } from "../db/schema";
import { boundForBatch, builtOnce, inJsonList, qualified } from "../db/sql";
import type { DownstreamLink } from "../domain/cascade";
import type { TaskRow } from "./statements";
import type { Blocker, HeldTasks, LinkRead } from "./task-memory";

/** What blocks the task: its unresolved dependencies that block it, each with its type. */
export const blockersJson = sql<string>`(SELECT json_group_array(json_object('depends_on_task_id', d.depends_on_task_id, 'dependency_type', d.dependency_type))
  FROM task_dependencies d JOIN tasks u ON u.id = d.depends_on_task_id WHERE d.task_id = ${qualified(tasks.id)} AND ${sql.raw(dependencyBlocking("d", "u"))})`;

/**
 * The task's dependents by unresolved dependencies, each with its other upstreams still blocking it, unless `known` (a
 * text of ids between commas) names the dependent: the room then knows them (null here). The task is not done yet (it
 * is being ended), so only what the rows on it say resolves them.
 */
export const downstreamJson = (known: SQL | Placeholder) => sql<string>`(SELECT json_group_array(json_object(
    'taskId', d.task_id, 'taskStatus', dt.status, 'dependencyType', d.dependency_type, 'contractKey', d.contract_key, 'sessionId', dt.target_session_id,
    'otherUnresolved', CASE WHEN instr(${known}, ',' || d.task_id || ',') > 0 THEN NULL ELSE
      json((SELECT json_group_array(o.depends_on_task_id) FROM task_dependencies o JOIN tasks ou ON ou.id = o.depends_on_task_id
      WHERE o.task_id = d.task_id AND o.depends_on_task_id != d.depends_on_task_id AND ${sql.raw(dependencyBlocking("o", "ou"))})) END))
  FROM task_dependencies d JOIN tasks dt ON dt.id = d.task_id
  WHERE d.depends_on_task_id = ${qualified(tasks.id)} AND d.resolved = 0)`;

/** Dependents a read may skip the upstreams of, at most: each costs its id in the query's text. */
const MAX_KNOWN_DEPENDENTS = 1_000;

/** Dependents a read may skip the upstreams of, as `downstreamJson` takes them: the first MAX_KNOWN_DEPENDENTS known. */
function knownText(known: ReadonlyMap<string, string[]>) {
  if (known.size === 0) return "";
  const ids: string[] = [];
  for (const id of known.keys()) if (ids.push(id) >= MAX_KNOWN_DEPENDENTS) break;
  return `,${ids.join(",")},`;
}

/** Whether the task has questions open (pending interventions): ending it closes them. */
export const openQuestions = sql<number>`EXISTS (SELECT 1 FROM interventions i WHERE i.task_id = ${qualified(tasks.id)} AND i.status = 'pending')`;

/** The links with how many other upstreams still block each, leaving out those `resolved` says are. */
export const countLinks = (links: LinkRead[], resolved: (id: string) => boolean = () => false): DownstreamLink[] =>
  links.map((l) => ({ ...l, otherUnresolved: l.otherUnresolved.filter((id) => !resolved(id)).length }));

/**
 * The tasks a group reads from D1 (those the room does not hold), each with all the room keeps of it: what blocks it
 * (to start it), what depends on it and its open questions (to end it). Built once: `projectId`, `ids` (a JSON
 * array) and `known` (`knownText`) are bound.
 */
export const groupTasks = builtOnce((db: Db) =>
  db
    .select({
      task: tasks,
      blockers: blockersJson.as("blockers"),
      links: downstreamJson(sql.placeholder("known")).as("links"),
      questions: openQuestions.as("questions"),
    })
    .from(tasks)
    // The unary + keeps SQLite from choosing the project's index (a scan of all its tasks) over a lookup per id.
    .where(and(inJsonList(tasks.id, sql.placeholder("ids")), sql`+${qualified(tasks.projectId)} = ${sql.placeholder("projectId")}`))
    .prepare(),
);
const GROUP_TASK_COLUMNS = Object.keys(getTableColumns(tasks)).length + 3;
type GroupTaskRow = { task: TaskRow; blockers: string; links: string; questions: number };
type LinkJson = Omit<LinkRead, "otherUnresolved"> & { otherUnresolved: string[] | null };

/** The rows read, with each skipped dependent's other upstreams taken from what was known of it. */
function heldTasks(rows: GroupTaskRow[], known: ReadonlyMap<string, string[]>): HeldTasks {
  const blockedBy = new Map<string, string[]>();
  const links = new Map(
    rows.map((r) => {
      const upstream = r.task.id;
      const read = (JSON.parse(r.links) as LinkJson[]).map(({ otherUnresolved, ...link }): LinkRead => {
        const others = otherUnresolved ?? known.get(link.taskId)!.filter((id) => id !== upstream);
        // Links are unresolved dependencies: one that blocks is among what blocks its task, until its upstream is done.
        blockedBy.set(link.taskId, link.dependencyType === "related" || r.task.status === "done" ? others : [upstream, ...others]);
        return { ...link, otherUnresolved: others };
      });
      return [upstream, read];
    }),
  );
  return {
    tasks: new Map(rows.map((r) => [r.task.id, r.task])),
    blockers: new Map(rows.map((r) => [r.task.id, JSON.parse(r.blockers) as Blocker[]])),
    links,
    asked: new Set(rows.flatMap((r) => (r.questions ? [r.task.id] : []))),
    blockedBy,
  };
}

/** The tasks read with `groupTasks`, skipping the other upstreams of the dependents `known` gives. */
export function readTasks(db: Db, d1: D1Database, projectId: string, ids: readonly string[], known: ReadonlyMap<string, string[]>) {
  const values = { projectId, ids: JSON.stringify(ids), known: knownText(known) };
  const query = boundForBatch<GroupTaskRow>(groupTasks(db), d1, values, GROUP_TASK_COLUMNS);
  return { statement: query.statement, read: (result: D1Result) => heldTasks(query.read(result), known) };
}

/**
 * These tasks as a batch leaves them, read at its end: nothing when there are none. `known` are the dependents whose
 * upstreams the room holds, as the batch leaves them too; it is read again once the batch has committed, before the
 * room's memory takes anything in.
 */
export function heldTasksInBatch(db: Db, d1: D1Database, projectId: string, ids: readonly string[], known: ReadonlyMap<string, string[]>) {
  return ids.length === 0 ? undefined : readTasks(db, d1, projectId, ids, known);
}
