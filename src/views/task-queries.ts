/** Reads of tasks for the API: straight from D1, assembled into task views. */
import { and, count, desc, eq, getTableColumns, inArray, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { InvalidCursor, NotFound } from "../domain/errors";
import { decodeCursor, encodeCursor } from "../domain/page-cursor";
import { taskView, type DependencyRow, type NoteRow, type TaskView } from "./tasks";
import type { Db } from "../db/client";
import { boundForBatch, builtOnce, inJsonList, qualified } from "../db/sql";
import { dependencyResolved, dependencyResolvedAt, servers, sessions, taskDependencies, taskNotes, tasks, UNFINISHED_TASK } from "../db/schema";
import { FINISHED, type TaskStatus } from "../domain/lifecycle";
import type { UsageAmounts } from "../domain/usage";
import { usageJson, usageOfRow } from "./usage";
import { taskGraph } from "../db/task-graph";
import { tightestBudget, type BudgetFacts } from "../domain/budgets";

export const RECENT_NOTES = 20;
const targetSession = alias(sessions, "target_session");
const sourceSession = alias(sessions, "source_session");

/** A resolved input dependency's contract entry ({status, data, ...}), read from the upstream's result (immutable once done). */
const contractEntry = (dep: string, up: string) =>
  sql.raw(`CASE WHEN ${dep}.dependency_type = 'input' AND ${dependencyResolved(dep, up)} AND ${up}.result_structured
    THEN json(${up}.result -> ('$.contracts.' || ${dep}.contract_key)) END`);

interface DependencyJson {
  task_id: string;
  depends_on_task_id: string;
  project_id: string;
  dependency_type: DependencyRow["dependencyType"];
  contract_key: string | null;
  resolved: number;
  resolved_at: string | null;
  created_at: string;
  depends_on_status: string;
  contract: unknown;
}
interface NoteJson {
  id: string;
  task_id: string;
  project_id: string;
  author: string;
  content: string;
  urgent: number;
  created_at: string;
}

/**
 * The query behind task views: dependencies and recent notes come along as
 * JSON. Every column has its own name, so the rows also map when the query
 * runs inside a D1 batch (which answers rows as objects keyed by column name).
 * One task is looked up by its id: reading a list of ids from json_each costs
 * D1 rows of its own, which most views (one task's) need not pay.
 */
const viewsWhere = (where: SQL) => (db: Db) =>
  db
    .select({
      task: tasks,
      serverName: sql<string | null>`${servers.name}`.as("assigned_server_name"),
      targetSessionName: sql<string | null>`${targetSession.name}`.as("target_session_name"),
      sourceSessionName: sql<string | null>`${sourceSession.name}`.as("source_session_name"),
      dependencies: sql<string>`(SELECT json_group_array(json_object(
          'task_id', d.task_id, 'depends_on_task_id', d.depends_on_task_id, 'project_id', d.project_id,
          'dependency_type', d.dependency_type, 'contract_key', d.contract_key, 'resolved', ${sql.raw(dependencyResolved("d", "u"))},
          'resolved_at', ${sql.raw(dependencyResolvedAt("d", "u"))}, 'created_at', d.created_at, 'depends_on_status', u.status, 'contract', ${contractEntry("d", "u")}))
        FROM (SELECT * FROM task_dependencies WHERE task_id = ${qualified(tasks.id)} ORDER BY created_at, depends_on_task_id) d
        JOIN tasks u ON u.id = d.depends_on_task_id)`.as("dependencies_json"),
      notes: sql<string>`(SELECT json_group_array(json_object(
          'id', n.id, 'task_id', n.task_id, 'project_id', n.project_id, 'author', n.author, 'content', n.content,
          'urgent', n.urgent, 'created_at', n.created_at))
        FROM (SELECT * FROM (SELECT * FROM task_notes WHERE task_id = ${qualified(tasks.id)} ORDER BY created_at DESC, id DESC LIMIT ${RECENT_NOTES})
              ORDER BY created_at, id) n)`.as("notes_json"),
      usage: sql<string | null>`(SELECT ${sql.raw(usageJson("u"))} FROM task_usage u WHERE u.task_id = ${qualified(tasks.id)})`.as("usage_json"),
      // The project's few budgets that reach the task: its project's, and those of graphs that hold it (walked only for those).
      budgets: sql<string>`(SELECT json_group_array(json_object(
          'id', b.id, 'scope', b.scope, 'task_id', b.task_id, 'period', b.period, 'limit_usd', b.limit_usd, 'limit_tokens', b.limit_tokens,
          'actions', json(b.actions), 'state', b.state, 'spent_usd', b.spent_usd, 'spent_tokens', b.spent_tokens, 'period_key', b.period_key))
        FROM budgets b WHERE b.project_id = ${qualified(tasks.projectId)}
          AND (b.scope = 'project' OR ${qualified(tasks.id)} IN (${taskGraph(sql`b.task_id`)})))`.as("budgets_json"),
    })
    .from(tasks)
    .leftJoin(servers, eq(servers.id, tasks.assignedServerId))
    .leftJoin(targetSession, eq(targetSession.id, tasks.targetSessionId))
    .leftJoin(sourceSession, eq(sourceSession.id, tasks.sourceSessionId))
    .where(where)
    .prepare();
const viewQuery = builtOnce(viewsWhere(inJsonList(tasks.id, sql.placeholder("ids"))));
const oneViewQuery = builtOnce(viewsWhere(eq(tasks.id, sql.placeholder("id"))));
/** The query for these ids, with its values. */
const viewsOfIds = (db: Db, ids: string[]) =>
  ids.length === 1 ? { query: oneViewQuery(db), values: { id: ids[0]! } } : { query: viewQuery(db), values: { ids: JSON.stringify(ids) } };

/** The task's own columns and the seven named above. */
const VIEW_COLUMNS = Object.keys(getTableColumns(tasks)).length + 7;

type TaskViewRow = Awaited<ReturnType<ReturnType<typeof viewQuery>["all"]>>[number];

interface BudgetJson {
  id: string;
  scope: BudgetFacts["scope"];
  task_id: string | null;
  period: BudgetFacts["period"];
  limit_usd: number | null;
  limit_tokens: number | null;
  actions: BudgetFacts["actions"];
  state: BudgetFacts["state"];
  spent_usd: number;
  spent_tokens: number;
  period_key: string;
}

const budgetsOf = (json: string): BudgetFacts[] =>
  (JSON.parse(json) as BudgetJson[]).map((b) => ({
    id: b.id,
    scope: b.scope,
    taskId: b.task_id,
    period: b.period,
    limitUsd: b.limit_usd,
    limitTokens: b.limit_tokens,
    actions: b.actions,
    state: b.state,
    spentUsd: b.spent_usd,
    spentTokens: b.spent_tokens,
    periodKey: b.period_key,
  }));

/** Views of the rows read, in the order of `ids`; ids without a row are skipped. */
function viewsOf(ids: string[], rows: TaskViewRow[]): TaskView[] {
  const byId = new Map(rows.map((r) => [r.task.id, r]));
  // A budget's period as of the read: one that ended has spent nothing of the one running now.
  const now = new Date().toISOString();
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    const deps: DependencyRow[] = (JSON.parse(r.dependencies) as DependencyJson[]).map((d) => ({
      taskId: d.task_id,
      dependsOnTaskId: d.depends_on_task_id,
      projectId: d.project_id,
      dependencyType: d.dependency_type,
      contractKey: d.contract_key,
      resolved: Boolean(d.resolved),
      resolvedAt: d.resolved_at,
      createdAt: d.created_at,
      upstreamStatus: d.depends_on_status,
      contract: d.contract ?? null,
    }));
    const notes: NoteRow[] = (JSON.parse(r.notes) as NoteJson[]).map((n) => ({
      id: n.id,
      taskId: n.task_id,
      projectId: n.project_id,
      author: n.author,
      content: n.content,
      urgent: Boolean(n.urgent),
      createdAt: n.created_at,
    }));
    const names = { assignedServerName: r.serverName, targetSessionName: r.targetSessionName, sourceSessionName: r.sourceSessionName };
    const usage = r.usage === null ? null : usageOfRow(JSON.parse(r.usage) as UsageAmounts);
    return [taskView(r.task, names, deps, notes, usage, tightestBudget(budgetsOf(r.budgets), now))];
  });
}

/** Task views for these ids, in the same order; ids that do not exist are skipped. One query. */
export async function taskViews(db: Db, ids: string[]): Promise<TaskView[]> {
  if (ids.length === 0) return [];
  const { query, values } = viewsOfIds(db, ids);
  return viewsOf(ids, await query.all(values));
}

/**
 * Task views read at the end of a write batch, so they show exactly what it
 * committed without another round trip: the statement to append, and how to
 * read its result.
 */
export function taskViewsInBatch(db: Db, d1: D1Database, ids: string[]) {
  const { query, values } = viewsOfIds(db, ids);
  const { statement, read } = boundForBatch<TaskViewRow>(query, d1, values, VIEW_COLUMNS);
  return { statement, read: (result: D1Result) => viewsOf(ids, read(result)) };
}

const upstream = alias(tasks, "upstream");

/**
 * Dependencies of these tasks, with the upstream's status and, for resolved
 * input dependencies on a structured result, the contract's entry — read from
 * the upstream's result, which never changes once it is done.
 */
export async function dependenciesOf(db: Db, taskIds: string[]): Promise<DependencyRow[]> {
  const rows = await db
    .select({
      dep: taskDependencies,
      upstreamStatus: upstream.status,
      contract: sql<string | null>`${contractEntry("task_dependencies", "upstream")}`,
    })
    .from(taskDependencies)
    .innerJoin(upstream, eq(upstream.id, taskDependencies.dependsOnTaskId))
    .where(inArray(taskDependencies.taskId, taskIds))
    .orderBy(taskDependencies.createdAt, taskDependencies.dependsOnTaskId);
  return rows.map((r) => ({ ...r.dep, upstreamStatus: r.upstreamStatus, contract: r.contract === null ? null : JSON.parse(r.contract) }));
}

/** The task's view; `NotFound` when it is gone (its project was deleted meanwhile). */
export async function taskView1(db: Db, id: string): Promise<TaskView> {
  const [view] = await taskViews(db, [id]);
  if (!view) throw new NotFound("Task");
  return view;
}

export interface TaskFilter {
  /** Projects to look in; null = all. */
  projectIds: string[] | null;
  /** Only these tasks. */
  ids?: string[];
  statuses?: string[];
  assignedServerId?: string;
  targetSessionId?: string;
  /** Tasks for this session: in its project, assigned to it or to its server without naming a session. */
  forSession?: string;
  /** An agent's own tasks: assigned to its server, or created by it. */
  ownedBy?: { serverId: string; createdBy: string };
  /** Tasks whose requirements name this role (case-insensitive). */
  requiredRole?: string;
  /** Only tasks not waiting for a person's approval. */
  approved?: true;
  /** Tasks of this conversation (task-format `context.conversationId`, an A2A contextId). */
  conversationId?: string;
  /** Tasks changed after this time (ISO-8601). */
  updatedAfter?: string;
  /** What "newest first" orders by: when a task was created (the default), or when it last changed. */
  newestBy?: "created" | "updated";
  limit: number;
  cursor?: string;
}

function cursorKey(cursor: string): [string, string] {
  const key = decodeCursor(cursor);
  if (!key) throw new InvalidCursor();
  return key;
}

/** What a filter asks of a task, apart from its page. */
function filterConditions(f: Omit<TaskFilter, "limit" | "cursor">): (SQL | undefined)[] {
  return [
    f.projectIds ? inJsonList(tasks.projectId, f.projectIds) : undefined,
    f.ids ? inJsonList(tasks.id, f.ids) : undefined,
    f.statuses?.length ? inArray(tasks.status, f.statuses as (typeof tasks.status.enumValues)[number][]) : undefined,
    // Said outright when the statuses imply it, so an agent's or a session's index is read no further than its unfinished tasks.
    f.statuses?.length && f.statuses.every((s) => !FINISHED.includes(s as TaskStatus)) ? UNFINISHED_TASK : undefined,
    f.assignedServerId ? eq(tasks.assignedServerId, f.assignedServerId) : undefined,
    f.targetSessionId ? eq(tasks.targetSessionId, f.targetSessionId) : undefined,
    f.forSession
      ? sql`${tasks.projectId} = (SELECT project_id FROM sessions WHERE id = ${f.forSession})
          AND (${tasks.targetSessionId} = ${f.forSession} OR (${tasks.targetSessionId} IS NULL AND ${tasks.assignedServerId} = (SELECT server_id FROM sessions WHERE id = ${f.forSession})))`
      : undefined,
    f.ownedBy ? sql`(${tasks.assignedServerId} = ${f.ownedBy.serverId} OR ${tasks.createdBy} = ${f.ownedBy.createdBy})` : undefined,
    f.requiredRole ? sql`lower(${tasks.requirements} ->> '$.role') = lower(${f.requiredRole})` : undefined,
    f.approved ? eq(tasks.awaitingApproval, false) : undefined,
    f.conversationId !== undefined ? sql`${tasks.context} ->> '$.conversationId' = ${f.conversationId}` : undefined,
    f.updatedAfter !== undefined ? sql`${tasks.updatedAt} > ${f.updatedAfter}` : undefined,
  ];
}

/** How many tasks a filter holds, over all its pages. */
export async function countTasks(db: Db, f: Omit<TaskFilter, "limit" | "cursor">): Promise<number> {
  if (f.projectIds?.length === 0) return 0;
  const [row] = await db
    .select({ n: count() })
    .from(tasks)
    .where(and(...filterConditions(f)));
  return row?.n ?? 0;
}

/** A page of tasks, newest first, and the cursor of the next page. */
export async function listTasks(db: Db, f: TaskFilter): Promise<{ tasks: TaskView[]; next_cursor: string | null }> {
  if (f.projectIds?.length === 0) return { tasks: [], next_cursor: null };
  const conditions = filterConditions(f);
  const at = f.newestBy === "updated" ? tasks.updatedAt : tasks.createdAt;
  if (f.cursor) {
    const [time, id] = cursorKey(f.cursor);
    conditions.push(sql`(${at}, ${tasks.id}) < (${time}, ${id})`);
  }
  const rows = await db
    .select({ id: tasks.id, at })
    .from(tasks)
    .where(and(...conditions))
    .orderBy(desc(at), desc(tasks.id))
    .limit(f.limit + 1);
  const page = rows.slice(0, f.limit);
  const last = page.at(-1);
  return {
    tasks: await taskViews(
      db,
      page.map((r) => r.id),
    ),
    next_cursor: rows.length > f.limit && last ? encodeCursor(last.at, last.id) : null,
  };
}

export async function notesOf(db: Db, taskId: string) {
  return db.select().from(taskNotes).where(eq(taskNotes.taskId, taskId)).orderBy(taskNotes.createdAt, taskNotes.id);
}
