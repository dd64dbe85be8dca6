/**
 * A task-format request's `context.parentTaskId` makes it a subtask of a task
 * of the same project (named by the hub's id or by its own request's id), and
 * the subtask joins the parent's trace; any other parent is an external one.
 */
import { and, eq, or, sql } from "drizzle-orm";
import { tasks } from "../db/schema";
import type { HubContext } from "../http/context";
import { beginTrace, parseTraceparent } from "../protocol/trace-context";

export interface Parent {
  id: string;
  traceId: string | null;
}

/**
 * The parent task in the project, or null: a parent this project does not hold (another hub's, another system's, or
 * one in a project the caller may not see) is kept as an external reference, named in `context` as sent.
 */
export async function parentTask(c: HubContext, projectId: string, parentTaskId: string): Promise<Parent | null> {
  const [parent] = await c.var.db
    .select({ id: tasks.id, traceId: tasks.traceId })
    .from(tasks)
    .where(and(eq(tasks.projectId, projectId), or(eq(tasks.id, parentTaskId), eq(tasks.clientId, parentTaskId))))
    // The hub's id first, should another task's request id be the same string.
    .orderBy(sql`${tasks.id} = ${parentTaskId} DESC`)
    .limit(1);
  return parent ?? null;
}

export const EXTERNAL_PARENT_WARNING =
  "context.parentTaskId names no task of this project: kept as an external reference (the task is not linked to it and does not join its trace)";

/**
 * A subtask's trace: its parent's. The request's own traceparent is kept when it is in that trace; one in another
 * trace (or an observability.traceId of another) gives way to the parent's, with a warning.
 */
export function subtaskTrace(parent: Parent, sent: { traceparent?: string; traceId: string | null }, warnings: string[]): string | undefined {
  if (!parent.traceId) return sent.traceparent;
  const header = parseTraceparent(sent.traceparent);
  if (header?.traceId === parent.traceId) return header.traceparent;
  if (header || (sent.traceId && sent.traceId !== parent.traceId)) {
    warnings.push(`the subtask joins its parent's trace (${parent.traceId}), not the one its request named`);
  }
  return beginTrace(parent.traceId).traceparent;
}
