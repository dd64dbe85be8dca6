import type { InferSelectModel } from "drizzle-orm";
import type { events } from "../db/schema";

export const eventView = (e: InferSelectModel<typeof events>) => ({
  seq: e.seq,
  project_id: e.projectId,
  type: e.type,
  task_id: e.taskId,
  actor: e.actor,
  data: e.data,
  traceparent: e.traceparent,
  created_at: e.createdAt,
});
