import type { InferSelectModel } from "drizzle-orm";
import { z } from "zod";
import type { events } from "../db/schema";
import type { StoredEvent } from "../db/task-events";
import { id, json, timestamp } from "./fields";

export const eventSchema = z
  .object({
    seq: z.int().meta({ description: "Strictly increasing per project: resume a stream after the last one seen" }),
    project_id: id,
    type: z.string().meta({ description: "What happened: task_created, task_completed, … (the README lists them)" }),
    task_id: id.nullable(),
    actor: z.string().meta({ description: "Who did it: `user:<id>`, `agent:<server name>`, `system`" }),
    data: json,
    traceparent: z.string().nullable().meta({ description: "The W3C trace context of the task it concerns" }),
    created_at: timestamp,
  })
  .meta({ id: "Event" });

export const eventView = (e: InferSelectModel<typeof events>): z.infer<typeof eventSchema> => ({
  seq: e.seq,
  project_id: e.projectId,
  type: e.type,
  task_id: e.taskId,
  actor: e.actor,
  data: e.data,
  traceparent: e.traceparent,
  created_at: e.createdAt,
});

/** An event as db/task-events.ts reads it. */
export const storedEventView = (e: StoredEvent): z.infer<typeof eventSchema> => ({
  seq: e.seq,
  project_id: e.project_id,
  type: e.type,
  task_id: e.task_id,
  actor: e.actor,
  data: e.data,
  traceparent: e.traceparent,
  created_at: e.created_at,
});
