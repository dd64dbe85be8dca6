/** Reads of tasks for the API: straight from D1, assembled into task views. */
import { and, desc, eq, inArray, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { badRequest } from "../http/problem";
import { taskView, type DependencyRow, type NoteRow, type TaskView } from "../views/tasks";
import type { Db } from "./client";
import { servers, sessions, taskDependencies, taskNotes, tasks } from "./schema";

export const RECENT_NOTES = 20;
const ID_CHUNK = 90;

async function inChunks<T>(ids: string[], load: (chunk: string[]) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += ID_CHUNK) out.push(...(await load(ids.slice(i, i + ID_CHUNK))));
  return out;
}

const targetSession = alias(sessions, "target_session");
const sourceSession = alias(sessions, "source_session");

/** Task views for these ids, in the same order; ids that do not exist are skipped. */
export async function taskViews(db: Db, ids: string[]): Promise<TaskView[]> {
  if (ids.length === 0) return [];
  const rows = await inChunks(ids, (chunk) =>
    db
      .select({ task: tasks, serverName: servers.name, targetSessionName: targetSession.name, sourceSessionName: sourceSession.name })
      .from(tasks)
      .leftJoin(servers, eq(servers.id, tasks.assignedServerId))
      .leftJoin(targetSession, eq(targetSession.id, tasks.targetSessionId))
      .leftJoin(sourceSession, eq(sourceSession.id, tasks.sourceSessionId))
      .where(inArray(tasks.id, chunk)),
  );
  const deps = await inChunks(ids, (chunk) => dependenciesOf(db, chunk));
  const notes = await inChunks(ids, (chunk) =>
    db.all<Record<string, unknown>>(sql`
      SELECT id, task_id, project_id, author, content, urgent, created_at FROM (
        SELECT *, ROW_NUMBER() OVER (PARTITION BY task_id ORDER BY created_at DESC, id DESC) AS n
        FROM task_notes WHERE task_id IN ${chunk}
      ) WHERE n <= ${RECENT_NOTES} ORDER BY created_at ASC, id ASC`),
  );
  const byId = new Map(rows.map((r) => [r.task.id, r]));
  return ids.flatMap((id) => {
    const r = byId.get(id);
    if (!r) return [];
    const taskNotesOf: NoteRow[] = notes
      .filter((n) => n.task_id === id)
      .map((n) => ({
        id: n.id as string,
        taskId: id,
        projectId: n.project_id as string,
        author: n.author as string,
        content: n.content as string,
        urgent: Boolean(n.urgent),
        createdAt: n.created_at as string,
      }));
    return [
      taskView(
        r.task,
        { assignedServerName: r.serverName, targetSessionName: r.targetSessionName, sourceSessionName: r.sourceSessionName },
        deps.filter((d) => d.taskId === id),
        taskNotesOf,
      ),
    ];
  });
}

const upstream = alias(tasks, "upstream");

/**
 * Dependencies of these tasks, with the upstream's status and, for resolved
 * input dependencies on a structured result, the contract's data — read from
 * the upstream's result, which never changes once it is done.
 */
export async function dependenciesOf(db: Db, taskIds: string[]): Promise<DependencyRow[]> {
  const rows = await db
    .select({
      dep: taskDependencies,
      upstreamStatus: upstream.status,
      data: sql<string | null>`CASE WHEN ${taskDependencies.dependencyType} = 'input' AND ${taskDependencies.resolved} AND ${upstream.resultStructured}
        THEN ${upstream.result} -> ('$.contracts.' || ${taskDependencies.contractKey} || '.data') END`,
    })
    .from(taskDependencies)
    .innerJoin(upstream, eq(upstream.id, taskDependencies.dependsOnTaskId))
    .where(inArray(taskDependencies.taskId, taskIds))
    .orderBy(taskDependencies.createdAt, taskDependencies.dependsOnTaskId);
  return rows.map((r) => ({ ...r.dep, upstreamStatus: r.upstreamStatus, data: r.data === null ? null : JSON.parse(r.data) }));
}

export async function taskView1(db: Db, id: string): Promise<TaskView> {
  const [view] = await taskViews(db, [id]);
  return view!;
}

export interface TaskFilter {
  /** Projects to look in; null = all. */
  projectIds: string[] | null;
  statuses?: string[];
  assignedServerId?: string;
  targetSessionId?: string;
  /** Tasks for this session: assigned to it, or to its server without naming a session. */
  forSession?: string;
  limit: number;
  cursor?: string;
}

const encodeCursor = (createdAt: string, id: string) => btoa(`${createdAt}|${id}`).replace(/=+$/, "");

function decodeCursor(cursor: string): [string, string] {
  try {
    const [createdAt, id] = atob(cursor).split("|");
    if (createdAt && id && !Number.isNaN(Date.parse(createdAt))) return [createdAt, id];
  } catch {
    // fall through
  }
  throw badRequest("cursor: not a cursor this hub returned", "INVALID_CURSOR");
}

/** A page of tasks, newest first, and the cursor of the next page. */
export async function listTasks(db: Db, f: TaskFilter): Promise<{ tasks: TaskView[]; next_cursor: string | null }> {
  if (f.projectIds?.length === 0) return { tasks: [], next_cursor: null };
  const conditions: (SQL | undefined)[] = [
    f.projectIds ? inArray(tasks.projectId, f.projectIds) : undefined,
    f.statuses?.length ? inArray(tasks.status, f.statuses as (typeof tasks.status.enumValues)[number][]) : undefined,
    f.assignedServerId ? eq(tasks.assignedServerId, f.assignedServerId) : undefined,
    f.targetSessionId ? eq(tasks.targetSessionId, f.targetSessionId) : undefined,
    f.forSession
      ? sql`(${tasks.targetSessionId} = ${f.forSession} OR (${tasks.targetSessionId} IS NULL AND ${tasks.assignedServerId} = (SELECT server_id FROM sessions WHERE id = ${f.forSession})))`
      : undefined,
  ];
  if (f.cursor) {
    const [createdAt, id] = decodeCursor(f.cursor);
    conditions.push(sql`(${tasks.createdAt}, ${tasks.id}) < (${createdAt}, ${id})`);
  }
  const rows = await db
    .select({ id: tasks.id, createdAt: tasks.createdAt })
    .from(tasks)
    .where(and(...conditions))
    .orderBy(desc(tasks.createdAt), desc(tasks.id))
    .limit(f.limit + 1);
  const page = rows.slice(0, f.limit);
  const last = page.at(-1);
  return {
    tasks: await taskViews(db, page.map((r) => r.id)),
    next_cursor: rows.length > f.limit && last ? encodeCursor(last.createdAt, last.id) : null,
  };
}

export async function notesOf(db: Db, taskId: string) {
  return db.select().from(taskNotes).where(eq(taskNotes.taskId, taskId)).orderBy(taskNotes.createdAt, taskNotes.id);
}
