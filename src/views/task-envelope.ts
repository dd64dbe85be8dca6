/** A task's agent-envelope input (seeds/agent-envelope.md), read from D1: its view and the results of its resolved upstreams. */
import { inArray } from "drizzle-orm";
import type { z } from "zod";
import { inputEnvelope } from "../protocol/agent-envelope";
import type { inputEnvelopeSchema, TaskView } from "./tasks";
import type { Db } from "../db/client";
import { tasks } from "../db/schema";
import { taskView1 } from "./task-queries";

export async function envelopeOf(db: Db, taskId: string): Promise<z.infer<typeof inputEnvelopeSchema>> {
  return envelopeOfView(db, await taskView1(db, taskId));
}

/** The envelope of a task's view; an upstream no longer in D1 (archived) has its result from `elsewhere`. */
export async function envelopeOfView(
  db: Db,
  view: TaskView,
  elsewhere: (taskId: string) => Promise<unknown> = async () => undefined,
): Promise<z.infer<typeof inputEnvelopeSchema>> {
  // Only finished work passes notes forward: a related upstream counts as resolved while it still runs.
  const upstreamIds = view.dependencies.filter((d) => d.resolved && d.depends_on_status === "done").map((d) => d.depends_on_task_id);
  const rows = upstreamIds.length ? await db.select({ id: tasks.id, result: tasks.result }).from(tasks).where(inArray(tasks.id, upstreamIds)) : [];
  const results = new Map<string, unknown>(rows.map((r) => [r.id, r.result]));
  for (const id of upstreamIds) if (!results.has(id)) results.set(id, await elsewhere(id));
  return inputEnvelope(
    view,
    upstreamIds.map((id) => results.get(id)),
  );
}
