/**
 * A task-format request's `context.parentTaskId` makes it a subtask: its
 * parent must be a task of the same project (named by the hub's id or by its
 * own request's id), and the subtask joins the parent's trace.
 */
import { and, eq, or, sql } from "drizzle-orm";
import { tasks } from "../db/schema";
import type { HubContext } from "../http/context";
import { fieldError } from "../http/problem";
import { beginTrace, parseTraceparent } from "../protocol/trace-context";

export interface Parent {
  id: string;
  traceId: string | null;
}

/** The parent task in the project; 422 naming context.parentTaskId when the project has none of that id. */
export async function parentTask(c: HubContext, projectId: string, parentTaskId: string): Promise<Parent> {
  const [parent] = await c.var.db
    .select({ id: tasks.id, traceId: tasks.traceId })
    .from(tasks)
    .where(and(eq(tasks.projectId, projectId), or(eq(tasks.id, parentTaskId), eq(tasks.clientId, parentTaskId))))
    // The hub's id first, should another task's request id be the same string.
    .orderBy(sql`${tasks.id} = ${parentTaskId} DESC`)
    .limit(1);
  if (!parent) throw fieldError("context.parentTaskId", "names no task of this project (a task's id, or its task-format request's id)");
  return parent;
}

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
